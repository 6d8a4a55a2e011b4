"""BatchNormalization (batch statistics while training, moving averages at inference) and
LayerNormalization (statistics over the feature axes of each example)."""
from __future__ import annotations

from typing import Any

from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.shapes import TensorShape
from kilnflow.ops import reshaping
from kilnflow.ops import reduction


def _axes(axis: Any, rank: int, name: str) -> list:
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"{name}: invalid axis {a} for an input of rank {rank}")
        out.append(a % rank)
    return sorted(set(out))


def _moments(x: Any, axes: list) -> tuple:
    mean = reduction.reduce_mean(x, axes, keepdims=True)
    # The variance's gradient with respect to the mean is zero, so the mean is held
    # constant there (as kf.nn.moments does).
    variance = reduction.reduce_mean(kmath.squared_difference(x, array.stop_gradient(mean)), axes,
                                 keepdims=True)
    return mean, variance


class _Normalization(Layer):
    def __init__(self, axis: Any, epsilon: float, center: bool, scale: bool,
                 beta_initializer: Any, gamma_initializer: Any, beta_regularizer: Any,
                 gamma_regularizer: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.axis = axis
        self.epsilon = float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = _initializers.get(beta_initializer)
        self.gamma_initializer = _initializers.get(gamma_initializer)
        self.beta_regularizer = _regularizers.get(beta_regularizer)
        self.gamma_regularizer = _regularizers.get(gamma_regularizer)

    def _param_shape(self, input_shape: Any) -> tuple:
        """(normalized-over axes, parameter shape, broadcast shape) for this input shape."""
        dims = TensorShape(input_shape).as_list()
        rank = len(dims)
        param_axes = _axes(self.axis, rank, self.name)
        for a in param_axes:
            if dims[a] is None:
                raise ValueError(f"{self.name}: axis {a} of the input has no known size "
                                 f"(input shape {input_shape})")
        shape = [dims[a] for a in param_axes]
        broadcast = [dims[a] if a in param_axes else 1 for a in range(rank)]
        return param_axes, shape, broadcast

    def _make_affine(self, shape: list) -> None:
        self.gamma = self.add_weight("gamma", shape, initializer=self.gamma_initializer,
                                     regularizer=self.gamma_regularizer) if self.scale else None
        self.beta = self.add_weight("beta", shape, initializer=self.beta_initializer,
                                    regularizer=self.beta_regularizer) if self.center else None

    def _normalize(self, x: Any, mean: Any, variance: Any, broadcast: list) -> Any:
        inv = kmath.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * self._shaped(self.gamma, broadcast)
        out = (x - mean) * inv
        if self.beta is not None:
            out = out + self._shaped(self.beta, broadcast)
        return out

    def _shaped(self, param: Any, broadcast: list) -> Any:
        if len([d for d in broadcast if d != 1]) <= 1 and broadcast[-1] != 1:
            return param  # features on the last axis: plain broadcasting works
        return reshaping.reshape(param, broadcast)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": _initializers.serialize(self.beta_initializer),
                "gamma_initializer": _initializers.serialize(self.gamma_initializer)}


class BatchNormalization(_Normalization):
    """Normalizes each feature with the batch's mean and variance while training, and with
    moving averages of them at inference (also when the layer is frozen: trainable=False).

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> bn = keras.layers.BatchNormalization()
    >>> y = bn(kf.constant([[0.0], [2.0]]), training=True)
    >>> [round(v, 3) for v in y.numpy().ravel().tolist()], round(float(bn.moving_mean[0]), 4)
    ([-1.0, 1.0], 0.01)
    """

    def __init__(self, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                 center: bool = True, scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", moving_mean_initializer: Any = "zeros",
                 moving_variance_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, **kwargs: Any):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, **kwargs)
        self.momentum = float(momentum)
        self.moving_mean_initializer = _initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = _initializers.get(moving_variance_initializer)

    def build(self, input_shape: Any) -> None:
        param_axes, shape, broadcast = self._param_shape(input_shape)
        self._reduction_axes = [a for a in range(len(broadcast)) if a not in param_axes]
        self._broadcast = broadcast
        self._make_affine(shape)
        self.moving_mean = self.add_weight("moving_mean", shape, trainable=False,
                                           initializer=self.moving_mean_initializer)
        self.moving_variance = self.add_weight("moving_variance", shape, trainable=False,
                                               initializer=self.moving_variance_initializer)
        self.built = True

    def call(self, inputs: Any, training: Any = None) -> Any:
        broadcast = self._broadcast
        if training and self.trainable:
            mean, variance = _moments(inputs, self._reduction_axes)
            flat_mean = reshaping.reshape(mean, self.moving_mean.shape.as_list())
            flat_var = reshaping.reshape(variance, self.moving_variance.shape.as_list())
            decay = 1.0 - self.momentum
            self.moving_mean.assign_sub((self.moving_mean - flat_mean) * decay)
            self.moving_variance.assign_sub((self.moving_variance - flat_var) * decay)
            return self._normalize(inputs, mean, variance, broadcast)
        mean = self._shaped(self.moving_mean.read_value(), broadcast)
        variance = self._shaped(self.moving_variance.read_value(), broadcast)
        return self._normalize(inputs, mean, variance, broadcast)

    def get_config(self) -> dict:
        return {**super().get_config(), "momentum": self.momentum}


class LayerNormalization(_Normalization):
    """Normalizes each example over `axis` (the features), then scales and shifts."""

    def __init__(self, axis: Any = -1, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = "zeros",
                 gamma_initializer: Any = "ones", beta_regularizer: Any = None,
                 gamma_regularizer: Any = None, **kwargs: Any):
        super().__init__(axis, epsilon, center, scale, beta_initializer, gamma_initializer,
                         beta_regularizer, gamma_regularizer, **kwargs)

    def build(self, input_shape: Any) -> None:
        param_axes, shape, broadcast = self._param_shape(input_shape)
        self._norm_axes = param_axes
        self._broadcast = broadcast
        self._make_affine(shape)
        self.built = True

    def call(self, inputs: Any) -> Any:
        mean, variance = _moments(inputs, self._norm_axes)
        return self._normalize(inputs, mean, variance, self._broadcast)
