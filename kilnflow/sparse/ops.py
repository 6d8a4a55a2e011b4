"""The kf.sparse ops (tf.sparse): each built from public kf ops over a SparseTensor's
components, so every one runs eagerly, in kf.function graphs and in Sessions, and the
gradients TF defines (to values and to dense operands) come from the ops used.

Results that TF keeps in canonical (row-major) order are reordered here the same way;
ops that combine two sparse tensors (add, maximum, minimum) go through a dense mask of the
union of their entries, which costs the dense size but keeps explicit zeros as TF does.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

from kilnflow import dtypes as _dtypes
from kilnflow.ops.array import fill, ones_like, range as _range, shape as _shape, where
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat as _concat, stack
from kilnflow.ops.math import abs as _abs, cast, equal, greater, greater_equal, less
from kilnflow.ops.math import logical_and, maximum as _maximum
from kilnflow.ops.math import minimum as _minimum, not_equal
from kilnflow.ops.math_extra import cumprod
from kilnflow.ops.reduction import cumsum, reduce_all, reduce_max as _reduce_max
from kilnflow.ops.reduction import reduce_prod, reduce_sum as _reduce_sum
from kilnflow.ops.scatter import gather_nd, scatter_nd, tensor_scatter_nd_max
from kilnflow.ops.scatter import tensor_scatter_nd_update
from kilnflow.ops.slicing import boolean_mask, gather
from kilnflow.ops.sorting import argsort
from kilnflow.sparse.sparse_tensor import SparseTensor
from kilnflow.tensor import Tensor

_I64 = _dtypes.int64


def _sparse(value: Any, name: str = "sp_input") -> SparseTensor:
    if not isinstance(value, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor. ({name} is a {type(value).__name__})")
    return value


def _strides(dense_shape: Tensor) -> Tensor:
    """Row-major strides of a shape: [d1*d2*.., .., 1]."""
    return cumprod(dense_shape, exclusive=True, reverse=True)


def _linear(indices: Tensor, dense_shape: Tensor) -> Tensor:
    """Each coordinate's row-major offset in the dense tensor."""
    return _reduce_sum(indices * _strides(dense_shape), axis=1)


