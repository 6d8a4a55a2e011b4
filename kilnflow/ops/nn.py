"""Neural-network ops (kf.nn.*): activations, softmax and losses, bias_add, dropout,
l2_normalize, moments. Convolution and pooling live in kilnflow/ops/conv.py.

Each op is one defop() beside its public function; ops TF itself builds in Python (gelu,
dropout, moments, l2_normalize) are compositions of public ops here too.
"""
from __future__ import annotations

import math as _pymath
import numbers
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.ops import array
from kilnflow.ops import random as _random
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.ops.math import (add, cast, erf, exp, greater, maximum, multiply, rsqrt, sigmoid,
                               squared_difference, square, tanh)
from kilnflow.ops.reduction import reduce_mean, reduce_sum
from kilnflow.core.opdef import bind, defop, np_errors_ignored
from kilnflow.shapes import TensorSpec, broadcast_shapes
from kilnflow.tensor import Tensor
from kilnflow.ops import reshaping

FLOATS = _dtypes.FLOATS
REAL = _dtypes.REAL
_INT_LABELS = frozenset((_dtypes.int32, _dtypes.int64))


def _where_positive(x: Tensor, yes: Tensor, no: Tensor) -> Tensor:
    return array.where(greater(x, array.zeros_like(x)), yes, no)


# ---------------------------------------------------------------- activations

def _unary(name: str, kernel: Any, grad: Any, fusable: str, dtypes: Any = FLOATS) -> Any:
    return defop(name, shape=rules.same_as(0), kernel=kernel, grad=grad, fusable=fusable,
                 dtypes=dtypes)


RELU_GRAD = defop("ReluGrad", shape=rules.same_as(0), dtypes=REAL,
                  kernel=lambda dy, y: dy * (y > 0),  # 10x faster than np.where with a 0
                  grad=lambda op, g: [relu_grad(g, op.inputs[1]), None],
                  fusable="({0} * ({1} > 0))")


def relu_grad(dy: Tensor, y: Tensor) -> Tensor:
    """dy where y > 0, else 0 (one op, as in TF: no zeros tensor to build)."""
    return bind(RELU_GRAD, (dy, y))


RELU = _unary("Relu", lambda x: np.maximum(x, 0),
              lambda op, dy: [relu_grad(dy, op.outputs[0])], "maximum({0}, 0)", REAL)
RELU6 = _unary(
    "Relu6", lambda x: np.minimum(np.maximum(x, 0), 6),
    lambda op, dy: [array.where((op.inputs[0] > 0) & (op.inputs[0] < 6), dy,
                                array.zeros_like(dy))],
    "minimum(maximum({0}, 0), 6)", REAL)
ELU = _unary("Elu", lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
             lambda op, dy: [_where_positive(op.outputs[0], dy, dy * (op.outputs[0] + 1))],
             "where({0} > 0, {0}, expm1(minimum({0}, 0)))")
SOFTPLUS = _unary("Softplus", lambda x: np.logaddexp(x, 0),
                  lambda op, dy: [dy * sigmoid(op.inputs[0])],
                  "(maximum({0}, 0) + log1p(exp(-abs({0}))))")
LEAKY_RELU = defop(
    "LeakyRelu", shape=rules.same_as(0), dtypes=FLOATS,
    kernel=lambda x, *, alpha: np.where(x > 0, x, x * x.dtype.type(alpha)),
    grad=lambda op, dy: [_where_positive(op.inputs[0], dy, dy * op.attrs["alpha"])],
    fusable="where({0} > 0, {0}, {0} * {alpha})")


def _activation(opdef: Any, doc: str) -> Any:
    def apply(features: Any, name: Optional[str] = None) -> Tensor:
        return bind(opdef, (convert_to_tensor(features),), name=name)
    apply.__doc__ = doc
    return apply


relu = _activation(RELU, """Rectified linear unit: max(features, 0).

    >>> import kilnflow as kf
    >>> import kilnflow.nn
    >>> kf.nn.relu(kf.constant([-1.0, 2.0])).numpy().tolist()
    [0.0, 2.0]
    """)
