"""keras.ops' array creation and shape functions (NumPy names and argument conventions):
arange/linspace/eye/full..., reshape/transpose/concatenate/split/pad/flip..., the window
functions and the triangular/diagonal helpers."""
from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

import kilnflow as kf
from kilnflow.keras import backend
from kilnflow.keras.ops.convert import (is_placeholder, promote, result_type, shape_of,
                                        standardize_dtype, to_tensor)


def _shape_arg(shape: Any) -> Any:
    if isinstance(shape, int) or (kf.is_tensor(shape) and shape.shape.rank == 0):
        return [shape]
    return list(shape) if isinstance(shape, tuple) else shape


def _dt(dtype: Any, default: str = None) -> str:
    return standardize_dtype(dtype) or default or backend.floatx()


def zeros(shape: Any, dtype: Any = None) -> Any:
    """A tensor of zeros (floatx unless `dtype`)."""
    return kf.zeros(_shape_arg(shape), dtype=_dt(dtype))


def ones(shape: Any, dtype: Any = None) -> Any:
    """A tensor of ones (floatx unless `dtype`)."""
    return kf.ones(_shape_arg(shape), dtype=_dt(dtype))


empty = zeros


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    """A tensor of `fill_value` (floatx unless `dtype`, as in Keras)."""
    value = to_tensor(fill_value, _dt(dtype))
    return kf.broadcast_to(value, _shape_arg(shape))


def zeros_like(x: Any, dtype: Any = None) -> Any:
    x = to_tensor(x)
    return kf.zeros_like(x, dtype=_dt(dtype, x.dtype.name))


def ones_like(x: Any, dtype: Any = None) -> Any:
    x = to_tensor(x)
    return kf.ones_like(x, dtype=_dt(dtype, x.dtype.name))


empty_like = zeros_like


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Any:
    x = to_tensor(x)
    return kf.broadcast_to(to_tensor(fill_value, _dt(dtype, x.dtype.name)), shape_of(x))


