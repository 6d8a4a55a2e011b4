"""TF's ragged dispatch: the dense reductions, concat/stack and binary elementwise ops on
RaggedTensors. Installed into kilnflow/ops/ragged_hooks.py at import, so kf.reduce_sum,
kf.concat, kf.add, ... (whose one isinstance check finds a RaggedTensor) delegate here.

Reductions group values by segment: along the first ragged axis a value's segment is its
row; along axis 0 it is its position in the row; deeper ragged rows are combined
position by position. Empty segments give the reduction's identity, as TF's do
(0, 1, the dtype's lowest value for max, highest for min).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.ops import ragged_hooks, reduction, segment
from kilnflow.ops import math as _math
from kilnflow.ops.array import fill, ones_like, range as _range, shape as _shape, \
    stop_gradient, where, zeros
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat as _concat
from kilnflow.ops.reduction import cumsum
from kilnflow.ops.reshaping import expand_dims, reshape, transpose
from kilnflow.ops.scatter import gather_nd, tensor_scatter_nd_add, tensor_scatter_nd_max, \
    tensor_scatter_nd_min
from kilnflow.ops.slicing import gather
from kilnflow.ops.sorting import argsort
from kilnflow.ragged.ops import as_ragged, concat_rows, gather_rows
from kilnflow.ragged.ragged_tensor import RaggedTensor, _check_same_rows
from kilnflow.tensor import EagerTensor, Tensor

_I64 = _dtypes.int64
_DENSE = {"sum": reduction.reduce_sum, "max": reduction.reduce_max,
          "min": reduction.reduce_min, "prod": reduction.reduce_prod,
          "any": reduction.reduce_any, "all": reduction.reduce_all}
_SEGMENT = {"sum": segment.unsorted_segment_sum, "max": segment.unsorted_segment_max,
            "min": segment.unsorted_segment_min, "prod": segment.unsorted_segment_prod}
_SCATTER = {"sum": tensor_scatter_nd_add, "max": tensor_scatter_nd_max,
            "min": tensor_scatter_nd_min}


# ---------------------------------------------------------------- reductions

def _identity(kind: str, dtype: _dtypes.DType) -> Any:
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    limits = np.finfo(np_dtype) if np_dtype.kind in "fc" else np.iinfo(np_dtype)
    return {"max": limits.min, "min": limits.max, "prod": 1, "sum": 0}[kind]


def _segment_reduce(kind: str, data: Tensor, ids: Tensor, count: Tensor) -> Tensor:
    """result[s] = the `kind` reduction of data[k] over the k with ids[k] == s."""
    if kind in ("any", "all"):  # counted: an empty row is False for any, True for all
        hits = _math.cast(data if kind == "any" else _math.logical_not(data), _I64)
        total = _segment_reduce("sum", hits, ids, count)
        return _math.greater(total, 0) if kind == "any" else _math.equal(total, 0)
    if kind in ("max", "min") and data.dtype.is_floating:
        return _differentiable_extremum(kind, data, ids, count)
    if rules.constant_value(count) is not None and not (kind == "prod" and
                                                        data.dtype.is_floating):
        return _SEGMENT[kind](data, ids, count)  # (which needs a known count)
    if kind == "prod":  # group the rows, pad with 1 and reduce: differentiable, any count
        order = argsort(ids, stable=True)
        grouped = RaggedTensor.from_value_rowids(gather(data, order), gather(ids, order),
                                                 count, validate=False)
        return reduction.reduce_prod(grouped.to_tensor(default_value=1), axis=1)
    out_shape = _concat([count[None], _shape(data, out_type=_I64)[1:]], 0)
    base = fill(out_shape, convert_to_tensor(_identity(kind, data.dtype), data.dtype))
    return _SCATTER[kind](base, _math.cast(ids, _I64)[:, None], data)


def _differentiable_extremum(kind: str, data: Tensor, ids: Tensor, count: Tensor) -> Tensor:
    """The segment max/min, written so its gradient is TF's: dy shared among the values
    equal to their segment's extremum (the segment ops have no gradient of their own)."""
    if rules.constant_value(count) is not None:
        extremum = _SEGMENT[kind](data, ids, count)
    else:
        out_shape = _concat([count[None], _shape(data, out_type=_I64)[1:]], 0)
        base = fill(out_shape, convert_to_tensor(_identity(kind, data.dtype), data.dtype))
        extremum = _SCATTER[kind](base, _math.cast(ids, _I64)[:, None], data)
    extremum = stop_gradient(extremum)
    hit = _math.equal(data, gather(extremum, ids))
    ties = _segment_reduce("sum", _math.cast(hit, data.dtype), ids, count)
    picked = where(hit, data, ones_like(data) * 0)  # not data * hit: inf * 0 is NaN
    shared = _segment_reduce("sum", picked, ids, count) / _math.maximum(ties, 1)
    return where(_math.greater(ties, 0), shared, extremum)


