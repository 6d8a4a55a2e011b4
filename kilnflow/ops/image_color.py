"""tf.image colour: convert_image_dtype (TF's scaling and saturation rules), colour-space
conversions (HSV, YIQ, YUV, grayscale), adjust_* and per_image_standardization.

All are compositions of public ops, so they run in every mode and differentiate wherever
their pieces do (TF registers gradients for RGB<->HSV and the adjust ops' float paths too).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops import array, joining, linalg, math, math_extra, reduction, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.tensor import Tensor

_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
        [0.114, -0.32134392, 0.31119955]]
_YIQ_INV = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
            [0.6208248, -0.64720424, 1.70423049]]
_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
        [0.114, 0.43601035, -0.10001026]]
_YUV_INV = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _max(dtype: Any) -> int:
    return int(np.iinfo(dtype.as_numpy_dtype).max)


def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False,
                        name: Optional[str] = None) -> Tensor:
    """Convert pixel values between dtypes, rescaling: floats live in [0, 1), integers in
    [0, MAX]. Float -> int scales by MAX + 0.5 then casts (saturating if `saturate`);
    int -> int shifts by the ratio of the ranges."""
    image = convert_to_tensor(image)
    dtype = _dtypes.as_dtype(dtype)
    for d, what in ((image.dtype, "image"), (dtype, "dtype")):
        if not (d.is_integer or d.is_floating):
            raise AttributeError(f"convert_image_dtype: {what} must be a floating point or "
                                 f"integer dtype, got {d.name}")
    if image.dtype == dtype:
        return array.identity(image, name=name)
    cast = math_extra.saturate_cast if saturate else math.cast
    if image.dtype.is_integer and dtype.is_integer:
        scale_in, scale_out = _max(image.dtype), _max(dtype)
        if scale_in > scale_out:  # scale down first: in.max lands just under out.max + 1
            scale = (scale_in + 1) // (scale_out + 1)
            return cast(math.floordiv(image, convert_to_tensor(scale, image.dtype)), dtype)
        scale = (scale_out + 1) // (scale_in + 1)
        return math.multiply(cast(image, dtype), convert_to_tensor(scale, dtype), name=name)
    if image.dtype.is_floating and dtype.is_floating:
        return math.cast(image, dtype, name=name)
    if image.dtype.is_integer:
        scale = 1.0 / _max(image.dtype)
        return math.multiply(math.cast(image, dtype), convert_to_tensor(scale, dtype),
                             name=name)
    scaled = math.multiply(image, convert_to_tensor(_max(dtype) + 0.5, image.dtype))
    return cast(scaled, dtype)


def _channels(images: Tensor, op: str, n: int = 3) -> None:
    last = images.shape[-1] if images.shape.rank else None
    if images.shape.rank == 0 or (last is not None and last != n):
        raise ValueError(f"{op}: the last dimension must be of size {n}, got shape "
                         f"{images.shape}")


def _as_float(images: Any, op: str) -> tuple:
    images = convert_to_tensor(images)
    _channels(images, op)
    if images.dtype in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        return images, images.dtype
    return convert_image_dtype(images, _dtypes.float32), images.dtype


def _mix(images: Any, matrix: list, op: str) -> Tensor:
    images = convert_to_tensor(images)
    _channels(images, op)
    if not images.dtype.is_floating:
        raise TypeError(f"{op}: images must be float, got {images.dtype.name}")
    return linalg.tensordot(images, convert_to_tensor(matrix, images.dtype), [[-1], [0]])


def rgb_to_yiq(images: Any) -> Tensor:
    """RGB to YIQ (float images)."""
    return _mix(images, _YIQ, "rgb_to_yiq")


def yiq_to_rgb(images: Any) -> Tensor:
    """YIQ to RGB (float images)."""
    return _mix(images, _YIQ_INV, "yiq_to_rgb")


def rgb_to_yuv(images: Any) -> Tensor:
    """RGB to YUV (float images)."""
    return _mix(images, _YUV, "rgb_to_yuv")


def yuv_to_rgb(images: Any) -> Tensor:
    """YUV to RGB (float images)."""
    return _mix(images, _YUV_INV, "yuv_to_rgb")


def rgb_to_grayscale(images: Any, name: Optional[str] = None) -> Tensor:
    """Luma with TF's weights, keeping a last dim of 1 and the input dtype."""
    images = convert_to_tensor(images)
    _channels(images, "rgb_to_grayscale")
    flt = convert_image_dtype(images, _dtypes.float32)
    gray = linalg.tensordot(flt, convert_to_tensor([0.2989, 0.5870, 0.1140], _dtypes.float32),
                            [[-1], [-1]])
    return convert_image_dtype(reshaping.expand_dims(gray, -1), images.dtype, name=name)


def grayscale_to_rgb(images: Any, name: Optional[str] = None) -> Tensor:
    """Repeat the single channel three times."""
    images = convert_to_tensor(images)
    _channels(images, "grayscale_to_rgb", 1)
    return reshaping.tile(images, [1] * (images.shape.rank - 1) + [3], name=name)


def _split3(images: Tensor) -> tuple:
    return tuple(images[..., i] for i in range(3))


