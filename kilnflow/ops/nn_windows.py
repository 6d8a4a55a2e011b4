"""Window ops and layouts of tf.nn beyond conv.py: max_pool_with_argmax and dilation2d (each one
defop with its gradient), erosion2d, conv3d (a sum of conv2ds over depth taps), the
depthwise conv2d gradients, space_to_batch, collapse_repeated, and tf.nn.experimental's
stateless_dropout / general_dropout. Imports ops only.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, conv, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat
from kilnflow.ops.math import REAL, add_n, cast
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


def _size_and_pads(size: Optional[int], k: int, stride: int, rate: int, padding: str) -> tuple:
    """(output size, pad before, pad after) of one spatial dim, as TF computes them."""
    effective = (k - 1) * rate + 1
    if size is None:
        return None, 0, 0
    if padding == "VALID":
        return max((size - effective) // stride + 1, 0), 0, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return out, total // 2, total - total // 2


def _four(value: Any, what: str) -> tuple:
    value = [int(v) for v in ([value] * 2 if isinstance(value, (int, np.integer)) else value)]
    if len(value) == 4:
        return value[1], value[2]
    if len(value) == 2:
        return value[0], value[1]
    raise errors.InvalidArgumentError(errors.with_location(
        f"{what} must be an int, a pair or [1, h, w, 1], got {value}"))


def _windows(x: np.ndarray, kh: int, kw: int, strides: tuple, rates: tuple, padding: str,
             fill: float) -> tuple:
    """(view [N, OH, OW, C, KH, KW] of the padded input, padded input, pads)."""
    oh, top, bottom = _size_and_pads(x.shape[1], kh, strides[0], rates[0], padding)
    ow, left, right = _size_and_pads(x.shape[2], kw, strides[1], rates[1], padding)
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=fill)
    view = np.lib.stride_tricks.sliding_window_view(
        xp, ((kh - 1) * rates[0] + 1, (kw - 1) * rates[1] + 1), axis=(1, 2))
    view = view[:, ::strides[0], ::strides[1], :, ::rates[0], ::rates[1]][:, :oh, :ow]
    return view, (top, left)


# ---------------------------------------------------------------- max_pool_with_argmax

def _argmax_pool_rule(x: Any, *, ksize: tuple, strides: tuple, padding: str,
                      include_batch_in_index: bool, output_dtype: Any) -> list:
    if x.shape.rank not in (None, 4):
        raise ValueError(f"input must be 4-D, got shape {x.shape}")
    dims = x.shape.as_list() if x.shape.rank else [None] * 4
    oh = _size_and_pads(dims[1], ksize[0], strides[0], 1, padding)[0]
    ow = _size_and_pads(dims[2], ksize[1], strides[1], 1, padding)[0]
    shape = [dims[0], oh, ow, dims[3]]
    return [TensorSpec(shape, x.dtype), TensorSpec(shape, output_dtype)]


def _argmax_pool_kernel(x: Any, *, ksize: tuple, strides: tuple, padding: str,
                        include_batch_in_index: bool, output_dtype: Any) -> tuple:
    """Max of each window and the flat index of where it is: ((b * H + y) * W + x) * C + c
    with the batch term only when include_batch_in_index, as in TF."""
    n, h, w, c = x.shape
    view, (top, left) = _windows(x, ksize[0], ksize[1], strides, (1, 1), padding, -np.inf)
    flat = view.reshape(view.shape[:4] + (-1,))
    best = np.argmax(flat, axis=-1)
    values = np.take_along_axis(flat, best[..., None], -1)[..., 0].astype(x.dtype)
    oh, ow = values.shape[1:3]
    rows = np.arange(oh)[None, :, None, None] * strides[0] - top + best // ksize[1]
    cols = np.arange(ow)[None, None, :, None] * strides[1] - left + best % ksize[1]
    index = (rows * w + cols) * c + np.arange(c)[None, None, None, :]
    if include_batch_in_index:
        index = index + np.arange(n)[:, None, None, None] * h * w * c
    return values, index.astype(output_dtype.as_numpy_dtype)


def _argmax_pool_grad(op: Any, dy: Any, d_index: Any) -> list:
    """dy scattered to the argmax positions (indices made batch-inclusive first)."""
    from kilnflow.ops.scatter import scatter_nd
    x = op.inputs[0]
    index = cast(op.outputs[1], _dtypes.int64)
    shape = array.shape(x, out_type=_dtypes.int64)
    if not op.attrs["include_batch_in_index"]:
        per_image = shape[1] * shape[2] * shape[3]
        batch = reshaping.reshape(cast(array.range(shape[0]), _dtypes.int64), [-1, 1, 1, 1])
        index = index + batch * per_image
    flat = scatter_nd(reshaping.reshape(index, [-1, 1]), reshaping.reshape(dy, [-1]),
                      reshaping.reshape(shape[0] * shape[1] * shape[2] * shape[3], [1]))
    return [reshaping.reshape(flat, shape)]


MAX_POOL_WITH_ARGMAX = defop("MaxPoolWithArgmax", shape=_argmax_pool_rule,
                             kernel=_argmax_pool_kernel, grad=_argmax_pool_grad,
                             multi_output=True, dtypes=REAL, check_eager=True)


def max_pool_with_argmax(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
                         data_format: str = "NHWC", output_dtype: Any = _dtypes.int64,
                         include_batch_in_index: bool = False,
                         name: Optional[str] = None) -> tuple:
    """(max_pool2d of NHWC `input`, flat index of each max), as TF's op."""
    if data_format != "NHWC" or str(padding).upper() not in ("SAME", "VALID"):
        raise errors.InvalidArgumentError(errors.with_location(
            "max_pool_with_argmax: data_format must be 'NHWC' and padding 'SAME' or 'VALID'"))
    return bind(MAX_POOL_WITH_ARGMAX, (convert_to_tensor(input),), {
        "ksize": _four(ksize, "ksize"), "strides": _four(strides, "strides"),
        "padding": str(padding).upper(), "include_batch_in_index": bool(include_batch_in_index),
        "output_dtype": _dtypes.as_dtype(output_dtype)}, name=name)