def _positions(rt: RaggedTensor) -> tuple:
    """(row id, position within the row) of each of rt's values."""
    splits = _math.cast(rt.row_splits, _I64)
    rowids = _math.cast(rt.value_rowids(), _I64)
    return rowids, _range(splits[-1]) - gather(splits, rowids)


def _reduce_rows(kind: str, values: Any, ids: Tensor, count: Tensor) -> Any:
    """result[s] combines, position by position, the rows values[k] with ids[k] == s."""
    if not isinstance(values, RaggedTensor):
        return _segment_reduce(kind, values, ids, count)
    lengths = _math.cast(values.row_lengths(), _I64)
    widest = _math.maximum(_segment_reduce("max", lengths, ids, count), 0)
    splits = _concat([convert_to_tensor([0], _I64), cumsum(widest)], 0)
    rowids, position = _positions(values)
    key = gather(splits, gather(ids, rowids)) + position
    inner = _reduce_rows(kind, values.values, key, splits[-1])
    return RaggedTensor.from_row_splits(inner, _math.cast(splits, values.row_splits.dtype),
                                        validate=False)


def _reduce_axis(kind: str, rt: RaggedTensor, axis: int) -> Any:
    if axis == 0:  # every row is in the one segment 0
        nrows = _math.cast(rt.nrows(), _I64)
        whole = _reduce_rows(kind, rt, zeros(nrows[None], _I64), convert_to_tensor(1, _I64))
        return whole[0]
    if axis == 1:
        return _reduce_rows(kind, rt.values, _math.cast(rt.value_rowids(), _I64),
                            _math.cast(rt.nrows(), _I64))
    if axis <= rt.ragged_rank:
        return rt.with_values(_reduce_axis(kind, rt.values, axis - 1))
    return rt.with_flat_values(_DENSE[kind](rt.flat_values, axis - rt.ragged_rank))


def _axes(rt: RaggedTensor, axis: Any, op: str) -> list:
    rank = rt.shape.rank
    if axis is None:
        return list(range(rank))
    if isinstance(axis, Tensor):
        known = rules.constant_value(axis)
        if known is None:
            raise NotImplementedError(f"{op}: a RaggedTensor's reduction axis must be known")
        axis = known.tolist()
    wanted = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    out = []
    for a in wanted:
        if not -rank <= int(a) < rank:
            raise ValueError(f"axis={a} out of bounds: expected {-rank}<=axis<{rank} "
                             f"(reducing a RaggedTensor of rank {rank}) [Op:{op}]")
        out.append(int(a) % rank)
    return sorted(set(out), reverse=True)


def reduce(kind: str, rt: RaggedTensor, axis: Any = None, keepdims: bool = False) -> Any:
    """The `kind` reduction (sum, mean, max, min, prod, any, all) of a RaggedTensor."""
    op = f"Reduce{kind.capitalize()}"
    if kind == "mean":  # TF: the sum over the count (truediv: integers give float64)
        total = reduce("sum", rt, axis, keepdims)
        count = reduce("sum", rt.with_flat_values(ones_like(rt.flat_values)), axis, keepdims)
        mean = _math.truediv(total, count)
        if isinstance(mean, RaggedTensor):  # as TF's: the quotient has no uniform dims
            mean = RaggedTensor.from_nested_row_splits(mean.flat_values,
                                                       mean.nested_row_splits, validate=False)
        return mean
    axes = _axes(rt, axis, op)
    if axis is None and not keepdims:
        return _DENSE[kind](rt.flat_values)
    result: Any = rt
    for a in axes:  # highest first, so the lower axes keep their numbers
        if not isinstance(result, RaggedTensor):
            result = _DENSE[kind](result, a, keepdims=keepdims)
            continue
        result = _reduce_axis(kind, result, a)
        if keepdims:
            result = _keep_dim(result, a, op)
    return result


