"""Masking: marks steps whose features all equal `mask_value` as padding. Downstream RNNs
skip them, GlobalAveragePooling1D leaves them out, and losses and metrics ignore them."""
from __future__ import annotations

from typing import Any

from kilnflow.keras.layers.base import Layer
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.shapes import TensorShape


class Masking(Layer):
    """The mask is any(inputs != mask_value) over the last axis; masked steps are zeroed."""

    def __init__(self, mask_value: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.mask_value = mask_value
        self.supports_masking = True

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return reduction.reduce_any(kmath.not_equal(inputs, self.mask_value), -1)

    def call(self, inputs: Any) -> Any:
        keep = reduction.reduce_any(kmath.not_equal(inputs, self.mask_value), -1,
                                    keepdims=True)
        return inputs * kmath.cast(keep, inputs.dtype)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "mask_value": self.mask_value}