# ---------------------------------------------------------------- dilation2d / erosion2d

def _dilation_rule(x: Any, f: Any, *, strides: tuple, rates: tuple, padding: str) -> TensorSpec:
    if x.shape.rank not in (None, 4) or f.shape.rank not in (None, 3):
        raise ValueError(f"dilation2d: input must be 4-D and filters 3-D, got {x.shape} and "
                         f"{f.shape}")
    dims = x.shape.as_list() if x.shape.rank else [None] * 4
    kh, kw = (f.shape[0], f.shape[1]) if f.shape.rank else (None, None)
    oh = _size_and_pads(dims[1], kh, strides[0], rates[0], padding)[0] if kh else None
    ow = _size_and_pads(dims[2], kw, strides[1], rates[1], padding)[0] if kw else None
    return TensorSpec([dims[0], oh, ow, dims[3]], x.dtype)


def _dilation_scores(x: Any, f: Any, strides: tuple, rates: tuple, padding: str) -> tuple:
    view, pads = _windows(x, f.shape[0], f.shape[1], strides, rates, padding, -np.inf)
    scores = view + np.moveaxis(f, 2, 0)[None, None, None]  # [N, OH, OW, C, KH, KW]
    return scores.reshape(scores.shape[:4] + (-1,)), pads


def _dilation_kernel(x: Any, f: Any, *, strides: tuple, rates: tuple, padding: str) -> Any:
    scores, _ = _dilation_scores(x, f, strides, rates, padding)
    return scores.max(axis=-1).astype(x.dtype)


