"""Convolution and pooling ops (kf.nn.conv2d, max_pool2d, avg_pool2d) with their gradients.

Images are NHWC. The backward passes are ops of their own (Conv2DBackpropInput and
Conv2DBackpropFilter, MaxPoolGrad, AvgPoolGrad) whose gradient rules close the loop, so
second order works. Kernels are NumPy: conv2d is im2col (a strided window view copied once)
and one matmul; the filter gradient is one matmul of the same patches; the input gradient is
a stride-1 convolution of the padded output gradient with the flipped filter, or col2im (one
matmul, then one strided add per filter tap). Pools loop over window taps with whole-array
ops. Reads array, convert, opdef and rules; nothing here imports kilnflow.ops.nn.
"""
from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np
from numpy.lib.stride_tricks import as_strided

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.ops import array
from kilnflow.ops.convert import binary, constant, convert_to_tensor
from kilnflow.core.opdef import bind, defop
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor
from kilnflow.ops import reshaping

FLOATS = _dtypes.FLOATS
REAL = _dtypes.REAL


# ---------------------------------------------------------------- window arithmetic

def _pair(value: Any, what: str, op: str) -> tuple:
    """An int, a pair, or a 4-element NHWC list with 1 in the batch and channel dims."""
    if isinstance(value, numbers.Integral):
        return int(value), int(value)
    value = [int(v) for v in value]
    if len(value) == 1:
        return value[0], value[0]
    if len(value) == 2:
        return value[0], value[1]
    if len(value) == 4:
        if value[0] != 1 or value[3] != 1:
            raise errors.InvalidArgumentError(errors.with_location(
                f"{op}: {what} in the batch and depth dimensions must be 1, got {value}"))
        return value[1], value[2]
    raise errors.InvalidArgumentError(errors.with_location(
        f"{op}: {what} must be an int or have 1, 2 or 4 elements, got {value}"))


def _padding_attr(padding: Any, op: str) -> Any:
    """'SAME' / 'VALID', or explicit NHWC pads [[0, 0], [t, b], [l, r], [0, 0]]."""
    if isinstance(padding, str):
        if padding.upper() in ("SAME", "VALID"):
            return padding.upper()
    elif isinstance(padding, (list, tuple)) and len(padding) == 4 and \
            all(len(p) == 2 for p in padding):
        pads = tuple(tuple(int(v) for v in p) for p in padding)
        if pads[0] != (0, 0) or pads[3] != (0, 0) or min(sum(pads, ())) < 0:
            raise errors.InvalidArgumentError(errors.with_location(
                f"{op}: explicit padding must be non-negative and 0 in the batch and depth "
                f"dimensions, got {list(padding)}"))
        return pads[1], pads[2]
    raise errors.InvalidArgumentError(errors.with_location(
        f"{op}: `padding` must be 'SAME', 'VALID' or explicit [[0, 0], [top, bottom], "
        f"[left, right], [0, 0]], got {padding!r}"))


def _out_and_pads(size: int, k: int, stride: int, dilation: int, padding: Any,
                  dim: int) -> tuple:
    """(output size, pad before, pad after) along one spatial dim, with TF's arithmetic."""
    extent = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + extent - size, 0)
        return out, total // 2, total - total // 2
    before, after = (0, 0) if padding == "VALID" else padding[dim]
    out = (size + before + after - extent) // stride + 1
    if size + before + after < extent:
        raise ValueError(f"Computed output size would be negative: "
                         f"{size + before + after - extent + 1} [input_size: {size}, "
                         f"effective_filter_size: {extent}, stride: {stride}]")
    return out, before, after


def _geometry(h: int, w: int, kh: int, kw: int, strides: tuple, padding: Any,
              dilations: tuple = (1, 1)) -> tuple:
    oh, pt, pb = _out_and_pads(h, kh, strides[0], dilations[0], padding, 0)
    ow, pl, pr = _out_and_pads(w, kw, strides[1], dilations[1], padding, 1)
    return oh, ow, ((0, 0), (pt, pb), (pl, pr), (0, 0))


