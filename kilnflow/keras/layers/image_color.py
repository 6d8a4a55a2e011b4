"""Colour augmentations as Keras 3 has them: RandomBrightness, RandomGrayscale, RandomHue,
RandomSaturation, RandomInvert, Solarization, RandomPosterization, RandomSharpness,
RandomColorJitter, and AutoContrast (which is applied in inference too).

`value_range` is the range the pixel values live in ((0, 255) by default); layers that
think in [0, 255] or [0, 1] map into it and back. Each random layer draws one factor per
image and returns its input unchanged at inference, as Keras does.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.keras.layers.image_base import ImageLayer, factor_pair, rescale, value_range_pair
from kilnflow.ops import array, bitwise, joining, math as kmath, reduction, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.image_color import hsv_to_rgb, rgb_to_grayscale, rgb_to_hsv
from kilnflow.ops.nn_extra import depthwise_conv2d

_EPSILON = 1e-7  # keras.config.epsilon()


def _per_image(values: Any) -> Any:
    """[batch] -> [batch, 1, 1, 1], to scale whole images."""
    return reshaping.reshape(values, [-1, 1, 1, 1])


class ColorLayer(ImageLayer):
    """A colour augmentation with a `factor` range and a `value_range`."""

    BOUNDS = (-1.0, 1.0)

    def __init__(self, factor: Any, value_range: Any = (0, 255), seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor_pair(factor, "factor", self.BOUNDS)
        self.value_range = value_range_pair(value_range)

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        return self.apply(self.as_compute_dtype(images))

    def apply(self, images: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "value_range": self.value_range}


class RandomBrightness(ColorLayer):
    """Adds factor * (value range width) to every pixel of an image, factor drawn from
    `factor` (a number f gives [-f, f]); results are clipped to `value_range`."""

    def apply(self, images: Any) -> Any:
        delta = self.uniform(self.batch(images), *self.factor, dtype=images.dtype)
        delta = delta * float(self.value_range[1] - self.value_range[0])
        return kmath.clip_by_value(images + _per_image(delta), float(self.value_range[0]),
                                   float(self.value_range[1]))

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("data_format")
        return config


class RandomGrayscale(ImageLayer):
    """Turns each image grey (its luma in every channel) with probability `factor`."""

    def __init__(self, factor: float = 0.5, data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if factor < 0 or factor > 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = factor

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        apply = self.uniform(self.batch(images), 0.0, 1.0) < self.factor
        gray = rgb_to_grayscale(images) if images.shape[-1] != 1 else images
        return array.where(reshaping.broadcast_to(_per_image(apply), array.shape(images)),
                           reshaping.broadcast_to(gray, array.shape(images)), images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


class RandomHue(ColorLayer):
    """Rotates the hue of each image by ±factor / 2 (a turn is 1), sign and size drawn."""

    BOUNDS = (0.0, 1.0)

    def apply(self, images: Any) -> Any:
        batch = self.batch(images)
        sign = array.where(self.uniform(batch, 0.0, 1.0) > 0.5, -1.0, 1.0)
        delta = sign * self.uniform(batch, *self.factor) * 0.5
        hsv = rgb_to_hsv(rescale(images, self.value_range, (0, 1)))
        h = hsv[..., 0] + kmath.cast(reshaping.reshape(delta, [-1, 1, 1]), images.dtype)
        h = array.where(h > 1.0, h - 1.0, h)
        h = array.where(h < 0.0, h + 1.0, h)
        rgb = hsv_to_rgb(joining.stack([h, hsv[..., 1], hsv[..., 2]], -1))
        return rescale(kmath.clip_by_value(rgb, 0.0, 1.0), (0, 1), self.value_range)


class RandomSaturation(ColorLayer):
    """Scales each image's saturation by f / (1 - f), f drawn from `factor` (0.5 keeps it;
    Keras clips the new saturation to `value_range`, not to [0, 1])."""

    def apply(self, images: Any) -> Any:
        f = self.uniform(self.batch(images), *self.factor, dtype=images.dtype)
        f = reshaping.reshape(f / (1.0 - f + _EPSILON), [-1, 1, 1])
        hsv = rgb_to_hsv(images)
        s = kmath.clip_by_value(hsv[..., 1] * f, float(self.value_range[0]),
                                float(self.value_range[1]))
        return hsv_to_rgb(joining.stack([hsv[..., 0], s, hsv[..., 2]], -1))


class RandomInvert(ColorLayer):
    """Replaces an image x by (value_range max - x) with a probability drawn from `factor`."""

    BOUNDS = (0.0, 1.0)

    def __init__(self, factor: Any = 1.0, value_range: Any = (0, 255),
                 seed: Optional[int] = None, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(factor, value_range, seed, data_format, **kwargs)
        self.factor = factor_pair(factor, "factor", self.BOUNDS)
        self.value_range = list(value_range)

    def apply(self, images: Any) -> Any:
        batch = self.batch(images)
        probability = self.uniform(batch, *self.factor)
        apply = self.uniform(batch, 0.0, 1.0) < probability
        return array.where(reshaping.broadcast_to(_per_image(apply), array.shape(images)),
                           float(self.value_range[1]) - images, images)


class Solarization(ImageLayer):
    """Adds a drawn amount, then inverts (255 - x, in [0, 255] terms) the pixels at or above
    a drawn threshold. Keras draws the addition from [lower, upper * 255) and the threshold
    the same way; both are per image."""

    def __init__(self, addition_factor: Any = 0.0, threshold_factor: Any = 0.0,
                 value_range: Any = (0, 255), seed: Optional[int] = None, **kwargs: Any):
        super().__init__(seed=seed, **kwargs)
        self.addition_factor = factor_pair(addition_factor, "addition_factor", (0.0, 1.0), False)
        self.threshold_factor = factor_pair(threshold_factor, "threshold_factor", (0.0, 1.0),
                                            False)
        self.value_range = value_range_pair(value_range)

    def transform(self, images: Any, training: Any) -> Any:
        images = self.as_compute_dtype(images)
        if not training:
            return images
        batch = self.batch(images)
        add = self.uniform(batch, self.addition_factor[0], self.addition_factor[1] * 255,
                           dtype=images.dtype)
        threshold = self.uniform(batch, self.threshold_factor[0],
                                 self.threshold_factor[1] * 255, dtype=images.dtype)
        x = kmath.clip_by_value(rescale(images, self.value_range, (0, 255)) + _per_image(add),
                                0.0, 255.0)
        x = array.where(x < _per_image(threshold), x, 255.0 - x)
        return rescale(x, (0, 255), self.value_range)

    def get_config(self) -> dict:
        config = {**super().get_config(), "addition_factor": self.addition_factor,
                  "threshold_factor": self.threshold_factor, "value_range": self.value_range}
        config.pop("data_format")
        return config


class RandomPosterization(ColorLayer):
    """Keeps the top `bits` bits of each 8-bit channel value, bits drawn from `factor`
    (integers in [1, 8]; a number f gives [1, f])."""

    BOUNDS = (1.0, 8.0)

    def apply(self, images: Any) -> Any:
        low, high = int(self.factor[0]), int(self.factor[1])
        if low != high:
            bits = kmath.cast(kmath.floor(self.uniform(self.batch(images), low, high)), "uint8")
        else:
            bits = array.fill(reshaping.reshape(self.batch(images), [1]),
                              convert_to_tensor(low, dtype="uint8"))
        shift = reshaping.reshape(8 - bits, [-1, 1, 1, 1])
        x = kmath.cast(rescale(images, self.value_range, (0, 255)), "uint8")
        shift = reshaping.broadcast_to(shift, array.shape(x))
        x = bitwise.left_shift(bitwise.right_shift(x, shift), shift)
        return rescale(kmath.cast(x, images.dtype), (0, 255), self.value_range)


class RandomSharpness(ColorLayer):
    """Blends each image with its 3x3-smoothed copy: x + (1 - 2 f) (smooth(x) - x), f drawn
    from `factor` (0.5 keeps the image; 0 blurs, 1 sharpens); clipped to `value_range`."""

    BOUNDS = (0.0, 1.0)

    def apply(self, images: Any) -> Any:
        f = self.uniform(self.batch(images), *self.factor, dtype=images.dtype) * 2.0
        channels = images.shape[-1]
        a, b = 1.0 / 13.0, 5.0 / 13.0
        kernel = np.tile(np.array([[a, a, a], [a, b, a], [a, a, a]]).reshape(3, 3, 1, 1),
                         [1, 1, channels, 1])
        smooth = depthwise_conv2d(images, convert_to_tensor(kernel, dtype=images.dtype),
                                  [1, 1, 1, 1], "SAME")
        out = images + (1.0 - _per_image(f)) * (smooth - images)
        return kmath.clip_by_value(out, float(self.value_range[0]), float(self.value_range[1]))


class AutoContrast(ImageLayer):
    """Stretches each image's channels to span the whole `value_range` (always applied).
    A constant channel (0/0) keeps its values, as Keras's NaN check does."""

    def __init__(self, value_range: Any = (0, 255), **kwargs: Any):
        super().__init__(**kwargs)
        self.value_range = value_range_pair(value_range)

    def transform(self, images: Any, training: Any) -> Any:
        original = images
        x = kmath.cast(rescale(self.as_compute_dtype(images), self.value_range, (0, 255)),
                       self._dtype)
        low = reduction.reduce_min(x, [1, 2], keepdims=True)
        high = reduction.reduce_max(x, [1, 2], keepdims=True)
        scale = 255.0 / (high - low)
        out = kmath.clip_by_value(x * scale - low * scale, 0.0, 255.0)
        out = rescale(out, (0, 255), self.value_range)
        keep = kmath.cast(original, out.dtype)
        return array.where(kmath.is_nan(out), keep, out)  # float, whatever came in

    def get_config(self) -> dict:
        config = {**super().get_config(), "value_range": self.value_range}
        for key in ("seed", "data_format"):
            config.pop(key)
        return config


