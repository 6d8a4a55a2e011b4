"""Regularization layers active only in training: GaussianNoise, GaussianDropout,
AlphaDropout, SpatialDropout1D/2D/3D (whole channels dropped). At inference each passes
its input through unchanged."""
from __future__ import annotations

import math
from typing import Any, Optional

from kilnflow.keras import backend
from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.convolutional import _data_format
from kilnflow.keras.layers.core import Dropout
from kilnflow.keras.layers.layer_utils import InputSpec
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops import random as krandom
from kilnflow.shapes import TensorShape


class _Noise(Layer):
    def __init__(self, rate: float, seed: Optional[int] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.rate = float(rate)
        self.seed = seed
        self.supports_masking = True

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "seed": self.seed}


class GaussianNoise(_Noise):
    """Adds N(0, stddev^2) noise in training."""

    def __init__(self, stddev: float, seed: Optional[int] = None, **kwargs: Any):
        super().__init__(stddev, seed, **kwargs)
        self.stddev = float(stddev)

    def call(self, inputs: Any, training: Any = None) -> Any:
        if training and self.stddev > 0:
            return inputs + krandom.normal(array.shape(inputs), stddev=self.stddev,
                                           dtype=inputs.dtype, seed=self.seed)
        return inputs

    def get_config(self) -> dict:
        return {**super().get_config(), "stddev": self.stddev}


class GaussianDropout(_Noise):
    """Multiplies by N(1, rate / (1 - rate)) noise in training."""

    def call(self, inputs: Any, training: Any = None) -> Any:
        if training and 0 < self.rate < 1:
            stddev = math.sqrt(self.rate / (1.0 - self.rate))
            return inputs * krandom.normal(array.shape(inputs), mean=1.0, stddev=stddev,
                                           dtype=inputs.dtype, seed=self.seed)
        return inputs

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate}


class AlphaDropout(_Noise):
    """Dropout for SELU networks: dropped units take SELU's negative saturation value and
    an affine correction keeps the mean and variance."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: Optional[int] = None,
                 **kwargs: Any):
        super().__init__(rate, seed, **kwargs)
        self.noise_shape = noise_shape

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not training or not 0 < self.rate < 1:
            return inputs
        alpha_p = -1.6732632423543772 * 1.0507009873554805
        shape = self.noise_shape or array.shape(inputs)
        keep = krandom.uniform(shape, dtype=inputs.dtype, seed=self.seed) >= self.rate
        keep = kmath.cast(keep, inputs.dtype)
        a = ((1 - self.rate) * (1 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        return a * (inputs * keep + alpha_p * (1.0 - keep)) + b

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape}


class _SpatialDropout(Dropout):
    rank = 1

    def __init__(self, rate: float, data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any):
        super().__init__(rate, seed=seed, **kwargs)
        self.data_format = _data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)  # TF checks the rank before any work

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not training or self.rate <= 0:
            return inputs
        ones = [1] * self.rank  # one mask value per (example, channel)
        noise = [None, None] + ones if self.data_format == "channels_first" \
            else [None] + ones + [None]
        return backend.nn().dropout(inputs, self.rate, noise_shape=noise, seed=self.seed)

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("noise_shape", None)
        if self.rank > 1:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Drops whole feature maps of [batch, steps, channels] in training."""
    rank = 1

    def __init__(self, rate: float, seed: Optional[int] = None, **kwargs: Any):
        super().__init__(rate, None, seed, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    """Drops whole channels of [batch, h, w, channels] in training."""
    rank = 2


class SpatialDropout3D(_SpatialDropout):
    """Drops whole channels of [batch, d1, d2, d3, channels] in training."""
    rank = 3
