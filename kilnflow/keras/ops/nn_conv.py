"""keras.ops.nn's convolutions and pooling over 1-, 2- and 3-D spatial inputs: Keras's kernel
layouts (spatial..., in, out), int-or-tuple strides and dilations, 'valid'/'same' padding and
data_format ('channels_last' by default; 'channels_first' is transposed around the op)."""
from __future__ import annotations

from typing import Any, List

import numpy as np

import kilnflow as kf
from kilnflow.keras.ops.convert import to_float, to_tensor
from kilnflow.ops.conv3d_transpose import conv3d_transpose


def _tuple(v: Any, n: int) -> List[int]:
    return [int(v)] * n if isinstance(v, (int, np.integer)) else [int(i) for i in v]


def _last(x: Any, data_format: Any) -> Any:
    """x in channels_last layout."""
    if data_format == "channels_first":
        nd = x.shape.rank
        return kf.transpose(x, [0] + list(range(2, nd)) + [1])
    return x


def _back(y: Any, data_format: Any) -> Any:
    if data_format == "channels_first":
        nd = y.shape.rank
        return kf.transpose(y, [0, nd - 1] + list(range(1, nd - 1)))
    return y


def _pad(padding: str) -> str:
    if padding.lower() not in ("valid", "same"):
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return padding.upper()


def conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
         data_format: Any = None, dilation_rate: Any = 1) -> Any:
    """N-D convolution; kernel (spatial..., in_channels / groups, out_channels)."""
    x = _last(to_float(inputs), data_format)
    k = to_tensor(kernel, x.dtype.name)
    n = x.shape.rank - 2
    s, d = _tuple(strides, n), _tuple(dilation_rate, n)
    cin, kin = x.shape.as_list()[-1], k.shape.as_list()[-2]
    if cin is not None and kin != cin:  # grouped convolution: one conv per group
        groups = cin // kin
        xs = kf.split(x, groups, -1)
        ks = kf.split(k, groups, -1)
        return _back(kf.concat([_conv(a, b, s, padding, d) for a, b in zip(xs, ks)], -1),
                     data_format)
    return _back(_conv(x, k, s, padding, d), data_format)


def _conv(x: Any, k: Any, s: List[int], padding: str, d: List[int]) -> Any:
    if x.shape.rank == 5:
        return kf.nn.conv3d(x, k, [1] + s + [1], _pad(padding), dilations=[1] + d + [1])
    return kf.nn.convolution(x, k, strides=s, padding=_pad(padding), dilations=d)


def depthwise_conv(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
                   data_format: Any = None, dilation_rate: Any = 1) -> Any:
    """Per-channel convolution; kernel (spatial..., in_channels, multiplier)."""
    x = _last(to_float(inputs), data_format)
    k = to_tensor(kernel, x.dtype.name)
    one_d = x.shape.rank == 3
    n = x.shape.rank - 2
    s, d = _tuple(strides, n), _tuple(dilation_rate, n)
    if one_d:
        x, k = kf.expand_dims(x, 1), kf.expand_dims(k, 0)
        s, d = [1] + s, [1] + d
    y = kf.nn.depthwise_conv2d(x, k, [1] + s + [1], _pad(padding), dilations=d)
    if one_d:
        y = kf.squeeze(y, [1])
    return _back(y, data_format)


def separable_conv(inputs: Any, depthwise_kernel: Any, pointwise_kernel: Any, strides: Any = 1,
                   padding: str = "valid", data_format: Any = None,
                   dilation_rate: Any = 1) -> Any:
    """depthwise_conv followed by a 1x1 conv with `pointwise_kernel`."""
    y = depthwise_conv(inputs, depthwise_kernel, strides, padding, data_format, dilation_rate)
    return conv(y, pointwise_kernel, 1, "valid", data_format, 1)


def _transpose_length(n: int, k: int, s: int, d: int, padding: str, out_pad: Any) -> int:
    k = (k - 1) * d + 1
    if out_pad is None:
        return n * s if padding == "same" else n * s + max(k - s, 0)
    p = k // 2 if padding == "same" else 0
    return (n - 1) * s + k - 2 * p + out_pad


def conv_transpose(inputs: Any, kernel: Any, strides: Any = 1, padding: str = "valid",
                   output_padding: Any = None, data_format: Any = None,
                   dilation_rate: Any = 1) -> Any:
    """Transposed convolution; kernel (spatial..., out_channels, in_channels)."""
    x = _last(to_float(inputs), data_format)
    k = to_tensor(kernel, x.dtype.name)
    n = x.shape.rank - 2
    s, d = _tuple(strides, n), _tuple(dilation_rate, n)
    op = [None] * n if output_padding is None else _tuple(output_padding, n)
    dims, kd = x.shape.as_list(), k.shape.as_list()
    spatial = [_transpose_length(dims[1 + i], kd[i], s[i], d[i], padding.lower(), op[i])
               for i in range(n)]
    out_shape = ([dims[0]] + spatial + [kd[-2]] if dims[0] is not None else
                 kf.concat([kf.shape(x)[:1], spatial + [kd[-2]]], 0))
    if n == 3:
        y = conv3d_transpose(x, k, out_shape, [1] + s + [1], _pad(padding),
                             dilations=[1] + d + [1])
    else:
        y = kf.nn.conv_transpose(x, k, out_shape, strides=s, padding=_pad(padding),
                                 dilations=d)
        y.set_shape([dims[0]] + spatial + [kd[-2]])
    return _back(y, data_format)