def array(x: Any, dtype: Any = None) -> Any:
    """x as a tensor (keras.ops.array)."""
    return to_tensor(x, standardize_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """Evenly spaced values in [start, stop) (int32 for ints, floatx for floats)."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    dt = _dt(dtype, result_type(*[v for v in (start, stop, step)]))
    if all(isinstance(v, (int, float, np.number)) for v in (start, stop, step)):
        # a constant with a static length (NumPy's arange rule for the count)
        n = max(int(np.ceil((stop - start) / step)), 0)
        values = start + step * np.arange(n, dtype=np.float64)
        return kf.constant(values.astype(kf.as_dtype(dt).as_numpy_dtype))
    return kf.range(kf.cast(start, dt), kf.cast(stop, dt), kf.cast(step, dt), dtype=dt)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """`num` evenly spaced values from start to stop (inclusive when `endpoint`)."""
    dt = _dt(dtype, backend.floatx())
    start, stop = to_tensor(start, "float64"), to_tensor(stop, "float64")
    div = (num - 1) if endpoint else num
    step = (stop - start) / float(div if div > 0 else 1)
    i = kf.cast(kf.range(num), "float64")
    shape = [-1] + [1] * start.shape.rank
    out = start + kf.reshape(i, shape) * step
    if endpoint and num > 1:
        out = kf.concat([out[:-1], kf.expand_dims(stop + kf.zeros_like(start), 0)], 0)
    if axis != 0:
        out = moveaxis(out, 0, axis)
    out = kf.cast(out, dt) if kf.as_dtype(dt).is_floating else kf.cast(kf.floor(out), dt)
    return (out, kf.cast(step, dt)) if retstep else out


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: float = 10,
             dtype: Any = None, axis: int = 0) -> Any:
    """base ** linspace(start, stop)."""
    exps = linspace(start, stop, num, endpoint, dtype="float64", axis=axis)
    return kf.cast(kf.pow(kf.cast(base, "float64"), exps), _dt(dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """Values spaced evenly on a log scale from start to stop."""
    lo, hi = to_tensor(start, "float64"), to_tensor(stop, "float64")
    out = kf.exp(linspace(kf.math.log(lo), kf.math.log(hi), num, endpoint, dtype="float64",
                          axis=axis))
    return kf.cast(out, _dt(dtype))


def eye(N: int, M: Any = None, k: int = 0, dtype: Any = None) -> Any:
    """An N x M matrix with ones on diagonal k."""
    return kf.convert_to_tensor(np.eye(N, M, k, dtype=kf.as_dtype(_dt(dtype)).as_numpy_dtype))


def identity(n: int, dtype: Any = None) -> Any:
    """The n x n identity."""
    return eye(n, dtype=dtype)


def tri(N: int, M: Any = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below diagonal k."""
    return kf.convert_to_tensor(np.tri(N, M, k, dtype=kf.as_dtype(_dt(dtype)).as_numpy_dtype))


def _band_mask(x: Any, k: int, lower: bool) -> Any:
    rows, cols = kf.shape(x)[-2], kf.shape(x)[-1]
    i = kf.reshape(kf.range(rows), [-1, 1])
    j = kf.reshape(kf.range(cols), [1, -1])
    return kf.less_equal(j - i, k) if lower else kf.greater_equal(j - i, k)


def tril(x: Any, k: int = 0) -> Any:
    """x with entries above diagonal k zeroed."""
    x = to_tensor(x)
    return kf.where(_band_mask(x, k, True), x, kf.zeros_like(x))


def triu(x: Any, k: int = 0) -> Any:
    """x with entries below diagonal k zeroed."""
    x = to_tensor(x)
    return kf.where(_band_mask(x, k, False), x, kf.zeros_like(x))


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The `offset` diagonal of the (axis1, axis2) planes, as the last axis."""
    x = to_tensor(x)
    nd = x.shape.rank
    a1, a2 = axis1 % nd, axis2 % nd
    rest = [a for a in range(nd) if a not in (a1, a2)]
    m = kf.transpose(x, rest + [a1, a2])
    if offset > 0:
        m = m[..., :, offset:]
    elif offset < 0:
        m = m[..., -offset:, :]
    return kf.linalg.diag_part(m)


def diag(x: Any, k: int = 0) -> Any:
    """1-D x: a matrix with x on diagonal k; 2-D x: its diagonal k."""
    x = to_tensor(x)
    if x.shape.rank == 1:
        n = x.shape.as_list()[0] + abs(k)
        m = kf.linalg.diag(x)
        pads = [[0, abs(k)], [abs(k), 0]] if k > 0 else [[abs(k), 0], [0, abs(k)]]
        return kf.pad(m, pads) if k else kf.reshape(m, [n, n])
    return diagonal(x, k)


def diagflat(x: Any, k: int = 0) -> Any:
    """diag of the flattened x."""
    return diag(kf.reshape(to_tensor(x), [-1]), k)


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """Sum along a diagonal (small ints widen to int32)."""
    d = diagonal(x, offset, axis1, axis2)
    if d.dtype.name in ("bool", "int8", "int16", "uint8", "uint16"):
        d = kf.cast(d, "int32")
    return kf.reduce_sum(d, axis=-1)


def meshgrid(*x: Any, indexing: str = "xy") -> List[Any]:
    """Coordinate grids from 1-D coordinate vectors ('xy' or 'ij' indexing)."""
    return kf.meshgrid(*[to_tensor(v) for v in x], indexing=indexing)


def vander(x: Any, N: Any = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix of 1-D x."""
    x = to_tensor(x)
    n = x.shape.as_list()[0] if N is None else N
    p = kf.range(n, dtype=x.dtype.name) if increasing else kf.range(n - 1, -1, -1, dtype=
                                                                     x.dtype.name)
    return kf.pow(kf.expand_dims(x, 1), kf.expand_dims(p, 0))


def _window(values: Any, name: str) -> Any:
    def op(x: int) -> Any:
        return kf.convert_to_tensor(values(int(x)).astype(np.float32))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"The {name} window of length x (NumPy's definition, floatx)."
    return op


bartlett = _window(np.bartlett, "bartlett")
blackman = _window(np.blackman, "blackman")
hamming = _window(np.hamming, "hamming")
hanning = _window(np.hanning, "hanning")


def kaiser(x: int, beta: float) -> Any:
    """The Kaiser window of length x (NumPy's definition)."""
    return kf.convert_to_tensor(np.kaiser(int(x), beta).astype(np.float32))


# ---------------------------------------------------------------- shapes

def reshape(x: Any, newshape: Any) -> Any:
    return kf.reshape(to_tensor(x), _shape_arg(newshape))


def ravel(x: Any) -> Any:
    return kf.reshape(to_tensor(x), [-1])


def transpose(x: Any, axes: Any = None) -> Any:
    return kf.transpose(to_tensor(x), None if axes is None else list(axes))


def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    """Move axes `source` to positions `destination`."""
    x = to_tensor(x)
    nd = x.shape.rank
    src = [s % nd for s in (source if isinstance(source, (list, tuple)) else [source])]
    dst = [d % nd for d in (destination if isinstance(destination, (list, tuple))
                            else [destination])]
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return kf.transpose(x, order)


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    x = to_tensor(x)
    order = list(range(x.shape.rank))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return kf.transpose(x, order)


def expand_dims(x: Any, axis: Any) -> Any:
    """Insert length-1 axes at `axis` (an int or a tuple of them)."""
    x = to_tensor(x)
    if isinstance(axis, (list, tuple)):
        nd = x.shape.rank + len(axis)
        for a in sorted(a % nd for a in axis):
            x = kf.expand_dims(x, a)
        return x
    return kf.expand_dims(x, axis)


def squeeze(x: Any, axis: Any = None) -> Any:
    x = to_tensor(x)
    return kf.squeeze(x, None if axis is None else (list(axis) if isinstance(
        axis, (list, tuple)) else [axis]))


def broadcast_to(x: Any, shape: Any) -> Any:
    return kf.broadcast_to(to_tensor(x), _shape_arg(shape))


def concatenate(xs: Sequence[Any], axis: Any = 0) -> Any:
    """Join tensors along `axis` (all flattened when axis=None)."""
    xs = promote(*xs)
    if axis is None:
        return kf.concat([kf.reshape(x, [-1]) for x in xs], 0)
    return kf.concat(xs, axis)


def append(x1: Any, x2: Any, axis: Any = None) -> Any:
    return concatenate([x1, x2], axis)


def stack(x: Sequence[Any], axis: int = 0) -> Any:
    return kf.stack(promote(*x), axis)


def hstack(xs: Sequence[Any]) -> Any:
    xs = promote(*xs)
    return kf.concat(xs, 0 if xs[0].shape.rank == 1 else 1)


def vstack(xs: Sequence[Any]) -> Any:
    return kf.concat([kf.reshape(x, [1, -1]) if x.shape.rank == 1 else x
                      for x in promote(*xs)], 0)


def dstack(xs: Sequence[Any]) -> Any:
    out = []
    for x in promote(*xs):
        if x.shape.rank == 1:
            x = kf.reshape(x, [1, -1, 1])
        elif x.shape.rank == 2:
            x = kf.expand_dims(x, -1)
        out.append(x)
    return kf.concat(out, 2)


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> List[Any]:
    """NumPy's split: n equal sections, or cut points."""
    x = to_tensor(x)
    if isinstance(indices_or_sections, int):
        return kf.split(x, indices_or_sections, axis)
    return _split_at(x, list(indices_or_sections), axis)


def _split_at(x: Any, cuts: List[int], axis: int) -> List[Any]:
    n = x.shape.as_list()[axis]
    bounds = [0] + [min(max(c if c >= 0 else c + n, 0), n) for c in cuts] + [n]
    ax = axis % x.shape.rank
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        idx = [slice(None)] * ax + [slice(lo, max(hi, lo))]
        out.append(x[tuple(idx)])
    return out


def array_split(x: Any, indices_or_sections: Any, axis: int = 0) -> List[Any]:
    """split that allows unequal sections (the first ones one longer)."""
    x = to_tensor(x)
    if not isinstance(indices_or_sections, int):
        return _split_at(x, list(indices_or_sections), axis)
    n, k = x.shape.as_list()[axis], indices_or_sections
    sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    return _split_at(x, list(np.cumsum(sizes)[:-1]), axis)


def hsplit(x: Any, indices_or_sections: Any) -> List[Any]:
    x = to_tensor(x)
    return split(x, indices_or_sections, 0 if x.shape.rank == 1 else 1)


def vsplit(x: Any, indices_or_sections: Any) -> List[Any]:
    return split(x, indices_or_sections, 0)


def dsplit(x: Any, indices_or_sections: Any) -> List[Any]:
    return split(x, indices_or_sections, 2)


def unstack(x: Any, num: Any = None, axis: int = 0) -> List[Any]:
    return kf.unstack(to_tensor(x), num=num, axis=axis)


def tile(x: Any, repeats: Any) -> Any:
    """Repeat x `repeats` times per axis (NumPy's rank rules)."""
    x = to_tensor(x)
    reps = [repeats] if isinstance(repeats, int) else list(repeats)
    nd = x.shape.rank
    if len(reps) < nd:
        reps = [1] * (nd - len(reps)) + reps
    elif len(reps) > nd:
        x = kf.reshape(x, [1] * (len(reps) - nd) + x.shape.as_list())
    return kf.tile(x, reps)


def repeat(x: Any, repeats: Any, axis: Any = None) -> Any:
    x = to_tensor(x)
    if axis is None:
        x, axis = kf.reshape(x, [-1]), 0
    return kf.repeat(x, repeats, axis=axis)


def pad(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = None) -> Any:
    """Pad x: `pad_width` per axis (NumPy forms), modes constant/reflect/symmetric."""
    x = to_tensor(x)
    pw = np.asarray(pad_width, dtype=np.int64)
    pw = np.broadcast_to(pw.reshape(-1) if pw.size == 1 else pw.reshape(-1, 2)
                         if pw.size == 2 else pw, (x.shape.rank, 2))
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError(f"pad: mode must be 'constant', 'reflect' or 'symmetric', got "
                         f"{mode!r}")
    if mode != "constant" and constant_values is not None:
        raise ValueError("pad: constant_values is only allowed with mode='constant'")
    value = 0 if constant_values is None else constant_values
    return kf.pad(x, pw.tolist(), mode=mode.upper(), constant_values=kf.cast(value, x.dtype))


def flip(x: Any, axis: Any = None) -> Any:
    x = to_tensor(x)
    ax = list(range(x.shape.rank)) if axis is None else (
        list(axis) if isinstance(axis, (list, tuple)) else [axis])
    return kf.reverse(x, ax)


def fliplr(x: Any) -> Any:
    return flip(x, 1)


def flipud(x: Any) -> Any:
    return flip(x, 0)


def rot90(array: Any, k: int = 1, axes: Any = (0, 1)) -> Any:
    """Rotate by 90 degrees k times in the plane of `axes`."""
    x = to_tensor(array)
    a0, a1 = axes
    k %= 4
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a0), a1)
    if k == 1:
        return swapaxes(flip(x, a1), a0, a1)
    return flip(swapaxes(x, a0, a1), a1)


def roll(x: Any, shift: Any, axis: Any = None) -> Any:
    x = to_tensor(x)
    if axis is None:
        return kf.reshape(kf.roll(kf.reshape(x, [-1]), shift, 0), shape_of(x))
    return kf.roll(x, shift, axis)


def size(x: Any) -> Any:
    return kf.size(to_tensor(x))


def ndim(x: Any) -> int:
    return x.shape.rank if is_placeholder(x) else to_tensor(x).shape.rank


__all__ = [
    "append", "arange", "array", "array_split", "bartlett", "blackman", "broadcast_to",
    "concatenate", "diag", "diagflat", "diagonal", "dsplit", "dstack", "empty", "empty_like",
    "expand_dims", "eye", "flip", "fliplr", "flipud", "full", "full_like", "geomspace",
    "hamming", "hanning", "hsplit", "hstack", "identity", "kaiser", "linspace", "logspace",
    "meshgrid", "moveaxis", "ndim", "ones", "ones_like", "pad", "ravel", "repeat", "reshape",
    "roll", "rot90", "size", "split", "squeeze", "stack", "swapaxes", "tile", "trace",
    "transpose", "tri", "tril", "triu", "unstack", "vander", "vsplit", "vstack", "zeros",
    "zeros_like",
]
