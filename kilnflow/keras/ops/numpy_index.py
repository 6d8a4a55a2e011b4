"""keras.ops' indexing, sorting and set functions: take, take_along_axis, where, select,
nonzero, sort/argsort/argpartition, searchsorted, digitize, unique, isin, histogram,
bincount, unravel_index, and the dtype views."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import kilnflow as kf
from kilnflow.keras.ops.convert import (promote, shape_of, standardize_dtype, to_float,
                                        to_tensor)
from kilnflow.keras.ops.numpy_reduce import take_rows


def _wrap(indices: Any, n: Any) -> Any:
    """Negative indices count from the end, as in NumPy."""
    indices = to_tensor(indices)
    if indices.dtype.is_floating:
        indices = kf.cast(indices, "int32")
    n = kf.cast(n, indices.dtype)
    return kf.where(kf.less(indices, 0), indices + n, indices)


def take(x: Any, indices: Any, axis: Any = None) -> Any:
    """Entries of x at `indices` along `axis` (of the flattened x when None)."""
    x = to_tensor(x)
    if axis is None:
        x, axis = kf.reshape(x, [-1]), 0
    return kf.gather(x, _wrap(indices, kf.shape(x)[axis]), axis=axis)


def take_along_axis(x: Any, indices: Any, axis: Any = None) -> Any:
    """out[..., j, ...] = x[..., indices[..., j, ...], ...] along `axis` (broadcasting)."""
    from kilnflow.keras.ops.numpy_array import moveaxis
    x = to_tensor(x)
    indices = to_tensor(indices)
    if axis is None:
        x, axis = kf.reshape(x, [-1]), 0
        indices = kf.reshape(indices, [-1])
    ax = axis % x.shape.rank
    xm, im = moveaxis(x, ax, -1), moveaxis(indices, ax, -1)
    static = kf.broadcast_static_shape(xm.shape[:-1], im.shape[:-1]).concatenate(
        im.shape[-1:])
    lead = kf.broadcast_dynamic_shape(kf.shape(xm)[:-1], kf.shape(im)[:-1])
    xm = kf.broadcast_to(xm, kf.concat([lead, kf.shape(xm)[-1:]], 0))
    im = kf.broadcast_to(im, kf.concat([lead, kf.shape(im)[-1:]], 0))
    out = take_rows(xm, _wrap(im, kf.shape(xm)[-1]))
    out.set_shape(static)
    return moveaxis(out, -1, ax)


def where(condition: Any, x1: Any = None, x2: Any = None) -> Any:
    """Entries of x1 where condition holds, else x2; with one argument, nonzero()."""
    cond = to_tensor(condition, "bool")
    if x1 is None and x2 is None:
        return nonzero(cond)
    if x1 is None or x2 is None:
        raise ValueError("where: x1 and x2 must be given together")
    a, b = promote(x1, x2)
    out = kf.where(cond, a, b)  # SelectV2 broadcasts
    # its graph shape rule leaves batch dims of size 1 unknown: restore the static shape
    out.set_shape(kf.broadcast_static_shape(kf.broadcast_static_shape(cond.shape, a.shape),
                                            b.shape))
    return out


def nonzero(x: Any) -> tuple:
    """A tuple of index vectors (int32), one per axis, of the nonzero entries."""
    x = to_tensor(x)
    idx = kf.where(kf.not_equal(x, kf.zeros_like(x)))
    return tuple(kf.cast(idx[:, i], "int32") for i in range(x.shape.rank))


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """The first choice whose condition holds, per entry; `default` where none does."""
    choices = promote(*choicelist)
    out = kf.cast(default, choices[0].dtype) + kf.zeros_like(choices[0])
    for cond, choice in reversed(list(zip(condlist, choices))):
        out = where(cond, choice, out)
    return out


def sort(x: Any, axis: int = -1) -> Any:
    """Ascending sort along `axis`."""
    x = to_tensor(x)
    if x.dtype.name == "bool":
        return kf.cast(kf.sort(kf.cast(x, "int32"), axis=axis), "bool")
    return kf.sort(x, axis=axis)


def argsort(x: Any, axis: int = -1) -> Any:
    """Indices that sort x along `axis` (stable; flattened when axis=None)."""
    x = to_tensor(x)
    if x.dtype.name == "bool":
        x = kf.cast(x, "int32")
    if axis is None:
        x, axis = kf.reshape(x, [-1]), -1
    return kf.argsort(x, axis=axis, stable=True)


def argpartition(x: Any, kth: int, axis: int = -1) -> Any:
    """Indices that partition x around its kth smallest entry (a full stable argsort, which
    is one valid partition)."""
    return argsort(x, axis)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left") -> Any:
    """Insertion points of `values` into the 1-D ascending `sorted_sequence`."""
    seq, vals = promote(sorted_sequence, values)
    shape = shape_of(vals)
    out = kf.searchsorted(seq, kf.reshape(vals, [-1]), side=side, out_type="int32")
    return kf.reshape(out, shape)


def digitize(x: Any, bins: Any) -> Any:
    """Index of the bin each x falls in (bins ascending; right edge open)."""
    bins_t, x_t = promote(bins, x)
    return searchsorted(bins_t, x_t, side="right")


def unique(x: Any, sorted: bool = True, return_index: bool = False,
           return_inverse: bool = False, return_counts: bool = False, axis: Any = None,
           size: Any = None, fill_value: Any = None) -> Any:
    """The sorted distinct entries of the flattened x (NumPy's extra outputs on request)."""
    if axis is not None:
        raise NotImplementedError("unique: only axis=None is supported")
    x = kf.reshape(to_tensor(x), [-1])
    values, inv = kf.unique(x)
    order = kf.argsort(values, stable=True) if sorted else kf.range(kf.size(values))
    values = kf.gather(values, order)
    rank = kf.math.invert_permutation(order)
    inv = kf.gather(rank, inv)
    if size is not None:
        pad = size - kf.size(values)
        fill = values[-1] if fill_value is None else kf.cast(fill_value, values.dtype)
        values = kf.concat([values, kf.fill([pad], fill)], 0)[:size]
    outs = [values]
    # per-value comparisons instead of segment ops: the number of values is only known at run
    # time inside kf.function, and segment ops need it when the graph is built
    hits = kf.equal(kf.expand_dims(values, 1), kf.expand_dims(x, 0))
    if return_index:
        pos = kf.broadcast_to(kf.expand_dims(kf.range(kf.size(x)), 0), kf.shape(hits))
        outs.append(kf.reduce_min(kf.where(hits, pos, kf.fill(kf.shape(hits), kf.size(x))),
                                  axis=1))
    if return_inverse:
        outs.append(inv)
    if return_counts:
        outs.append(kf.reduce_sum(kf.cast(hits, "int32"), axis=1))
    return outs[0] if len(outs) == 1 else tuple(outs)


def isin(x1: Any, x2: Any, assume_unique: bool = False, invert: bool = False) -> Any:
    """Whether each entry of x1 occurs in x2."""
    a, b = promote(x1, x2)
    hit = kf.reduce_any(kf.equal(kf.expand_dims(a, -1), kf.reshape(b, [-1])), axis=-1)
    return kf.logical_not(hit) if invert else hit


def histogram(x: Any, bins: int = 10, range: Any = None) -> tuple:
    """(counts, bin edges) of the 1-D x (counts as floats, as Keras gives them) over `bins` equal bins of `range` (default: min-max)."""
    x = kf.reshape(to_float(x), [-1])
    if range is None:
        lo, hi = kf.reduce_min(x), kf.reduce_max(x)
    else:
        lo, hi = kf.cast(range[0], x.dtype), kf.cast(range[1], x.dtype)
    edges = lo + (hi - lo) * kf.cast(kf.range(bins + 1), x.dtype) / kf.cast(bins, x.dtype)
    inside = kf.logical_and(kf.greater_equal(x, lo), kf.less_equal(x, hi))
    idx = kf.cast(kf.floor((x - lo) / (hi - lo) * kf.cast(bins, x.dtype)), "int32")
    idx = kf.clip_by_value(idx, 0, bins - 1)
    counts = kf.math.unsorted_segment_sum(kf.cast(inside, x.dtype), idx, bins)
    return counts, edges


def bincount(x: Any, weights: Any = None, minlength: int = 0, sparse: bool = False) -> Any:
    """Counts of each non-negative integer in x (weighted sums with `weights`); 2-D x counts
    per row."""
    x = to_tensor(x)
    if weights is not None:
        w = to_tensor(weights)
        dt = w.dtype.name
        if dt in ("int8", "int16", "uint8", "uint16", "bool"):
            w = kf.cast(w, "int32")
        out = kf.math.bincount(x, weights=w, minlength=minlength, dtype=w.dtype,
                               axis=-1 if x.shape.rank == 2 else None)
        return out
    dt = "int32" if x.dtype.name in ("int8", "int16", "int32", "uint8", "uint16") else (
        x.dtype.name)
    return kf.math.bincount(x, minlength=minlength, dtype=dt,
                            axis=-1 if x.shape.rank == 2 else None)


def unravel_index(indices: Any, shape: Any) -> tuple:
    """Flat indices as a tuple of coordinate arrays for an array of `shape`."""
    idx = to_tensor(indices)
    out = []
    for d in reversed(list(shape)):
        out.append(kf.math.floormod(idx, kf.cast(d, idx.dtype)))
        idx = kf.math.floordiv(idx, kf.cast(d, idx.dtype))
    return tuple(reversed(out))


def view(x: Any, dtype: Any = None) -> Any:
    """x's bytes reinterpreted as `dtype` (the last axis rescales when sizes differ)."""
    x = to_tensor(x)
    dt = standardize_dtype(dtype)
    if dt is None or dt == x.dtype.name:
        return x
    new = kf.as_dtype(dt)
    if new.size == x.dtype.size:
        return kf.bitcast(x, dt)
    if new.size < x.dtype.size:
        out = kf.bitcast(x, dt)
        return kf.reshape(out, x.shape.as_list()[:-1] + [-1])
    ratio = new.size // x.dtype.size
    return kf.bitcast(kf.reshape(x, x.shape.as_list()[:-1] + [-1, ratio]), dt)


def view_as_complex(x: Any) -> Any:
    """A (..., 2) real tensor as complex (..., )."""
    x = to_tensor(x)
    return kf.complex(x[..., 0], x[..., 1])


def view_as_real(x: Any) -> Any:
    """A complex tensor as real (..., 2)."""
    x = to_tensor(x)
    return kf.stack([kf.math.real(x), kf.math.imag(x)], -1)


def polar(abs_: Any, angle: Any) -> Any:
    """abs_ * exp(i angle) as a complex tensor."""
    r, t = promote(abs_, angle, dtype=to_float(abs_).dtype.name)
    return kf.complex(r * kf.cos(t), r * kf.sin(t))


def get_item(x: Any, key: Any) -> Any:
    """x[key] (NumPy basic indexing; an integer tensor key gathers)."""
    x = to_tensor(x)
    if kf.is_tensor(key) or isinstance(key, (list, np.ndarray)):
        return take(x, key, 0)
    return x[key]


__all__ = [
    "argpartition", "argsort", "bincount", "digitize", "get_item", "histogram", "isin",
    "nonzero", "polar", "searchsorted", "select", "sort", "take", "take_along_axis", "unique",
    "unravel_index", "view", "view_as_complex", "view_as_real", "where",
]