def _keep_dim(result: Any, axis: int, op: str) -> Any:
    """The reduced `axis` put back with length 1 (keepdims=True)."""
    if not isinstance(result, RaggedTensor):
        return expand_dims(result, axis)
    if axis > result.ragged_rank:
        return result.with_flat_values(expand_dims(result.flat_values,
                                                   axis - result.ragged_rank))
    if axis == 1:  # each row becomes the one row of a new uniform dim
        return RaggedTensor.from_uniform_row_length(result, 1, validate=False)
    raise NotImplementedError(f"{op}: keepdims=True along axis {axis} of a result that "
                              f"is still ragged")


# ---------------------------------------------------------------- binary elementwise ops

def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(errors.with_location(message))


def _broadcast_dense(rt: RaggedTensor, dense: Tensor) -> Tensor:
    """`dense` broadcast to rt's flat values: a shape that broadcasts against the uniform
    inner dims, or one of rt's full rank [nrows or 1, row length or 1, ...inner]."""
    inner = rt.flat_values.shape.rank
    rank = dense.shape.rank
    if rank is not None and inner is not None and rank <= inner - 1:
        return dense
    if rank is None or rank != rt.shape.rank or rt.ragged_rank != 1:
        raise _invalid(f"Unable to broadcast a dense tensor of shape {dense.shape} against "
                       f"a RaggedTensor of shape {rt.shape}")
    rows, width = dense.shape.as_list()[:2]
    rowids, position = _positions(rt)
    if width not in (1, None):
        lengths = rt.row_lengths()
        if isinstance(lengths, EagerTensor) and np.any(lengths.numpy() != width):
            raise _invalid(f"Unable to broadcast a dense tensor of shape {dense.shape} "
                           f"against a RaggedTensor of shape {rt.shape}: its rows must all "
                           f"have length {width}")
    pick_row, pick_col = _pick(rowids, rows, dense, 0), _pick(position, width, dense, 1)
    return gather_nd(dense, _concat([pick_row[:, None], pick_col[:, None]], 1))


def _pick(index: Tensor, size: Optional[int], dense: Tensor, axis: int) -> Tensor:
    """`index` into a dim of `size` that broadcasts (size 1: always 0); an unknown size
    (in a graph) decides when the graph runs."""
    if size is not None:
        return index if size != 1 else 0 * index
    wide = _math.cast(_math.not_equal(_shape(dense, out_type=_I64)[axis], 1), _I64)
    return index * wide


def binary(fn: Any, x: Any, y: Any, name: Optional[str] = None) -> RaggedTensor:
    """fn(x, y) where x or y is a RaggedTensor: two RaggedTensors need identical row
    partitions; a dense operand broadcasts against the ragged one as TF broadcasts."""
    if isinstance(x, RaggedTensor) and isinstance(y, RaggedTensor):
        _check_same_rows(x, y)
        return x.with_flat_values(fn(x.flat_values, y.flat_values, name=name))
    if isinstance(x, RaggedTensor):
        other = convert_to_tensor(y, dtype_hint=x.dtype)
        return x.with_flat_values(fn(x.flat_values, _broadcast_dense(x, other), name=name))
    other = convert_to_tensor(x, dtype_hint=y.dtype)
    return y.with_flat_values(fn(_broadcast_dense(y, other), y.flat_values, name=name))


# ---------------------------------------------------------------- concat and stack

def _inputs(values: Sequence, op: str) -> list:
    ragged = [v for v in values if isinstance(v, RaggedTensor)]
    rr = ragged[0].ragged_rank
    out = [as_ragged(v, ragged[0].row_splits.dtype, rr) for v in values]
    if len({r.ragged_rank for r in out}) != 1 or \
            len({r.shape.rank for r in out}) != 1:
        raise ValueError(f"{op}: all inputs must have the same rank and ragged rank")
    return out


