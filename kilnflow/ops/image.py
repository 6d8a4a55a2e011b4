"""tf.image resizing and geometry: resize (every ResizeMethod, antialias), resize_with_pad,
resize_with_crop_or_pad, flips, rot90, transpose, crops and pads to bounding boxes.

Every TF resize is separable and linear: along each spatial axis an (out x in) weight
matrix, computed as TF's kernels compute their sampling positions (float32 scales, half-pixel
centres, TF's cubic coefficient table, scale_and_translate's spans). The kernel applies the
two matrices; the gradient applies their transposes (the *Grad ops), whose own gradient is
the forward op again. Sizes must be known when the graph is built; image dims may be unknown.
"""
from __future__ import annotations

import enum
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, math, reshaping, slicing
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_F32 = np.float32


class ResizeMethod(str, enum.Enum):
    """The interpolation of tf.image.resize (its values are TF's method strings)."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"

    def __str__(self) -> str:
        return self.value


# ---------------------------------------------------------------- weights along one axis

def _bilinear(n_in: int, n_out: int) -> np.ndarray:
    scale = _F32(n_in) / _F32(n_out)
    pos = (np.arange(n_out, dtype=_F32) + _F32(0.5)) * scale - _F32(0.5)
    floor = np.floor(pos)
    lower = np.maximum(floor, 0).astype(np.int64)
    upper = np.minimum(np.ceil(pos), n_in - 1).astype(np.int64)
    lerp = (pos - floor).astype(np.float64)
    w = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    np.add.at(w, (rows, lower), 1 - lerp)
    np.add.at(w, (rows, upper), lerp)
    return w


def _nearest_index(n_in: int, n_out: int) -> np.ndarray:
    scale = _F32(n_in) / _F32(n_out)
    pos = np.floor((np.arange(n_out, dtype=_F32) + _F32(0.5)) * scale)
    return np.clip(pos, 0, n_in - 1).astype(np.int64)


def _nearest(n_in: int, n_out: int) -> np.ndarray:
    w = np.zeros((n_out, n_in))
    w[np.arange(n_out), _nearest_index(n_in, n_out)] = 1.0
    return w


def _bicubic(n_in: int, n_out: int) -> np.ndarray:
    """ResizeBicubic with half-pixel centres: Keys' cubic (a=-0.5) read from TF's 1024-entry
    coefficient table; taps outside the image get weight 0 and the rest are renormalised."""
    a = -0.5
    scale = _F32(n_in) / _F32(n_out)
    pos = (np.arange(n_out, dtype=_F32) + _F32(0.5)) * scale - _F32(0.5)
    base = np.floor(pos)
    delta = np.rint((pos - base) * 1024).astype(np.float64) / 1024

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    taps = [far(delta + 1), near(delta), near(1 - delta), far(2 - delta)]
    w = np.zeros((n_out, n_in))
    base = base.astype(np.int64)
    for k, weight in enumerate(taps):
        index = base - 1 + k
        inside = (index >= 0) & (index < n_in)
        rows = np.nonzero(inside)[0]
        np.add.at(w, (rows, index[inside]), weight[inside])
    total = w.sum(axis=1, keepdims=True)
    return np.where(np.abs(total) > 0, w / np.where(total == 0, 1, total), w)


def _area(n_in: int, n_out: int) -> np.ndarray:
    scale = float(_F32(n_in) / _F32(n_out))
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        lo, hi = i * scale, (i + 1) * scale
        for v in range(int(np.floor(lo)), int(np.ceil(hi))):
            w[i, min(v, n_in - 1)] += min(v + 1, hi) - max(v, lo)
    return w / scale


def _lanczos(radius: float) -> Any:
    def kernel(x: np.ndarray) -> np.ndarray:
        safe = np.where(x < 1e-3, 1.0, x)
        value = radius * np.sin(np.pi * safe) * np.sin(np.pi * safe / radius) / (
            np.pi * np.pi * safe * safe)
        return np.where(x > radius, 0.0, np.where(x < 1e-3, 1.0, value))
    return kernel, radius


def _keys(x: np.ndarray) -> np.ndarray:
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    near = (1.5 * x - 2.5) * x * x + 1.0
    return np.where(x >= 2, 0.0, np.where(x >= 1, far, near))


def _mitchell(x: np.ndarray) -> np.ndarray:
    far = (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0
    near = ((7.0 / 6.0) * x - 2.0) * x * x + 8.0 / 9.0
    return np.where(x >= 2, 0.0, np.where(x >= 1, far, near))


_KERNELS = {
    "lanczos1": _lanczos(1.0), "lanczos3": _lanczos(3.0), "lanczos5": _lanczos(5.0),
    "triangle": (lambda x: np.maximum(0.0, 1.0 - x), 1.0),
    "keyscubic": (_keys, 2.0), "mitchellcubic": (_mitchell, 2.0),
    "gaussian": (lambda x: np.where(x >= 1.5, 0.0, np.exp(-2.0 * x * x)), 1.5),
    "box": (lambda x: np.where(x < 0.5, 1.0, np.where(x == 0.5, 0.5, 0.0)), 1.0),
}


def _scale_and_translate(n_in: int, n_out: int, kernel_type: str, antialias: bool) -> np.ndarray:
    """ScaleAndTranslate's spans with scale n_out/n_in and no translation."""
    fn, radius = _KERNELS[kernel_type]
    inv_scale = 1.0 / float(_F32(n_out) / _F32(n_in))
    kernel_scale = max(inv_scale, 1.0) if antialias else 1.0
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        sample = (i + 0.5) * inv_scale
        if sample < 0 or sample > n_in:
            continue
        start = int(np.clip(np.ceil(sample - radius * kernel_scale - 0.5), 0, n_in - 1))
        end = int(np.clip(np.floor(sample + radius * kernel_scale - 0.5), 0, n_in - 1)) + 1
        source = np.arange(start, end)
        weights = fn(np.abs((source + 0.5 - sample) / kernel_scale))
        total = weights.sum()
        if abs(total) >= 1000.0 * np.finfo(np.float32).tiny:
            weights = weights / total
        w[i, start:end] = weights
    return w


