"""The kf.ragged namespace (tf.ragged): RaggedTensor factories and ops; re-exports only."""
from kilnflow.ragged.ops import boolean_mask as boolean_mask
from kilnflow.ragged.conversion import constant as constant
from kilnflow.ragged.ops import map_flat_values as map_flat_values
from kilnflow.ragged.ops import range as range  # noqa: A004
from kilnflow.ragged.ops import row_splits_to_segment_ids as row_splits_to_segment_ids
from kilnflow.ragged.ops import segment_ids_to_row_splits as segment_ids_to_row_splits
from kilnflow.ragged.ops import stack as stack
from kilnflow.ragged.ragged_tensor import RaggedTensor as RaggedTensor
from kilnflow.ragged.ragged_tensor import RaggedTensorSpec as RaggedTensorSpec

from kilnflow.ragged import dispatch as _dispatch  # noqa: E402 - plugs into the dense ops

_dispatch.install()
