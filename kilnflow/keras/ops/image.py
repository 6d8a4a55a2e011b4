"""keras.ops.image: resizing, colour-space conversion, patches, padding and cropping for
(batch, height, width, channels) images (or a single (height, width, channels) image)."""
from __future__ import annotations

from typing import Any, Callable

import kilnflow as kf
from kilnflow.keras.ops.convert import to_float, to_tensor


def _batched(fn: Callable[[Any], Any], images: Any, data_format: Any) -> Any:
    x = to_tensor(images)
    single = x.shape.rank == 3
    if single:
        x = kf.expand_dims(x, 0)
    if data_format == "channels_first":
        x = kf.transpose(x, [0, 2, 3, 1])
    y = fn(x)
    if data_format == "channels_first":
        y = kf.transpose(y, [0, 3, 1, 2])
    return kf.squeeze(y, [0]) if single else y


def resize(images: Any, size: Any, interpolation: str = "bilinear", antialias: bool = False,
           crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
           fill_mode: str = "constant", fill_value: float = 0.0, data_format: Any = None) -> Any:
    """Resize to `size` = (height, width) with TF's interpolation kernels."""
    if crop_to_aspect_ratio or pad_to_aspect_ratio:
        raise NotImplementedError("resize: crop_to_aspect_ratio / pad_to_aspect_ratio are not "
                                  "supported")
    images = to_float(images)
    dt = images.dtype
    return _batched(lambda x: kf.cast(kf.image.resize(x, list(size), method=interpolation,
                                                      antialias=antialias), dt),
                    images, data_format)


def rgb_to_grayscale(images: Any, data_format: Any = None) -> Any:
    """Luma (ITU-R 601 weights) as one channel."""
    return _batched(kf.image.rgb_to_grayscale, to_float(images), data_format)


def rgb_to_hsv(images: Any, data_format: Any = None) -> Any:
    return _batched(kf.image.rgb_to_hsv, to_float(images), data_format)


def hsv_to_rgb(images: Any, data_format: Any = None) -> Any:
    return _batched(kf.image.hsv_to_rgb, to_float(images), data_format)


def extract_patches(images: Any, size: Any, strides: Any = None, dilation_rate: Any = 1,
                    padding: str = "valid", data_format: Any = None) -> Any:
    """size x size patches, flattened into the channel axis (strides default to size)."""
    size = [size, size] if isinstance(size, int) else list(size)
    strides = size if strides is None else ([strides] * 2 if isinstance(strides, int)
                                            else list(strides))
    rate = [dilation_rate] * 2 if isinstance(dilation_rate, int) else list(dilation_rate)
    return _batched(lambda x: kf.image.extract_patches(
        x, [1] + size + [1], [1] + strides + [1], [1] + rate + [1], padding.upper()),
        images, data_format)


def pad_images(images: Any, top_padding: Any = None, left_padding: Any = None,
               bottom_padding: Any = None, right_padding: Any = None,
               target_height: Any = None, target_width: Any = None,
               data_format: Any = None) -> Any:
    """Zero-pad images on each side (two of padding / target per axis)."""
    def fn(x: Any) -> Any:
        h, w = x.shape.as_list()[1:3]
        t, b = (top_padding or 0, bottom_padding) if bottom_padding is not None else (
            top_padding or 0, (target_height - h - (top_padding or 0)) if target_height else 0)
        if top_padding is None and target_height is not None and bottom_padding is not None:
            t = target_height - h - bottom_padding
        lft, r = (left_padding or 0, right_padding) if right_padding is not None else (
            left_padding or 0, (target_width - w - (left_padding or 0)) if target_width else 0)
        if left_padding is None and target_width is not None and right_padding is not None:
            lft = target_width - w - right_padding
        return kf.pad(x, [[0, 0], [t, b], [lft, r], [0, 0]])
    return _batched(fn, images, data_format)


def crop_images(images: Any, top_cropping: Any = None, left_cropping: Any = None,
                bottom_cropping: Any = None, right_cropping: Any = None,
                target_height: Any = None, target_width: Any = None,
                data_format: Any = None) -> Any:
    """Crop images on each side (two of cropping / target per axis)."""
    def fn(x: Any) -> Any:
        h, w = x.shape.as_list()[1:3]
        top = top_cropping if top_cropping is not None else (
            h - target_height - (bottom_cropping or 0) if target_height else 0)
        height = target_height if target_height is not None else h - top - (bottom_cropping or 0)
        left = left_cropping if left_cropping is not None else (
            w - target_width - (right_cropping or 0) if target_width else 0)
        width = target_width if target_width is not None else w - left - (right_cropping or 0)
        return x[:, top:top + height, left:left + width, :]
    return _batched(fn, images, data_format)


__all__ = [
    "crop_images", "extract_patches", "hsv_to_rgb", "pad_images", "resize",
    "rgb_to_grayscale", "rgb_to_hsv",
]