def _matrix(method: str, n_in: int, n_out: int, antialias: bool) -> np.ndarray:
    if method == "bilinear":
        return _bilinear(n_in, n_out)
    if method == "nearest":
        return _nearest(n_in, n_out)
    if method == "bicubic":
        return _bicubic(n_in, n_out)
    if method == "area":
        return _area(n_in, n_out)
    return _scale_and_translate(n_in, n_out, method, antialias)


# ---------------------------------------------------------------- the ops

def _out_dtype(x: Any) -> Any:
    # TF's resize kernels give float32; float64 stays float64 here so gradients check in
    # float64 (the public resize casts to float32 as TF does).
    return x.dtype if x.dtype in (_dtypes.float64, _dtypes.float16) else _dtypes.float32


def _resize_rule(x: Any, *, size: tuple, method: str, antialias: bool) -> TensorSpec:
    if x.shape.rank is not None and x.shape.rank != 4:
        raise ValueError(f"resize: images must be 4-D [batch, height, width, channels], got "
                         f"shape {x.shape}")
    dims = [None] * 4 if x.shape.rank is None else x.shape.as_list()
    dtype = x.dtype if method == "nearest" else _out_dtype(x)
    return TensorSpec([dims[0], size[0], size[1], dims[3]], dtype)


def _apply(x: np.ndarray, wh: np.ndarray, ww: np.ndarray) -> np.ndarray:
    return np.einsum("Hh,bhwc,Ww->bHWc", wh, x, ww, optimize=True)


