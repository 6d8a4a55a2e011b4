"""Image augmentation active only in training: RandomFlip and RandomContrast. At
inference they pass images through unchanged."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array
from kilnflow.ops import random as krandom
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.shapes import TensorShape

_MODES = ("horizontal", "vertical", "horizontal_and_vertical")


class RandomFlip(Layer):
    """Flips each [h, w, c] image left-right and/or up-down with probability 1/2."""

    def __init__(self, mode: str = "horizontal_and_vertical", seed: Optional[int] = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        if mode not in _MODES:
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode={mode}")
        self.mode, self.seed = mode, seed

    def _maybe_flip(self, images: Any, axis: int) -> Any:
        batch = array.shape(images)[0]
        coin = krandom.uniform(reshaping.reshape(batch, [1]), dtype=images.dtype,
                               seed=self.seed) < 0.5
        coin = reshaping.reshape(coin, [-1, 1, 1, 1])
        flipped = reshaping.reverse(images, [axis])
        return array.where(reshaping.broadcast_to(coin, array.shape(images)), flipped, images)

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not training:
            return inputs
        out = inputs
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            out = self._maybe_flip(out, 2)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            out = self._maybe_flip(out, 1)
        return out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode, "seed": self.seed}


class RandomContrast(Layer):
    """(x - mean) * f + mean per image and channel, f drawn from [1 - lower, 1 + upper]."""

    def __init__(self, factor: Any, seed: Optional[int] = None, **kwargs: Any):
        super().__init__(**kwargs)
        lower, upper = (factor, factor) if isinstance(factor, (int, float)) else factor
        if lower < 0 or upper < 0 or lower > 1:
            raise ValueError(f"`factor` must be non-negative (and its lower part <= 1), got "
                             f"{factor}")
        self.factor, self.seed = factor, seed
        self._range = (1.0 - float(lower), 1.0 + float(upper))

    def call(self, inputs: Any, training: Any = None) -> Any:
        if not training:
            return inputs
        batch = array.shape(inputs)[0]
        factor = krandom.uniform(reshaping.reshape(batch, [1]), minval=self._range[0],
                                 maxval=self._range[1], dtype=inputs.dtype, seed=self.seed)
        factor = reshaping.reshape(factor, [-1, 1, 1, 1])
        mean = reduction.reduce_mean(inputs, [1, 2], keepdims=True)
        return (inputs - mean) * factor + mean

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "seed": self.seed}


