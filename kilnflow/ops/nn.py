"""Neural-network ops (kf.nn.*): activations, softmax and losses, bias_add, conv2d, pooling,
dropout, l2_normalize, moments.

Each op is one defop() beside its public function; ops TF itself builds in Python (gelu,
dropout, moments, l2_normalize) are compositions of public ops here too. Backward passes of
conv2d and pooling are ops of their own whose gradient rules close the loop, so second
order works. Images are NHWC; kernels are NumPy (im2col + one matmul for conv2d).
"""
from __future__ import annotations

import math as _pymath
import numbers
from typing import Any, Optional, Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops import array, rules
from kilnflow.ops import random as _random
from kilnflow.ops.convert import binary, constant, convert_to_tensor
from kilnflow.ops.math import (add, cast, equal, erf, exp, greater, maximum, multiply,
                               reduce_mean, reduce_sum, rsqrt, sigmoid, squared_difference,
                               square, tanh)
from kilnflow.ops.opdef import bind, defop, np_errors_ignored
from kilnflow.shapes import TensorSpec, broadcast_shapes
from kilnflow.tensor import Tensor

FLOATS = _dtypes.FLOATS
REAL = _dtypes.REAL
_INT_LABELS = frozenset((_dtypes.int32, _dtypes.int64))


def _where_positive(x: Tensor, yes: Tensor, no: Tensor) -> Tensor:
    return array.where(greater(x, array.zeros_like(x)), yes, no)


# ---------------------------------------------------------------- activations

def _unary(name: str, kernel: Any, grad: Any, fusable: str, dtypes: Any = FLOATS) -> Any:
    return defop(name, shape=rules.same_as(0), kernel=kernel, grad=grad, fusable=fusable,
                 dtypes=dtypes)


RELU = _unary("Relu", lambda x: np.maximum(x, 0),
              lambda op, dy: [_where_positive(op.outputs[0], dy, array.zeros_like(dy))],
              "maximum({0}, 0)", REAL)
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
        raise ValueError("Both labels and logits must be provided.")
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
    dy = array.expand_dims(dy, axis)
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


def _sparse_xent_rule(logits: Any, labels: Any) -> TensorSpec:
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
    return TensorSpec(logits.shape[:-1].merge_with(labels.shape), logits.dtype)


def _sparse_xent_kernel(x: Any, labels: Any) -> Any:
    classes = x.shape[-1]
    bad = (labels < 0) | (labels >= classes)
    if np.any(bad):
        raise errors.InvalidArgumentError(errors.with_location(
            f"Received a label value of {labels[bad].reshape(-1)[0]} which is outside the "
            f"valid range of [0, {classes}). [Op:SparseSoftmaxCrossEntropyWithLogits]"))
    logp = _log_softmax_kernel(x, axis=-1)
    return -np.take_along_axis(logp, labels[..., None].astype(np.intp), axis=-1)[..., 0]


def _one_hot(labels: Tensor, like: Tensor) -> Tensor:
    depth = like.shape[-1] if like.shape.rank is not None else None
    if depth is not None:
        return array.one_hot(labels, depth, dtype=like.dtype)
    classes = cast(array.range(array.shape(like)[-1]), labels.dtype)  # depth known at run time
    return cast(equal(array.expand_dims(labels, -1), classes), like.dtype)


def _sparse_xent_grad(op: Any, dy: Any) -> list:
    x, labels = op.inputs
    return [array.expand_dims(dy, -1) * (softmax(x) - _one_hot(labels, x)), None]


SPARSE_SOFTMAX_XENT = defop("SparseSoftmaxCrossEntropyWithLogits", shape=_sparse_xent_rule,
                            kernel=np_errors_ignored(_sparse_xent_kernel),
                            grad=_sparse_xent_grad, dtypes=FLOATS, same_dtype=False,
                            check_eager=True)


def sparse_softmax_cross_entropy_with_logits(labels: Any, logits: Any,
                                             name: Optional[str] = None) -> Tensor:
    """Cross entropy of class indices `labels` (int32/int64, shape logits.shape[:-1])
    against `logits`; a label outside [0, num_classes) raises InvalidArgumentError."""
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    return bind(SPARSE_SOFTMAX_XENT, (logits, labels), name=name)


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
        rows = array.reshape(dy, [-1, array.shape(op.inputs[1])[0]])
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
        bias = array.reshape(bias, [-1] + [1] * (rank - 2))
        return add(value, bias, name=name)
    return bind(BIAS_ADD, (value, bias), name=name)


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
    """A (N, OH, OW, KH, KW, C) view of every window of the padded input (no copy).

    Channels stay last so that flattening a window (the im2col copy) reads contiguous runs.
    """
    extent_h = (kh - 1) * dilations[0] + 1
    extent_w = (kw - 1) * dilations[1] + 1
    view = sliding_window_view(xp, (extent_h, extent_w), axis=(1, 2))
    view = view[:, :oh * strides[0]:strides[0], :ow * strides[1]:strides[1], :,
                ::dilations[0], ::dilations[1]]
    return view.transpose(0, 1, 2, 4, 5, 3)