def _resize_kernel(x: np.ndarray, *, size: tuple, method: str, antialias: bool) -> np.ndarray:
    if method == "nearest":  # a gather keeps the dtype and the exact values
        return x[:, _nearest_index(x.shape[1], size[0])][:, :, _nearest_index(x.shape[2],
                                                                                 size[1])]
    wh = _matrix(method, x.shape[1], size[0], antialias)
    ww = _matrix(method, x.shape[2], size[1], antialias)
    dtype = x.dtype if x.dtype in (np.float64, np.float16) else np.float32
    return _apply(x.astype(np.float64), wh, ww).astype(dtype)


def _resize_grad_kernel(dy: np.ndarray, x: np.ndarray, *, size: tuple, method: str,
                        antialias: bool) -> np.ndarray:
    wh = _matrix(method, x.shape[1], size[0], antialias)
    ww = _matrix(method, x.shape[2], size[1], antialias)
    return np.einsum("Hh,bHWc,Ww->bhwc", wh, dy.astype(np.float64), ww,
                     optimize=True).astype(x.dtype)


def _resize_grad_rule(dy: Any, x: Any, *, size: tuple, method: str,
                      antialias: bool) -> TensorSpec:
    return TensorSpec(x.shape, x.dtype)


def _grad_of_resize(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    if not x.dtype.is_floating:
        return [None]
    return [bind(RESIZE_GRAD, (dy, x), dict(op.attrs))]


def _grad_of_resize_grad(op: Any, ddx: Any) -> list:
    dy = op.inputs[0]
    return [math.cast(bind(RESIZE, (ddx,), dict(op.attrs)), dy.dtype), None]


_FLOATS_AND_INTS = (_dtypes.float16, _dtypes.float32, _dtypes.float64,
                    _dtypes.uint8, _dtypes.int8, _dtypes.uint16, _dtypes.int16, _dtypes.int32,
                    _dtypes.int64)
RESIZE = defop("ResizeImage", shape=_resize_rule, kernel=_resize_kernel,
               grad=_grad_of_resize, dtypes=_FLOATS_AND_INTS)
RESIZE_GRAD = defop("ResizeImageGrad", shape=_resize_grad_rule, kernel=_resize_grad_kernel,
                    grad=_grad_of_resize_grad, same_dtype=False,
                    dtypes=(_dtypes.float16, _dtypes.float32, _dtypes.float64))

_METHODS = {m.value for m in ResizeMethod}


def image_rank(images: Tensor, op: str) -> Optional[int]:
    rank = images.shape.rank
    if rank is not None and rank not in (3, 4):
        raise ValueError(f"{op}: 'images' must have either 3 or 4 dimensions, got shape "
                         f"{images.shape}")
    return rank


def static_size(size: Any, op: str) -> tuple:
    """`size` as two Python ints, read from a list, array or constant tensor."""
    value = size
    if hasattr(size, "dtype") and not isinstance(size, np.ndarray):
        value = rules.constant_value(convert_to_tensor(size))
        if value is None:
            raise ValueError(errors.with_location(
                f"{op}: `size` must be known when the graph is built"))
    value = np.asarray(value)
    if value.shape != (2,) or value.dtype.kind not in "iu":
        raise ValueError(f"{op}: 'size' must be a 1-D int32 Tensor of 2 elements: "
                         f"new_height, new_width, got {size!r}")
    if np.any(value <= 0):
        raise ValueError(f"{op}: 'size' must contain positive values, got {value.tolist()}")
    return int(value[0]), int(value[1])


def batched(images: Any, op: str) -> tuple:
    """(4-D images, whether a batch dim was added): ops work on [batch, h, w, c]."""
    images = convert_to_tensor(images)
    if image_rank(images, op) == 3:
        return reshaping.expand_dims(images, 0), True
    if images.shape.rank is None:
        raise ValueError(f"{op}: 'images' contains no shape")
    return images, False


def unbatched(images: Tensor, added: bool) -> Tensor:
    return reshaping.squeeze(images, [0]) if added else images


def hw(images: Tensor) -> tuple:
    """Static (height, width) of 4-D images, or None where unknown."""
    dims = images.shape.as_list()
    return dims[1], dims[2]


def resize(images: Any, size: Any, method: Any = ResizeMethod.BILINEAR,
           preserve_aspect_ratio: bool = False, antialias: bool = False,
           name: Optional[str] = None) -> Tensor:
    """Resize images ([batch,] height, width, channels) to `size` = [new_height, new_width].

    Returns float32 (the images' dtype for NEAREST_NEIGHBOR), as TF 2 does. `antialias`
    widens the kernel when downsampling (bilinear, bicubic and the scale-and-translate
    kernels); `preserve_aspect_ratio` fits the image inside `size`.
    """
    method = str(method.value if isinstance(method, ResizeMethod) else method)
    if method not in _METHODS:
        raise ValueError(f"Resize method is not implemented: [{method}]")
    x, added = batched(images, "resize")
    new_h, new_w = static_size(size, "resize")
    if preserve_aspect_ratio:
        h, w = hw(x)
        if h is None or w is None:
            raise ValueError("resize: preserve_aspect_ratio needs known image dims")
        factor = min(_F32(new_h) / _F32(h), _F32(new_w) / _F32(w))
        new_h, new_w = int(np.rint(factor * _F32(h))), int(np.rint(factor * _F32(w)))
    aa = bool(antialias)
    if method == "bilinear" and aa:
        method = "triangle"
    elif method == "bicubic" and aa:
        method = "keyscubic"
    elif method in ("nearest", "area", "bilinear", "bicubic"):
        aa = False
    out = bind(RESIZE, (x,), {"size": (new_h, new_w), "method": method, "antialias": aa},
               name=name)
    if method != "nearest" and out.dtype != _dtypes.float32:
        out = math.cast(out, _dtypes.float32)
    return unbatched(out, added)


# ---------------------------------------------------------------- geometry by public ops

def flip_left_right(image: Any) -> Tensor:
    """Mirror images along the width axis."""
    image = convert_to_tensor(image)
    image_rank(image, "flip_left_right")
    return reshaping.reverse(image, [-2])


def flip_up_down(image: Any) -> Tensor:
    """Mirror images along the height axis."""
    image = convert_to_tensor(image)
    image_rank(image, "flip_up_down")
    return reshaping.reverse(image, [-3])


def transpose(image: Any, name: Optional[str] = None) -> Tensor:
    """Swap the height and width axes."""
    image = convert_to_tensor(image)
    perm = [1, 0, 2] if image_rank(image, "transpose") == 3 else [0, 2, 1, 3]
    return reshaping.transpose(image, perm, name=name)


def rot90(image: Any, k: Any = 1, name: Optional[str] = None) -> Tensor:
    """Rotate images counter-clockwise by k quarter turns."""
    image = convert_to_tensor(image)
    image_rank(image, "rot90")
    known = rules.constant_value(convert_to_tensor(k))
    if known is None or np.asarray(known).ndim != 0:
        raise ValueError(errors.with_location("rot90: `k` must be a scalar known when the "
                                              "graph is built"))
    k = int(known) % 4
    for _ in range(k):
        image = flip_up_down(transpose(image))
    return array.identity(image, name=name)


def _check_box(op: str, **values: int) -> None:
    for what, value in values.items():
        if value < 0:
            raise ValueError(f"{op}: {what} must be >= 0, got {value}")


def crop_to_bounding_box(image: Any, offset_height: int, offset_width: int,
                         target_height: int, target_width: int) -> Tensor:
    """The window [offset_height:+target_height, offset_width:+target_width]."""
    x, added = batched(image, "crop_to_bounding_box")
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height,
                                        target_width))
    _check_box("crop_to_bounding_box", offset_height=oh, offset_width=ow)
    if th <= 0 or tw <= 0:
        raise ValueError("crop_to_bounding_box: target_height and target_width must be > 0")
    h, w = hw(x)
    if (h is not None and oh + th > h) or (w is not None and ow + tw > w):
        raise ValueError(f"crop_to_bounding_box: height must be >= target + offset "
                         f"(image {h}x{w}, box {oh}+{th} x {ow}+{tw})")
    return unbatched(slicing.slice(x, [0, oh, ow, 0], [-1, th, tw, -1]), added)