def _dilation_grads(x: Any, f: Any, dy: Any, *, strides: tuple, rates: tuple, padding: str,
                    which: str) -> Any:
    """The gradient of dilation2d for `which` ('input' or 'filter'): dy goes to the argmax."""
    scores, (top, left) = _dilation_scores(x, f, strides, rates, padding)
    best = np.argmax(scores, axis=-1)
    kh, kw = f.shape[:2]
    i, j = best // kw, best % kw
    n, oh, ow, c = best.shape
    if which == "filter":
        out = np.zeros(f.shape, dy.dtype)
        np.add.at(out, (i, j, np.broadcast_to(np.arange(c), best.shape)), dy)
        return out
    out = np.zeros(x.shape, dy.dtype)
    rows = np.arange(oh)[None, :, None, None] * strides[0] - top + i * rates[0]
    cols = np.arange(ow)[None, None, :, None] * strides[1] - left + j * rates[1]
    b = np.broadcast_to(np.arange(n)[:, None, None, None], best.shape)
    ch = np.broadcast_to(np.arange(c), best.shape)
    np.add.at(out, (b, rows, cols, ch), dy)
    return out


def _dilation_grad_rule(x: Any, f: Any, dy: Any, **attrs: Any) -> TensorSpec:
    return TensorSpec((x if attrs["which"] == "input" else f).shape, dy.dtype)


DILATION_BACKPROP = defop("Dilation2DBackprop", shape=_dilation_grad_rule,
                          kernel=_dilation_grads, dtypes=REAL)
DILATION = defop("Dilation2D", shape=_dilation_rule, kernel=_dilation_kernel, dtypes=REAL,
                 check_eager=True,
                 grad=lambda op, dy: [bind(DILATION_BACKPROP, (*op.inputs, dy),
                                           {**op.attrs, "which": which})
                                      for which in ("input", "filter")])


def dilation2d(input: Any, filters: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NHWC", dilations: Any = None,
               name: Optional[str] = None) -> Tensor:
    """Grayscale morphological dilation: max over each window of input + filters
    ([h, w, channels], no flip), per channel."""
    if data_format != "NHWC" or str(padding).upper() not in ("SAME", "VALID"):
        raise errors.InvalidArgumentError(errors.with_location(
            "dilation2d: data_format must be 'NHWC' and padding 'SAME' or 'VALID'"))
    x = convert_to_tensor(input)
    f = convert_to_tensor(filters, x.dtype)
    return bind(DILATION, (x, f), {"strides": _four(strides, "strides"),
                                   "rates": _four(1 if dilations is None else dilations,
                                                  "dilations"),
                                   "padding": str(padding).upper()}, name=name)


def erosion2d(value: Any, filters: Any, strides: Any, padding: str, data_format: str = "NHWC",
              dilations: Any = None, name: Optional[str] = None) -> Tensor:
    """Grayscale morphological erosion: min over each window of value - filters (the filter
    reflected), i.e. -dilation2d(-value, reverse(filters))."""
    f = reshaping.reverse(convert_to_tensor(filters), [0, 1])
    return -dilation2d(-convert_to_tensor(value), f, strides, padding, data_format, dilations)


# ---------------------------------------------------------------- conv3d, depthwise grads

def conv3d(input: Any, filters: Any, strides: Any, padding: str,  # noqa: A002 - TF's name
           data_format: str = "NDHWC", dilations: Any = None,
           name: Optional[str] = None) -> Tensor:
    """3-D convolution of NDHWC `input` with filters [d, h, w, in, out]: for each output
    depth, the sum over depth taps of 2-D convolutions (the depth size must be known)."""
    x = convert_to_tensor(input)
    w = convert_to_tensor(filters, x.dtype)
    if data_format != "NDHWC" or x.shape.rank != 5 or w.shape.rank != 5:
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv3d: needs NDHWC 5-D input and 5-D filters, got {x.shape} and {w.shape}"))
    strides = [1, 1, 1] if strides is None else list(strides)
    strides = strides[1:4] if len(strides) == 5 else strides
    rates = [1, 1, 1] if dilations is None else list(dilations)
    rates = rates[1:4] if len(rates) == 5 else rates
    depth, taps = x.shape[1], w.shape[0]
    if depth is None or taps is None:
        raise ValueError("conv3d: the input depth and filter depth must be known")
    out_d, front, _ = _size_and_pads(depth, taps, strides[0], rates[0], str(padding).upper())
    outputs = []
    for d in range(out_d):
        terms = []
        for k in range(taps):
            z = d * strides[0] - front + k * rates[0]
            if 0 <= z < depth:
                terms.append(conv.conv2d(x[:, z], w[k], strides[1:3], padding,
                                         dilations=rates[1:3]))
        if not terms:  # every tap of this output fell into the padding
            terms.append(array.zeros_like(conv.conv2d(x[:, 0], w[0], strides[1:3], padding,
                                                      dilations=rates[1:3])))
        outputs.append(add_n(terms) if len(terms) > 1 else terms[0])
    from kilnflow.ops.joining import stack
    return stack(outputs, axis=1, name=name)