def _unravel(offsets: Tensor, dense_shape: Tensor) -> Tensor:
    return (offsets[:, None] // _strides(dense_shape)[None, :]) % dense_shape[None, :]


def _rebuilt(indices: Tensor, values: Tensor, dense_shape: Tensor) -> SparseTensor:
    return SparseTensor(indices, values, dense_shape)


def ones_for(x: Tensor, dtype: Any = _dtypes.int32) -> Tensor:
    """Ones, one per row of `x` (computed from its shape only)."""
    return fill(_shape(x)[:1], convert_to_tensor(1, dtype))


def _nnz_ones(sp: SparseTensor) -> Tensor:
    return ones_for(sp.values)


def segment_total(data: Tensor, ids: Tensor, count: Any) -> Tensor:
    """unsorted_segment_sum with a count that may be a tensor only known when run (through
    scatter_nd, which sums rows sent to one segment)."""
    ids = cast(ids, _I64)
    count = cast(convert_to_tensor(count), _I64)
    return scatter_nd(ids[:, None], data, _concat([count[None], _shape(data, out_type=_I64)[1:]],
                                                  0))


def segment_top(data: Tensor, ids: Tensor, count: Any) -> Tensor:
    """unsorted_segment_max (the dtype's lowest value for empty segments), count a tensor."""
    ids = cast(ids, _I64)
    count = cast(convert_to_tensor(count), _I64)
    lowest = fill(count[None], convert_to_tensor(data.dtype.min, data.dtype))
    return tensor_scatter_nd_max(lowest, ids[:, None], data)


def reorder(sp_input: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """The same SparseTensor with its entries in row-major order."""
    sp = _sparse(sp_input)
    order = argsort(_linear(sp.indices, sp.dense_shape), stable=True)
    return _rebuilt(gather(sp.indices, order), gather(sp.values, order), sp.dense_shape)


def to_dense(sp_input: SparseTensor, default_value: Any = None, validate_indices: bool = True,
             name: Optional[str] = None) -> Tensor:
    """The dense tensor: `default_value` (zero) wherever no entry is stored.

    >>> import kilnflow as kf
    >>> st = kf.sparse.SparseTensor([[1]], [5.0], [3])
    >>> kf.sparse.to_dense(st).numpy().tolist()
    [0.0, 5.0, 0.0]
    """
    sp = _sparse(sp_input)
    if default_value is None:
        return scatter_nd(sp.indices, sp.values, sp.dense_shape)
    base = fill(sp.dense_shape, convert_to_tensor(default_value, sp.dtype))
    return tensor_scatter_nd_update(base, sp.indices, sp.values)


def from_dense(tensor: Any, name: Optional[str] = None) -> SparseTensor:
    """The non-zero (non-empty for strings) entries of a dense tensor, in row-major order."""
    t = convert_to_tensor(tensor)
    zero = b"" if t.dtype is _dtypes.string else 0
    indices = where(not_equal(t, convert_to_tensor(zero, t.dtype)))
    return _rebuilt(indices, gather_nd(t, indices), _shape(t, out_type=_I64))


def _union(a: SparseTensor, b: SparseTensor) -> Tensor:
    """Coordinates stored in a or b, in row-major order."""
    both = _concat([a.indices, b.indices], 0)
    hits = scatter_nd(both, ones_for(both), a.dense_shape)
    return where(greater(hits, 0))


def add(a: Any, b: Any, threshold: Any = 0, name: Optional[str] = None) -> Any:
    """Sum of two SparseTensors (entries of either; sums with |sum| < threshold dropped) or of
    a SparseTensor and a dense Tensor (a dense result)."""
    if not isinstance(a, SparseTensor) or not isinstance(b, SparseTensor):
        if isinstance(b, SparseTensor):
            a, b = b, a
        return to_dense(_sparse(a, "a")) + convert_to_tensor(b, a.dtype)
    indices = _union(a, b)
    values = gather_nd(to_dense(a) + to_dense(b), indices)
    keep = greater_equal(_abs(values), convert_to_tensor(threshold, values.dtype))
    return _rebuilt(boolean_mask(indices, keep), boolean_mask(values, keep), a.dense_shape)


def _elementwise_union(a: SparseTensor, b: SparseTensor, fn: Callable) -> SparseTensor:
    a, b = _sparse(a, "sp_a"), _sparse(b, "sp_b")
    indices = _union(a, b)
    return _rebuilt(indices, gather_nd(fn(to_dense(a), to_dense(b)), indices), a.dense_shape)


def maximum(sp_a: SparseTensor, sp_b: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """Elementwise maximum over the union of entries (a missing entry counts as zero)."""
    return _elementwise_union(sp_a, sp_b, _maximum)


def minimum(sp_a: SparseTensor, sp_b: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """Elementwise minimum over the union of entries (a missing entry counts as zero)."""
    return _elementwise_union(sp_a, sp_b, _minimum)


def _reduced_sparse(dense: Tensor, present: Tensor) -> SparseTensor:
    indices = where(present)
    return _rebuilt(indices, gather_nd(dense, indices), _shape(dense, out_type=_I64))


def reduce_sum(sp_input: SparseTensor, axis: Any = None, keepdims: Any = None,
               output_is_sparse: bool = False, name: Optional[str] = None) -> Any:
    """Sum of the entries along `axis` (all when None); a SparseTensor of the positions
    that had entries with `output_is_sparse`."""
    sp = _sparse(sp_input)
    dense = _reduce_sum(to_dense(sp), axis=axis, keepdims=bool(keepdims))
    if not output_is_sparse:
        return dense
    counts = _reduce_sum(to_dense(sp.with_values(_nnz_ones(sp))), axis, bool(keepdims))
    return _reduced_sparse(dense, greater(counts, 0))


def reduce_max(sp_input: SparseTensor, axis: Any = None, keepdims: Any = None,
               output_is_sparse: bool = False, name: Optional[str] = None) -> Any:
    """Maximum of the stored entries along `axis` (implicit zeros are not counted; a
    position with no entries gives 0)."""
    sp = _sparse(sp_input)
    lowest = convert_to_tensor(sp.dtype.min, sp.dtype)
    dense = tensor_scatter_nd_max(fill(sp.dense_shape, lowest), sp.indices, sp.values)
    best = _reduce_max(dense, axis=axis, keepdims=bool(keepdims))
    counts = _reduce_sum(to_dense(sp.with_values(_nnz_ones(sp))), axis, bool(keepdims))
    present = greater(counts, 0)
    best = where(present, best, fill(_shape(best), convert_to_tensor(0, sp.dtype)))
    return _reduced_sparse(best, present) if output_is_sparse else best


def reshape(sp_input: SparseTensor, shape: Any, name: Optional[str] = None) -> SparseTensor:
    """The same entries in a tensor of another shape (one dim may be -1)."""
    sp = _sparse(sp_input)
    shape = convert_to_tensor(shape, _I64)
    total = reduce_prod(sp.dense_shape)
    known = reduce_prod(where(equal(shape, -1), ones_like(shape), shape))
    new_shape = where(equal(shape, -1), fill(_shape(shape), total // known), shape)
    return _rebuilt(_unravel(_linear(sp.indices, sp.dense_shape), new_shape), sp.values,
                    new_shape)


def transpose(sp_input: SparseTensor, perm: Any = None, name: Optional[str] = None) -> SparseTensor:
    """Permute the dims (reversed when perm is None); entries back in row-major order."""
    sp = _sparse(sp_input)
    if perm is None:
        perm = _range(_shape(sp.dense_shape)[0] - 1, -1, -1)
    perm = convert_to_tensor(perm, _dtypes.int32)
    return reorder(_rebuilt(gather(sp.indices, perm, axis=1), sp.values,
                            gather(sp.dense_shape, perm)))


def concat(axis: int, sp_inputs: Sequence[SparseTensor], expand_nonconcat_dims: bool = False,
           name: Optional[str] = None) -> SparseTensor:
    """Concatenate SparseTensors along `axis` (entries in row-major order)."""
    inputs = [_sparse(s, "sp_inputs") for s in sp_inputs]
    rank = inputs[0].shape.rank
    axis = int(axis) + (rank if int(axis) < 0 and rank is not None else 0)
    shapes = stack([s.dense_shape for s in inputs])
    if expand_nonconcat_dims:
        biggest = _reduce_max(shapes, axis=0)
    else:
        biggest = inputs[0].dense_shape
    column = cast(equal(_range(_shape(biggest)[0]), axis), _I64)
    starts = cumsum(shapes[:, axis], exclusive=True)
    indices = _concat([s.indices + starts[i] * column for i, s in enumerate(inputs)], 0)
    values = _concat([s.values for s in inputs], 0)
    dense_shape = biggest * (1 - column) + _reduce_sum(shapes[:, axis]) * column
    return reorder(_rebuilt(indices, values, dense_shape))


def slice(sp_input: SparseTensor, start: Any, size: Any,  # noqa: A001
          name: Optional[str] = None) -> SparseTensor:
    """The entries inside the box [start, start + size), shifted to start at zero."""
    sp = _sparse(sp_input)
    start = convert_to_tensor(start, _I64)
    size = convert_to_tensor(size, _I64)
    inside = reduce_all(logical_and(greater_equal(sp.indices, start),
                                    less(sp.indices, start + size)), axis=1)
    dense_shape = _minimum(size, _maximum(sp.dense_shape - start, 0 * size))
    return _rebuilt(boolean_mask(sp.indices, inside) - start, boolean_mask(sp.values, inside),
                    dense_shape)


def split(sp_input: Optional[SparseTensor] = None, num_split: Optional[int] = None,
          axis: Optional[int] = None, name: Optional[str] = None) -> List[SparseTensor]:
    """`num_split` SparseTensors along `axis`; the first dim % num_split pieces are one
    larger."""
    sp = _sparse(sp_input)
    if num_split is None or axis is None:
        raise ValueError("sparse.split needs num_split and axis")
    rank = sp.shape.rank
    axis = int(axis) + (rank if int(axis) < 0 and rank is not None else 0)
    dim = sp.dense_shape[axis]
    base, extra = dim // num_split, dim % num_split
    column = cast(equal(_range(_shape(sp.dense_shape)[0]), axis), _I64)
    pieces = []
    for i in range(int(num_split)):
        first = base * i + _minimum(extra, convert_to_tensor(i, _I64))
        length = base + cast(less(convert_to_tensor(i, _I64), extra), _I64)
        start = first * column
        size = sp.dense_shape * (1 - column) + length * column
        pieces.append(slice(sp, start, size))
    return pieces