relu6 = _activation(RELU6, "min(max(features, 0), 6).")
elu = _activation(ELU, "Exponential linear unit: features if > 0, else exp(features) - 1.")
softplus = _activation(SOFTPLUS, "log(exp(features) + 1), computed without overflow.")


def leaky_relu(features: Any, alpha: float = 0.2, name: Optional[str] = None) -> Tensor:
    """features if > 0, else alpha * features."""
    return bind(LEAKY_RELU, (convert_to_tensor(features),), {"alpha": float(alpha)}, name=name)


def selu(features: Any, name: Optional[str] = None) -> Tensor:
    """Scaled ELU: scale * (features if > 0 else alpha * (exp(features) - 1))."""
    x = convert_to_tensor(features)
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    y = elu(x)
    return multiply(_where_positive(x, y, y * alpha), scale, name=name)


def silu(features: Any, beta: float = 1.0, name: Optional[str] = None) -> Tensor:
    """features * sigmoid(beta * features) (also known as swish)."""
    x = convert_to_tensor(features)
    return multiply(x, sigmoid(x * beta if beta != 1.0 else x), name=name)


swish = silu


def gelu(features: Any, approximate: bool = False, name: Optional[str] = None) -> Tensor:
    """Gaussian error linear unit: x * P(X <= x) for X ~ N(0, 1).

    approximate=False (TF's default) uses erf; True uses the tanh approximation
    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), which fuses into one expression.

    >>> import kilnflow as kf
    >>> import kilnflow.nn
    >>> round(float(kf.nn.gelu(kf.constant(1.0))), 4)
    0.8413
    """
    x = convert_to_tensor(features)
    if not x.dtype.is_floating:
        raise TypeError(f"gelu: `features` must be a floating point tensor, got {x.dtype.name}")
    if approximate:
        inner = (x + square(x) * x * 0.044715) * _pymath.sqrt(2 / _pymath.pi)
        return multiply(x * 0.5, tanh(inner) + 1, name=name)
    return multiply(x * 0.5, erf(x * (1 / _pymath.sqrt(2))) + 1, name=name)


# ---------------------------------------------------------------- softmax family

def _softmax_kernel(x: Any, *, axis: int) -> Any:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def _log_softmax_kernel(x: Any, *, axis: int) -> Any:
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def _axis_rule(x: Any, *, axis: int) -> TensorSpec:
    if x.shape.rank == 0:
        raise ValueError("logits must have rank >= 1, got a scalar")
    rules.normalize_axis(axis, x.shape.rank)
    return TensorSpec(x.shape, x.dtype)


def _softmax_grad(op: Any, dy: Any) -> list:
    y, axis = op.outputs[0], op.attrs["axis"]
    return [y * (dy - reduce_sum(dy * y, axis, keepdims=True))]


def _log_softmax_grad(op: Any, dy: Any) -> list:
    y, axis = op.outputs[0], op.attrs["axis"]
    return [dy - exp(y) * reduce_sum(dy, axis, keepdims=True)]


# check_eager: NumPy would quietly reduce a scalar over axis -1.
SOFTMAX = defop("Softmax", shape=_axis_rule, kernel=np_errors_ignored(_softmax_kernel),
                grad=_softmax_grad, dtypes=FLOATS, check_eager=True)
LOG_SOFTMAX = defop("LogSoftmax", shape=_axis_rule, grad=_log_softmax_grad, dtypes=FLOATS,
                    kernel=np_errors_ignored(_log_softmax_kernel), check_eager=True)


def _axis_attr(x: Tensor, axis: int) -> int:
    axis = int(axis)
    rank = x.shape.rank
    if rank and -rank <= axis < rank:
        axis %= rank
    return axis