def rgb_to_hsv(images: Any, name: Optional[str] = None) -> Tensor:
    """RGB to HSV, every channel in [0, 1] (float images), as TF's RGBToHSV kernel."""
    images = convert_to_tensor(images)
    _channels(images, "rgb_to_hsv")
    if not images.dtype.is_floating:
        raise TypeError(f"rgb_to_hsv: images must be float, got {images.dtype.name}")
    r, g, b = _split3(images)
    v = reduction.reduce_max(images, -1)
    span = v - reduction.reduce_min(images, -1)
    zero = array.zeros_like(v)
    positive = math.greater(span, zero)
    safe_v = array.where(math.greater(v, zero), v, array.ones_like(v))
    s = array.where(math.greater(v, zero), span / safe_v, zero)
    norm = 1.0 / (6.0 * array.where(positive, span, array.ones_like(span)))
    h = array.where(math.equal(r, v), norm * (g - b),
                    array.where(math.equal(g, v), norm * (b - r) + 2.0 / 6.0,
                                norm * (r - g) + 4.0 / 6.0))
    h = array.where(positive, h, zero)
    h = array.where(math.less(h, zero), h + 1.0, h)
    return joining.stack([h, s, v], -1, name=name)


def hsv_to_rgb(images: Any, name: Optional[str] = None) -> Tensor:
    """HSV to RGB (float images), as TF's HSVToRGB kernel."""
    images = convert_to_tensor(images)
    _channels(images, "hsv_to_rgb")
    if not images.dtype.is_floating:
        raise TypeError(f"hsv_to_rgb: images must be float, got {images.dtype.name}")
    h, s, v = _split3(images)
    dh = h * 6.0
    dr = math.clip_by_value(math.abs(dh - 3.0) - 1.0, 0.0, 1.0)
    dg = math.clip_by_value(2.0 - math.abs(dh - 2.0), 0.0, 1.0)
    db = math.clip_by_value(2.0 - math.abs(dh - 4.0), 0.0, 1.0)
    low = 1.0 - s
    return joining.stack([(low + s * dr) * v, (low + s * dg) * v, (low + s * db) * v], -1,
                           name=name)


def adjust_brightness(image: Any, delta: Any) -> Tensor:
    """Add `delta` in float, then convert back (saturating)."""
    flt, dtype = _as_float_any(image)
    adjusted = flt + math.cast(convert_to_tensor(delta), flt.dtype)
    return convert_image_dtype(adjusted, dtype, saturate=True)


def _as_float_any(image: Any) -> tuple:
    image = convert_to_tensor(image)
    if image.dtype in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        return image, image.dtype
    return convert_image_dtype(image, _dtypes.float32), image.dtype


def adjust_contrast(images: Any, contrast_factor: Any) -> Tensor:
    """(x - mean) * factor + mean, the mean per image and channel over height and width."""
    flt, dtype = _as_float_any(images)
    if flt.shape.rank is not None and flt.shape.rank < 3:
        raise ValueError(f"adjust_contrast: images must be at least 3-D, got {flt.shape}")
    mean = reduction.reduce_mean(flt, [-3, -2], keepdims=True)
    factor = math.cast(convert_to_tensor(contrast_factor), flt.dtype)
    return convert_image_dtype((flt - mean) * factor + mean, dtype, saturate=True)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Tensor:
    """gain * image ** gamma on [0, 1] floats; gamma must be non-negative."""
    flt, dtype = _as_float_any(image)
    gamma_t = math.cast(convert_to_tensor(gamma), flt.dtype)
    known = getattr(gamma_t, "_value", None)
    if known is not None and np.any(np.asarray(known) < 0):
        raise errors.InvalidArgumentError("adjust_gamma: Gamma should be a non-negative real "
                                          "number.")
    adjusted = math.cast(convert_to_tensor(gain), flt.dtype) * math.pow(flt, gamma_t)
    return convert_image_dtype(adjusted, dtype, saturate=True)


def adjust_saturation(image: Any, saturation_factor: Any, name: Optional[str] = None) -> Tensor:
    """Scale the HSV saturation by the factor (clipped to [0, 1])."""
    flt, dtype = _as_float(image, "adjust_saturation")
    h, s, v = _split3(rgb_to_hsv(flt))
    s = math.clip_by_value(s * math.cast(convert_to_tensor(saturation_factor), flt.dtype),
                           0.0, 1.0)
    return convert_image_dtype(hsv_to_rgb(joining.stack([h, s, v], -1)), dtype,
                               saturate=True, name=name)


def adjust_hue(image: Any, delta: Any, name: Optional[str] = None) -> Tensor:
    """Rotate the HSV hue by `delta` (in [-1, 1], a fraction of a turn)."""
    flt, dtype = _as_float(image, "adjust_hue")
    delta_t = math.cast(convert_to_tensor(delta), flt.dtype)
    known = getattr(delta_t, "_value", None)
    if known is not None and np.any(np.abs(np.asarray(known)) > 1):
        raise errors.InvalidArgumentError("adjust_hue: delta must be in the interval [-1, 1]")
    h, s, v = _split3(rgb_to_hsv(flt))
    h = math.floormod(h + delta_t, convert_to_tensor(1.0, flt.dtype))
    return convert_image_dtype(hsv_to_rgb(joining.stack([h, s, v], -1)), dtype,
                               saturate=True, name=name)


def per_image_standardization(image: Any) -> Tensor:
    """(x - mean) / max(stddev, 1/sqrt(N)) over each image's height, width and channels."""
    image = convert_to_tensor(image)
    if image.shape.rank is not None and image.shape.rank < 3:
        raise ValueError(f"per_image_standardization: image must be at least 3-D, got shape "
                         f"{image.shape}")
    if not image.dtype.is_floating:
        image = math.cast(image, _dtypes.float32)
    axes = [-1, -2, -3]
    pixels = reduction.reduce_prod(math.cast(array.shape(image)[-3:], image.dtype))
    mean = reduction.reduce_mean(image, axes, keepdims=True)
    std = math_extra.reduce_std(image, axes, keepdims=True)
    return (image - mean) / math.maximum(std, math.rsqrt(pixels))
