"""keras.ops.nn: activations, softmax, one-hot encodings, cross-entropies, normalizations
and attention, with Keras 3's argument conventions (axis=-1, negative_slope=0.2, gelu
approximate=True...). Convolutions and pooling live in nn_conv.py."""
from __future__ import annotations

from typing import Any

import numpy as np

import kilnflow as kf
from kilnflow.keras import backend
from kilnflow.keras.ops.convert import promote, standardize_dtype, to_float, to_tensor
from kilnflow.keras.ops.nn_conv import (adaptive_average_pool, adaptive_max_pool,  # noqa: F401
                                        average_pool, conv, conv_transpose, depth_to_space,
                                        depthwise_conv, max_pool, separable_conv,
                                        space_to_depth, fold, unfold)
from kilnflow.keras.ops.nn_ctc import ctc_decode, ctc_loss  # noqa: F401
from kilnflow.keras.ops.numpy_reduce import moments  # noqa: F401


def relu(x: Any) -> Any:
    """max(x, 0), integer inputs staying integers (as in Keras)."""
    x = to_tensor(x)
    return kf.nn.relu(x if x.dtype.name != "bool" else kf.cast(x, "int32"))


def relu6(x: Any) -> Any:
    return kf.nn.relu6(to_float(x))


def sigmoid(x: Any) -> Any:
    return kf.sigmoid(to_float(x))


def softplus(x: Any) -> Any:
    return kf.nn.softplus(to_float(x))


def softsign(x: Any) -> Any:
    return kf.nn.softsign(to_float(x))


def silu(x: Any) -> Any:
    """x * sigmoid(x)."""
    x = to_float(x)
    return x * kf.sigmoid(x)


swish = silu


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x)."""
    return -kf.nn.softplus(-to_float(x))


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Any:
    return kf.nn.leaky_relu(to_float(x), alpha=negative_slope)


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6."""
    x = to_float(x)
    return kf.nn.relu6(x + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x)."""
    x = to_float(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def elu(x: Any, alpha: float = 1.0) -> Any:
    x = to_float(x)
    return kf.where(kf.greater(x, 0), x, kf.cast(alpha, x.dtype) * kf.expm1(kf.minimum(x, 0.0)))


def selu(x: Any) -> Any:
    return kf.nn.selu(to_float(x))


def gelu(x: Any, approximate: bool = True) -> Any:
    """x * Phi(x); the tanh approximation by default, as in Keras."""
    x = to_float(x)
    if approximate:
        c = kf.cast(np.sqrt(2.0 / np.pi), x.dtype)
        return 0.5 * x * (1.0 + kf.tanh(c * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1.0 + kf.math.erf(x / kf.cast(np.sqrt(2.0), x.dtype)))


def celu(x: Any, alpha: float = 1.0) -> Any:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    x = to_float(x)
    a = kf.cast(alpha, x.dtype)
    return kf.nn.relu(x) + kf.minimum(0.0, a * kf.expm1(kf.minimum(x, 0.0) / a))


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: a * sigmoid(b) for the two halves of x along `axis`."""
    x = to_float(x)
    a, b = kf.split(x, 2, axis)
    return a * kf.sigmoid(b)


def tanh_shrink(x: Any) -> Any:
    x = to_float(x)
    return x - kf.tanh(x)


def hard_tanh(x: Any) -> Any:
    return kf.clip_by_value(to_float(x), -1.0, 1.0)


def hard_shrink(x: Any, threshold: float = 0.5) -> Any:
    x = to_float(x)
    return kf.where(kf.greater(kf.abs(x), threshold), x, kf.zeros_like(x))


def soft_shrink(x: Any, threshold: float = 0.5) -> Any:
    x = to_float(x)
    t = kf.cast(threshold, x.dtype)
    return kf.where(kf.greater(x, t), x - t, kf.where(kf.less(x, -t), x + t, kf.zeros_like(x)))


def squareplus(x: Any, b: float = 4) -> Any:
    """(x + sqrt(x**2 + b)) / 2."""
    x = to_float(x)
    return (x + kf.sqrt(x * x + kf.cast(b, x.dtype))) / 2.0


def sparse_plus(x: Any) -> Any:
    """0 below -1, x above 1, (x + 1)**2 / 4 between."""
    x = to_float(x)
    return kf.where(kf.less_equal(x, -1.0), kf.zeros_like(x),
                    kf.where(kf.greater_equal(x, 1.0), x, kf.square(x + 1.0) / 4.0))


def sparse_sigmoid(x: Any) -> Any:
    """0 below -1, 1 above 1, (x + 1) / 2 between."""
    x = to_float(x)
    return kf.clip_by_value((x + 1.0) / 2.0, 0.0, 1.0)


def threshold(x: Any, threshold: float, default_value: float) -> Any:
    """x where x > threshold, else default_value."""
    x = to_float(x)
    return kf.where(kf.greater(x, threshold), x, kf.fill(kf.shape(x), kf.cast(default_value,
                                                                              x.dtype)))


