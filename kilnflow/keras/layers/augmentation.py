"""RandomFlip and RandomContrast as Keras 3 has them (image preprocessing layers).

Like the other image layers (image_base.ImageLayer), a direct call augments (training
defaults to True) while `predict`/`evaluate` pass training=False and the images go through
unchanged (cast to the layer's compute dtype, as Keras casts them). Rank-3 single images
and channels_first are handled by ImageLayer; draws come from the layer's seeded generator.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras.layers.image_base import ImageLayer, factor_pair
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping

_MODES = ("horizontal", "vertical", "horizontal_and_vertical")


class RandomFlip(ImageLayer):
    """Flips each image with probability 1/2: left-right ("horizontal"), up-down
    ("vertical"), or both at once ("horizontal_and_vertical": Keras draws one coin per
    image for both axes, so an image is either kept or turned by 180 degrees)."""

    def __init__(self, mode: str = "horizontal_and_vertical", seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if mode not in _MODES:  # Keras 3 silently ignores an unknown mode; we refuse it
            raise ValueError(f"RandomFlip layer {self.name} received an unknown mode={mode}")
        self.mode = mode

    def transform(self, images: Any, training: Any) -> Any:
        images = self.as_compute_dtype(images)
        if not training:
            return images
        coin = self.uniform(self.batch(images), 0.0, 1.0) <= 0.5  # Keras's less_equal
        coin = reshaping.broadcast_to(reshaping.reshape(coin, [-1, 1, 1, 1]),
                                      array.shape(images))
        out = images
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            out = array.where(coin, reshaping.reverse(out, [2]), out)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            out = array.where(coin, reshaping.reverse(out, [1]), out)
        return out

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode}


class RandomContrast(ImageLayer):
    """(x - mean) * f + mean per image and channel (mean over height and width), f drawn
    from [1 - lower, 1 + upper], then clipped to `value_range`.

    `factor` follows Keras 3's rule for bounds [0, 1]: a number f gives (lower, upper) =
    (0, f) (so f only raises contrast), a pair (a, b) gives (a, b).
    """

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: Optional[int] = None,
                 **kwargs: Any):
        super().__init__(seed=seed, **kwargs)
        self.factor = factor_pair(factor, "factor", (0, 1))
        self.value_range = value_range

    def transform(self, images: Any, training: Any) -> Any:
        images = self.as_compute_dtype(images)
        if not training:
            return images
        f = self.uniform(self.batch(images), 1.0 - self.factor[0], 1.0 + self.factor[1],
                         dtype=images.dtype)
        f = reshaping.reshape(f, [-1, 1, 1, 1])
        mean = reduction.reduce_mean(images, [1, 2], keepdims=True)
        return kmath.clip_by_value((images - mean) * f + mean, float(self.value_range[0]),
                                   float(self.value_range[1]))

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}