def _windows(xp: Any, kh: int, kw: int, strides: tuple, dilations: tuple, oh: int,
             ow: int) -> Any:
    """A read-only (N, OH, OW, KH, KW, C) view of every window of the padded input.

    Built with as_strided (sliding_window_view costs more than the copy on small images);
    the bounds check keeps the view inside xp whatever the caller passes.
    """
    n, hp, wp, c = xp.shape
    if (oh - 1) * strides[0] + (kh - 1) * dilations[0] >= hp or \
            (ow - 1) * strides[1] + (kw - 1) * dilations[1] >= wp:
        raise ValueError(f"windows of {kh}x{kw} x {oh}x{ow} do not fit an input of {hp}x{wp}")
    s_n, s_h, s_w, s_c = xp.strides
    return as_strided(xp, (n, oh, ow, kh, kw, c),
                      (s_n, s_h * strides[0], s_w * strides[1], s_h * dilations[0],
                       s_w * dilations[1], s_c), writeable=False)


def _tap(i: int, j: int, strides: tuple, oh: int, ow: int) -> tuple:
    """The index that picks, for every output position, input row i / column j of its
    window (offsets already dilated): used to scatter gradients back, one tap at a time."""
    return (slice(None), slice(i, i + strides[0] * (oh - 1) + 1, strides[0]),
            slice(j, j + strides[1] * (ow - 1) + 1, strides[1]), slice(None))


def _padded(x: Any, pads: tuple, fill: Any = 0) -> Any:
    """x with NHWC `pads` of `fill` (one allocation and one copy: several times faster
    than np.pad on small images)."""
    if not any(sum(pads, ())):
        return x
    (top, bottom), (left, right) = pads[1], pads[2]
    n, h, w, c = x.shape
    shape = (n, h + top + bottom, w + left + right, c)
    out = np.zeros(shape, x.dtype) if fill == 0 else np.full(shape, fill, x.dtype)
    out[:, top:top + h, left:left + w] = x
    return out


def _crop(xp: Any, pads: tuple, h: int, w: int) -> Any:
    if not any(sum(pads, ())):
        return xp
    return np.ascontiguousarray(xp[:, pads[1][0]:pads[1][0] + h, pads[2][0]:pads[2][0] + w])


def _shape_tensor(t: Tensor) -> Tensor:
    """t's shape as an int32 tensor: a constant when static, so gradient ops keep shapes."""
    if t.shape.is_fully_defined():
        return constant(t.shape.as_list(), _dtypes.int32)
    return array.shape(t)


def _static_sizes(sizes: Any) -> Optional[list]:
    value = rules.constant_value(sizes)
    return None if value is None else [int(d) for d in value.reshape(-1)]


# ---------------------------------------------------------------- conv2d kernels

# Inputs whose patch matrix would pass this many bytes are processed in batch blocks, to
# bound memory; the small images conv nets here train on always fit in one block.
_IM2COL_BYTES = 1 << 25


