"""Activation functions by name (`Dense(..., activation="relu")`): thin wrappers over kf.nn
and kf.math so every one works eagerly, in @kf.function graphs and under GradientTape."""
from __future__ import annotations

from typing import Any, Callable, Optional

from kilnflow.keras.backend import nn
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import array
from kilnflow.ops import joining
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.ops import sorting


def linear(x: Any) -> Any:
    """The identity: f(x) = x."""
    return convert_to_tensor(x)


def relu(x: Any, negative_slope: float = 0.0, max_value: Optional[float] = None,
         threshold: float = 0.0) -> Any:
    """max(x, 0); with `negative_slope`, `max_value` or `threshold` as in Keras.

    >>> from kilnflow.keras import activations
    >>> activations.relu([-1.0, 2.0]).numpy().tolist()
    [0.0, 2.0]
    """
    x = convert_to_tensor(x)
    if negative_slope == 0 and max_value is None and threshold == 0:
        return nn().relu(x)
    y = array.where(x >= threshold, x, negative_slope * (x - threshold)
                    if negative_slope else array.zeros_like(x))
    if max_value is not None:
        y = kmath.minimum(y, max_value)
    return y


def relu6(x: Any) -> Any:
    return kmath.minimum(nn().relu(convert_to_tensor(x)), 6.0)


def leaky_relu(x: Any, negative_slope: float = 0.2) -> Any:
    return nn().leaky_relu(convert_to_tensor(x), alpha=negative_slope)


def elu(x: Any, alpha: float = 1.0) -> Any:
    y = nn().elu(convert_to_tensor(x))
    return y if alpha == 1.0 else array.where(y > 0, y, alpha * y)


def selu(x: Any) -> Any:
    return nn().selu(convert_to_tensor(x))


def gelu(x: Any, approximate: bool = False) -> Any:
    return nn().gelu(convert_to_tensor(x), approximate=approximate)


def sigmoid(x: Any) -> Any:
    return kmath.sigmoid(convert_to_tensor(x))


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6: a piecewise-linear sigmoid."""
    return relu6(convert_to_tensor(x) + 3.0) / 6.0


def tanh(x: Any) -> Any:
    return kmath.tanh(convert_to_tensor(x))


def softplus(x: Any) -> Any:
    return nn().softplus(convert_to_tensor(x))


def softsign(x: Any) -> Any:
    x = convert_to_tensor(x)
    return x / (kmath.abs(x) + 1.0)


def swish(x: Any) -> Any:
    return nn().silu(convert_to_tensor(x))


silu = swish


def exponential(x: Any) -> Any:
    return kmath.exp(convert_to_tensor(x))


def softmax(x: Any, axis: int = -1) -> Any:
    """exp(x) / sum(exp(x)) along `axis`."""
    return nn().softmax(convert_to_tensor(x), axis=axis)


def log_softmax(x: Any, axis: int = -1) -> Any:
    return nn().log_softmax(convert_to_tensor(x), axis=axis)


# ---------------------------------------------------------------- Keras 3's newer activations

def celu(x: Any, alpha: float = 1.0) -> Any:
    """max(x, 0) + min(alpha * (exp(x / alpha) - 1), 0)."""
    x = convert_to_tensor(x)
    return array.where(x > 0, x, alpha * kmath.expm1(x / alpha))


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: a * sigmoid(b), `x` split in halves a, b along `axis`."""
    x = convert_to_tensor(x)
    size = x.shape[axis]
    if size is None or size % 2:
        raise ValueError(f"axis size must be divisible by 2. Received: x.shape={x.shape} "
                         f"with axis={axis}")
    a, b = joining.split(x, 2, axis=axis)
    return a * kmath.sigmoid(b)


def hard_shrink(x: Any, threshold: float = 0.5) -> Any:
    """x where |x| > threshold, else 0."""
    x = convert_to_tensor(x)
    return array.where(kmath.abs(x) > threshold, x, array.zeros_like(x))


def hard_silu(x: Any) -> Any:
    """x * relu6(x + 3) / 6."""
    x = convert_to_tensor(x)
    return x * kmath.clip_by_value(x + 3.0, 0.0, 6.0) / 6.0


hard_swish = hard_silu