def _pool3d(pool2d: Any, combine: Any, input: Any, ksize: Any, strides: Any,  # noqa: A002
            padding: str, data_format: str, name: Optional[str]) -> Tensor:
    """A 3-D pool as 2-D pools of the depth slices each output window covers, combined over
    depth (padding in depth is left out, as TF leaves it out of the max and the mean)."""
    x = convert_to_tensor(input)
    op = "MaxPool3D" if pool2d is conv.max_pool2d else "AvgPool3D"
    if data_format != "NDHWC" or x.shape.rank != 5 or x.shape[1] is None:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: 3-D pooling needs `input` in NDHWC 5-D with a known depth, got {x.shape}"))
    if not x.dtype.is_floating:  # TF's 3-D pooling kernels are float only
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: `input` of dtype {x.dtype.name} is not in the list of allowed values: "
            f"half, bfloat16, float [Op:{op}]"))
    ksize = [int(k) for k in ([ksize] * 3 if isinstance(ksize, (int, np.integer)) else ksize)]
    strides = [int(k) for k in ([strides] * 3 if isinstance(strides, (int, np.integer))
                                else strides)]
    ksize, strides = (ksize[1:4] if len(ksize) == 5 else ksize,
                      strides[1:4] if len(strides) == 5 else strides)
    depth = x.shape[1]
    # checked before the per-depth loops: a huge window or a zero stride cannot hang
    if len(ksize) != 3 or len(strides) != 3 or min(ksize + strides) < 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: ksize and strides must be 3 (or 5) values >= 1, got ksize={ksize}, "
            f"strides={strides} [Op:{op}]"))
    if ksize[0] > 2 * depth + 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{op}: ksize {tuple(ksize)} is larger than twice the input's depth {depth} "
            f"[Op:{op}]"))
    out_d, front, _ = _size_and_pads(depth, ksize[0], strides[0], 1, str(padding).upper())
    slices = [pool2d(x[:, z], ksize[1:], strides[1:], padding) for z in range(depth)]
    from kilnflow.ops.joining import stack
    outputs = []
    for d in range(out_d):
        taps = [slices[z] for z in range(d * strides[0] - front,
                                         d * strides[0] - front + ksize[0]) if 0 <= z < depth]
        outputs.append(combine(taps))
    return stack(outputs, axis=1, name=name)


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NDHWC", name: Optional[str] = None) -> Tensor:
    """Max over 3-D windows of NDHWC `input`."""
    from kilnflow.ops.math import maximum

    def combine(taps: list) -> Tensor:
        out = taps[0]
        for t in taps[1:]:
            out = maximum(out, t)
        return out
    return _pool3d(conv.max_pool2d, combine, input, ksize, strides, padding, data_format, name)


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NDHWC", name: Optional[str] = None) -> Tensor:
    """Mean over 3-D windows of NDHWC `input` (SAME: over the unpadded part only)."""
    return _pool3d(conv.avg_pool2d, lambda taps: add_n(taps) / len(taps) if len(taps) > 1
                   else taps[0], input, ksize, strides, padding, data_format, name)


def _channel_sizes(sizes: Any, channels: Any) -> Tensor:
    sizes = cast(convert_to_tensor(sizes), _dtypes.int32)
    return concat([sizes[:3], [channels]], 0)