def _batch_blocks(n: int, bytes_per_image: int) -> list:
    """Slices over the batch, each with a patch matrix of at most _IM2COL_BYTES."""
    step = max(1, _IM2COL_BYTES // max(1, bytes_per_image))
    return [slice(b, b + step) for b in range(0, n, step)]


# Below this many channels, patches are copied tap by tap (reading whole image rows rather
# than a few values per pixel), which is 3-6x faster for 1-3 channels and slower above.
_FEW_CHANNELS = 4


def _im2col(xp: Any, kh: int, kw: int, strides: tuple, dilations: tuple, oh: int,
            ow: int) -> Any:
    """The [N*OH*OW, KH*KW*C] patch matrix of padded input xp (one copy of the windows)."""
    c = xp.shape[3]
    if kh == kw == 1 and strides == (1, 1):
        return xp.reshape(-1, c)  # a 1x1 window is the pixel itself: no copy
    view = _windows(xp, kh, kw, strides, dilations, oh, ow)
    if c < _FEW_CHANNELS:
        # A [KH*KW*C, N*OH*OW] copy; its transpose is the patch matrix, free for matmul.
        return view.transpose(3, 4, 5, 0, 1, 2).reshape(kh * kw * c, -1).T
    return view.reshape(-1, kh * kw * c)


def _sum(parts: list) -> Any:
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _conv2d_kernel(x: Any, w: Any, *, strides: tuple, padding: Any, dilations: tuple) -> Any:
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    oh, ow, pads = _geometry(h, wd, kh, kw, strides, padding, dilations)
    xp = _padded(x, pads)
    w_rows = w.reshape(kh * kw * c, o)  # (KH, KW, C) order, as in the patches
    parts = [_im2col(xp[b], kh, kw, strides, dilations, oh, ow) @ w_rows
             for b in _batch_blocks(n, oh * ow * kh * kw * c * x.itemsize)]
    # One block: the matmul result is the output (a reshape, no copy into a new array).
    out = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return out.reshape(n, oh, ow, o)


def _conv_filter_kernel(x: Any, sizes: Any, dy: Any, *, strides: tuple, padding: Any,
                        dilations: tuple) -> Any:
    """im2col(x)^T @ dy: one matmul over all output positions."""
    kh, kw, c, o = (int(s) for s in sizes)
    n, h, wd, _ = x.shape
    oh, ow, pads = _geometry(h, wd, kh, kw, strides, padding, dilations)
    xp = _padded(x, pads)
    parts = [_im2col(xp[b], kh, kw, strides, dilations, oh, ow).T @ dy[b].reshape(-1, o)
             for b in _batch_blocks(n, oh * ow * kh * kw * c * x.itemsize)]
    return _sum(parts).reshape(kh, kw, c, o)


def _conv_input_kernel(sizes: Any, w: Any, dy: Any, *, strides: tuple, padding: Any,
                       dilations: tuple) -> Any:
    n, h, wd, c = (int(s) for s in sizes)
    kh, kw, _, o = w.shape
    oh, ow, pads = _geometry(h, wd, kh, kw, strides, padding, dilations)
    # The transposed convolution copies H*W patches of dy, KH*KW*O wide; col2im computes
    # OH*OW patch gradients, KH*KW*C wide, and adds them back one tap at a time, which
    # costs about twice as much per value (measured on 8x8 and 28x28 images).
    before = ((kh - 1) * dilations[0] - pads[1][0], (kw - 1) * dilations[1] - pads[2][0])
    after = ((kh - 1) * dilations[0] - pads[1][1], (kw - 1) * dilations[1] - pads[2][1])
    if strides == (1, 1) and h * wd * o <= 2 * oh * ow * c and min(before + after) >= 0:
        return _transposed_conv(dy, w, h, wd, before, after, dilations)
    return _col2im(dy, w, (n, h, wd, c), oh, ow, pads, strides, dilations)


def _transposed_conv(dy: Any, w: Any, h: int, wd: int, before: tuple, after: tuple,
                     dilations: tuple) -> Any:
    """Stride-1 input gradient: dx = conv2d(dy padded by extent - 1 - pad, w flipped in
    space with its in/out channels swapped)."""
    n, _, _, o = dy.shape
    kh, kw, c, _ = w.shape
    pads = ((0, 0), (before[0], after[0]), (before[1], after[1]), (0, 0))
    dyp = _padded(dy, pads)
    w_rows = w[::-1, ::-1].transpose(0, 1, 3, 2).reshape(kh * kw * o, c)
    parts = [_im2col(dyp[b], kh, kw, (1, 1), dilations, h, wd) @ w_rows
             for b in _batch_blocks(n, h * wd * kh * kw * o * dy.itemsize)]
    out = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return out.reshape(n, h, wd, c)


def _col2im(dy: Any, w: Any, x_shape: tuple, oh: int, ow: int, pads: tuple, strides: tuple,
            dilations: tuple) -> Any:
    """Patch gradients dy @ w^T in one matmul, each filter tap added back where it was
    read: loops over the KH*KW taps only."""
    n, h, wd, c = x_shape
    kh, kw, _, o = w.shape
    dxp = np.zeros((n, h + sum(pads[1]), wd + sum(pads[2]), c), dtype=dy.dtype)
    w_rows = w.reshape(kh * kw * c, o)
    for b in _batch_blocks(n, oh * ow * kh * kw * c * dy.itemsize):
        rows = dy[b].reshape(-1, o)
        m = len(rows) // (oh * ow)
        # taps[i, j]: the [m, OH, OW, C] gradient read through filter tap (i, j). (Computing
        # it tap-major instead, for contiguous adds, makes the matmul slower than it saves.)
        taps = (rows @ w_rows.T).reshape(m, oh, ow, kh, kw, c).transpose(3, 4, 0, 1, 2, 5)
        target = dxp[b]
        for i in range(kh):
            for j in range(kw):
                target[_tap(i * dilations[0], j * dilations[1], strides, oh, ow)] += taps[i, j]
    return _crop(dxp, pads, h, wd)


# ---------------------------------------------------------------- conv2d

def _conv_spec(x_shape: list, w_shape: list, strides: tuple, padding: Any,
               dilations: tuple) -> list:
    """Output dims of a conv2d from possibly-unknown input and filter dims."""
    n, h, wd, c = x_shape
    kh, kw, cin, o = w_shape
    if c is not None and cin is not None and c != cin:
        raise ValueError(f"input and filter must have the same depth: {c} vs {cin}")
    oh = ow = None
    if h is not None and kh is not None:
        oh = _out_and_pads(h, kh, strides[0], dilations[0], padding, 0)[0]
    if wd is not None and kw is not None:
        ow = _out_and_pads(wd, kw, strides[1], dilations[1], padding, 1)[0]
    return [n, oh, ow, o]


def _dims4(t: Any, what: str) -> list:
    if t.shape.rank is None:
        return [None] * 4
    if t.shape.rank != 4:
        raise ValueError(f"{what} must be 4-dimensional, got shape {t.shape}")
    return t.shape.as_list()


def _conv2d_rule(x: Any, w: Any, **attrs: Any) -> TensorSpec:
    spec = _conv_spec(_dims4(x, "input"), _dims4(w, "filters"), **attrs)
    return TensorSpec(spec, x.dtype)


def _conv_input_rule(sizes: Any, w: Any, dy: Any, **attrs: Any) -> TensorSpec:
    known = [_dims4(dy, "out_backprop")[0], None, None, _dims4(w, "filters")[2]]
    return TensorSpec(_static_sizes(sizes) or known, dy.dtype)


def _conv_filter_rule(x: Any, sizes: Any, dy: Any, **attrs: Any) -> TensorSpec:
    return TensorSpec(_static_sizes(sizes) or [None] * 4, dy.dtype)


def _conv2d_grad(op: Any, dy: Any) -> list:
    x, w = op.inputs
    return [bind(CONV2D_BACKPROP_INPUT, (_shape_tensor(x), w, dy), op.attrs),
            bind(CONV2D_BACKPROP_FILTER, (x, _shape_tensor(w), dy), op.attrs)]


def _conv_input_grad(op: Any, g: Any) -> list:
    # out = C_x(w)^T dy is bilinear in (w, dy): d/d(dy) is conv2d, d/dw is the filter grad.
    _, w, dy = op.inputs
    return [None, bind(CONV2D_BACKPROP_FILTER, (g, _shape_tensor(w), dy), op.attrs),
            bind(CONV2D, (g, w), op.attrs)]


def _conv_filter_grad(op: Any, g: Any) -> list:
    x, _, dy = op.inputs
    return [bind(CONV2D_BACKPROP_INPUT, (_shape_tensor(x), g, dy), op.attrs), None,
            bind(CONV2D, (x, g), op.attrs)]


CONV2D = defop("Conv2D", shape=_conv2d_rule, kernel=_conv2d_kernel, grad=_conv2d_grad,
               dtypes=FLOATS, check_eager=True)
CONV2D_BACKPROP_INPUT = defop("Conv2DBackpropInput", shape=_conv_input_rule,
                              kernel=_conv_input_kernel, grad=_conv_input_grad,
                              same_dtype=(1, 2))
CONV2D_BACKPROP_FILTER = defop("Conv2DBackpropFilter", shape=_conv_filter_rule,
                               kernel=_conv_filter_kernel, grad=_conv_filter_grad,
                               same_dtype=(0, 2))


def conv2d(input: Any, filters: Any, strides: Any, padding: Any,  # noqa: A002 - TF's name
           data_format: str = "NHWC", dilations: Any = None,
           name: Optional[str] = None) -> Tensor:
    """2-D convolution of NHWC `input` with `filters` [height, width, in, out].

    `strides` and `dilations` are an int, a pair, or [1, h, w, 1]; `padding` is 'SAME'
    (output size ceil(in / stride)), 'VALID', or explicit NHWC pads. data_format='NCHW'
    transposes around the NHWC op.

    >>> import kilnflow as kf
    >>> import kilnflow.nn
    >>> x = kf.ones([1, 4, 4, 1])
    >>> kf.nn.conv2d(x, kf.ones([3, 3, 1, 2]), strides=2, padding="SAME").shape
    TensorShape([1, 2, 2, 2])
    """
    x, w = binary(input, filters)
    op = "Conv2D"
    if data_format not in ("NHWC", "NCHW"):
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}"))
    if data_format == "NCHW":
        def nhwc(v: Any) -> Any:
            v = [v] * 2 if isinstance(v, numbers.Integral) or v is None else list(v)
            return [v[0], v[2], v[3], v[1]] if len(v) == 4 else v
        x = reshaping.transpose(x, [0, 2, 3, 1])
        y = conv2d(x, w, nhwc(strides), _nchw_pads(padding), "NHWC",
                   nhwc(dilations) if dilations is not None else None)
        return reshaping.transpose(y, [0, 3, 1, 2], name=name)
    attrs = {"strides": _pair(strides, "strides", op), "padding": _padding_attr(padding, op),
             "dilations": _pair(1 if dilations is None else dilations, "dilations", op)}
    if min(attrs["strides"] + attrs["dilations"]) < 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: strides and dilations must be >= 1, got {attrs}"))
    if max(attrs["strides"]) > 1 and max(attrs["dilations"]) > 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: strides > 1 are not supported together with dilations > 1 (as in TF)"))
    return bind(CONV2D, (x, w), attrs, name=name)


