"""The kf.ragged ops (tf.ragged): range, stack, boolean_mask, map_flat_values, segment ids
and row splits, and tf.ragged_fill_empty_rows; built from public kf ops."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from kilnflow import dtypes as _dtypes
from kilnflow.ops.array import fill, range as _range, shape as _shape, where
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat as _concat
from kilnflow.ops.math import cast, equal, floordiv, logical_not, maximum
from kilnflow.ops.reduction import cumsum, reduce_max, reduce_sum
from kilnflow.ops.reshaping import broadcast_to, reshape
from kilnflow.ops.scatter import scatter_nd
from kilnflow.ops.slicing import boolean_mask as _dense_mask, gather
from kilnflow.ops.sorting import searchsorted
from kilnflow.ragged.ragged_tensor import RaggedTensor, _check_same_rows
from kilnflow.tensor import Tensor

_I64 = _dtypes.int64


def row_splits_to_segment_ids(splits: Any, name: Optional[str] = None,
                              out_type: Any = None) -> Tensor:
    """The row of each value: [0, 2, 3] -> [0, 0, 1]."""
    splits = convert_to_tensor(splits, dtype_hint=_I64)
    dtype = _dtypes.as_dtype(out_type) if out_type is not None else splits.dtype
    s = cast(splits, _I64)
    positions = _range(s[-1])
    ids = searchsorted(s[1:], positions, side="right", out_type=_I64)
    return cast(ids, dtype)


def segment_ids_to_row_splits(segment_ids: Any, num_segments: Any = None,
                              out_type: Any = None, name: Optional[str] = None) -> Tensor:
    """Row splits from sorted segment ids: [0, 0, 2] -> [0, 2, 2, 3]."""
    ids = cast(convert_to_tensor(segment_ids), _I64)
    dtype = _dtypes.as_dtype(out_type) if out_type is not None else _I64
    if num_segments is None:
        num_segments = reduce_max(_concat([ids, convert_to_tensor([-1], _I64)], 0)) + 1
    count = cast(convert_to_tensor(num_segments), _I64)
    ones = fill(_shape(ids, out_type=_I64)[:1], convert_to_tensor(1, _I64))
    lengths = scatter_nd(ids[:, None], ones, count[None])
    return cast(_concat([convert_to_tensor([0], _I64), cumsum(lengths)], 0), dtype)


def range(starts: Any, limits: Any = None, deltas: Any = 1,  # noqa: A001
          dtype: Any = None, name: Optional[str] = None,
          row_splits_dtype: Any = _I64) -> RaggedTensor:
    """Row i is range(starts[i], limits[i], deltas[i]) (scalars broadcast).

    >>> import kilnflow as kf
    >>> kf.ragged.range([3, 1])
    <tf.RaggedTensor [[0, 1, 2], [0]]>
    """
    if limits is None:
        starts, limits = 0, starts
    starts = convert_to_tensor(starts, dtype)
    limits = convert_to_tensor(limits, starts.dtype)
    deltas = convert_to_tensor(deltas, starts.dtype)
    rows = _shape(starts + limits + deltas, out_type=_I64)
    starts, limits, deltas = (broadcast_to(x, rows) for x in (starts, limits, deltas))
    starts, limits, deltas = (reshape(x, [-1]) for x in (starts, limits, deltas))
    span = cast(limits - starts, _dtypes.float64) / cast(deltas, _dtypes.float64)
    lengths = cast(maximum(_ceil(span), 0.0 * span), _I64)
    splits = _concat([convert_to_tensor([0], _I64), cumsum(lengths)], 0)
    rowids = row_splits_to_segment_ids(splits)
    position = _range(splits[-1]) - gather(splits, rowids)
    values = gather(starts, rowids) + cast(position, starts.dtype) * gather(deltas, rowids)
    return RaggedTensor.from_row_splits(values, cast(splits, row_splits_dtype), validate=False)


def _ceil(x: Tensor) -> Tensor:
    return -floordiv(-x, 1.0 + 0.0 * x)


def as_ragged(value: Any, splits_dtype: Any = _I64, ragged_rank: int = 1) -> RaggedTensor:
    """`value` as a RaggedTensor (a dense tensor's rows, `ragged_rank` dims ragged)."""
    if isinstance(value, RaggedTensor):
        return value
    from kilnflow.ragged.conversion import from_tensor
    return from_tensor(value, ragged_rank=ragged_rank, row_splits_dtype=splits_dtype)


def concat_rows(parts: Sequence[RaggedTensor]) -> RaggedTensor:
    """The rows of each RaggedTensor, one after the other."""
    if isinstance(parts[0].values, RaggedTensor):
        values = concat_rows([p.values for p in parts])
    else:
        values = _concat([p.values for p in parts], 0)
    lengths = _concat([cast(p.row_lengths(), _I64) for p in parts], 0)
    return RaggedTensor.from_row_lengths(values, lengths, validate=False)


def stack(values: Sequence[Any], axis: int = 0, name: Optional[str] = None) -> Any:
    """Stack tensors and RaggedTensors along axis 0 (each input becomes one row); dense
    inputs of one shape along another axis stack as kf.stack does."""
    items = list(values)
    if axis != 0:
        if any(isinstance(v, RaggedTensor) for v in items):
            raise NotImplementedError("ragged.stack of RaggedTensors along axis != 0")
        from kilnflow.ops.joining import stack as dense_stack
        return dense_stack(items, axis)
    tensors = [v if isinstance(v, RaggedTensor) else convert_to_tensor(v) for v in items]
    if all(not isinstance(t, RaggedTensor) and t.shape.rank == 1 for t in tensors):
        lengths = _concat([_shape(t, out_type=_I64) for t in tensors], 0)
        return RaggedTensor.from_row_lengths(_concat(tensors, 0), lengths, validate=False)
    ragged = [as_ragged(t) for t in tensors]
    if len({r.ragged_rank for r in ragged}) != 1:
        raise ValueError("ragged.stack: inputs must have the same ragged rank")
    counts = _concat([cast(r.nrows(), _I64)[None] for r in ragged], 0)
    return RaggedTensor.from_row_lengths(concat_rows(ragged), counts, validate=False)


def boolean_mask(data: Any, mask: Any, name: Optional[str] = None) -> Any:
    """Keep the items of `data` where `mask` is True; rows keep what is left of them.

    >>> import kilnflow as kf
    >>> kf.ragged.boolean_mask([[1, 2], [3, 4]], [[True, False], [False, True]])
    <tf.RaggedTensor [[1],
     [4]]>
    """
    if isinstance(mask, RaggedTensor):
        data = as_ragged(data)
        _check_same_rows(data, mask)
        keep = mask.flat_values
        values = _dense_mask(data.flat_values, keep)
        rowids = _dense_mask(data.value_rowids(), keep)
        return RaggedTensor.from_value_rowids(values, rowids, data.nrows(), validate=False)
    mask = convert_to_tensor(mask, _dtypes.bool)
    if mask.shape.rank == 1:  # whole rows
        if isinstance(data, RaggedTensor):
            rows = _dense_mask(_range(data.nrows()), mask)
            return gather_rows(data, rows)
        return _dense_mask(convert_to_tensor(data), mask)
    if isinstance(data, RaggedTensor):
        raise ValueError("ragged.boolean_mask: a dense mask of rank > 1 needs dense data")
    data = convert_to_tensor(data)
    lengths = reduce_sum(cast(mask, _I64), axis=1)
    if mask.shape.rank != 2:
        raise NotImplementedError("ragged.boolean_mask with a dense mask of rank > 2")
    return RaggedTensor.from_row_lengths(_dense_mask(data, mask), lengths, validate=False)


def gather_rows(rt: RaggedTensor, rows: Any) -> RaggedTensor:
    """The rows `rows` of a RaggedTensor, in that order."""
    rows = cast(convert_to_tensor(rows), _I64)
    splits = cast(rt.row_splits, _I64)
    starts, limits = gather(splits[:-1], rows), gather(splits[1:], rows)
    picks = range(starts, limits).flat_values
    values = gather_rows(rt.values, picks) if isinstance(rt.values, RaggedTensor) else \
        gather(rt.values, picks)
    return RaggedTensor.from_row_lengths(values, cast(limits - starts, rt.row_splits.dtype),
                                         validate=False)


def map_flat_values(op: Callable, *args: Any, **kwargs: Any) -> Any:
    """`op` applied to the flat values of the RaggedTensor arguments (which must share
    their row partitions); the result has their rows.

    >>> import kilnflow as kf
    >>> kf.ragged.map_flat_values(kf.square, kf.ragged.constant([[1, 2], [3]]))
    <tf.RaggedTensor [[1, 4], [9]]>
    """
    found = [a for a in list(args) + list(kwargs.values()) if isinstance(a, RaggedTensor)]
    if not found:
        return op(*args, **kwargs)
    for other in found[1:]:
        _check_same_rows(found[0], other)
    swap = lambda a: a.flat_values if isinstance(a, RaggedTensor) else a  # noqa: E731
    return found[0].with_flat_values(op(*[swap(a) for a in args],
                                        **{k: swap(v) for k, v in kwargs.items()}))


def ragged_fill_empty_rows(value_rowids: Any, values: Any, nrows: Any, default_value: Any,
                           name: Optional[str] = None) -> tuple:
    """(value_rowids, values, empty_row_indicator, reverse_index_map) with `default_value`
    added as the single value of each empty row, as tf.ragged_fill_empty_rows."""
    ids = cast(convert_to_tensor(value_rowids), _I64)
    values = convert_to_tensor(values)
    count = cast(convert_to_tensor(nrows), _I64)
    ones = fill(_shape(ids, out_type=_I64)[:1], convert_to_tensor(1, _I64))
    lengths = scatter_nd(ids[:, None], ones, count[None])
    empty = equal(lengths, 0)
    filled_lengths = lengths + cast(empty, _I64)
    splits = _concat([convert_to_tensor([0], _I64), cumsum(filled_lengths)], 0)
    new_ids = row_splits_to_segment_ids(splits)
    old_starts = _concat([convert_to_tensor([0], _I64), cumsum(lengths)], 0)
    position = _range(splits[-1]) - gather(splits, new_ids)
    is_default = gather(empty, new_ids)
    source = gather(old_starts, new_ids) + position
    safe = where(is_default, 0 * source, source)
    picked = gather(_concat([values, convert_to_tensor(default_value, values.dtype)[None]], 0),
                    where(is_default, 0 * safe + _shape(values, out_type=_I64)[0], safe))
    reverse = _dense_mask(_range(splits[-1]), logical_not(is_default))
    return new_ids, picked, empty, reverse