class RandomColorJitter(ImageLayer):
    """Brightness, contrast, saturation and hue jitter in that order, each applied when its
    factor is given (with the factor conventions of the single layers)."""

    def __init__(self, value_range: Any = (0, 255), brightness_factor: Any = None,
                 contrast_factor: Any = None, saturation_factor: Any = None,
                 hue_factor: Any = None, seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.value_range = value_range
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        self._contrast = None if contrast_factor is None else \
            factor_pair(contrast_factor, "factor", (0.0, 1.0))
        self._parts = [cls(factor, value_range=value_range, seed=seed)
                       for cls, factor in ((RandomBrightness, brightness_factor),
                                           (None, contrast_factor),
                                           (RandomSaturation, saturation_factor),
                                           (RandomHue, hue_factor)) if factor is not None
                       and cls is not None]
        self._order = [name for name, factor in (("brightness", brightness_factor),
                                                 ("contrast", contrast_factor),
                                                 ("saturation", saturation_factor),
                                                 ("hue", hue_factor)) if factor is not None]

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        x = self.as_compute_dtype(images)
        parts = iter(self._parts)
        for name in self._order:
            if name == "contrast":  # Keras 3 RandomContrast: factor in [1 - lower, 1 + upper]
                f = self.uniform(self.batch(x), 1.0 - self._contrast[0], 1.0 + self._contrast[1],
                                 dtype=x.dtype)
                mean = reduction.reduce_mean(x, [1, 2], keepdims=True)
                x = kmath.clip_by_value((x - mean) * _per_image(f) + mean,
                                        float(self.value_range[0]), float(self.value_range[1]))
            else:
                x = next(parts).apply(x)
        return x

    def get_config(self) -> dict:
        return {**super().get_config(), "value_range": self.value_range,
                "brightness_factor": self.brightness_factor,
                "contrast_factor": self.contrast_factor,
                "saturation_factor": self.saturation_factor, "hue_factor": self.hue_factor}


class RandomColorDegeneration(ColorLayer):
    """Blends each image towards its greyscale version by a factor drawn from `factor`
    (0 keeps the image, 1 makes it grey); clipped to `value_range`."""

    def apply(self, images: Any) -> Any:
        f = _per_image(self.uniform(self.batch(images), *self.factor, dtype=images.dtype))
        gray = rgb_to_grayscale(images) if images.shape[-1] != 1 else images
        return kmath.clip_by_value(images + f * (gray - images), float(self.value_range[0]),
                                   float(self.value_range[1]))


def _odd_pair(size: Any, name: str) -> tuple:
    pair = tuple(size) if isinstance(size, (tuple, list)) else (size, size)
    if len(pair) != 2 or any(int(s) % 2 == 0 for s in pair):
        raise ValueError(f"The `{name}` argument should be an odd number (or a list of two odd "
                         f"numbers). Received: {name}={size}")
    return int(pair[0]), int(pair[1])


class RandomGaussianBlur(ColorLayer):
    """Blurs an image (probability drawn from `factor`) with a Gaussian kernel of
    `kernel_size` whose two sigmas are drawn from `sigma`; clipped to `value_range`."""

    BOUNDS = (0.0, 1.0)

    def __init__(self, factor: Any = 1.0, kernel_size: Any = 3, sigma: Any = 1.0,
                 value_range: Any = (0, 255), data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any):
        super().__init__(factor, value_range, seed, data_format, **kwargs)
        self.kernel_size = _odd_pair(kernel_size, "kernel_size")
        self.sigma = factor_pair(sigma, "sigma", self.BOUNDS)

    def _kernel(self, sigma: Any, channels: int, dtype: Any) -> Any:
        def one_axis(size: int, s: Any) -> Any:
            x = convert_to_tensor(np.arange(size) - (size - 1) / 2.0, dtype=dtype)
            k = kmath.exp(-0.5 * (x / s) ** 2)
            return k / reduction.reduce_sum(k)
        # Keras's outer(k(size[1], sigma[1]), k(size[0], sigma[0])), read as size[0] x size[1]
        ky = one_axis(self.kernel_size[1], sigma[1])
        kx = one_axis(self.kernel_size[0], sigma[0])
        kernel = reshaping.reshape(reshaping.expand_dims(ky, 1) * reshaping.expand_dims(kx, 0),
                                   [self.kernel_size[0], self.kernel_size[1], 1, 1])
        return reshaping.tile(kernel, [1, 1, channels, 1])

    def apply(self, images: Any) -> Any:
        batch = self.batch(images)
        probability = self.uniform(batch, *self.factor)
        apply = self.uniform(batch, 0.0, 1.0) < probability
        one = reshaping.reshape(2, [1])
        sigma = self._generator.uniform(one, dtype=images.dtype) * (
            self.sigma[1] - self.sigma[0]) + self.sigma[0] + 1e-6
        blurred = depthwise_conv2d(images, self._kernel(sigma, images.shape[-1], images.dtype),
                                   [1, 1, 1, 1], "SAME")
        out = array.where(reshaping.broadcast_to(_per_image(apply), array.shape(images)),
                          blurred, images)
        return kmath.clip_by_value(out, float(self.value_range[0]), float(self.value_range[1]))

    def get_config(self) -> dict:
        return {**super().get_config(), "kernel_size": self.kernel_size, "sigma": self.sigma}


class Equalization(ImageLayer):
    """Histogram equalisation of each channel, as Keras 3 does it: one `bins`-bin histogram
    per channel over the whole batch, its CDF mapped onto [0, 255] as a lookup table (a
    channel with a single occupied bin stays as it is). Applied in training calls."""

    def __init__(self, value_range: Any = (0, 255), bins: int = 256,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(data_format=data_format, **kwargs)
        self.bins = int(bins)
        self.value_range = value_range_pair(value_range)

    def _equalize(self, channel: Any) -> Any:
        from kilnflow.ops import slicing
        bins = self.bins
        channel = rescale(channel, self.value_range, (0, 255)) \
            if tuple(self.value_range) != (0, 255) else channel
        index = kmath.clip_by_value(kmath.cast(channel * ((bins - 1) / 255.0), "int32"), 0,
                                    bins - 1)
        hist = reduction.reduce_sum(array.one_hot(reshaping.reshape(index, [-1]), bins,
                                                  dtype="int32"), 0)
        occupied = reduction.reduce_sum(kmath.cast(hist > 0, "int32"))
        cdf = reduction.cumsum(hist)
        cdf_min = slicing.gather(cdf, reduction.argmax(kmath.cast(cdf > 0, "int32"), 0))
        span = cdf[-1] - cdf_min
        span = array.where(kmath.equal(span, 0), array.ones_like(span), span)
        lut = kmath.cast(cdf - cdf_min, "float64") * 255.0 / kmath.cast(span, "float64")
        lut = kmath.cast(kmath.clip_by_value(kmath.round(lut), 0.0, 255.0), channel.dtype)
        lookup = kmath.cast(kmath.clip_by_value(channel / 255.0 * (bins - 1), 0.0, bins - 1.0),
                            "int32")
        out = array.where(occupied <= 1, channel, slicing.gather(lut, lookup))
        return rescale(out, (0, 255), self.value_range) \
            if tuple(self.value_range) != (0, 255) else out

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        images = self.as_compute_dtype(images)
        return joining.stack([self._equalize(images[..., c]) for c in range(images.shape[-1])],
                             -1)

    def get_config(self) -> dict:
        config = {**super().get_config(), "bins": self.bins, "value_range": self.value_range}
        config.pop("seed")
        return config