def hard_tanh(x: Any) -> Any:
    """x clipped to [-1, 1]."""
    return kmath.clip_by_value(convert_to_tensor(x), -1.0, 1.0)


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return -nn().softplus(-convert_to_tensor(x))


def mish(x: Any) -> Any:
    """x * tanh(softplus(x))."""
    x = convert_to_tensor(x)
    return x * kmath.tanh(nn().softplus(x))


def soft_shrink(x: Any, threshold: float = 0.5) -> Any:
    """x - threshold above it, x + threshold below -threshold, else 0."""
    x = convert_to_tensor(x)
    return array.where(x > threshold, x - threshold,
                       array.where(x < -threshold, x + threshold, array.zeros_like(x)))


def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, (x + 1)^2 / 4 in between, x for x >= 1."""
    x = convert_to_tensor(x)
    return array.where(x <= -1.0, array.zeros_like(x),
                       array.where(x < 1.0, kmath.square(x + 1.0) / 4.0, x))


def sparse_sigmoid(x: Any) -> Any:
    """(x + 1) / 2 clipped to [0, 1]."""
    return kmath.clip_by_value(0.5 * (convert_to_tensor(x) + 1.0), 0.0, 1.0)


def sparsemax(x: Any, axis: int = -1) -> Any:
    """The Euclidean projection of x onto the probability simplex (sparse softmax)."""
    x = convert_to_tensor(x)
    rank = x.shape.rank
    axis = axis % rank
    if axis != rank - 1:
        perm = [i for i in range(rank) if i != axis] + [axis]
        back = [perm.index(i) for i in range(rank)]
        return reshaping.transpose(sparsemax(reshaping.transpose(x, perm)), back)
    logits = x - reduction.reduce_max(x, axis=-1, keepdims=True)
    ordered = sorting.sort(logits, direction="DESCENDING")
    cumulative = reduction.cumsum(ordered, axis=-1)
    ranks = kmath.cast(array.range(1, x.shape[-1] + 1), x.dtype)
    support = kmath.cast(1.0 + ranks * ordered > cumulative, x.dtype)
    k = reduction.reduce_sum(support, axis=-1, keepdims=True)
    tau = (reduction.reduce_sum(support * ordered, axis=-1, keepdims=True) - 1.0) / k
    return kmath.maximum(logits - tau, 0.0)


def squareplus(x: Any, b: float = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2."""
    x = convert_to_tensor(x)
    return (x + kmath.sqrt(kmath.square(x) + b)) / 2.0


def tanh_shrink(x: Any) -> Any:
    """x - tanh(x)."""
    x = convert_to_tensor(x)
    return x - kmath.tanh(x)


def threshold(x: Any, threshold: float, default_value: float) -> Any:  # noqa: F811
    """x where x > threshold, else default_value."""
    x = convert_to_tensor(x)
    return array.where(x > threshold, x, array.fill(array.shape(x), default_value, x.dtype))


_BY_NAME = {f.__name__: f for f in (
    linear, relu, relu6, leaky_relu, elu, selu, gelu, sigmoid, hard_sigmoid, tanh, softplus,
    softsign, swish, exponential, softmax, log_softmax, celu, glu, hard_shrink, hard_silu,
    hard_tanh, log_sigmoid, mish, soft_shrink, sparse_plus, sparse_sigmoid, sparsemax,
    squareplus, tanh_shrink, threshold)}
_BY_NAME["silu"] = swish
_BY_NAME["hard_swish"] = hard_silu


def get(identifier: Any) -> Callable:
    """An activation function from a name, a callable, or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            raise ValueError(f"Unknown activation function {identifier!r}; known: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return fn
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation: Callable) -> Any:
    """The name of a built-in activation (what get_config stores), else the callable."""
    name = getattr(activation, "__name__", None)
    return name if name in _BY_NAME and _BY_NAME[name] is activation else activation


def deserialize(config: Any, custom_objects: Optional[dict] = None) -> Callable:
    """The activation a serialize() result (a name or a Keras 3 config dict) names."""
    if isinstance(config, dict):
        inner = config.get("config")
        name = inner if isinstance(inner, str) else config.get("class_name")
        if custom_objects and name in custom_objects:
            return custom_objects[name]
        config = name
    if custom_objects and isinstance(config, str) and config in custom_objects:
        return custom_objects[config]
    return get(config)
