"""More of tf.nn, built from existing ops (no new OpDefs, so gradients and graph modes come
from the ops they apply): normalization (batch_normalization, moments helpers, lrn), losses
(weighted and Poisson cross entropies, compute_average_loss), embedding_lookup, crelu,
space_to_depth/depth_to_space, and the convolution and pooling variants TF defines in terms
of 2-D ones (conv1d, conv2d_transpose, depthwise/separable/atrous conv2d, 1-D pools, and
the rank-dispatching convolution/pool). Imports ops only.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Sequence

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind
from kilnflow.ops import array, conv, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat
from kilnflow.ops.math import (
    abs as absolute, add_n, cast, exp, log, log1p, multiply, rsqrt, sqrt, square, subtract,
    truediv)
from kilnflow.ops.nn import relu
from kilnflow.ops.reduction import reduce_sum
from kilnflow.tensor import Tensor


# ---------------------------------------------------------------- normalization

def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any,
                        variance_epsilon: float, name: Optional[str] = None) -> Tensor:
    """(x - mean) * scale / sqrt(variance + epsilon) + offset (offset, scale may be None).

    >>> import kilnflow as kf
    >>> kf.nn.batch_normalization(kf.constant([1.0, 3.0]), 2.0, 1.0, None, None, 0.0
    ...                           ).numpy().tolist()
    [-1.0, 1.0]
    """
    x = convert_to_tensor(x)
    inv = rsqrt(convert_to_tensor(variance, x.dtype) + convert_to_tensor(variance_epsilon,
                                                                            x.dtype))
    if scale is not None:
        inv = inv * convert_to_tensor(scale, x.dtype)
    shift = -convert_to_tensor(mean, x.dtype) * inv
    if offset is not None:
        shift = shift + convert_to_tensor(offset, x.dtype)
    return x * inv + shift


def batch_norm_with_global_normalization(input: Any, mean: Any, variance: Any,  # noqa: A002
                                         beta: Any, gamma: Any, variance_epsilon: float,
                                         scale_after_normalization: bool,
                                         name: Optional[str] = None) -> Tensor:
    """TF's older batch normalization: gamma is used only when scale_after_normalization."""
    return batch_normalization(input, mean, variance, beta,
                               gamma if scale_after_normalization else None, variance_epsilon)


def sufficient_statistics(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
                          name: Optional[str] = None) -> tuple:
    """(count, sum of x - shift, sum of (x - shift) ** 2, shift) over `axes`."""
    x = convert_to_tensor(x)
    axes = list(axes)
    from kilnflow.ops.reduction import reduce_prod
    from kilnflow.ops.slicing import gather
    count = cast(reduce_prod(gather(array.shape(x), axes)), x.dtype)
    shifted = x if shift is None else subtract(x, convert_to_tensor(shift, x.dtype))
    mean_ss = reduce_sum(shifted, axes, keepdims=keepdims)
    var_ss = reduce_sum(square(shifted), axes, keepdims=keepdims)
    return count, mean_ss, var_ss, (None if shift is None else convert_to_tensor(shift,
                                                                                  x.dtype))


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any,
                      name: Optional[str] = None) -> tuple:
    """(mean, variance) from the output of sufficient_statistics."""
    divisor = 1 / convert_to_tensor(counts)
    shifted_mean = mean_ss * divisor
    mean = shifted_mean if shift is None else shifted_mean + shift
    variance = variance_ss * divisor - square(shifted_mean)
    return mean, variance


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, keepdims: bool = False,
                     name: Optional[str] = None) -> tuple:
    """(mean, variance) of x over `axes`, each element counted frequency_weights times."""
    x = convert_to_tensor(x)
    weights = convert_to_tensor(frequency_weights, x.dtype)
    weights = weights + array.zeros_like(x)  # broadcast to x's shape
    total = reduce_sum(weights, axes, keepdims=True)
    divisor = truediv(array.ones_like(total), total)
    mean = reduce_sum(weights * x, axes, keepdims=True) * divisor
    variance = reduce_sum(weights * square(x - mean), axes, keepdims=True) * divisor
    if not keepdims:
        mean = reshaping.squeeze(mean, list(axes))
        variance = reshaping.squeeze(variance, list(axes))
    return mean, variance