def depthwise_conv2d_backprop_input(input_sizes: Any, filter: Any,  # noqa: A002
                                    out_backprop: Any, strides: Any, padding: Any,
                                    data_format: str = "NHWC", dilations: Any = None,
                                    name: Optional[str] = None) -> Tensor:
    """The gradient of depthwise_conv2d with respect to its input, one channel at a time."""
    w = convert_to_tensor(filter)
    dy = convert_to_tensor(out_backprop, w.dtype)
    channels, multiplier = w.shape[2], w.shape[3]
    attrs = {"strides": _four(strides, "strides"), "padding": str(padding).upper(),
             "dilations": _four(1 if dilations is None else dilations, "dilations")}
    parts = [bind(conv.CONV2D_BACKPROP_INPUT,
                  (_channel_sizes(input_sizes, 1), w[:, :, c:c + 1, :],
                   dy[:, :, :, c * multiplier:(c + 1) * multiplier]), attrs)
             for c in range(channels)]
    return concat(parts, 3, name=name)


def depthwise_conv2d_backprop_filter(input: Any, filter_sizes: Any,  # noqa: A002
                                     out_backprop: Any, strides: Any, padding: Any,
                                     data_format: str = "NHWC", dilations: Any = None,
                                     name: Optional[str] = None) -> Tensor:
    """The gradient of depthwise_conv2d with respect to its filter, one channel at a time."""
    x = convert_to_tensor(input)
    dy = convert_to_tensor(out_backprop, x.dtype)
    sizes = [int(s) for s in (filter_sizes.numpy() if isinstance(filter_sizes, Tensor)
                              else filter_sizes)]
    channels, multiplier = sizes[2], sizes[3]
    attrs = {"strides": _four(strides, "strides"), "padding": str(padding).upper(),
             "dilations": _four(1 if dilations is None else dilations, "dilations")}
    parts = [bind(conv.CONV2D_BACKPROP_FILTER,
                  (x[:, :, :, c:c + 1], convert_to_tensor([sizes[0], sizes[1], 1, multiplier]),
                   dy[:, :, :, c * multiplier:(c + 1) * multiplier]), attrs)
             for c in range(channels)]
    return concat(parts, 2, name=name)


# ---------------------------------------------------------------- layouts and sequences

