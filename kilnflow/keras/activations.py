"""Activation functions by name (`Dense(..., activation="relu")`): thin wrappers over kf.nn
and kf.math so every one works eagerly, in @kf.function graphs and under GradientTape."""
from __future__ import annotations

from typing import Any, Callable, Optional

from kilnflow.keras.backend import nn
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import array


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


_BY_NAME = {f.__name__: f for f in (
    linear, relu, relu6, leaky_relu, elu, selu, gelu, sigmoid, hard_sigmoid, tanh, softplus,
    softsign, swish, exponential, softmax, log_softmax)}
_BY_NAME["silu"] = swish


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