def _nchw_pads(padding: Any) -> Any:
    if isinstance(padding, str):
        return padding
    p = [list(q) for q in padding]
    return [p[0], p[2], p[3], p[1]]


# ---------------------------------------------------------------- pooling

def _pool_rule(x: Any, *, ksize: tuple, strides: tuple, padding: Any) -> TensorSpec:
    n, h, w, c = _dims4(x, "input")
    spec = _conv_spec([n, h, w, c], [ksize[0], ksize[1], c, c], strides, padding, (1, 1))
    return TensorSpec(spec, x.dtype)


def _pool_taps(shape: tuple, ksize: tuple, strides: tuple, padding: Any) -> tuple:
    """(pads, taps): a tap indexes, for every output position, one fixed offset of its
    window in the padded input. Pools loop over the ksize taps with whole-array ops,
    which is much faster than reducing over strided window views."""
    oh, ow, pads = _geometry(shape[1], shape[2], ksize[0], ksize[1], strides, padding)
    taps = [_tap(i, j, strides, oh, ow) for i in range(ksize[0]) for j in range(ksize[1])]
    return pads, taps


def _lowest(dtype: Any) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _window_max(xp: Any, taps: list) -> Any:
    out = xp[taps[0]].copy()
    for tap in taps[1:]:
        np.maximum(out, xp[tap], out=out)
    return out


