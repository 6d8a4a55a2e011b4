"""The kf.strings namespace (tf.strings): re-exports only."""
from kilnflow.ops.strings import as_string as as_string
from kilnflow.ops.strings import format as format  # noqa: A004
from kilnflow.ops.strings import join as join
from kilnflow.ops.strings import length as length
from kilnflow.ops.strings import lower as lower
from kilnflow.ops.strings import reduce_join as reduce_join
from kilnflow.ops.strings import regex_full_match as regex_full_match
from kilnflow.ops.strings import regex_replace as regex_replace
from kilnflow.ops.strings import split as split
from kilnflow.ops.strings import strip as strip
from kilnflow.ops.strings import substr as substr
from kilnflow.ops.strings import to_number as to_number
from kilnflow.ops.unicode import unicode_decode as unicode_decode
from kilnflow.ops.unicode import unicode_encode as unicode_encode
from kilnflow.ops.strings import upper as upper