def _pool(kind: str, inputs: Any, pool_size: Any, strides: Any, padding: str,
          data_format: Any) -> Any:
    x = _last(to_float(inputs), data_format)
    n = x.shape.rank - 2
    size = _tuple(pool_size, n)
    s = size if strides is None else _tuple(strides, n)
    fn = {("max", 1): kf.nn.max_pool1d, ("max", 2): kf.nn.max_pool2d,
          ("max", 3): kf.nn.max_pool3d, ("avg", 1): kf.nn.avg_pool1d,
          ("avg", 2): kf.nn.avg_pool2d, ("avg", 3): kf.nn.avg_pool3d}[kind, n]
    return _back(fn(x, size, s, _pad(padding)), data_format)


def max_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
             data_format: Any = None) -> Any:
    """Max pooling (strides default to pool_size)."""
    return _pool("max", inputs, pool_size, strides, padding, data_format)


def average_pool(inputs: Any, pool_size: Any, strides: Any = None, padding: str = "valid",
                 data_format: Any = None) -> Any:
    """Average pooling ('same' padding averages only the real entries, as TF does)."""
    return _pool("avg", inputs, pool_size, strides, padding, data_format)


def _adaptive(reduce: Any, inputs: Any, output_size: Any, data_format: Any) -> Any:
    x = _last(to_float(inputs), data_format)
    n = x.shape.rank - 2
    out = _tuple(output_size, n)
    for axis in range(n):
        length = x.shape.as_list()[1 + axis]
        pieces = []
        for i in range(out[axis]):
            lo, hi = (i * length) // out[axis], -(-((i + 1) * length) // out[axis])
            idx = [slice(None)] * (1 + axis) + [slice(lo, hi)]
            pieces.append(reduce(x[tuple(idx)], axis=1 + axis, keepdims=True))
        x = kf.concat(pieces, 1 + axis)
    return _back(x, data_format)


def adaptive_average_pool(inputs: Any, output_size: Any, data_format: Any = None) -> Any:
    """Average pooling into exactly `output_size` bins per spatial axis (PyTorch's bins)."""
    return _adaptive(kf.reduce_mean, inputs, output_size, data_format)


def adaptive_max_pool(inputs: Any, output_size: Any, data_format: Any = None) -> Any:
    """Max pooling into exactly `output_size` bins per spatial axis."""
    return _adaptive(kf.reduce_max, inputs, output_size, data_format)


def depth_to_space(x: Any, block_size: int, data_format: str = "channels_last") -> Any:
    x = _last(to_tensor(x), data_format)
    return _back(kf.nn.depth_to_space(x, block_size), data_format)


def space_to_depth(x: Any, block_size: int, data_format: str = "channels_last") -> Any:
    x = _last(to_tensor(x), data_format)
    return _back(kf.nn.space_to_depth(x, block_size), data_format)



def _placement(size: int, count: int, offset: int, stride: int, dtype: Any) -> Any:
    """(size, count) 0/1 matrix: column a marks row offset + stride * a (an unfold tap)."""
    m = np.zeros((size, count))
    m[offset + stride * np.arange(count), np.arange(count)] = 1.0
    return kf.constant(m.astype(dtype.as_numpy_dtype))


def _unfold_geometry(h: int, w: int, kernel_size: Any, dilation: Any, padding: Any,
                     stride: Any) -> tuple:
    k, d, p, s = (_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    out = [(n + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i, n in enumerate((h, w))]
    return k, d, p, s, out


def unfold(x: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Any:
    """im2col of channels-first images (N, C, H, W) -> (N, C * kh * kw, L): every sliding
    block flattened, channel-major as in PyTorch's unfold."""
    x = to_float(x)
    n, c, h, w = x.shape.as_list()
    k, d, p, s, (oh, ow) = _unfold_geometry(h, w, kernel_size, dilation, padding, stride)
    xp = kf.pad(x, [[0, 0], [0, 0], [p[0], p[0]], [p[1], p[1]]])
    hp, wp = h + 2 * p[0], w + 2 * p[1]
    taps = []
    for i in range(k[0]):
        rows = _placement(hp, oh, i * d[0], s[0], x.dtype)
        for j in range(k[1]):
            cols = _placement(wp, ow, j * d[1], s[1], x.dtype)
            taps.append(kf.einsum("ra,ncrs,sb->ncab", rows, xp, cols))
    out = kf.stack(taps, 2)  # (N, C, kh * kw, oh, ow)
    return kf.reshape(out, [-1 if n is None else n, c * k[0] * k[1], oh * ow])


def fold(x: Any, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
         stride: Any = 1) -> Any:
    """col2im, the adjoint of unfold: (N, C * kh * kw, L) blocks summed back into
    (N, C, H, W) images (overlapping entries add up)."""
    x = to_float(x)
    h, w = _tuple(output_size, 2)
    k, d, p, s, (oh, ow) = _unfold_geometry(h, w, kernel_size, dilation, padding, stride)
    n, ckk, _ = x.shape.as_list()
    c = ckk // (k[0] * k[1])
    blocks = kf.reshape(x, [-1 if n is None else n, c, k[0] * k[1], oh, ow])
    hp, wp = h + 2 * p[0], w + 2 * p[1]
    out = None
    for i in range(k[0]):
        rows = _placement(hp, oh, i * d[0], s[0], x.dtype)
        for j in range(k[1]):
            cols = _placement(wp, ow, j * d[1], s[1], x.dtype)
            part = kf.einsum("ra,ncab,sb->ncrs", rows, blocks[:, :, i * k[1] + j], cols)
            out = part if out is None else out + part
    return out[:, :, p[0]:p[0] + h, p[1]:p[1] + w]


__all__ = [
    "adaptive_average_pool", "adaptive_max_pool", "average_pool", "conv", "conv_transpose",
    "depth_to_space", "depthwise_conv", "fold", "max_pool", "separable_conv", "space_to_depth",
    "unfold",
]