def _max_pool_kernel(x: Any, *, ksize: tuple, strides: tuple, padding: Any) -> Any:
    pads, taps = _pool_taps(x.shape, ksize, strides, padding)
    return _window_max(_padded(x, pads, _lowest(x.dtype)), taps)  # padding never wins


def _first_max_masks(x: Any, ksize: tuple, strides: tuple, padding: Any) -> tuple:
    """(pads, [(tap, mask)]): mask is where that tap holds its window's first maximum,
    the one element TF routes the window's gradient to."""
    pads, taps = _pool_taps(x.shape, ksize, strides, padding)
    xp = _padded(x, pads, _lowest(x.dtype))
    best = _window_max(xp, taps)
    claimed = np.zeros(best.shape, dtype=bool)
    masks = []
    for tap in taps:
        mask = (xp[tap] == best) & ~claimed
        claimed |= mask
        masks.append((tap, mask))
    return pads, masks


def _max_pool_grad_kernel(x: Any, dy: Any, *, ksize: tuple, strides: tuple,
                          padding: Any) -> Any:
    pads, masks = _first_max_masks(x, ksize, strides, padding)
    n, h, w, c = x.shape
    dxp = np.zeros((n, h + sum(pads[1]), w + sum(pads[2]), c), dtype=dy.dtype)
    for tap, mask in masks:
        dxp[tap] += dy * mask
    return _crop(dxp, pads, x.shape[1], x.shape[2])