def softmax(x: Any, axis: Any = -1) -> Any:
    """exp(x) / sum(exp(x)) along `axis` (an int or a tuple)."""
    x = to_float(x)
    ax = list(axis) if isinstance(axis, (tuple, list)) else axis
    if isinstance(ax, list) or axis is None:
        e = kf.exp(x - kf.stop_gradient(kf.reduce_max(x, axis=ax, keepdims=True)))
        return e / kf.reduce_sum(e, axis=ax, keepdims=True)
    return kf.nn.softmax(x, axis=axis)


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """x - logsumexp(x) along `axis`."""
    x = to_float(x)
    ax = list(axis) if isinstance(axis, (tuple, list)) else axis
    return x - kf.reduce_logsumexp(x, axis=ax, keepdims=True)


def sparsemax(x: Any, axis: int = -1) -> Any:
    """The Euclidean projection of x onto the probability simplex along `axis`."""
    x = to_float(x)
    from kilnflow.keras.ops.numpy_array import moveaxis
    z = moveaxis(x, axis, -1)
    zs = kf.sort(z, axis=-1, direction="DESCENDING")
    k = kf.cast(kf.range(1, kf.shape(z)[-1] + 1), z.dtype)
    cum = kf.math.cumsum(zs, axis=-1)
    support = kf.greater(1.0 + k * zs, cum)
    kz = kf.reduce_sum(kf.cast(support, z.dtype), axis=-1, keepdims=True)
    tau = (kf.reduce_sum(kf.where(support, zs, kf.zeros_like(zs)), axis=-1, keepdims=True)
           - 1.0) / kz
    return moveaxis(kf.maximum(z - tau, 0.0), -1, axis)


# ---------------------------------------------------------------- encodings and losses

def one_hot(x: Any, num_classes: int, axis: int = -1, dtype: Any = None,
            sparse: bool = False) -> Any:
    """One-hot vectors of integer labels (negative labels give all-zero rows)."""
    return kf.one_hot(to_tensor(x, "int32"), num_classes, axis=axis,
                      dtype=standardize_dtype(dtype) or backend.floatx())


def multi_hot(inputs: Any, num_classes: Any = None, axis: int = -1, dtype: Any = None,
              sparse: bool = False, **kwargs: Any) -> Any:
    """Multi-hot encoding: 1 for every label present in each row (the last axis)."""
    num_classes = kwargs.pop("num_tokens", num_classes)
    x = to_tensor(inputs, "int32")
    oh = kf.one_hot(x, num_classes, dtype=standardize_dtype(dtype) or backend.floatx())
    out = kf.reduce_max(oh, axis=-2 if x.shape.rank > 1 else 0)
    if axis != -1 and x.shape.rank > 1:
        from kilnflow.keras.ops.numpy_array import moveaxis
        out = moveaxis(out, -1, axis)
    return out


def binary_crossentropy(target: Any, output: Any, from_logits: bool = False) -> Any:
    """Elementwise binary cross-entropy (outputs clipped to [eps, 1 - eps])."""
    output = to_float(output)
    target = to_tensor(target, output.dtype.name)
    if from_logits:
        return kf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = backend.epsilon()
    output = kf.clip_by_value(output, eps, 1.0 - eps)
    return -(target * kf.math.log(output) + (1.0 - target) * kf.math.log(1.0 - output))


def categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                             axis: int = -1) -> Any:
    """-sum(target * log(output)) along `axis` (output renormalised and clipped)."""
    output = to_float(output)
    target = to_tensor(target, output.dtype.name)
    if from_logits:
        return -kf.reduce_sum(target * log_softmax(output, axis), axis=axis)
    output = output / kf.reduce_sum(output, axis=axis, keepdims=True)
    eps = backend.epsilon()
    output = kf.clip_by_value(output, eps, 1.0 - eps)
    return -kf.reduce_sum(target * kf.math.log(output), axis=axis)


def sparse_categorical_crossentropy(target: Any, output: Any, from_logits: bool = False,
                                    axis: int = -1) -> Any:
    """categorical_crossentropy with integer class targets."""
    output = to_float(output)
    target = to_tensor(target, "int32")
    if target.shape.rank == output.shape.rank and target.shape.as_list()[-1] == 1:
        target = kf.squeeze(target, [-1])
    n = output.shape.as_list()[axis]
    return categorical_crossentropy(kf.one_hot(target, n, axis=axis, dtype=output.dtype),
                                    output, from_logits, axis)


# ---------------------------------------------------------------- normalizations

def _along(v: Any, x: Any, axis: int) -> Any:
    v = to_tensor(v, x.dtype.name)
    if v.shape.rank == 1 and x.shape.rank > 1:
        shape = [1] * x.shape.rank
        shape[axis % x.shape.rank] = -1
        v = kf.reshape(v, shape)
    return v


def batch_normalization(x: Any, mean: Any, variance: Any, axis: int, offset: Any = None,
                        scale: Any = None, epsilon: float = 1e-3) -> Any:
    """(x - mean) / sqrt(variance + epsilon) * scale + offset, statistics along `axis`."""
    x = to_float(x)
    inv = kf.math.rsqrt(_along(variance, x, axis) + epsilon)
    if scale is not None:
        inv = inv * _along(scale, x, axis)
    out = (x - _along(mean, x, axis)) * inv
    return out + _along(offset, x, axis) if offset is not None else out


