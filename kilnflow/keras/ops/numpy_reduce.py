"""keras.ops' reductions: sum/mean/max/... with Keras 3's axis, keepdims and dtype rules
(sums of small integers widen to int32, means and variances of integers are floatx), the
order statistics (median, quantile, percentile) and the NaN-ignoring variants."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

import kilnflow as kf
from kilnflow.keras.ops.convert import axes, standardize_dtype, to_float, to_tensor

_WIDEN = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
          "uint16": "uint32"}


def _norm_axis(axis: Any, ndim: int) -> Tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()


def _reduce(fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    return fn(x, axis=axes(axis), keepdims=keepdims)


def sum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Sum over `axis` (all axes when None); bool and small ints sum as int32."""
    x = to_tensor(x)
    x = kf.cast(x, _WIDEN.get(x.dtype.name, x.dtype.name))
    return _reduce(kf.reduce_sum, x, axis, keepdims)


def prod(x: Any, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Any:
    """Product over `axis`; bool and small ints multiply as int32."""
    x = to_tensor(x)
    x = kf.cast(x, standardize_dtype(dtype) or _WIDEN.get(x.dtype.name, x.dtype.name))
    return _reduce(kf.reduce_prod, x, axis, keepdims)


def mean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Arithmetic mean over `axis` (floatx for integer inputs)."""
    return _reduce(kf.reduce_mean, to_float(x), axis, keepdims)


def _extreme(fn: Any, x: Any, axis: Any, keepdims: bool, initial: Any, pick: Any) -> Any:
    x = to_tensor(x)
    out = _reduce(fn, x, axis, keepdims) if x.dtype.name != "bool" else kf.cast(
        _reduce(fn, kf.cast(x, "int32"), axis, keepdims), "bool")
    if initial is not None:
        out = pick(out, kf.cast(initial, out.dtype))
    return out


def max(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:
    """Largest entry over `axis` (at least `initial` when given)."""
    return _extreme(kf.reduce_max, x, axis, keepdims, initial, kf.maximum)


def min(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None) -> Any:
    """Smallest entry over `axis` (at most `initial` when given)."""
    return _extreme(kf.reduce_min, x, axis, keepdims, initial, kf.minimum)


amax, amin = max, min


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether every entry over `axis` is true (nonzero)."""
    return _reduce(kf.reduce_all, to_tensor(x, "bool"), axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Whether some entry over `axis` is true (nonzero)."""
    return _reduce(kf.reduce_any, to_tensor(x, "bool"), axis, keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Population variance over `axis`."""
    x = to_float(x)
    return _reduce(kf.math.reduce_variance, x, axis, keepdims)


def std(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Population standard deviation over `axis`."""
    return kf.sqrt(var(x, axis, keepdims))


def ptp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """max - min over `axis`."""
    return max(x, axis, keepdims) - min(x, axis, keepdims)


def count_nonzero(x: Any, axis: Any = None) -> Any:
    """How many entries over `axis` are nonzero, as int32."""
    x = to_tensor(x)
    return kf.reduce_sum(kf.cast(kf.not_equal(x, kf.zeros_like(x)), "int32"), axis=axes(axis))


def average(x: Any, axis: Any = None, weights: Any = None) -> Any:
    """Weighted mean over `axis` (weights 1-D along `axis`, or x's shape)."""
    x = to_float(x)
    if weights is None:
        return mean(x, axis)
    w = to_tensor(weights, x.dtype.name)
    if axis is not None and w.shape.rank == 1 and x.shape.rank != 1:
        shape = [1] * x.shape.rank
        shape[int(axis) % x.shape.rank] = -1
        w = kf.reshape(w, shape)
    return kf.reduce_sum(x * w, axis=axes(axis)) / kf.reduce_sum(w * kf.ones_like(x),
                                                                 axis=axes(axis))


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Index of the largest entry (first one on ties; over the flattened x when axis=None)."""
    return _arg(kf.argmax, x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """Index of the smallest entry."""
    return _arg(kf.argmin, x, axis, keepdims)


def _arg(fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    x = to_tensor(x)
    if x.dtype.name == "bool":
        x = kf.cast(x, "int32")
    if axis is None:
        out = fn(kf.reshape(x, [-1]), axis=0, output_type="int32")
        return kf.reshape(out, [1] * x.shape.rank) if keepdims else out
    out = fn(x, axis=axis, output_type="int32")
    return kf.expand_dims(out, axis) if keepdims else out


def cumsum(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    """Running sum along `axis` (over the flattened x when None; bool counts as int32)."""
    x = to_tensor(x)
    x = kf.cast(x, standardize_dtype(dtype) or ("int32" if x.dtype.name == "bool" else
                                                x.dtype.name))
    if axis is None:
        return kf.math.cumsum(kf.reshape(x, [-1]), axis=0)
    return kf.math.cumsum(x, axis=axis)


def cumprod(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    """Running product along `axis` (over the flattened x when None; bool as int32)."""
    x = to_tensor(x)
    x = kf.cast(x, standardize_dtype(dtype) or ("int32" if x.dtype.name == "bool" else
                                                x.dtype.name))
    if axis is None:
        return kf.math.cumprod(kf.reshape(x, [-1]), axis=0)
    return kf.math.cumprod(x, axis=axis)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) over `axis`, computed stably."""
    return _reduce(kf.reduce_logsumexp, to_float(x), axis, keepdims)


# ---------------------------------------------------------------- order statistics

def take_rows(x: Any, idx: Any) -> Any:
    """out[..., j] = x[..., idx[..., j]]: per-row gathers along the last axis (kf.gather has
    no batch_dims), through one flat gather."""
    n = kf.shape(x)[-1]
    lead = kf.shape(x)[:-1]
    flat = kf.reshape(x, [-1])
    k = kf.shape(idx)[-1]
    rows = kf.reshape(kf.range(kf.reduce_prod(lead)), [-1, 1]) * n
    pos = kf.reshape(kf.cast(idx, "int32"), kf.stack([-1, k])) + rows
    out = kf.reshape(kf.gather(flat, pos), kf.concat([lead, [k]], 0))
    out.set_shape(x.shape[:-1].concatenate(idx.shape[-1:]))
    return out


def _to_last(x: Any, axis: Any) -> Tuple[Any, list]:
    """x with the reduced axes merged into one last axis, and the keepdims shape."""
    nd = x.shape.rank
    red = _norm_axis(axis, nd)
    keep = [a for a in range(nd) if a not in red]
    moved = kf.transpose(x, keep + list(red)) if nd else kf.reshape(x, [1])
    dims = x.shape.as_list()
    kept = [dims[a] for a in keep]
    keep_shape = [1 if a in red else dims[a] for a in range(nd)]
    return kf.reshape(moved, kept + [-1]), keep_shape


def _quantile(x: Any, q: Any, axis: Any, method: str, keepdims: bool, nan: bool) -> Any:
    x = to_float(x)
    q = to_tensor(q, "float64")
    flat, keep_shape = _to_last(x, axis)
    if nan:
        valid = kf.logical_not(kf.math.is_nan(flat))
        flat = kf.where(valid, flat, kf.fill(kf.shape(flat), kf.cast(np.inf, flat.dtype)))
        count = kf.reduce_sum(kf.cast(valid, "float64"), axis=-1, keepdims=True)
    else:
        count = kf.cast(kf.shape(flat)[-1:], "float64") + kf.zeros_like(
            flat[..., :1], dtype="float64")
    ordered = kf.sort(flat, axis=-1)
    qs = kf.reshape(q, [-1])
    pos = kf.maximum(count - 1.0, 0.0) * qs
    lo, hi = kf.floor(pos), kf.math.ceil(pos)
    if method == "lower":
        hi = lo
    elif method == "higher":
        lo = hi
    elif method == "nearest":
        lo = hi = kf.round(pos)
    frac = kf.cast(0.5 if method == "midpoint" else pos - lo, flat.dtype) + kf.zeros_like(
        pos, dtype=flat.dtype)
    if method in ("lower", "higher", "nearest"):
        frac = kf.zeros_like(frac)
    a = take_rows(ordered, kf.cast(lo, "int32"))
    b = take_rows(ordered, kf.cast(hi, "int32"))
    out = a + (b - a) * frac
    if nan:
        out = kf.where(kf.equal(count, 0.0) | kf.zeros_like(out, dtype="bool"),
                       kf.fill(kf.shape(out), kf.cast(np.nan, out.dtype)), out)
    # out: kept dims + [nq]; NumPy puts q's dims first
    nd = out.shape.rank
    out = kf.transpose(out, [nd - 1] + list(range(nd - 1)))
    red = _norm_axis(axis, x.shape.rank)
    dims = x.shape.as_list()
    shape = q.shape.as_list() + (keep_shape if keepdims else
                                 [d for i, d in enumerate(dims) if i not in red])
    return kf.reshape(out, shape)


def quantile(x: Any, q: Any, axis: Any = None, method: str = "linear",
             keepdims: bool = False) -> Any:
    """The q-th quantiles (q in [0, 1]) over `axis`; `method` as in NumPy."""
    return _quantile(x, q, axis, method, keepdims, nan=False)


def percentile(x: Any, q: Any, axis: Any = None, method: str = "linear",
               keepdims: bool = False) -> Any:
    """The q-th percentiles (q in [0, 100])."""
    return _quantile(x, to_tensor(q, "float64") / 100.0, axis, method, keepdims, nan=False)


def median(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The median over `axis`."""
    return _quantile(x, 0.5, axis, "linear", keepdims, nan=False)


def nanquantile(x: Any, q: Any, axis: Any = None, method: str = "linear",
                keepdims: bool = False) -> Any:
    """quantile ignoring NaNs."""
    return _quantile(x, q, axis, method, keepdims, nan=True)


def nanpercentile(x: Any, q: Any, axis: Any = None, method: str = "linear",
                  keepdims: bool = False) -> Any:
    """percentile ignoring NaNs."""
    return _quantile(x, to_tensor(q, "float64") / 100.0, axis, method, keepdims, nan=True)


def nanmedian(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """median ignoring NaNs."""
    return _quantile(x, 0.5, axis, "linear", keepdims, nan=True)


# ---------------------------------------------------------------- NaN-ignoring reductions

def _fill_nan(x: Any, value: Any) -> Any:
    x = to_tensor(x)
    if not x.dtype.is_floating:
        return x
    return kf.where(kf.math.is_nan(x), kf.fill(kf.shape(x), kf.cast(value, x.dtype)), x)


def _count(x: Any, axis: Any, keepdims: bool) -> Any:
    x = to_float(x)
    return kf.reduce_sum(kf.cast(kf.logical_not(kf.math.is_nan(x)), x.dtype),
                         axis=axes(axis), keepdims=keepdims)


def nansum(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """sum with NaNs as 0."""
    return sum(_fill_nan(x, 0), axis, keepdims)


def nanprod(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """prod with NaNs as 1."""
    return prod(_fill_nan(x, 1), axis, keepdims)


def nanmean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """mean of the non-NaN entries (NaN when there are none)."""
    x = to_float(x)
    return kf.reduce_sum(_fill_nan(x, 0), axis=axes(axis), keepdims=keepdims) / _count(
        x, axis, keepdims)


def nanvar(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """var of the non-NaN entries."""
    x = to_float(x)
    m = nanmean(x, axis, keepdims=True)
    d = _fill_nan(x - m, 0)
    return kf.reduce_sum(d * d, axis=axes(axis), keepdims=keepdims) / _count(x, axis, keepdims)


def nanstd(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """std of the non-NaN entries."""
    return kf.sqrt(nanvar(x, axis, keepdims))


def _all_nan(x: Any, axis: Any, keepdims: bool) -> Any:
    return kf.reduce_all(kf.math.is_nan(x), axis=axes(axis), keepdims=keepdims)


def nanmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """max of the non-NaN entries (NaN when there are none)."""
    x = to_tensor(x)
    if not x.dtype.is_floating:
        return max(x, axis, keepdims)
    out = max(_fill_nan(x, -np.inf), axis, keepdims)
    return kf.where(_all_nan(x, axis, keepdims), kf.fill(kf.shape(out), kf.cast(
        np.nan, x.dtype)), out)


def nanmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """min of the non-NaN entries (NaN when there are none)."""
    x = to_tensor(x)
    if not x.dtype.is_floating:
        return min(x, axis, keepdims)
    out = min(_fill_nan(x, np.inf), axis, keepdims)
    return kf.where(_all_nan(x, axis, keepdims), kf.fill(kf.shape(out), kf.cast(
        np.nan, x.dtype)), out)


def nanargmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """argmax treating NaNs as -inf."""
    return argmax(_fill_nan(x, -np.inf), axis, keepdims)


def nanargmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """argmin treating NaNs as +inf."""
    return argmin(_fill_nan(x, np.inf), axis, keepdims)


def nancumsum(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    """cumsum with NaNs as 0."""
    return cumsum(_fill_nan(x, 0), axis, dtype)


def nancumprod(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    """cumprod with NaNs as 1."""
    return cumprod(_fill_nan(x, 1), axis, dtype)


def moments(x: Any, axes: Any, keepdims: bool = False, synchronized: bool = False) -> Any:
    """(mean, variance) over `axes` (float16 inputs are reduced in float32)."""
    x = to_float(x)
    dt = x.dtype.name
    if dt == "float16":
        x = kf.cast(x, "float32")
    ax = list(axes) if isinstance(axes, (tuple, list)) else [axes]
    m = kf.reduce_mean(x, axis=ax, keepdims=True)
    v = kf.reduce_mean(kf.square(x - kf.stop_gradient(m)), axis=ax, keepdims=True)
    if not keepdims:
        m, v = kf.squeeze(m, ax), kf.squeeze(v, ax)
    return kf.cast(m, dt), kf.cast(v, dt)


__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "average", "count_nonzero", "cumprod",
    "cumsum", "logsumexp", "max", "mean", "median", "min", "moments", "nanargmax",
    "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin",
    "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar", "percentile",
    "prod", "ptp", "quantile", "std", "sum", "var",
]