def _max_pool_grad_grad_kernel(x: Any, g: Any, *, ksize: tuple, strides: tuple,
                               padding: Any) -> Any:
    pads, masks = _first_max_masks(x, ksize, strides, padding)
    gp = _padded(g, pads)
    out = np.zeros(masks[0][1].shape, dtype=g.dtype)
    for tap, mask in masks:
        out += gp[tap] * mask
    return out


def _avg_counts(h: int, w: int, ksize: tuple, strides: tuple, padding: Any) -> Any:
    """How many real (unpadded) inputs each window covers: TF averages over those only."""
    pads, taps = _pool_taps((1, h, w, 1), ksize, strides, padding)
    ones = _padded(np.ones((1, h, w, 1)), pads)
    return sum(ones[tap] for tap in taps)


def _avg_pool_kernel(x: Any, *, ksize: tuple, strides: tuple, padding: Any) -> Any:
    pads, taps = _pool_taps(x.shape, ksize, strides, padding)
    xp = _padded(x, pads)
    out = xp[taps[0]].copy()
    for tap in taps[1:]:
        out += xp[tap]
    out /= _avg_counts(x.shape[1], x.shape[2], ksize, strides, padding).astype(x.dtype)
    return out


def _avg_pool_grad_kernel(sizes: Any, dy: Any, *, ksize: tuple, strides: tuple,
                          padding: Any) -> Any:
    n, h, w, c = (int(s) for s in sizes)
    pads, taps = _pool_taps((n, h, w, c), ksize, strides, padding)
    share = dy / _avg_counts(h, w, ksize, strides, padding).astype(dy.dtype)
    dxp = np.zeros((n, h + sum(pads[1]), w + sum(pads[2]), c), dtype=dy.dtype)
    for tap in taps:
        dxp[tap] += share
    return _crop(dxp, pads, h, w)


def _pool_grad_rule(x: Any, dy: Any, **attrs: Any) -> TensorSpec:
    return TensorSpec(x.shape, dy.dtype)