def space_to_batch(input: Any, block_shape: Any, paddings: Any,  # noqa: A002 - TF's name
                   name: Optional[str] = None) -> Tensor:
    """Zero-pads the spatial dims by `paddings`, then moves block_shape blocks of them into
    the batch dimension (TF's space_to_batch_nd)."""
    x = convert_to_tensor(input)
    block = [int(b) for b in np.asarray(block_shape).reshape(-1)]
    pads = np.asarray(paddings, np.int64).reshape(len(block), 2).tolist()
    m = len(block)
    if x.shape.rank is None or None in x.shape.as_list()[1:]:
        raise ValueError("space_to_batch: the input's non-batch dims must be known")
    dims = x.shape.as_list()
    padded = reshaping.pad(x, [[0, 0]] + pads + [[0, 0]] * (len(dims) - 1 - m))
    sizes = [dims[1 + i] + pads[i][0] + pads[i][1] for i in range(m)]
    if any(s % b for s, b in zip(sizes, block)):
        raise errors.InvalidArgumentError(errors.with_location(
            f"space_to_batch: padded spatial sizes {sizes} must be divisible by block_shape "
            f"{block}"))
    rest = dims[1 + m:]
    split = [-1]
    for s, b in zip(sizes, block):
        split += [s // b, b]
    y = reshaping.reshape(padded, split + rest)
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + \
        list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    y = reshaping.transpose(y, order)
    return reshaping.reshape(y, [-1] + [s // b for s, b in zip(sizes, block)] + rest,
                             name=name)


def batch_to_space(input: Any, block_shape: Any, crops: Any,  # noqa: A002 - TF's name
                   name: Optional[str] = None) -> Tensor:
    """The inverse of space_to_batch: batch blocks back into space, then `crops` removed."""
    x = convert_to_tensor(input)
    block = [int(b) for b in np.asarray(block_shape).reshape(-1)]
    crop = np.asarray(crops, np.int64).reshape(len(block), 2).tolist()
    m = len(block)
    if x.shape.rank is None or None in x.shape.as_list()[1:]:
        raise ValueError("batch_to_space: the input's non-batch dims must be known")
    dims = x.shape.as_list()
    spatial, rest = dims[1:1 + m], dims[1 + m:]
    y = reshaping.reshape(x, block + [-1] + spatial + rest)
    order = [m]
    for i in range(m):
        order += [m + 1 + i, i]
    order += list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    y = reshaping.transpose(y, order)
    y = reshaping.reshape(y, [-1] + [s * b for s, b in zip(spatial, block)] + rest)
    begin = [0] + [c[0] for c in crop] + [0] * len(rest)
    size = [-1] + [s * b - c[0] - c[1] for s, b, c in zip(spatial, block, crop)] + \
        [-1] * len(rest)
    from kilnflow.ops.slicing import slice as slice_
    return slice_(y, begin, size, name=name)


def collapse_repeated(labels: Any, seq_length: Any, name: Optional[str] = None) -> tuple:
    """(labels with consecutive repeats merged, padded with 0 to the longest result; new
    lengths) per row of [batch, max_len] `labels` within each row's `seq_length`."""
    labels = convert_to_tensor(labels)
    lengths = convert_to_tensor(seq_length)
    from kilnflow.ops.joining import stack
    from kilnflow.ops.reduction import cumsum, reduce_max, reduce_sum
    from kilnflow.ops.scatter import gather_nd, scatter_nd
    max_len = array.shape(labels)[1]
    position = array.range(max_len)
    inside = position[None, :] < cast(lengths, _dtypes.int32)[:, None]
    previous = concat([labels[:, :1] - 1, labels[:, :-1]], 1)  # first element always kept
    keep = inside & (labels != previous)
    keep_i = cast(keep, _dtypes.int32)
    new_lengths = reduce_sum(keep_i, 1)
    target = cumsum(keep_i, 1) - 1
    rows = array.where(keep)  # [k, 2]: (row, column) of every kept label
    kept_rows = cast(rows[:, 0], _dtypes.int32)
    values = gather_nd(labels, rows)
    new_cols = gather_nd(target, rows)
    out_len = reduce_max(concat([new_lengths, [0]], 0))  # [0]: an empty batch
    shape = stack([array.shape(labels)[0], out_len])
    collapsed = scatter_nd(stack([kept_rows, new_cols], 1), values, cast(shape, _dtypes.int32))
    return collapsed, cast(new_lengths, lengths.dtype)


# ---------------------------------------------------------------- tf.nn.experimental

def stateless_dropout(x: Any, rate: float, seed: Any, rng_alg: Any = None,
                      noise_shape: Any = None, name: Optional[str] = None) -> Tensor:
    """Dropout whose mask is a pure function of the shape [2] `seed` (stateless_uniform)."""
    from kilnflow.ops.stateless_random import stateless_uniform
    return general_dropout(x, rate, lambda shape, dtype: stateless_uniform(
        shape, seed, dtype=dtype), noise_shape, name)


def general_dropout(x: Any, rate: float, uniform_sampler: Any, noise_shape: Any = None,
                    name: Optional[str] = None) -> Tensor:
    """Dropout with the uniform numbers from `uniform_sampler(shape, dtype)`."""
    x = convert_to_tensor(x)
    if not x.dtype.is_floating or not 0 <= float(rate) < 1:
        raise ValueError(f"dropout: x must be floating and rate in [0, 1), got {x.dtype.name} "
                         f"and {rate}")
    if float(rate) == 0:
        return x
    shape = array.shape(x) if noise_shape is None else noise_shape
    keep = cast(uniform_sampler(shape, x.dtype) >= float(rate), x.dtype)
    return x * (1 / (1 - float(rate))) * keep

