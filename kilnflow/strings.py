"""The kf.strings namespace (tf.strings): re-exports only."""
from kilnflow.ops.strings import as_string as as_string
from kilnflow.ragged.string_ops import bytes_split as bytes_split
from kilnflow.ops.strings import format as format  # noqa: A004
from kilnflow.ops.strings import join as join
from kilnflow.ops.strings import length as length
from kilnflow.ops.strings import lower as lower
from kilnflow.ops.string_grouping import ngrams as ngrams
from kilnflow.ops.strings import reduce_join as reduce_join
from kilnflow.ops.strings import regex_full_match as regex_full_match
from kilnflow.ops.strings import regex_replace as regex_replace
from kilnflow.ragged.string_ops import split as split
from kilnflow.ops.strings import strip as strip
from kilnflow.ops.strings import substr as substr
from kilnflow.ops.strings import to_number as to_number
from kilnflow.ops.string_hash import to_hash_bucket as to_hash_bucket
from kilnflow.ops.farmhash import to_hash_bucket_fast as to_hash_bucket_fast
from kilnflow.ops.string_hash import to_hash_bucket_strong as to_hash_bucket_strong
from kilnflow.ragged.string_ops import unicode_decode as unicode_decode
from kilnflow.ragged.string_ops import unicode_decode_with_offsets as \
    unicode_decode_with_offsets
from kilnflow.ragged.string_ops import unicode_encode as unicode_encode
from kilnflow.ragged.string_ops import unicode_split as unicode_split
from kilnflow.ragged.string_ops import unicode_split_with_offsets as \
    unicode_split_with_offsets
from kilnflow.ops.unicode import unicode_transcode as unicode_transcode
from kilnflow.ops.strings import upper as upper
from kilnflow.ops.string_grouping import unsorted_segment_join as unsorted_segment_join