MAX_POOL = defop("MaxPool", shape=_pool_rule, kernel=_max_pool_kernel, dtypes=REAL,
                 check_eager=True,
                 grad=lambda op, dy: [bind(MAX_POOL_GRAD, (op.inputs[0], dy), op.attrs)])
MAX_POOL_GRAD = defop(
    "MaxPoolGrad", shape=_pool_grad_rule, kernel=_max_pool_grad_kernel, same_dtype=False,
    grad=lambda op, g: [None, bind(MAX_POOL_GRAD_GRAD, (op.inputs[0], g), op.attrs)])
MAX_POOL_GRAD_GRAD = defop(
    "MaxPoolGradGrad", shape=lambda x, g, **attrs: _pool_rule(x, **attrs),
    kernel=_max_pool_grad_grad_kernel, same_dtype=False,
    grad=lambda op, g: [None, bind(MAX_POOL_GRAD, (op.inputs[0], g), op.attrs)])
AVG_POOL = defop("AvgPool", shape=_pool_rule, kernel=_avg_pool_kernel, dtypes=FLOATS,
                 check_eager=True,
                 grad=lambda op, dy: [bind(AVG_POOL_GRAD, (_shape_tensor(op.inputs[0]), dy),
                                           op.attrs)])
AVG_POOL_GRAD = defop(
    "AvgPoolGrad",
    shape=lambda s, dy, **attrs: TensorSpec(_static_sizes(s) or [None] * 4, dy.dtype),
    kernel=_avg_pool_grad_kernel, same_dtype=False,
    grad=lambda op, g: [None, bind(AVG_POOL, (g,), op.attrs)])


def _pool(opdef: Any, input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
          data_format: str, name: Optional[str]) -> Tensor:
    x = convert_to_tensor(input)
    op = opdef.name
    if data_format != "NHWC":
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: only data_format='NHWC' is supported, got {data_format!r}"))
    if x.shape.rank is not None and x.shape.rank != 4:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: input must be 4-dimensional [batch, height, width, channels], got shape "
            f"{x.shape} [Op:{op}]"))
    attrs = {"ksize": _pair(ksize, "ksize", op), "strides": _pair(strides, "strides", op),
             "padding": _padding_attr(padding, op)}
    if min(attrs["ksize"] + attrs["strides"]) < 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: ksize and strides must be >= 1, got {attrs}"))
    if x.shape.rank == 4:  # checked before any per-window work: a huge window cannot hang
        for size, dim in zip(attrs["ksize"], x.shape.as_list()[1:3]):
            if dim is not None and size > 2 * dim + 1:
                raise errors.InvalidArgumentError(errors.with_location(
                    f"{op}: ksize {attrs['ksize']} is larger than twice the input's spatial "
                    f"shape {x.shape.as_list()[1:3]} (with padding {attrs['padding']!r} most "
                    f"of each window would be padding) [Op:{op}]"))
    return bind(opdef, (x,), attrs, name=name)


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
               data_format: str = "NHWC", name: Optional[str] = None) -> Tensor:
    """Max over each ksize window of NHWC `input`; SAME padding never wins the max.

    >>> import kilnflow as kf
    >>> import kilnflow.nn
    >>> x = kf.reshape(kf.range(16.0), [1, 4, 4, 1])
    >>> kf.reshape(kf.nn.max_pool2d(x, 2, 2, "VALID"), [-1]).numpy().tolist()
    [5.0, 7.0, 13.0, 15.0]
    """
    return _pool(MAX_POOL, input, ksize, strides, padding, data_format, name)


def avg_pool2d(input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
               data_format: str = "NHWC", name: Optional[str] = None) -> Tensor:
    """Mean over each ksize window of NHWC `input` (SAME: over the unpadded part only)."""
    return _pool(AVG_POOL, input, ksize, strides, padding, data_format, name)


max_pool = max_pool2d
avg_pool = avg_pool2d
