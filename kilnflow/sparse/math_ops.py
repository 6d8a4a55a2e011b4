"""More kf.sparse ops (tf.sparse): products, softmax, segment reductions over gathered
rows, indicators, bincount, identity matrices, fill_empty_rows, retain, mask, map_values.
Built from public kf ops like sparse/ops.py, so gradients (sparse_dense_matmul to the
values and the dense operand) come from the ops used.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from kilnflow import dtypes as _dtypes
from kilnflow.ops.array import fill, range as _range, shape as _shape, where
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat as _concat, stack
from kilnflow.ops.math import cast, equal, exp, greater, logical_not, minimum, sqrt
from kilnflow.ops.math_extra import bincount as _bincount
from kilnflow.ops.math_extra import cumprod
from kilnflow.ops.reduction import reduce_any, reduce_max, reduce_prod, reduce_sum
from kilnflow.ops.reshaping import transpose as _transpose
from kilnflow.ops.scatter import scatter_nd
from kilnflow.ops.slicing import boolean_mask, gather
from kilnflow.sparse.indexed_slices import IndexedSlices
from kilnflow.sparse.ops import _sparse, from_dense, ones_for, reorder, segment_top
from kilnflow.sparse.ops import segment_total
from kilnflow.sparse.sparse_tensor import SparseTensor
from kilnflow.tensor import Tensor

_I64 = _dtypes.int64


def sparse_dense_matmul(sp_a: Any, b: Any, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: Optional[str] = None) -> Tensor:
    """Product of a rank-2 SparseTensor and a dense matrix (or of a dense matrix and a
    SparseTensor); differentiable with respect to the sparse values and the dense operand.

    >>> import kilnflow as kf
    >>> st = kf.sparse.SparseTensor([[0, 1]], [2.0], [2, 2])
    >>> kf.sparse.sparse_dense_matmul(st, kf.ones([2, 1])).numpy().tolist()
    [[2.0], [0.0]]
    """
    if isinstance(b, SparseTensor) and not isinstance(sp_a, SparseTensor):
        # a @ b = (b' @ a')' with each operand's adjoint flag flipped
        return _transpose(sparse_dense_matmul(b, sp_a, not adjoint_b, not adjoint_a))
    sp = _sparse(sp_a, "sp_a")
    dense = convert_to_tensor(b, sp.dtype)
    if adjoint_b:
        dense = _transpose(dense)
    rows, cols = sp.indices[:, 0], sp.indices[:, 1]
    if adjoint_a:
        rows, cols = cols, rows
    out_rows = sp.dense_shape[1 if adjoint_a else 0]
    products = gather(dense, cols) * sp.values[:, None]
    return segment_total(products, rows, out_rows)


matmul = sparse_dense_matmul  # TF 1's name, still used


def softmax(sp_input: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """Softmax over the stored entries of each innermost row (missing entries excluded)."""
    sp = _sparse(sp_input)
    rows = sp.dense_shape[:-1]
    strides = cumprod(rows, exclusive=True, reverse=True)
    groups = reduce_sum(sp.indices[:, :-1] * strides, axis=1)
    count = reduce_prod(rows)
    top = segment_top(sp.values, groups, count)
    e = exp(sp.values - gather(top, groups))
    return sp.with_values(e / gather(segment_total(e, groups, count), groups))




def to_indicator(sp_input: SparseTensor, vocab_size: Any,
                 name: Optional[str] = None) -> Tensor:
    """A dense bool tensor of shape dense_shape[:-1] + [vocab_size], True at each stored id."""
    sp = _sparse(sp_input)
    ids = cast(sp.values, _I64)
    coords = _concat([sp.indices[:, :-1], ids[:, None]], 1)
    out_shape = _concat([sp.dense_shape[:-1], convert_to_tensor([vocab_size], _I64)], 0)
    hits = scatter_nd(coords, ones_for(ids), out_shape)
    return greater(hits, 0)


def bincount(values: Any, weights: Any = None, axis: int = 0, minlength: Any = None,
             maxlength: Any = None, binary_output: bool = False,
             name: Optional[str] = None) -> SparseTensor:
    """Counts of each value as a SparseTensor (per row with axis=-1)."""
    if isinstance(values, SparseTensor):
        values = values.values
    if isinstance(weights, SparseTensor):
        weights = weights.values
    counts = _bincount(values, weights=weights, minlength=minlength, maxlength=maxlength,
                       dtype=_dtypes.int64 if weights is None else
                       convert_to_tensor(weights).dtype,
                       axis=None if axis == 0 else axis, binary_output=binary_output)
    return from_dense(counts)


def _segment(reduce: str, data: Any, indices: Any, segment_ids: Any,
             num_segments: Any) -> Tensor:
    rows = gather(convert_to_tensor(data), convert_to_tensor(indices))
    ids = convert_to_tensor(segment_ids)
    if num_segments is None:
        num_segments = reduce_max(ids) + 1
    total = segment_total(rows, ids, num_segments)
    if reduce == "sum":
        return total
    count = segment_total(ones_for(ids, rows.dtype), ids, num_segments)
    scale = count if reduce == "mean" else sqrt(count)
    scale = scale + cast(equal(count, 0), rows.dtype)  # empty segments stay zero
    return total / _expand_like(scale, total)


def _expand_like(x: Tensor, like: Tensor) -> Tensor:
    for _ in range((like.shape.rank or 1) - 1):
        x = x[..., None]
    return x


def segment_sum(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None,
                name: Optional[str] = None) -> Tensor:
    """Sums of the rows data[indices] per segment id (tf.sparse.segment_sum)."""
    return _segment("sum", data, indices, segment_ids, num_segments)


def segment_mean(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None,
                 name: Optional[str] = None) -> Tensor:
    """Means of the rows data[indices] per segment id."""
    return _segment("mean", data, indices, segment_ids, num_segments)


def segment_sqrt_n(data: Any, indices: Any, segment_ids: Any, num_segments: Any = None,
                   name: Optional[str] = None) -> Tensor:
    """Sums of the rows data[indices] per segment divided by sqrt(segment size)."""
    return _segment("sqrt_n", data, indices, segment_ids, num_segments)


def eye(num_rows: Any, num_columns: Any = None, dtype: Any = _dtypes.float32,
        name: Optional[str] = None) -> SparseTensor:
    """A sparse identity matrix of shape [num_rows, num_columns]."""
    rows = convert_to_tensor(num_rows, _I64)
    cols = rows if num_columns is None else convert_to_tensor(num_columns, _I64)
    diag = _range(minimum(rows, cols))
    values = fill(_shape(diag), convert_to_tensor(1, dtype))
    return SparseTensor(stack([diag, diag], 1), values, stack([rows, cols]))


def expand_dims(sp_input: SparseTensor, axis: Any = None,
                name: Optional[str] = None) -> SparseTensor:
    """Insert a dim of size 1 at `axis` (negative counts from the end, as in expand_dims)."""
    sp = _sparse(sp_input)
    rank = sp.shape.rank
    axis = int(axis or 0)
    if rank is None:
        raise ValueError("sparse.expand_dims needs a SparseTensor of known rank")
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"axis {axis} is out of range for a SparseTensor of rank {rank}")
    axis = axis + rank + 1 if axis < 0 else axis
    zeros = cast(sp.indices[:, :1] * 0, _I64)
    indices = _concat([sp.indices[:, :axis], zeros, sp.indices[:, axis:]], 1)
    one = convert_to_tensor([1], _I64)
    dense_shape = _concat([sp.dense_shape[:axis], one, sp.dense_shape[axis:]], 0)
    return SparseTensor(indices, sp.values, dense_shape)


def fill_empty_rows(sp_input: SparseTensor, default_value: Any,
                    name: Optional[str] = None) -> Tuple[SparseTensor, Tensor]:
    """(the SparseTensor with `default_value` at [row, 0, ...] of every empty row, a bool
    vector marking the rows that were empty)."""
    sp = _sparse(sp_input)
    counts = segment_total(ones_for(sp.values), sp.indices[:, 0], sp.dense_shape[0])
    empty = equal(counts, 0)
    empty_rows = where(empty)  # [k, 1]
    pad = _concat([empty_rows, _zero_columns(empty_rows, sp)], 1)
    fill_values = fill(_shape(empty_rows)[:1], convert_to_tensor(default_value, sp.dtype))
    filled = SparseTensor(_concat([sp.indices, pad], 0), _concat([sp.values, fill_values], 0),
                          sp.dense_shape)
    return reorder(filled), empty


def _zero_columns(rows: Tensor, sp: SparseTensor) -> Tensor:
    width = _shape(sp.dense_shape, out_type=_I64)[0] - 1
    return fill(stack([_shape(rows, out_type=_I64)[0], width]), convert_to_tensor(0, _I64))


def retain(sp_input: SparseTensor, to_retain: Any) -> SparseTensor:
    """The entries whose flag in the bool vector `to_retain` is True."""
    sp = _sparse(sp_input)
    keep = convert_to_tensor(to_retain, _dtypes.bool)
    return SparseTensor(boolean_mask(sp.indices, keep), boolean_mask(sp.values, keep),
                        sp.dense_shape)


def mask(a: IndexedSlices, mask_indices: Any, name: Optional[str] = None) -> IndexedSlices:
    """The IndexedSlices without the slices whose index is in `mask_indices`."""
    masked = convert_to_tensor(mask_indices, a.indices.dtype)
    hit = reduce_any(equal(a.indices[:, None], masked[None, :]), axis=1)
    keep = logical_not(hit)
    return IndexedSlices(boolean_mask(a.values, keep), boolean_mask(a.indices, keep),
                         a.dense_shape)


def map_values(op: Callable, *args: Any, **kwargs: Any) -> SparseTensor:
    """`op` applied to the values of the SparseTensor arguments (which must share their
    indices); other arguments pass through."""
    found = [a for a in list(args) + list(kwargs.values()) if isinstance(a, SparseTensor)]
    if not found:
        raise ValueError("No SparseTensor in argument list of map_values")
    first = found[0]
    swap = lambda a: a.values if isinstance(a, SparseTensor) else a  # noqa: E731
    values = op(*[swap(a) for a in args], **{k: swap(v) for k, v in kwargs.items()})
    return SparseTensor(first.indices, values, first.dense_shape)


def reset_shape(sp_input: SparseTensor, new_shape: Any = None) -> SparseTensor:
    """The same entries with another dense shape (the tightest one when None)."""
    sp = _sparse(sp_input)
    if new_shape is None:
        new_shape = reduce_max(sp.indices, axis=0) + 1
    return SparseTensor(sp.indices, sp.values, new_shape)