def softmax(logits: Any, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """exp(logits) / sum(exp(logits), axis), computed stably.

    >>> import kilnflow as kf
    >>> import kilnflow.nn
    >>> kf.nn.softmax(kf.constant([0.0, 0.0])).numpy().tolist()
    [0.5, 0.5]
    """
    x = convert_to_tensor(logits)
    return bind(SOFTMAX, (x,), {"axis": _axis_attr(x, axis)}, name=name)


def log_softmax(logits: Any, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """logits - log(sum(exp(logits), axis)), computed stably."""
    x = convert_to_tensor(logits)
    return bind(LOG_SOFTMAX, (x,), {"axis": _axis_attr(x, axis)}, name=name)


def _same_shape_rule(labels: Any, logits: Any, **attrs: Any) -> TensorSpec:
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs "
                         f"{labels.shape})")
    return TensorSpec(logits.shape.merge_with(labels.shape), logits.dtype)


def _sigmoid_xent_kernel(z: Any, x: Any) -> Any:
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


SIGMOID_XENT = defop(
    "SigmoidCrossEntropyWithLogits", shape=_same_shape_rule, kernel=_sigmoid_xent_kernel,
    grad=lambda op, dy: [-dy * op.inputs[1], dy * (sigmoid(op.inputs[1]) - op.inputs[0])],
    dtypes=FLOATS, check_eager=True,
    fusable="(maximum({1}, 0) - {1} * {0} + log1p(exp(-abs({1}))))")


def sigmoid_cross_entropy_with_logits(labels: Any = None, logits: Any = None,
                                      name: Optional[str] = None) -> Tensor:
    """Elementwise logistic loss max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and
    labels z (which may be probabilities); stable for large |x|."""
    if labels is None or logits is None:
        raise ValueError(errors.with_location(
            "sigmoid_cross_entropy_with_logits: both `labels` and `logits` must be provided"))
    labels, logits = binary(labels, logits)
    return bind(SIGMOID_XENT, (labels, logits), name=name)


def _xent_rule(labels: Any, logits: Any, *, axis: int) -> TensorSpec:
    spec = _same_shape_rule(labels, logits)
    if spec.shape.rank is None:
        return TensorSpec(None, logits.dtype)
    axis = rules.normalize_axis(axis, spec.shape.rank)
    dims = spec.shape.as_list()
    return TensorSpec(dims[:axis] + dims[axis + 1:], logits.dtype)


def _xent_kernel(z: Any, x: Any, *, axis: int) -> Any:
    return -np.sum(z * _log_softmax_kernel(x, axis=axis), axis=axis)


def _xent_grad(op: Any, dy: Any) -> list:
    z, x = op.inputs
    axis = op.attrs["axis"]
    dy = reshaping.expand_dims(dy, axis)
    dx = reduce_sum(z, axis, keepdims=True) * softmax(x, axis) - z
    return [-dy * log_softmax(x, axis), dy * dx]


SOFTMAX_XENT = defop("SoftmaxCrossEntropyWithLogits", shape=_xent_rule,
                     kernel=np_errors_ignored(_xent_kernel), grad=_xent_grad, dtypes=FLOATS,
                     check_eager=True)


def softmax_cross_entropy_with_logits(labels: Any, logits: Any, axis: int = -1,
                                      name: Optional[str] = None) -> Tensor:
    """-sum(labels * log_softmax(logits), axis): cross entropy against a distribution.

    >>> import kilnflow as kf
    >>> import kilnflow.nn
    >>> loss = kf.nn.softmax_cross_entropy_with_logits([[0., 1.]], [[0., 0.]])
    >>> round(float(loss[0]), 4)
    0.6931
    """
    labels, logits = binary(labels, logits)
    return bind(SOFTMAX_XENT, (labels, logits), {"axis": _axis_attr(logits, axis)}, name=name)


def _sparse_xent_rule(logits: Any, labels: Any) -> list:
    if labels.dtype not in _INT_LABELS:
        raise ValueError(f"Value for attr 'Tlabels' of {labels.dtype.name} is not in the list "
                         f"of allowed values: int32, int64")
    if logits.shape.rank == 0:
        raise ValueError("logits must have rank >= 1, got a scalar")
    if labels.shape.rank is not None and logits.shape.rank is not None:
        if labels.shape.rank != logits.shape.rank - 1 or not labels.shape.is_compatible_with(
                logits.shape[:-1]):
            raise ValueError(f"labels shape must equal logits shape without its last "
                             f"dimension; got labels {labels.shape} and logits {logits.shape}")
    return [TensorSpec(logits.shape[:-1].merge_with(labels.shape), logits.dtype),
            TensorSpec(logits.shape, logits.dtype)]


def _sparse_xent_kernel(x: Any, labels: Any) -> tuple:
    """(loss, backprop): like TF's op, the gradient w.r.t. logits (softmax - one_hot) comes
    out of the forward computation, so the backward pass need not recompute softmax."""
    classes = x.shape[-1]
    flat_labels = labels.reshape(-1)
    if flat_labels.size and (flat_labels.min() < 0 or flat_labels.max() >= classes):
        bad = flat_labels[(flat_labels < 0) | (flat_labels >= classes)]
        raise errors.InvalidArgumentError(errors.with_location(
            f"Received a label value of {bad[0]} which is outside the "
            f"valid range of [0, {classes}). [Op:SparseSoftmaxCrossEntropyWithLogits]"))
    rows = np.arange(flat_labels.size)
    logits = x.reshape(flat_labels.size, classes)
    top = np.maximum.reduce(logits, axis=1, keepdims=True)
    backprop = logits - top
    np.exp(backprop, out=backprop)
    total = np.add.reduce(backprop, axis=1, keepdims=True)
    loss = np.log(total[:, 0])
    loss += top[:, 0]
    loss -= logits[rows, flat_labels]
    backprop /= total  # softmax, then minus one at each label
    backprop[rows, flat_labels] -= 1
    return loss.reshape(labels.shape), backprop.reshape(x.shape)


def _sparse_xent_grad(op: Any, d_loss: Any, d_backprop: Any) -> list:
    x = op.inputs[0]
    grad = None if d_loss is None else reshaping.expand_dims(d_loss, -1) * op.outputs[1]
    if d_backprop is not None:  # second order: backprop = softmax(x) - one_hot
        s = softmax(x)
        jvp = s * (d_backprop - reduce_sum(d_backprop * s, -1, keepdims=True))
        grad = jvp if grad is None else grad + jvp
    return [grad, None]


SPARSE_SOFTMAX_XENT = defop("SparseSoftmaxCrossEntropyWithLogits", shape=_sparse_xent_rule,
                            kernel=np_errors_ignored(_sparse_xent_kernel),
                            grad=_sparse_xent_grad, dtypes=FLOATS, same_dtype=False,
                            check_eager=True, multi_output=True)


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: Any,
                                             name: Optional[str] = None) -> Tensor:
    """Cross entropy of class indices `labels` (int32/int64, shape logits.shape[:-1])
    against `logits`; a label outside [0, num_classes) raises InvalidArgumentError."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    return bind(SPARSE_SOFTMAX_XENT, (logits, labels), name=name)[0]


# ---------------------------------------------------------------- bias_add

def _bias_add_rule(value: Any, bias: Any) -> TensorSpec:
    if bias.shape.rank is not None and bias.shape.rank != 1:
        raise ValueError(f"bias must be 1-D, got shape {bias.shape}")
    if value.shape.rank is not None and value.shape.rank < 2:
        raise ValueError(f"value must be at least 2-D, got shape {value.shape}")
    if value.shape.rank and bias.shape.rank:
        c, b = value.shape[-1], bias.shape[0]
        if c is not None and b is not None and c != b:
            raise ValueError(f"Must provide as many biases as the last dimension of the input "
                             f"tensor: {bias.shape} vs. {value.shape}")
    return TensorSpec(broadcast_shapes(value.shape, bias.shape), value.dtype)


def _bias_add_grad(op: Any, dy: Any) -> list:
    rank = op.inputs[0].shape.rank
    if rank is None:  # fold every leading dim into one, then sum it
        rows = reshaping.reshape(dy, [-1, array.shape(op.inputs[1])[0]])
        return [dy, reduce_sum(rows, 0)]
    return [dy, reduce_sum(dy, list(range(rank - 1)))]


BIAS_ADD = defop("BiasAdd", shape=_bias_add_rule, kernel=np.add, grad=_bias_add_grad,
                 dtypes=_dtypes.NUMERIC, check_eager=True, fusable="({0} + {1})")


def bias_add(value: Any, bias: Any, data_format: Optional[str] = None,
             name: Optional[str] = None) -> Tensor:
    """Adds the 1-D `bias` along the channel dimension of `value` (last for NHWC / N...C,
    the second for NCHW / NC...)."""
    value, bias = binary(value, bias)
    if data_format is not None and data_format.startswith("NC"):
        rank = value.shape.rank
        if rank is None:
            raise ValueError("bias_add with a channels-first data_format needs a known rank")
        bias = reshaping.reshape(bias, [-1] + [1] * (rank - 2))
        return add(value, bias, name=name)
    return bind(BIAS_ADD, (value, bias), name=name)


# ---------------------------------------------------------------- compositions

def dropout(x: Any, rate: Any, noise_shape: Optional[Sequence] = None,
            seed: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Zeroes each element with probability `rate` and scales the rest by 1 / (1 - rate).

    A new mask is drawn on every call (and every run of a compiled function). Dims of
    `noise_shape` equal to 1 share one mask value; None entries take x's dim.
    """
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. "
                         f"Got a {x.dtype.name} tensor instead.")
    if isinstance(rate, numbers.Real) and not isinstance(rate, bool):
        if not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). "
                             f"Received: rate={rate}")
        if rate == 0:
            return x
        scale: Any = 1 / (1 - float(rate))
    else:
        rate = convert_to_tensor(rate, x.dtype)
        if rate.shape.rank not in (None, 0):
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1), "
                             f"got a tensor of shape {rate.shape}")
        scale = 1 / (1 - rate)
    noise = _random.uniform(_noise_shape(x, noise_shape), dtype=x.dtype, seed=seed)
    keep = cast(noise >= rate, x.dtype)
    return multiply(x * scale, keep, name=name)


