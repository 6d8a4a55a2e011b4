"""TF's remaining top-level convolution names: the generic N-d `conv` (dispatching to the
1-, 2- and 3-D convolutions by rank), conv2d_backprop_filter_v2 / conv2d_backprop_input_v2
(the Conv2D gradients taking the filter / input tensor rather than its shape), and
extract_volume_patches (one op with its adjoint as the gradient). Imports ops.conv,
ops.nn_extra, ops.nn_windows, ops.array, core.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, conv as _conv
from kilnflow.ops.args import invalid_argument
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


# ---------------------------------------------------------------- extract_volume_patches

def _five(value: Any, what: str) -> tuple:
    items = list(value) if isinstance(value, (list, tuple)) else None
    if items is None or len(items) != 5 or items[0] != 1 or items[4] != 1 or \
            not all(isinstance(v, (int, np.integer)) and v >= 1 for v in items):
        raise invalid_argument(f"extract_volume_patches: `{what}` must be [1, p, r, c, 1] of "
                               f"positive ints, got {value!r}", "ExtractVolumePatches")
    return tuple(int(v) for v in items[1:4])


def _geometry(n: int, k: int, s: int, padding: str) -> tuple:
    """(output size, padding before, padding after) of one spatial dim, as TF computes it."""
    if padding == "VALID":
        return max(-(-(n - k + 1) // s), 0), 0, 0
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return out, total // 2, total - total // 2


def _volume_rule(x: Any, *, ksizes: tuple, strides: tuple, padding: str) -> TensorSpec:
    if x.shape.rank not in (5, None):
        raise ValueError(f"extract_volume_patches: `input` must be 5-D, got shape {x.shape}")
    if x.shape.rank is None:
        return TensorSpec(None, x.dtype)
    b, *space, d = x.shape.as_list()
    outs = [None if n is None else _geometry(n, k, s, padding)[0]
            for n, k, s in zip(space, ksizes, strides)]
    depth = None if d is None else d * int(np.prod(ksizes))
    return TensorSpec([b] + outs + [depth], x.dtype)


def _plan(shape: tuple, ksizes: tuple, strides: tuple, padding: str) -> tuple:
    geometry = [_geometry(n, k, s, padding) for n, k, s in zip(shape[1:4], ksizes, strides)]
    pads = ((0, 0),) + tuple((g[1], g[2]) for g in geometry) + ((0, 0),)
    return [g[0] for g in geometry], pads


def _taps(ksizes: tuple) -> list:
    return list(np.ndindex(*ksizes))


def _window(i: int, s: int, n: int) -> slice:
    return slice(i, i + s * (n - 1) + 1, s) if n > 0 else slice(0, 0)


def _volume_kernel(x: Any, *, ksizes: tuple, strides: tuple, padding: str) -> Any:
    if x.ndim != 5:
        raise ValueError(f"`input` must be 5-D, got shape {list(x.shape)}")
    outs, pads = _plan(x.shape, ksizes, strides, padding)
    xp = np.pad(x, pads)
    # the last dim runs over (plane, row, col) taps, then depth, as in TF
    parts = [xp[:, _window(i, strides[0], outs[0]), _window(j, strides[1], outs[1]),
                _window(k, strides[2], outs[2])] for i, j, k in _taps(ksizes)]
    return np.concatenate(parts, axis=-1) if parts else xp[..., :0]


def _volume_grad_kernel(dy: Any, x_shape: Any, *, ksizes: tuple, strides: tuple,
                        padding: str) -> Any:
    shape = tuple(int(d) for d in x_shape)
    outs, pads = _plan(shape, ksizes, strides, padding)
    padded = tuple(n + p[0] + p[1] for n, p in zip(shape, pads))
    dxp = np.zeros(padded, dy.dtype)
    depth = shape[4]
    for t, (i, j, k) in enumerate(_taps(ksizes)):
        dxp[:, _window(i, strides[0], outs[0]), _window(j, strides[1], outs[1]),
            _window(k, strides[2], outs[2])] += dy[..., t * depth:(t + 1) * depth]
    return dxp[:, pads[1][0]:padded[1] - pads[1][1], pads[2][0]:padded[2] - pads[2][1],
               pads[3][0]:padded[3] - pads[3][1]]


EXTRACT_VOLUME_PATCHES = defop(
    "ExtractVolumePatches", shape=_volume_rule, kernel=_volume_kernel, check_eager=True,
    grad=lambda op, dy: [bind(EXTRACT_VOLUME_PATCHES_GRAD, (dy, array.shape(op.inputs[0])),
                              op.attrs)])
# the adjoint (linear): sums each patch entry back where it came from
EXTRACT_VOLUME_PATCHES_GRAD = defop(
    "ExtractVolumePatchesGrad", kernel=_volume_grad_kernel, same_dtype=False,
    shape=lambda dy, s, **attrs: TensorSpec([None] * 5, dy.dtype),
    grad=lambda op, g: [bind(EXTRACT_VOLUME_PATCHES, (g,), op.attrs), None])


def extract_volume_patches(input: Any, ksizes: Any, strides: Any,  # noqa: A002 - TF's name
                           padding: str, name: Optional[str] = None) -> Tensor:
    """Patches of a [batch, planes, rows, cols, depth] `input`, each flattened into the last
    dim (plane, row, col, then depth), for windows `ksizes` moved by `strides`
    ([1, p, r, c, 1]); padding 'SAME' pads with zeros.

    >>> import kilnflow as kf
    >>> x = kf.reshape(kf.range(8.0), [1, 2, 2, 2, 1])
    >>> kf.extract_volume_patches(x, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID").shape
    TensorShape([1, 1, 1, 1, 8])
    """
    x = convert_to_tensor(input)
    mode = str(padding).upper()
    if mode not in ("SAME", "VALID"):
        raise invalid_argument(f"padding must be 'SAME' or 'VALID', got {padding!r}",
                               "ExtractVolumePatches")
    attrs = {"ksizes": _five(ksizes, "ksizes"), "strides": _five(strides, "strides"),
             "padding": mode}
    return bind(EXTRACT_VOLUME_PATCHES, (x,), attrs, name=name)


# ---------------------------------------------------------------- conv, conv2d backprops

_CHANNELS_LAST = ("CHANNELS_LAST", "NWC", "NHWC", "NDHWC")


def conv(input: Any, filter: Any, strides: Any, padding: str,  # noqa: A002 - TF's names
         explicit_paddings: Any = (), data_format: str = "CHANNELS_LAST", dilations: Any = (),
         batch_dims: int = 1, groups: int = 1, name: Optional[str] = None) -> Tensor:
    """An N-d convolution (N = 1, 2 or 3 from the filter's rank N + 2) of channels-last
    `input` with `filter` [spatial..., in, out]; strides and dilations have N + 2 entries.

    >>> import kilnflow as kf
    >>> kf.conv(kf.ones([1, 5, 2]), kf.ones([3, 2, 4]), [1, 1, 1], "VALID").shape
    TensorShape([1, 3, 4])
    """
    x, w = binary(input, filter)
    op = "Conv"
    if batch_dims != 1 or groups != 1:
        raise errors.UnimplementedError(errors.with_location(
            f"conv: only batch_dims=1 and groups=1 are supported, got {batch_dims}, {groups}"))
    if str(data_format).upper() not in _CHANNELS_LAST:
        raise invalid_argument(f"conv: data_format must be channels-last, got {data_format!r}",
                               op)
    if w.shape.rank not in (3, 4, 5) or x.shape.rank != w.shape.rank:
        raise invalid_argument(f"conv: `input` and `filter` must both be 3-D, 4-D or 5-D, got "
                               f"shapes {x.shape} and {w.shape}", op)
    n = w.shape.rank - 2
    strides = list(strides)
    rates = list(dilations) if len(dilations) else [1] * (n + 2)
    if len(strides) != n + 2 or len(rates) != n + 2:
        raise invalid_argument(f"conv: strides and dilations need {n + 2} entries, got "
                               f"{strides} and {rates}", op)
    mode = str(padding).upper()
    if mode == "EXPLICIT":
        if n != 2:
            raise errors.UnimplementedError("conv: EXPLICIT padding is supported in 2-D only")
        pads = list(explicit_paddings)
        padding = [pads[i:i + 2] for i in range(0, len(pads), 2)]
    if n == 1:
        from kilnflow.ops.nn_extra import conv1d
        return conv1d(x, w, strides[1], padding, "NWC", rates[1], name=name)
    if n == 2:
        return _conv.conv2d(x, w, strides, padding, "NHWC", rates, name=name)
    from kilnflow.ops.nn_windows import conv3d
    return conv3d(x, w, strides, padding, "NDHWC", rates, name=name)


def _spatial(value: Any, what: str, op: str) -> tuple:
    """(h, w) from an int, a pair or NHWC's [1, h, w, 1] (Conv2D's attr forms)."""
    values = [int(value)] * 2 if isinstance(value, (int, np.integer)) else list(value)
    if len(values) == 4 and values[0] == values[3] == 1:
        values = values[1:3]
    if len(values) != 2 or not all(isinstance(v, (int, np.integer)) and v >= 1
                                   for v in values):
        raise invalid_argument(f"{op}: `{what}` must be an int, a pair or [1, h, w, 1] of "
                               f"positive ints, got {value!r}", op)
    return int(values[0]), int(values[1])


def _backprop_attrs(strides: Any, padding: Any, explicit_paddings: Any, data_format: str,
                    dilations: Any, op: str) -> dict:
    if data_format != "NHWC":
        raise invalid_argument(f"{op}: data_format must be 'NHWC' here, got {data_format!r}",
                               op)
    mode = str(padding).upper() if isinstance(padding, str) else None
    if mode == "EXPLICIT":
        pads = [int(p) for p in explicit_paddings]
        if len(pads) != 8 or pads[:2] != [0, 0] or pads[6:] != [0, 0] or min(pads) < 0:
            raise invalid_argument(f"{op}: explicit_paddings must be 8 non-negative ints with "
                                   f"zeros for batch and depth, got {explicit_paddings!r}", op)
        attr: Any = ((pads[2], pads[3]), (pads[4], pads[5]))
    elif mode in ("SAME", "VALID"):
        attr = mode
    else:
        raise invalid_argument(f"{op}: `padding` must be 'SAME', 'VALID' or 'EXPLICIT', got "
                               f"{padding!r}", op)
    return {"strides": _spatial(strides, "strides", op), "padding": attr,
            "dilations": _spatial(dilations, "dilations", op)}


def conv2d_backprop_filter_v2(input: Any, filter: Any, out_backprop: Any,  # noqa: A002
                              strides: Any, padding: Any, use_cudnn_on_gpu: bool = True,
                              explicit_paddings: Any = (), data_format: str = "NHWC",
                              dilations: Any = (1, 1, 1, 1),
                              name: Optional[str] = None) -> Tensor:
    """The gradient of conv2d with respect to its filter, shaped like `filter`."""
    x = convert_to_tensor(input)
    w, dy = convert_to_tensor(filter, x.dtype), convert_to_tensor(out_backprop, x.dtype)
    attrs = _backprop_attrs(strides, padding, explicit_paddings, data_format, dilations,
                            "Conv2DBackpropFilter")
    return bind(_conv.CONV2D_BACKPROP_FILTER, (x, array.shape(w), dy), attrs, name=name)


def conv2d_backprop_input_v2(input: Any, filter: Any, out_backprop: Any,  # noqa: A002
                             strides: Any, padding: Any, use_cudnn_on_gpu: bool = True,
                             explicit_paddings: Any = (), data_format: str = "NHWC",
                             dilations: Any = (1, 1, 1, 1),
                             name: Optional[str] = None) -> Tensor:
    """The gradient of conv2d with respect to its input, shaped like `input`."""
    x = convert_to_tensor(input)
    w, dy = convert_to_tensor(filter, x.dtype), convert_to_tensor(out_backprop, x.dtype)
    attrs = _backprop_attrs(strides, padding, explicit_paddings, data_format, dilations,
                            "Conv2DBackpropInput")
    return bind(_conv.CONV2D_BACKPROP_INPUT, (array.shape(x), w, dy), attrs, name=name)