def local_response_normalization(input: Any, depth_radius: int = 5,  # noqa: A002
                                 bias: float = 1.0, alpha: float = 1.0, beta: float = 0.5,
                                 name: Optional[str] = None) -> Tensor:
    """input / (bias + alpha * sqr_sum) ** beta, sqr_sum over channels within depth_radius."""
    x = convert_to_tensor(input)
    if x.shape.rank is not None and x.shape.rank != 4:
        raise errors.InvalidArgumentError(errors.with_location(
            f"local_response_normalization: input must be 4-D, got shape {x.shape}"))
    r = int(depth_radius)
    sq = reshaping.pad(square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
    channels = x.shape[3]
    if channels is None:
        raise ValueError("local_response_normalization: the channel dimension must be known")
    windows = [sq[:, :, :, i:i + channels] for i in range(2 * r + 1)]
    sqr_sum = add_n(windows) if len(windows) > 1 else windows[0]
    denom = exp(convert_to_tensor(beta, x.dtype) *
                log(convert_to_tensor(bias, x.dtype) + convert_to_tensor(alpha, x.dtype) * sqr_sum))
    return truediv(x, denom)


lrn = local_response_normalization


# ---------------------------------------------------------------- losses and activations

def crelu(features: Any, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """concat([relu(x), relu(-x)], axis): doubles the channels."""
    x = convert_to_tensor(features)
    return concat([relu(x), relu(-x)], axis)


def weighted_cross_entropy_with_logits(labels: Any, logits: Any, pos_weight: Any,
                                       name: Optional[str] = None) -> Tensor:
    """Sigmoid cross entropy whose positive term is weighted by `pos_weight`, computed
    without overflow: (1 - z) * x + (1 + (q - 1) * z) * (log1p(exp(-|x|)) + max(-x, 0))."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, logits.dtype)
    log_weight = 1 + (convert_to_tensor(pos_weight, logits.dtype) - 1) * labels
    return (1 - labels) * logits + log_weight * (log1p(exp(-absolute(logits))) + relu(-logits))


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False,
                     name: Optional[str] = None) -> Tensor:
    """exp(log_input) - log_input * targets, plus Stirling's term for targets > 1 when
    compute_full_loss."""
    log_input = convert_to_tensor(log_input)
    targets = convert_to_tensor(targets, log_input.dtype)
    loss = exp(log_input) - log_input * targets
    if not compute_full_loss:
        return loss
    safe = array.where(targets > 1, targets, array.ones_like(targets))
    stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
    return loss + array.where(targets > 1, stirling, array.zeros_like(targets))


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None,
                         global_batch_size: Any = None) -> Tensor:
    """sum(per_example_loss * sample_weight) / global_batch_size (default: the number of
    examples, the first dimension: one replica)."""
    loss = convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = multiply(loss, convert_to_tensor(sample_weight, loss.dtype))
    if global_batch_size is None:
        global_batch_size = array.shape(loss)[0] if loss.shape.rank else 1
    return truediv(reduce_sum(loss), cast(convert_to_tensor(global_batch_size), loss.dtype))


def scale_regularization_loss(regularization_loss: Any) -> Tensor:
    """The summed regularization loss divided by the number of replicas (one here)."""
    return reduce_sum(convert_to_tensor(regularization_loss))


def embedding_lookup(params: Any, ids: Any, max_norm: Any = None,
                     name: Optional[str] = None) -> Tensor:
    """Rows `ids` of `params` (a tensor, or a list of shards split 'mod'-wise as TF does);
    rows with an L2 norm above `max_norm` are scaled down to it."""
    from kilnflow.ops.slicing import gather
    ids = convert_to_tensor(ids)
    if isinstance(params, (list, tuple)):
        shards = [convert_to_tensor(p) for p in params]
        if len(shards) == 1:
            params = shards[0]
        else:
            from kilnflow.ops.joining import stack
            # shard i holds rows i, i + n, i + 2n, ...: interleave the shards back
            rows = [s.shape[0] for s in shards]
            if None in rows or len(set(rows)) > 1:
                raise ValueError("embedding_lookup: shards of unequal or unknown sizes are "
                                 "not supported")
            stacked = stack(shards, axis=1)
            params = reshaping.reshape(stacked, concat([[-1], array.shape(shards[0])[1:]], 0))
    params = convert_to_tensor(params)
    out = gather(params, ids)
    if max_norm is None:
        return out
    norms = sqrt(reduce_sum(square(out), -1, keepdims=True))
    limit = convert_to_tensor(max_norm, out.dtype)
    scale = array.where(norms > limit, truediv(limit + array.zeros_like(norms), norms),
                        array.ones_like(norms))
    return out * scale


# ---------------------------------------------------------------- space/depth rearrangement

def space_to_depth(input: Any, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: Optional[str] = None) -> Tensor:
    """Moves block_size x block_size spatial blocks into channels (NHWC)."""
    x = convert_to_tensor(input)
    b = int(block_size)
    if data_format != "NHWC":
        raise errors.InvalidArgumentError(errors.with_location(
            "space_to_depth: only data_format='NHWC' is supported"))
    n, h, w, c = _dims(x, "space_to_depth")
    if b < 2 or h % b or w % b:
        raise errors.InvalidArgumentError(errors.with_location(
            f"space_to_depth: block_size {b} must be >= 2 and divide height {h} and width {w}"))
    y = reshaping.reshape(x, [-1, h // b, b, w // b, b, c])
    y = reshaping.transpose(y, [0, 1, 3, 2, 4, 5])
    return reshaping.reshape(y, [-1, h // b, w // b, b * b * c], name=name)


def depth_to_space(input: Any, block_size: int, data_format: str = "NHWC",  # noqa: A002
                   name: Optional[str] = None) -> Tensor:
    """Moves channels into block_size x block_size spatial blocks (the inverse of
    space_to_depth)."""
    x = convert_to_tensor(input)
    b = int(block_size)
    if data_format != "NHWC":
        raise errors.InvalidArgumentError(errors.with_location(
            "depth_to_space: only data_format='NHWC' is supported"))
    n, h, w, c = _dims(x, "depth_to_space")
    if b < 2 or c % (b * b):
        raise errors.InvalidArgumentError(errors.with_location(
            f"depth_to_space: block_size {b} must be >= 2 and its square divide depth {c}"))
    y = reshaping.reshape(x, [-1, h, w, b, b, c // (b * b)])
    y = reshaping.transpose(y, [0, 1, 3, 2, 4, 5])
    return reshaping.reshape(y, [-1, h * b, w * b, c // (b * b)], name=name)


def _dims(x: Tensor, what: str) -> list:
    dims = x.shape.as_list() if x.shape.rank is not None else None
    if dims is None or len(dims) != 4 or None in dims[1:]:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{what}: input must be 4-D with known height, width and depth, got {x.shape}"))
    return dims


# ---------------------------------------------------------------- convolutions and pools

def _spatial(value: Any, what: str) -> tuple:
    """An int, a pair, or [1, h, w, 1] as (h, w)."""
    if isinstance(value, numbers.Integral):
        return int(value), int(value)
    value = [int(v) for v in value]
    if len(value) == 4:
        return value[1], value[2]
    if len(value) == 2:
        return value[0], value[1]
    if len(value) == 1:
        return value[0], value[0]
    raise errors.InvalidArgumentError(errors.with_location(
        f"{what} must be an int or have 1, 2 or 4 elements, got {value}"))


def _one_d(value: Any, what: str) -> int:
    if isinstance(value, numbers.Integral):
        return int(value)
    value = [int(v) for v in value]
    if len(value) == 3:
        return value[1]
    if len(value) == 1:
        return value[0]
    raise errors.InvalidArgumentError(errors.with_location(
        f"{what} must be an int or have 1 or 3 elements, got {value}"))


def conv1d(input: Any, filters: Any, stride: Any, padding: Any,  # noqa: A002 - TF's name
           data_format: str = "NWC", dilations: Any = None,
           name: Optional[str] = None) -> Tensor:
    """1-D convolution of NWC `input` with `filters` [width, in, out] (a conv2d of height 1)."""
    if data_format not in ("NWC", "NHWC"):
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv1d: only data_format='NWC' is supported, got {data_format!r}"))
    x = reshaping.expand_dims(convert_to_tensor(input), 1)
    w = reshaping.expand_dims(convert_to_tensor(filters), 0)
    dilation = 1 if dilations is None else _one_d(dilations, "conv1d: dilations")
    y = conv.conv2d(x, w, (1, _one_d(stride, "conv1d: stride")), padding, "NHWC",
                    (1, dilation))
    return reshaping.squeeze(y, [1], name=name)


def conv2d_transpose(input: Any, filters: Any, output_shape: Any,  # noqa: A002 - TF's name
                     strides: Any, padding: str = "SAME", data_format: str = "NHWC",
                     dilations: Any = None, name: Optional[str] = None) -> Tensor:
    """The gradient of conv2d with respect to its input: NHWC `input`, `filters`
    [height, width, output_channels, input_channels], and the NHWC `output_shape`."""
    if data_format != "NHWC":
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv2d_transpose: only data_format='NHWC' is supported, got {data_format!r}"))
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv2d_transpose: padding must be 'SAME' or 'VALID', got {padding!r}"))
    dy = convert_to_tensor(input)
    w = convert_to_tensor(filters, dy.dtype)
    sizes = cast(convert_to_tensor(output_shape), _dtypes.int32)
    attrs = {"strides": _spatial(strides, "conv2d_transpose: strides"),
             "padding": padding.upper(),
             "dilations": _spatial(1 if dilations is None else dilations,
                                   "conv2d_transpose: dilations")}
    return bind(conv.CONV2D_BACKPROP_INPUT, (sizes, w, dy), attrs, name=name)


def conv1d_transpose(input: Any, filters: Any, output_shape: Any,  # noqa: A002 - TF's name
                     strides: Any, padding: str = "SAME", data_format: str = "NWC",
                     dilations: Any = None, name: Optional[str] = None) -> Tensor:
    """The gradient of conv1d with respect to its input (filters [width, out, in])."""
    x = reshaping.expand_dims(convert_to_tensor(input), 1)
    w = reshaping.expand_dims(convert_to_tensor(filters), 0)
    shape = cast(convert_to_tensor(output_shape), _dtypes.int32)
    full = concat([shape[:1], [1], shape[1:]], 0)
    dilation = 1 if dilations is None else _one_d(dilations, "conv1d_transpose: dilations")
    y = conv2d_transpose(x, w, full, (1, _one_d(strides, "conv1d_transpose: strides")),
                         padding, "NHWC", (1, dilation))
    return reshaping.squeeze(y, [1], name=name)


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str,
                  name: Optional[str] = None) -> Tensor:
    """conv2d with holes: the filter taps are `rate` pixels apart (dilations=rate)."""
    return conv.conv2d(value, filters, 1, padding, dilations=int(rate), name=name)


def atrous_conv2d_transpose(value: Any, filters: Any, output_shape: Any, rate: int,
                            padding: str, name: Optional[str] = None) -> Tensor:
    """The transpose of atrous_conv2d."""
    return conv2d_transpose(value, filters, output_shape, 1, padding, dilations=int(rate),
                            name=name)


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any,  # noqa: A002
                     data_format: str = "NHWC", dilations: Any = None,
                     name: Optional[str] = None) -> Tensor:
    """Each input channel convolved with its own filters [h, w, in, multiplier]; output
    channel c * multiplier + m, as in TF. One conv2d per input channel."""
    x = convert_to_tensor(input)
    w = convert_to_tensor(filter, x.dtype)
    if data_format != "NHWC":
        raise errors.InvalidArgumentError(errors.with_location(
            "depthwise_conv2d: only data_format='NHWC' is supported"))
    channels = w.shape[2] if w.shape.rank == 4 else None
    if channels is None or (x.shape.rank == 4 and x.shape[3] not in (None, channels)):
        raise errors.InvalidArgumentError(errors.with_location(
            f"depthwise_conv2d: filter {w.shape} must be 4-D with in_channels matching the "
            f"input {x.shape}"))
    if isinstance(strides, (list, tuple)) and len(strides) == 4:
        strides = strides[1:3]
    parts = [conv.conv2d(x[:, :, :, c:c + 1], w[:, :, c:c + 1, :], strides, padding,
                         dilations=dilations) for c in range(channels)]
    return concat(parts, 3, name=name) if len(parts) > 1 else parts[0]


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any,  # noqa: A002
                     strides: Any, padding: Any, data_format: str = "NHWC",
                     dilations: Any = None, name: Optional[str] = None) -> Tensor:
    """depthwise_conv2d followed by a 1x1 conv2d with `pointwise_filter`."""
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format,
                                 dilations)
    return conv.conv2d(depthwise, pointwise_filter, 1, "VALID", name=name)


def _pool1d(pool2d: Any, input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
            data_format: str, name: Optional[str]) -> Tensor:
    if data_format not in ("NWC", "NHWC"):
        raise errors.InvalidArgumentError(errors.with_location(
            f"1-D pooling: only data_format='NWC' is supported, got {data_format!r}"))
    x = reshaping.expand_dims(convert_to_tensor(input), 1)
    y = pool2d(x, (1, _one_d(ksize, "ksize")), (1, _one_d(strides, "strides")), padding)
    return reshaping.squeeze(y, [1], name=name)


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NWC", name: Optional[str] = None) -> Tensor:
    """Max over windows of NWC `input`."""
    return _pool1d(conv.max_pool2d, input, ksize, strides, padding, data_format, name)


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: str,  # noqa: A002
               data_format: str = "NWC", name: Optional[str] = None) -> Tensor:
    """Mean over windows of NWC `input`."""
    return _pool1d(conv.avg_pool2d, input, ksize, strides, padding, data_format, name)


def convolution(input: Any, filters: Any, strides: Any = None,  # noqa: A002 - TF's name
                padding: str = "VALID", data_format: Any = None, dilations: Any = None,
                name: Optional[str] = None) -> Tensor:
    """conv1d or conv2d by the rank of `input` (3 or 4)."""
    x = convert_to_tensor(input)
    if x.shape.rank == 3:
        return conv1d(x, filters, strides or 1, padding, data_format or "NWC", dilations, name)
    if x.shape.rank == 4:
        return conv.conv2d(x, filters, strides or 1, padding, data_format or "NHWC",
                           dilations, name)
    raise errors.InvalidArgumentError(errors.with_location(
        f"convolution: input must be 3-D or 4-D here, got shape {x.shape}"))


def conv_transpose(input: Any, filters: Any, output_shape: Any, strides: Any,  # noqa: A002
                   padding: str = "SAME", data_format: Any = None, dilations: Any = None,
                   name: Optional[str] = None) -> Tensor:
    """conv1d_transpose or conv2d_transpose by the rank of `input`."""
    x = convert_to_tensor(input)
    if x.shape.rank == 3:
        return conv1d_transpose(x, filters, output_shape, strides, padding, "NWC", dilations,
                                name)
    return conv2d_transpose(x, filters, output_shape, strides, padding, data_format or "NHWC",
                            dilations, name)


def pool(input: Any, window_shape: Sequence, pooling_type: str,  # noqa: A002 - TF's name
         strides: Any = None, padding: str = "VALID", data_format: Any = None,
         dilations: Any = None, name: Optional[str] = None) -> Tensor:
    """'MAX' or 'AVG' pooling over 1-D or 2-D windows (dilations must be 1 here)."""
    if dilations is not None and any(int(d) != 1 for d in dilations):
        raise errors.UnimplementedError("pool: dilations > 1 are not supported")
    kind = str(pooling_type).upper()
    if kind not in ("MAX", "AVG"):
        raise ValueError(f"pool: pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    strides = list(strides) if strides is not None else [1] * len(window_shape)
    if len(window_shape) == 1:
        fn = max_pool1d if kind == "MAX" else avg_pool1d
        return fn(input, window_shape[0], strides[0], padding, name=name)
    fn2 = conv.max_pool2d if kind == "MAX" else conv.avg_pool2d
    return fn2(input, tuple(window_shape), tuple(strides), padding, name=name)
