"""rt[...] for RaggedTensors: a row (rt[i]), a range of rows (rt[a:b]), and an index or a
slice within every row (rt[:, j], rt[:, a:b], rt[i, j]); built from public kf ops."""
from __future__ import annotations

from typing import Any

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops.array import range as _range
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import cast, equal, greater_equal, less, logical_and, maximum, minimum
from kilnflow.ops.slicing import boolean_mask, gather
from kilnflow.ragged.ragged_tensor import RaggedTensor

_I64 = _dtypes.int64


def getitem(rt: RaggedTensor, key: Any) -> Any:
    if not isinstance(key, tuple):
        key = (key,)
    if not key:
        return rt
    first, rest = key[0], key[1:]
    if first is Ellipsis:
        raise NotImplementedError("Ellipsis in RaggedTensor indexing")
    if isinstance(first, slice):
        rows = _row_range(rt, first)
        return _within_rows(rows, rest[0], rest[1:]) if rest else rows
    row = _row(rt, first)
    return row[rest] if rest else row


def _index(value: Any, rt: RaggedTensor) -> Any:
    """A Python int or scalar tensor row index, negative ones counted from the end."""
    if isinstance(value, int):
        rows = rt.shape.as_list()[0]
        if rows is not None and not -rows <= value < rows:
            raise IndexError(f"Row key {value} out of bounds")
        index = convert_to_tensor(value, _I64)
        return index + cast(rt.nrows(), _I64) if value < 0 else index
    index = cast(convert_to_tensor(value), _I64)
    return index + cast(less(index, 0), _I64) * cast(rt.nrows(), _I64)


def _row(rt: RaggedTensor, index: Any) -> Any:
    i = _index(index, rt)
    splits = cast(rt.row_splits, _I64)
    return _values_range(rt.values, splits[i], splits[i + 1])


def _values_range(values: Any, start: Any, stop: Any) -> Any:
    if isinstance(values, RaggedTensor):
        return _row_range(values, slice(start, stop))
    return gather(values, _range(start, stop))


def _bound(value: Any, default: Any, size: Any) -> Any:
    if value is None:
        return default()
    v = cast(convert_to_tensor(value), _I64)
    n = cast(size, _I64)
    v = v + cast(less(v, 0), _I64) * n
    return minimum(maximum(v, 0 * n), n)


def _row_range(rt: RaggedTensor, key: slice) -> RaggedTensor:
    """Rows start..stop (step 1) as a RaggedTensor."""
    if key.step not in (None, 1):
        raise NotImplementedError("RaggedTensor row slices with a step other than 1")
    n = cast(rt.nrows(), _I64)
    start = _bound(key.start, lambda: 0 * n, n)
    stop = maximum(_bound(key.stop, lambda: n, n), start)
    splits = cast(rt.row_splits, _I64)
    new_splits = gather(splits, _range(start, stop + 1))
    values = _values_range(rt.values, new_splits[0], new_splits[-1])
    return RaggedTensor.from_row_splits(values, cast(new_splits - new_splits[0],
                                                     rt.row_splits.dtype), validate=False)


def _positions(rt: RaggedTensor) -> Any:
    """Each value's position within its row, and its row's length."""
    splits = cast(rt.row_splits, _I64)
    rowids = cast(rt.value_rowids(), _I64)
    lengths = splits[1:] - splits[:-1]
    position = _range(splits[-1]) - gather(splits, rowids)
    return position, gather(lengths, rowids), rowids


def _within_rows(rt: RaggedTensor, key: Any, rest: tuple) -> Any:
    """rt[:, key, *rest]: `key` applied to every row."""
    if isinstance(rt.values, RaggedTensor):
        raise NotImplementedError("indexing inside the rows of a RaggedTensor of ragged "
                                  "rank > 1")
    position, length, rowids = _positions(rt)
    if isinstance(key, slice):
        if key.step not in (None, 1):
            raise NotImplementedError("slices inside rows with a step other than 1")
        start = _per_row(key.start, length, 0 * length)
        stop = _per_row(key.stop, length, length)
        keep = logical_and(greater_equal(position, start), less(position, stop))
        values = boolean_mask(rt.values, keep)
        kept_ids = boolean_mask(rowids, keep)
        out = RaggedTensor.from_value_rowids(values, kept_ids, rt.nrows(), validate=False)
        return out.with_values(out.values[(slice(None),) + rest]) if rest else out
    j = cast(convert_to_tensor(key), _I64)
    target = j + cast(less(j, 0), _I64) * length
    picked = boolean_mask(rt.values, equal(position, target))
    counts = picked.shape.as_list()[0] if picked.shape.rank else None
    rows = rt.shape.as_list()[0]
    if counts is not None and rows is not None and counts != rows:
        raise errors.InvalidArgumentError(f"Index {key} out of bounds for a row of the "
                                          f"RaggedTensor (some rows are shorter)")
    return picked[(slice(None),) + rest] if rest else picked


def _per_row(value: Any, length: Any, default: Any) -> Any:
    if value is None:
        return default
    v = cast(convert_to_tensor(value), _I64)
    v = v + cast(less(v, 0), _I64) * length
    return minimum(maximum(v, 0 * length), length)
