"""Building RaggedTensors from Python lists (kf.ragged.constant) and from dense tensors
(RaggedTensor.from_tensor)."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.ops.array import range as _range, shape as _shape
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.array import where
from kilnflow.ops.math import cast, less, not_equal
from kilnflow.ops.joining import concat as _concat
from kilnflow.ops.reduction import reduce_any, reduce_max
from kilnflow.ops.reshaping import reshape
from kilnflow.ops.slicing import boolean_mask
from kilnflow.ragged.ragged_tensor import RaggedTensor
from kilnflow.tensor import Tensor


def _depth(value: Any) -> Tuple[int, bool]:
    """(nesting depth of a Python list, whether scalars fix it): scalars are (0, True); a
    list of only empty lists is at least its nesting and fits any deeper one, as in TF.
    ValueError when scalars sit at different depths."""
    if not isinstance(value, (list, tuple)):
        return 0, True
    found = [_depth(v) for v in value]
    exact = {d for d, fixed in found if fixed}
    if len(exact) > 1 or exact and any(d > min(exact) for d, fixed in found if not fixed):
        raise ValueError("all scalar values must have the same nesting depth")
    if exact:
        return 1 + exact.pop(), True
    return 1 + max((d for d, _ in found), default=0), False


def constant(pylist: Any, dtype: Any = None, ragged_rank: Optional[int] = None,
             inner_shape: Any = None, name: Optional[str] = None,
             row_splits_dtype: Any = _dtypes.int64) -> Any:
    """A RaggedTensor from a nested Python list (rows may differ in length).

    >>> import kilnflow as kf
    >>> kf.ragged.constant([[1, 2], [3], []])
    <tf.RaggedTensor [[1, 2], [3], []]>
    """
    if isinstance(pylist, np.ndarray):
        pylist = pylist.tolist()
    depth = max(_depth(pylist)[0], 1)
    inner = 0 if inner_shape is None else len(tuple(inner_shape))
    if ragged_rank is None:
        ragged_rank = max(depth - 1 - inner, 0)
    if ragged_rank == 0:
        return convert_to_tensor(pylist, dtype)
    if ragged_rank >= depth and pylist:
        raise ValueError(f"pylist has scalar values at depth {depth}, but ragged_rank="
                         f"{ragged_rank} requires scalar values at depth greater than "
                         f"{ragged_rank}")
    level_lengths, items = _level_lengths(pylist, ragged_rank)
    result: Any = _flat_values(items, dtype, inner_shape)
    splits_dtype = _dtypes.as_dtype(row_splits_dtype)
    for lengths in reversed(level_lengths):
        result = RaggedTensor.from_row_lengths(result, convert_to_tensor(lengths, splits_dtype),
                                               validate=False)
    return result


def _level_lengths(pylist: Any, ragged_rank: int) -> Tuple[List[List[int]], list]:
    """(row lengths of each ragged level, outermost first; the items below them)."""
    out = []
    level = list(pylist)
    for _ in range(ragged_rank):
        out.append([len(row) for row in level])
        level = [item for row in level for item in row]
    return out, level


def _flat_values(items: list, dtype: Any, inner_shape: Any) -> Tensor:
    if not items:
        dims = [0] + ([] if inner_shape is None else list(inner_shape))
        empty = np.zeros(dims, (_dtypes.as_dtype(dtype) if dtype is not None
                                else _dtypes.float32).as_numpy_dtype)
        return convert_to_tensor(empty)
    try:
        return convert_to_tensor(items, dtype)
    except ValueError:
        raise ValueError("inner values of a ragged constant must have a uniform shape "
                         "below ragged_rank") from None


def from_tensor(tensor: Any, lengths: Any = None, padding: Any = None, ragged_rank: int = 1,
                row_splits_dtype: Any = _dtypes.int64) -> RaggedTensor:
    """Rows of a dense tensor of rank >= 2: all of each row, its first `lengths[i]` items,
    or the items before its trailing `padding` (ragged_rank 1)."""
    t = convert_to_tensor(tensor)
    if t.shape.rank is not None and t.shape.rank < 2:
        raise ValueError(f"from_tensor needs a tensor of rank >= 2, got shape {t.shape}")
    if ragged_rank != 1:
        raise NotImplementedError("RaggedTensor.from_tensor supports ragged_rank=1 here")
    if lengths is not None and padding is not None:
        raise ValueError("Specify lengths or padding, but not both")
    if lengths is None and padding is None:  # every row whole: a uniform row length, as TF
        static = t.shape.as_list()[1] if t.shape.rank else None
        flat = reshape(t, _concat([convert_to_tensor([-1], _dtypes.int64),
                                   _shape(t, out_type=_dtypes.int64)[2:]], 0))
        width = static if static is not None else _shape(t, out_type=_dtypes.int64)[1]
        rows = _shape(t, out_type=_dtypes.int64)[0]
        out = RaggedTensor.from_uniform_row_length(flat, width, rows, validate=False)
        return out.with_row_splits_dtype(row_splits_dtype)
    dims = _shape(t, out_type=_dtypes.int64)
    width = dims[1]
    positions = _range(width)[None, :]
    if lengths is not None:
        row_lengths = convert_to_tensor(lengths, _dtypes.int64)
    else:
        kept = not_equal(t, convert_to_tensor(padding, t.dtype))
        while kept.shape.rank is not None and kept.shape.rank > 2:
            kept = reduce_any(kept, axis=-1)
        last = where(kept, positions + 1 + 0 * cast(kept, _dtypes.int64),
                     0 * cast(kept, _dtypes.int64))
        row_lengths = reduce_max(last, axis=1)
    keep = less(positions, row_lengths[:, None])
    values = boolean_mask(t, keep)
    splits_lengths = cast(row_lengths, _dtypes.as_dtype(row_splits_dtype))
    return RaggedTensor.from_row_lengths(values, splits_lengths, validate=False)

