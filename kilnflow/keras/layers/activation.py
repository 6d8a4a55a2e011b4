"""Activation layers: ReLU, LeakyReLU, PReLU (a learned slope), ELU, Softmax."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import errors
from kilnflow.keras import activations as _activations
from kilnflow.keras import constraints as _constraints
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops import nn as knn
from kilnflow.ops import reduction
from kilnflow.shapes import TensorShape


class _Elementwise(Layer):
    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)


class ReLU(_Elementwise):
    """max(x, 0), with Keras's `max_value`, `negative_slope` and `threshold`:
    x >= max_value -> max_value; threshold <= x < max_value -> x; else slope (x - t)."""

    def __init__(self, max_value: Optional[float] = None, negative_slope: float = 0.0,
                 threshold: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        if max_value is not None and max_value < 0:
            raise ValueError(f"max_value of a ReLU layer cannot be negative, got {max_value}")
        if negative_slope < 0:
            raise ValueError(f"negative_slope of a ReLU layer cannot be negative, got "
                             f"{negative_slope}")
        self.max_value, self.negative_slope = max_value, float(negative_slope)
        self.threshold = float(threshold)

    def call(self, inputs: Any) -> Any:
        return _activations.relu(inputs, negative_slope=self.negative_slope,
                                 max_value=self.max_value, threshold=self.threshold)

    def get_config(self) -> dict:
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


class ThresholdedReLU(_Elementwise):
    """x where x > theta, else 0."""

    def __init__(self, theta: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        if theta is None or theta < 0:
            raise ValueError(f"The theta value of a ThresholdedReLU layer should be >=0. "
                             f"Received: theta={theta}")
        self.theta = float(theta)

    def call(self, inputs: Any) -> Any:
        if not inputs.dtype.is_floating:  # TF: Greater of the inputs and the float theta
            raise errors.InvalidArgumentError(errors.with_location(
                f"Layer '{self.name}' (ThresholdedReLU): `inputs` of dtype {inputs.dtype.name} "
                f"cannot be compared with the float theta {self.theta}"))
        return inputs * kmath.cast(inputs > self.theta, inputs.dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "theta": self.theta}


class LeakyReLU(_Elementwise):
    """x for x >= 0, negative_slope * x below."""

    def __init__(self, negative_slope: float = 0.3, **kwargs: Any):
        if "alpha" in kwargs:  # the Keras 2 name
            negative_slope = kwargs.pop("alpha")
        super().__init__(**kwargs)
        self.negative_slope = float(negative_slope)

    def call(self, inputs: Any) -> Any:
        return knn.leaky_relu(inputs, alpha=self.negative_slope)

    def get_config(self) -> dict:
        return {**super().get_config(), "negative_slope": self.negative_slope}


class PReLU(Layer):
    """x for x >= 0, alpha * x below, alpha learned per feature (shared over
    `shared_axes`)."""

    def __init__(self, alpha_initializer: Any = "zeros", alpha_regularizer: Any = None,
                 alpha_constraint: Any = None, shared_axes: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.alpha_initializer = _initializers.get(alpha_initializer)
        self.alpha_regularizer = _regularizers.get(alpha_regularizer)
        self.alpha_constraint = _constraints.get(alpha_constraint)
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, int):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = list(shared_axes)

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape).as_list()[1:]
        for axis in self.shared_axes or []:
            shape[axis - 1] = 1
        self.alpha = self.add_weight("alpha", shape, initializer=self.alpha_initializer,
                                     regularizer=self.alpha_regularizer,
                                     constraint=self.alpha_constraint)
        self.built = True

    def call(self, inputs: Any) -> Any:
        return array.where(inputs >= 0, inputs, self.alpha * inputs)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(),
                "alpha_initializer": _initializers.serialize(self.alpha_initializer),
                "alpha_regularizer": _regularizers.serialize(self.alpha_regularizer),
                "alpha_constraint": _constraints.serialize(self.alpha_constraint),
                "shared_axes": self.shared_axes}


class ELU(_Elementwise):
    """x for x > 0, alpha * (exp(x) - 1) below."""

    def __init__(self, alpha: float = 1.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.alpha = float(alpha)

    def call(self, inputs: Any) -> Any:
        return _activations.elu(inputs, self.alpha)

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha}


class Softmax(_Elementwise):
    """softmax over `axis`; with a mask (1 keep, 0 drop) the dropped entries get ~0."""

    def __init__(self, axis: Any = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs: Any, mask: Any = None) -> Any:
        if mask is not None:  # Keras adds a large negative number where mask is 0
            inputs = inputs + (1.0 - kmath.cast(mask, inputs.dtype)) * -1e9
        if isinstance(self.axis, (list, tuple)):
            lse = reduction.reduce_logsumexp(inputs, list(self.axis), keepdims=True)
            return kmath.exp(inputs - lse)
        return knn.softmax(inputs, axis=self.axis)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}