def _noise_shape(x: Tensor, noise_shape: Optional[Sequence]) -> Any:
    if noise_shape is None:
        return x.shape.as_list() if x.shape.is_fully_defined() else array.shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    dims = list(noise_shape)
    if x.shape.rank is not None and len(dims) == x.shape.rank:
        static = x.shape.as_list()
        dims = [static[i] if d is None else d for i, d in enumerate(dims)]
        if any(d is None for d in dims):
            dynamic = array.shape(x)
            dims = [dynamic[i] if d is None else d for i, d in enumerate(dims)]
    return dims


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12,
                 name: Optional[str] = None) -> Tensor:
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    x = convert_to_tensor(x)
    square_sum = reduce_sum(square(x), axis, keepdims=True)
    return multiply(x, rsqrt(maximum(square_sum, epsilon)), name=name)


def l2_loss(t: Any, name: Optional[str] = None) -> Tensor:
    """sum(t ** 2) / 2, a scalar."""
    return multiply(reduce_sum(square(convert_to_tensor(t))), 0.5, name=name)


def moments(x: Any, axes: Any, shift: Any = None, keepdims: bool = False,
            name: Optional[str] = None) -> tuple:
    """(mean, variance) of x over `axes`.

    >>> import kilnflow as kf
    >>> import kilnflow.nn
    >>> mean, var = kf.nn.moments(kf.constant([1.0, 2.0, 3.0, 4.0]), axes=[0])
    >>> float(mean), float(var)
    (2.5, 1.25)
    """
    x = convert_to_tensor(x)
    mean = reduce_mean(x, axes, keepdims=True)
    # The mean is a constant for the variance's gradient: d var / d mean is 0 anyway.
    variance = reduce_mean(squared_difference(x, array.stop_gradient(mean)), axes,
                           keepdims=True)
    if not keepdims:
        mean = reshaping.squeeze(mean, axes)
        variance = reshaping.squeeze(variance, axes)
    return mean, variance