def normalize(x: Any, axis: int = -1, order: int = 2, epsilon: Any = None) -> Any:
    """x divided by its `order`-norm along `axis` (at least epsilon)."""
    x = to_float(x)
    eps = backend.epsilon() if epsilon is None else epsilon
    if order == 2:
        inv = kf.math.rsqrt(kf.reduce_sum(kf.square(x), axis=axis, keepdims=True))
        return x * kf.minimum(inv, 1.0 / eps)
    norm = kf.pow(kf.reduce_sum(kf.pow(kf.abs(x), float(order)), axis=axis, keepdims=True),
                  1.0 / order)
    return x / kf.maximum(norm, eps)


def layer_normalization(x: Any, gamma: Any = None, beta: Any = None, axis: Any = -1,
                        epsilon: Any = None, **kwargs: Any) -> Any:
    """Normalise over `axis` to zero mean and unit variance, then scale and shift."""
    x = to_float(x)
    eps = backend.epsilon() if epsilon is None else epsilon
    ax = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    m, v = moments(x, ax, keepdims=True)
    out = (x - m) * kf.math.rsqrt(v + eps)
    if gamma is not None:
        out = out * to_tensor(gamma, x.dtype.name)
    if beta is not None:
        out = out + to_tensor(beta, x.dtype.name)
    return out


def rms_normalization(x: Any, scale: Any = None, axis: Any = -1, epsilon: Any = None) -> Any:
    """x / sqrt(mean(x**2) + epsilon) * scale over `axis`."""
    x = to_float(x)
    eps = backend.epsilon() if epsilon is None else epsilon
    ax = list(axis) if isinstance(axis, (list, tuple)) else axis
    out = x * kf.math.rsqrt(kf.reduce_mean(kf.square(x), axis=ax, keepdims=True) + eps)
    return out * to_tensor(scale, x.dtype.name) if scale is not None else out


def psnr(x1: Any, x2: Any, max_val: float) -> Any:
    """Peak signal-to-noise ratio in dB over the whole tensors."""
    a, b = promote(to_float(x1), to_float(x2))
    mse = kf.reduce_mean(kf.square(a - b))
    ln10 = kf.cast(np.log(10.0), mse.dtype)
    return 20.0 * kf.math.log(kf.cast(max_val, mse.dtype)) / ln10 - 10.0 * kf.math.log(
        mse) / ln10


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          scale: Any = None, is_causal: bool = False, flash_attention: Any = None,
                          attn_logits_soft_cap: Any = None) -> Any:
    """softmax(Q K^T * scale + bias, masked) V over (batch, seq, heads, dim) inputs."""
    q, k, v = promote(to_float(query), to_float(key), to_float(value))
    d = q.shape.as_list()[-1]
    s = 1.0 / np.sqrt(d) if scale is None else scale
    logits = kf.einsum("btnh,bsnh->bnts", q, k) * kf.cast(s, q.dtype)
    if attn_logits_soft_cap is not None:
        cap = kf.cast(attn_logits_soft_cap, q.dtype)
        logits = kf.tanh(logits / cap) * cap
    if bias is not None:
        logits = logits + to_tensor(bias, q.dtype.name)
    keep = None
    if mask is not None:
        keep = to_tensor(mask, "bool")
    if is_causal:
        t, sl = q.shape.as_list()[1], k.shape.as_list()[1]
        causal = kf.convert_to_tensor(np.tril(np.ones((t, sl), bool)))
        keep = causal if keep is None else kf.logical_and(keep, causal)
    if keep is not None:
        big = kf.cast(np.finfo(q.dtype.as_numpy_dtype).min, q.dtype)
        logits = kf.where(kf.broadcast_to(keep, kf.shape(logits)), logits,
                          kf.fill(kf.shape(logits), big))
    weights = kf.nn.softmax(logits, axis=-1)
    return kf.einsum("bnts,bsnh->btnh", weights, v)


__all__ = [
    "adaptive_average_pool", "adaptive_max_pool", "average_pool", "batch_normalization",
    "binary_crossentropy", "categorical_crossentropy", "celu", "conv", "conv_transpose",
    "ctc_decode", "ctc_loss", "depth_to_space", "depthwise_conv", "dot_product_attention",
    "elu", "fold", "gelu", "glu", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish",
    "hard_tanh", "layer_normalization", "leaky_relu", "log_sigmoid", "log_softmax",
    "max_pool", "moments", "multi_hot", "normalize", "one_hot", "psnr", "relu", "relu6",
    "rms_normalization", "selu", "separable_conv", "sigmoid", "silu", "soft_shrink",
    "softmax", "softplus", "softsign", "space_to_depth", "sparse_categorical_crossentropy",
    "sparse_plus", "sparse_sigmoid", "sparsemax", "squareplus", "swish", "tanh_shrink",
    "threshold", "unfold",
]
