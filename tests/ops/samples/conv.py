"""Samples of the ops in kilnflow/ops/conv.py (see tests/ops/samples/__init__.py)."""
from typing import Any, Callable


import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow import nn as _nn
from tests.ops.samples import (ERRORS, ErrorSample, add, direct, i32, ints, linear_vjp, rand,
                               recorded_attrs)


def _pair(value: Any) -> tuple:
    return (value, value) if isinstance(value, int) else tuple(value)


def _np_windows(x: np.ndarray, k: tuple, s: tuple, padding: Any, d: tuple = (1, 1),
                fill: float = 0.0) -> tuple:
    """The padded input and its (kh, kw) taps: tap (i, j) is an (N, OH, OW, C) array."""
    sizes = []
    for axis in (0, 1):
        size, extent = x.shape[1 + axis], (k[axis] - 1) * d[axis] + 1
        if padding == "VALID":
            out, before = (size - extent) // s[axis] + 1, 0
        elif padding == "SAME":
            out = -(-size // s[axis])
            before = max((out - 1) * s[axis] + extent - size, 0) // 2
        else:
            before = padding[axis][0]
            out = (size + sum(padding[axis]) - extent) // s[axis] + 1
        sizes.append((out, before, max((out - 1) * s[axis] + extent - size - before, 0)))
    xp = np.pad(x, ((0, 0), sizes[0][1:], sizes[1][1:], (0, 0)), constant_values=fill)
    (oh, _, _), (ow, _, _) = sizes
    taps = {(i, j): xp[:, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                       j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])}
    return xp, taps


def _np_conv2d(x: np.ndarray, w: np.ndarray, s: tuple, padding: Any,
               d: tuple = (1, 1)) -> np.ndarray:
    _, taps = _np_windows(x, w.shape[:2], s, padding, d)
    return sum(taps[i, j] @ w[i, j] for (i, j) in taps)


def _np_max_pool(x: np.ndarray, k: tuple, s: tuple, padding: str) -> np.ndarray:
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    _, taps = _np_windows(x, k, s, padding, fill=lowest)
    return np.max(np.stack(list(taps.values())), 0)


def _np_avg_pool(x: np.ndarray, k: tuple, s: tuple, padding: str) -> np.ndarray:
    _, taps = _np_windows(x, k, s, padding)
    _, counts = _np_windows(np.ones_like(x), k, s, padding)  # padding is not averaged
    return sum(taps.values()) / sum(counts.values())


def _numeric_vjp(f: Callable, x: np.ndarray, dy: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = np.sum((f(up) - f(down)) * dy) / (2 * eps)
    return out


_CONVS = [  # name, strides, padding, dilations, input shape
    ("same", 1, "SAME", 1, (1, 5, 5, 2)), ("valid_stride2", 2, "VALID", 1, (2, 5, 6, 2)),
    ("dilated", 1, "SAME", 2, (1, 5, 5, 2)),
    ("explicit", (2, 1), [[0, 0], [1, 0], [2, 1], [0, 0]], 1, (1, 4, 5, 2))]


for _name, _s, _p, _d, _shape in _CONVS:
    _pads = _p if isinstance(_p, str) else (tuple(_p[1]), tuple(_p[2]))
    add("Conv2D", lambda x, w, s=_s, p=_p, d=_d: _nn.conv2d(x, w, s, p, dilations=d),
         (rand(*_shape), rand(3, 2, 2, 3)),
         lambda x, w, s=_s, p=_pads, d=_d: _np_conv2d(x, w, _pair(s), p, _pair(d)),
         differentiable=True, name=_name)


_CONV_ATTRS = recorded_attrs("Conv2D", lambda: _nn.conv2d(kf.zeros([1, 5, 5, 2]),
                                                          kf.zeros([3, 2, 2, 3]), 2, "SAME"))


_CX, _CW = rand(1, 5, 5, 2), rand(3, 2, 2, 3)


add("Conv2DBackpropInput", direct("Conv2DBackpropInput", **_CONV_ATTRS),
     (i32([1, 5, 5, 2]), _CW, rand(1, 3, 3, 3)),
     lambda s, w, dy: linear_vjp(lambda x: _np_conv2d(x, w, (2, 2), "SAME"), tuple(s), dy),
     differentiable=True, wrt=(1, 2))


add("Conv2DBackpropFilter", direct("Conv2DBackpropFilter", **_CONV_ATTRS),
     (_CX, i32([3, 2, 2, 3]), rand(1, 3, 3, 3)),
     lambda x, s, dy: linear_vjp(lambda w: _np_conv2d(x, w, (2, 2), "SAME"), tuple(s), dy),
     differentiable=True, wrt=(0, 2))


for _op, _fn, _ref in [("MaxPool", _nn.max_pool2d, _np_max_pool),
                       ("AvgPool", _nn.avg_pool2d, _np_avg_pool)]:
    add(_op, lambda x, f=_fn: f(x, 2, 2, "VALID"), (rand(2, 4, 4, 3),),
         lambda x, r=_ref: r(x, (2, 2), (2, 2), "VALID"), differentiable=True)
    add(_op, lambda x, f=_fn: f(x, [3, 2], [2, 1], "SAME"), (rand(1, 5, 4, 2),),
         lambda x, r=_ref: r(x, (3, 2), (2, 1), "SAME"), differentiable=True, name="same")


add("MaxPool", lambda x: _nn.max_pool2d(x, 2, 1, "VALID"), (ints(1, 3, 3, 1),),
     lambda x: _np_max_pool(x, (2, 2), (1, 1), "VALID").astype(np.int32), name="int32")


_POOL_ATTRS = recorded_attrs("MaxPool", lambda: _nn.max_pool2d(kf.zeros([1, 5, 4, 2]), [3, 2],
                                                               [2, 1], "SAME"))


_PX = rand(1, 5, 4, 2)


add("MaxPoolGrad", direct("MaxPoolGrad", **_POOL_ATTRS), (_PX, rand(1, 3, 4, 2)),
     lambda x, dy: _numeric_vjp(lambda v: _np_max_pool(v, (3, 2), (2, 1), "SAME"), x, dy),
     differentiable=True, wrt=(1,), rtol=1e-5, atol=1e-8)


add("MaxPoolGradGrad", direct("MaxPoolGradGrad", **_POOL_ATTRS), (_PX, rand(1, 5, 4, 2)),
     lambda x, g: (_np_max_pool(x + 1e-6 * g, (3, 2), (2, 1), "SAME") -
                   _np_max_pool(x - 1e-6 * g, (3, 2), (2, 1), "SAME")) / 2e-6,
     differentiable=True, wrt=(1,), rtol=1e-5, atol=1e-8)


add("AvgPoolGrad", direct("AvgPoolGrad", **_POOL_ATTRS), (i32([1, 5, 4, 2]), rand(1, 3, 4, 2)),
     lambda s, dy: linear_vjp(lambda x: _np_avg_pool(x, (3, 2), (2, 1), "SAME"), tuple(s), dy),
     differentiable=True, wrt=(1,), static_shape=False)


ERRORS.extend([
    ErrorSample("Conv2D", lambda x, w: _nn.conv2d(x, w, 1, "SAME"),
                (rand(1, 4, 4, 2), rand(3, 3, 3, 1)), errors.InvalidArgumentError,
                ("Conv2D", "depth"), name="depth_mismatch"),
    ErrorSample("MaxPool", lambda x: _nn.max_pool2d(x, 2, 2, "VALID"), (rand(4, 4),),
                errors.InvalidArgumentError, ("MaxPool", "4-dimensional"), name="rank_2"),
])