def pad_to_bounding_box(image: Any, offset_height: int, offset_width: int,
                        target_height: int, target_width: int) -> Tensor:
    """Zero-pad images to target size with the image at (offset_height, offset_width)."""
    x, added = batched(image, "pad_to_bounding_box")
    oh, ow, th, tw = (int(v) for v in (offset_height, offset_width, target_height,
                                        target_width))
    _check_box("pad_to_bounding_box", offset_height=oh, offset_width=ow)
    h, w = hw(x)
    if h is None or w is None:
        raise ValueError("pad_to_bounding_box: image height and width must be known")
    if th - oh - h < 0 or tw - ow - w < 0:
        raise ValueError("pad_to_bounding_box: target size must be >= image size + offset")
    paddings = [[0, 0], [oh, th - oh - h], [ow, tw - ow - w], [0, 0]]
    return unbatched(reshaping.pad(x, paddings), added)


def resize_with_crop_or_pad(image: Any, target_height: int, target_width: int) -> Tensor:
    """Centre-crop and/or zero-pad images to the target size."""
    x, added = batched(image, "resize_with_crop_or_pad")
    h, w = hw(x)
    th, tw = int(target_height), int(target_width)
    if th <= 0 or tw <= 0 or h is None or w is None:
        raise ValueError("resize_with_crop_or_pad: target sizes must be > 0 and image dims "
                         "known")
    crop_h, crop_w = max((h - th) // 2, 0), max((w - tw) // 2, 0)
    pad_h, pad_w = max((th - h) // 2, 0), max((tw - w) // 2, 0)
    x = crop_to_bounding_box(x, crop_h, crop_w, min(th, h), min(tw, w))
    return unbatched(pad_to_bounding_box(x, pad_h, pad_w, th, tw), added)


def resize_with_pad(image: Any, target_height: int, target_width: int,
                    method: Any = ResizeMethod.BILINEAR, antialias: bool = False) -> Tensor:
    """Resize keeping the aspect ratio, then zero-pad to the target size (float32)."""
    x, added = batched(image, "resize_with_pad")
    h, w = hw(x)
    th, tw = int(target_height), int(target_width)
    if h is None or w is None or th <= 0 or tw <= 0:
        raise ValueError("resize_with_pad: target sizes must be > 0 and image dims known")
    ratio = max(_F32(w) / _F32(tw), _F32(h) / _F32(th))
    fh, fw = _F32(h) / ratio, _F32(w) / ratio
    rh, rw = int(np.floor(fh)), int(np.floor(fw))
    pad_h, pad_w = max(int((th - fh) / 2), 0), max(int((tw - fw) / 2), 0)
    resized = resize(x, [rh, rw], method=method, antialias=antialias)
    return unbatched(pad_to_bounding_box(resized, pad_h, pad_w, th, tw), added)


def central_crop(image: Any, central_fraction: float) -> Tensor:
    """The central region holding `central_fraction` of each spatial dim."""
    fraction = float(central_fraction)
    if fraction <= 0.0 or fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    x, added = batched(image, "central_crop")
    if fraction == 1.0:
        return unbatched(x, added)
    h, w = hw(x)
    if h is None or w is None:
        raise ValueError("central_crop: image height and width must be known")
    top = int((h - h * fraction) / 2)
    left = int((w - w * fraction) / 2)
    return unbatched(crop_to_bounding_box(x, top, left, h - 2 * top, w - 2 * left), added)
