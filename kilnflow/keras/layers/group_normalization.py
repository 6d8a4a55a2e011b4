"""GroupNormalization: channels split into `groups`, each normalized over its channels and
the spatial dims (LayerNormalization with groups=1, InstanceNormalization with groups =
channels)."""
from __future__ import annotations

from typing import Any

from kilnflow.keras import constraints as _constraints
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array
from kilnflow.ops import joining
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.shapes import TensorShape


class GroupNormalization(Layer):
    """(x - mean_g) / sqrt(var_g + epsilon) * gamma + beta, statistics per example and
    group of channels."""

    def __init__(self, groups: int = 32, axis: int = -1, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, beta_constraint: Any = None,
                 gamma_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.groups, self.axis, self.epsilon = int(groups), axis, float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = _initializers.get(beta_initializer)
        self.gamma_initializer = _initializers.get(gamma_initializer)
        self.beta_regularizer = _regularizers.get(beta_regularizer)
        self.gamma_regularizer = _regularizers.get(gamma_regularizer)
        self.beta_constraint = _constraints.get(beta_constraint)
        self.gamma_constraint = _constraints.get(gamma_constraint)

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape).as_list()
        channels = shape[self.axis]
        if channels is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined "
                             f"dimension but the layer received an input with shape {shape}.")
        if self.groups > channels:  # Keras 3's check (0 channels would pass the one below)
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the "
                             f"number of channels ({channels}).")
        if channels % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the "
                             f"number of channels ({channels}).")
        self.gamma = self.add_weight("gamma", [channels], initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer,
                                     constraint=self.gamma_constraint) if self.scale else None
        self.beta = self.add_weight("beta", [channels], initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer,
                                    constraint=self.beta_constraint) if self.center else None
        self.built = True

    def call(self, inputs: Any) -> Any:
        rank = inputs.shape.rank
        axis = self.axis % rank
        x = inputs if axis == rank - 1 else reshaping.transpose(
            inputs, [i for i in range(rank) if i != axis] + [axis])
        channels = x.shape[-1]
        dims = array.shape(x)
        lead = [dims[i] for i in range(rank - 1)]
        grouped = reshaping.reshape(x, joining.stack(
            lead + [self.groups, channels // self.groups]))
        axes = list(range(1, rank - 1)) + [rank]  # spatial dims and channels in a group
        mean = reduction.reduce_mean(grouped, axes, keepdims=True)
        var = reduction.reduce_mean(kmath.square(grouped - mean), axes, keepdims=True)
        normed = (grouped - mean) * kmath.rsqrt(var + self.epsilon)
        out = reshaping.reshape(normed, array.shape(x))
        if self.gamma is not None:
            out = out * self.gamma
        if self.beta is not None:
            out = out + self.beta
        if axis != rank - 1:
            order = list(range(rank - 1))
            order.insert(axis, rank - 1)
            out = reshaping.transpose(out, order)
        return out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "groups": self.groups, "axis": self.axis,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale,
                "beta_initializer": _initializers.serialize(self.beta_initializer),
                "gamma_initializer": _initializers.serialize(self.gamma_initializer),
                "beta_regularizer": _regularizers.serialize(self.beta_regularizer),
                "gamma_regularizer": _regularizers.serialize(self.gamma_regularizer),
                "beta_constraint": _constraints.serialize(self.beta_constraint),
                "gamma_constraint": _constraints.serialize(self.gamma_constraint)}