def _interleave(parts: list, op: str) -> RaggedTensor:
    """Row i of every part, one after the other (k rows per i): the rows of the result's
    second dim, before they are grouped."""
    counts = [r.nrows() for r in parts]
    if all(isinstance(c, EagerTensor) for c in counts) and \
            len({int(c.numpy()) for c in counts}) != 1:
        raise _invalid(f"Input tensors at index 0 (=x) and 1 (=y) must have the same number "
                       f"of rows to concatenate or stack along axis 1 [Op:{op}]")
    k, n = len(parts), _math.cast(counts[0], _I64)
    order = reshape(transpose(reshape(_range(n * k), [k, -1])), [-1])
    return gather_rows(concat_rows(parts), order)


def _join(ragged: Any, dense: Any) -> Any:
    return lambda xs, a: ragged(xs, a) if isinstance(xs[0], RaggedTensor) else dense(xs, a)


def _inner(parts: list, axis: int, op: str, join: Any) -> RaggedTensor:
    """Joined along a uniform inner axis: the flat values join where the rows agree."""
    rr = parts[0].ragged_rank
    if axis <= rr:  # a deeper ragged axis: the outer rows must agree, then one level down
        splits = [p.row_splits for p in parts]
        if all(isinstance(t, EagerTensor) for t in splits) and \
                any(not np.array_equal(t.numpy(), splits[0].numpy()) for t in splits[1:]):
            raise _invalid(f"{op} along axis {axis}: the inputs' outer rows differ")
        return parts[0].with_values(join([p.values for p in parts], axis - 1))
    for other in parts[1:]:
        _check_same_rows(parts[0], other)
    return parts[0].with_flat_values(join([p.flat_values for p in parts], axis - rr))


def concat(values: Sequence, axis: int) -> RaggedTensor:
    """kf.concat of RaggedTensors (and dense tensors, converted): along axis 0 the rows
    follow each other; along axis 1 each row is the concatenation of the inputs' rows."""
    parts = _inputs(values, "ConcatV2")
    rank = parts[0].shape.rank
    if not -rank <= axis < rank:
        raise ValueError(f"axis={axis} out of bounds for RaggedTensors of rank {rank}")
    axis %= rank
    if len(parts) == 1:
        return parts[0]
    if axis == 0:
        return concat_rows(parts)
    if axis == 1:
        rows = _interleave(parts, "ConcatV2")
        splits = gather(rows.row_splits, _range(0, _shape(rows.row_splits, out_type=_I64)[0],
                                                len(parts)))
        return RaggedTensor.from_row_splits(rows.values, splits, validate=False)
    return _inner(parts, axis, "concat", _join(concat, _concat))


def stack(values: Sequence, axis: int = 0) -> RaggedTensor:
    """kf.stack of RaggedTensors (and dense tensors, converted) along a new axis 0 or 1."""
    parts = _inputs(values, "Pack")
    rank = parts[0].shape.rank + 1
    if not -rank <= axis < rank:
        raise ValueError(f"axis={axis} out of bounds for stacking rank {rank - 1} inputs")
    axis %= rank
    k = len(parts)
    if axis == 0:
        counts = _concat([_math.cast(r.nrows(), _I64)[None] for r in parts], 0)
        return RaggedTensor.from_row_lengths(concat_rows(parts), counts, validate=False)
    if axis == 1:
        rows = _interleave(parts, "Pack")
        total = _math.cast(rows.nrows(), _I64)
        return RaggedTensor.from_row_splits(rows, _math.cast(_range(0, total + 1, k),
                                                             rows.row_splits.dtype),
                                            validate=False)
    from kilnflow.ops.joining import stack as dense_stack
    return _inner(parts, axis, "stack", _join(stack, dense_stack))


def install() -> None:
    """Plug the ragged forms into the dense ops (kilnflow/ops/ragged_hooks.py)."""
    ragged_hooks.binary, ragged_hooks.reduce = binary, reduce
    ragged_hooks.concat, ragged_hooks.stack = concat, stack
    ragged_hooks.RAGGED = RaggedTensor