def _tap(i: int, j: int, strides: tuple, oh: int, ow: int) -> tuple:
    """The index that picks, for every output position, input row i / column j of its
    window (offsets already dilated): used to scatter gradients back, one tap at a time."""
    return (slice(None), slice(i, i + strides[0] * (oh - 1) + 1, strides[0]),
            slice(j, j + strides[1] * (ow - 1) + 1, strides[1]), slice(None))


def _crop(xp: Any, pads: tuple, h: int, w: int) -> Any:
    return np.ascontiguousarray(xp[:, pads[1][0]:pads[1][0] + h, pads[2][0]:pads[2][0] + w])


def _shape_tensor(t: Tensor) -> Tensor:
    """t's shape as an int32 tensor: a constant when static, so gradient ops keep shapes."""
    if t.shape.is_fully_defined():
        return constant(t.shape.as_list(), _dtypes.int32)
    return array.shape(t)


def _static_sizes(sizes: Any) -> Optional[list]:
    value = rules.constant_value(sizes)
    return None if value is None else [int(d) for d in value.reshape(-1)]


# ---------------------------------------------------------------- conv2d and its gradients

_IM2COL_BYTES = 1 << 25  # split the batch so one im2col block stays near 32 MB


def _batch_blocks(n: int, oh: int, ow: int, kh: int, kw: int, c: int, itemsize: int) -> tuple:
    """(block starts, block size) over the batch."""
    step = max(1, _IM2COL_BYTES // max(1, oh * ow * kh * kw * c * itemsize))
    return range(0, n, step), step


def _conv2d_kernel(x: Any, w: Any, *, strides: tuple, padding: Any, dilations: tuple) -> Any:
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    oh, ow, pads = _geometry(h, wd, kh, kw, strides, padding, dilations)
    xp = np.pad(x, pads) if any(sum(pads, ())) else x
    w_rows = w.reshape(kh * kw * c, o)  # (KH, KW, C) order, as in the windows
    out = np.empty((n, oh, ow, o), dtype=np.result_type(x, w))
    starts, step = _batch_blocks(n, oh, ow, kh, kw, c, x.itemsize)
    for b in starts:
        cols = _windows(xp[b:b + step], kh, kw, strides, dilations, oh, ow)
        out[b:b + step] = (cols.reshape(-1, kh * kw * c) @ w_rows).reshape(-1, oh, ow, o)
    return out


def _conv_input_kernel(sizes: Any, w: Any, dy: Any, *, strides: tuple, padding: Any,
                       dilations: tuple) -> Any:
    """col2im: window gradients dy @ w^T, each tap added back where it was read."""
    n, h, wd, c = (int(s) for s in sizes)
    kh, kw, _, o = w.shape
    oh, ow, pads = _geometry(h, wd, kh, kw, strides, padding, dilations)
    dxp = np.zeros((n, h + sum(pads[1]), wd + sum(pads[2]), c), dtype=dy.dtype)
    w_cols = w.reshape(kh * kw * c, o).T
    starts, step = _batch_blocks(n, oh, ow, kh, kw, c, dy.itemsize)
    for b in starts:
        block = dy[b:b + step]
        cols = (block.reshape(-1, o) @ w_cols).reshape(len(block), oh, ow, kh, kw, c)
        target = dxp[b:b + step]
        for i in range(kh):
            for j in range(kw):
                target[_tap(i * dilations[0], j * dilations[1], strides, oh, ow)] += \
                    cols[:, :, :, i, j]
    return _crop(dxp, pads, h, wd)


def _conv_filter_kernel(x: Any, sizes: Any, dy: Any, *, strides: tuple, padding: Any,
                        dilations: tuple) -> Any:
    """im2col(x)^T @ dy, accumulated over batch blocks."""
    kh, kw, c, o = (int(s) for s in sizes)
    n, h, wd, _ = x.shape
    oh, ow, pads = _geometry(h, wd, kh, kw, strides, padding, dilations)
    xp = np.pad(x, pads) if any(sum(pads, ())) else x
    dw = np.zeros((kh * kw * c, o), dtype=dy.dtype)
    starts, step = _batch_blocks(n, oh, ow, kh, kw, c, x.itemsize)
    for b in starts:
        cols = _windows(xp[b:b + step], kh, kw, strides, dilations, oh, ow)
        dw += cols.reshape(-1, kh * kw * c).T @ dy[b:b + step].reshape(-1, o)
    return dw.reshape(kh, kw, c, o)


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
        x = array.transpose(x, [0, 2, 3, 1])
        y = conv2d(x, w, nhwc(strides), _nchw_pads(padding), "NHWC",
                   nhwc(dilations) if dilations is not None else None)
        return array.transpose(y, [0, 3, 1, 2], name=name)
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


def _padded(x: Any, pads: tuple, fill: Any = 0) -> Any:
    return np.pad(x, pads, constant_values=fill) if any(sum(pads, ())) else x


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
        mean = array.squeeze(mean, axes)
        variance = array.squeeze(variance, axes)
    return mean, variance
