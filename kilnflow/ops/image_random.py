"""tf.image random augmentation: random_* (the global seed / op seed of kf.random) and
stateless_random_* (a shape [2] seed fixes the result, as kf.random.stateless_uniform).

Each draws its parameters as TF does (one scalar per call; one per image for batched flips)
and applies the deterministic op, so gradients flow to the image wherever the op has them.
The drawn numbers come from kilnflow's generators, not TF's Philox stream.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, math, random, reshaping, slicing, stateless_random
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.image import image_rank
from kilnflow.ops.image_color import (adjust_brightness, adjust_contrast, adjust_hue,
                                      adjust_saturation)
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


def _stateful(seed: Optional[int]) -> Callable:
    return lambda shape, minval, maxval, dtype=_dtypes.float32: random.uniform(
        shape, minval, maxval, dtype=dtype, seed=seed)


def _stateless(seed: Any) -> Callable:
    return lambda shape, minval, maxval, dtype=_dtypes.float32: \
        stateless_random.stateless_uniform(shape, seed, minval, maxval, dtype=dtype)


def _flip(image: Any, axis: int, draw: Callable, op: str) -> Tensor:
    image = convert_to_tensor(image)
    rank = image_rank(image, op)
    if rank is None:
        raise ValueError(f"{op}: the image's rank must be known")
    if rank == 3:
        flip = math.less(draw([], 0.0, 1.0), 0.5)
        flips = math.cast(flip, image.dtype)
        return flips * reshaping.reverse(image, [axis]) + (1 - flips) * image
    batch = array.shape(image)[0:1]
    flips = math.cast(math.round(reshaping.reshape(draw(batch, 0.0, 1.0), [-1, 1, 1, 1])),
                      image.dtype)
    return flips * reshaping.reverse(image, [axis + 1]) + (1 - flips) * image


def random_flip_left_right(image: Any, seed: Optional[int] = None) -> Tensor:
    """Mirror each image horizontally with probability 1/2."""
    return _flip(image, 1, _stateful(seed), "random_flip_left_right")


def random_flip_up_down(image: Any, seed: Optional[int] = None) -> Tensor:
    """Mirror each image vertically with probability 1/2."""
    return _flip(image, 0, _stateful(seed), "random_flip_up_down")


def stateless_random_flip_left_right(image: Any, seed: Any) -> Tensor:
    """random_flip_left_right fixed by `seed`."""
    return _flip(image, 1, _stateless(seed), "stateless_random_flip_left_right")


def stateless_random_flip_up_down(image: Any, seed: Any) -> Tensor:
    """random_flip_up_down fixed by `seed`."""
    return _flip(image, 0, _stateless(seed), "stateless_random_flip_up_down")


def _check_range(lower: float, upper: float, op: str) -> None:
    if upper <= lower:
        raise ValueError(f"{op}: upper must be > lower.")
    if lower < 0:
        raise ValueError(f"{op}: lower must be non-negative.")


def _brightness(image: Any, max_delta: float, draw: Callable) -> Tensor:
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, draw([], -max_delta, max_delta))


def _hue(image: Any, max_delta: float, draw: Callable) -> Tensor:
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, draw([], -max_delta, max_delta))


def random_brightness(image: Any, max_delta: float, seed: Optional[int] = None) -> Tensor:
    """adjust_brightness by a delta drawn from [-max_delta, max_delta)."""
    return _brightness(image, float(max_delta), _stateful(seed))


def stateless_random_brightness(image: Any, max_delta: float, seed: Any) -> Tensor:
    """random_brightness fixed by `seed`."""
    return _brightness(image, float(max_delta), _stateless(seed))


def random_contrast(image: Any, lower: float, upper: float,
                    seed: Optional[int] = None) -> Tensor:
    """adjust_contrast by a factor drawn from [lower, upper)."""
    _check_range(float(lower), float(upper), "random_contrast")
    return adjust_contrast(image, _stateful(seed)([], float(lower), float(upper)))


def stateless_random_contrast(image: Any, lower: float, upper: float, seed: Any) -> Tensor:
    """random_contrast fixed by `seed`."""
    _check_range(float(lower), float(upper), "stateless_random_contrast")
    return adjust_contrast(image, _stateless(seed)([], float(lower), float(upper)))


def random_saturation(image: Any, lower: float, upper: float,
                      seed: Optional[int] = None) -> Tensor:
    """adjust_saturation by a factor drawn from [lower, upper)."""
    _check_range(float(lower), float(upper), "random_saturation")
    return adjust_saturation(image, _stateful(seed)([], float(lower), float(upper)))


def stateless_random_saturation(image: Any, lower: float, upper: float, seed: Any) -> Tensor:
    """random_saturation fixed by `seed`."""
    _check_range(float(lower), float(upper), "stateless_random_saturation")
    return adjust_saturation(image, _stateless(seed)([], float(lower), float(upper)))


def random_hue(image: Any, max_delta: float, seed: Optional[int] = None) -> Tensor:
    """adjust_hue by a delta drawn from [-max_delta, max_delta), max_delta <= 0.5."""
    return _hue(image, float(max_delta), _stateful(seed))


def stateless_random_hue(image: Any, max_delta: float, seed: Any) -> Tensor:
    """random_hue fixed by `seed`."""
    return _hue(image, float(max_delta), _stateless(seed))


def _crop(value: Any, size: Any, draw: Callable, op: str) -> Tensor:
    value = convert_to_tensor(value)
    size = np.asarray(getattr(size, "_value", size)).astype(np.int64).reshape(-1)
    rank = value.shape.rank
    if rank is None or len(size) != rank:
        raise ValueError(f"{op}: size must have one entry per dim of value ({value.shape})")
    dims = value.shape.as_list()
    if any(d is not None and s > d for s, d in zip(size, dims)) or np.any(size < 0):
        raise errors.InvalidArgumentError(
            f"{op}: Need value.shape >= size, got {dims} and {size.tolist()}")
    limit = math.cast(array.shape(value), _dtypes.int32) - convert_to_tensor(
        size.astype(np.int32)) + 1
    offset = math.floormod(draw([rank], 0, np.iinfo(np.int32).max, _dtypes.int32), limit)
    return slicing.slice(value, offset, size.astype(np.int32).tolist())


def random_crop(value: Any, size: Any, seed: Optional[int] = None,
                name: Optional[str] = None) -> Tensor:
    """A window of `size` at a uniformly drawn offset."""
    return _crop(value, size, _stateful(seed), "random_crop")


def stateless_random_crop(value: Any, size: Any, seed: Any,
                          name: Optional[str] = None) -> Tensor:
    """random_crop fixed by `seed`."""
    return _crop(value, size, _stateless(seed), "stateless_random_crop")


# ---------------------------------------------------------------- distorted bounding boxes

def _random_crop_rect(rng: np.random.Generator, w: int, h: int, min_area: float,
                      max_area: float, aspect: float) -> Optional[tuple]:
    """TF's GenerateRandomCrop: a height drawn between the area bounds, width by aspect."""
    height = int(np.rint(np.sqrt(min_area / aspect)))
    max_height = int(np.rint(np.sqrt(max_area / aspect)))
    if np.rint(max_height * aspect) > w:
        max_height = int((w + 0.5 - 1e-7) / aspect)
    max_height = min(max_height, h)
    height = min(height, max_height)
    if height < max_height:
        height += int(rng.integers(0, max_height - height + 1))
    width = int(np.rint(height * aspect))
    if width * height < min_area:
        height += 1
        width = int(np.rint(height * aspect))
    if width * height > max_area:
        height -= 1
        width = int(np.rint(height * aspect))
    area = width * height
    if area < min_area or area > max_area or width > w or height > h or width <= 0 or \
            height <= 0:
        return None
    y = int(rng.integers(0, h - height)) if height < h else 0
    x = int(rng.integers(0, w - width)) if width < w else 0
    return y, x, height, width


def _covers(rect: tuple, boxes: np.ndarray, minimum: float) -> bool:
    y, x, hh, ww = rect
    if hh * ww < 1.0:
        return False
    for top, left, bottom, right in boxes:
        area = (bottom - top) * (right - left)
        if area < 1.0:
            continue
        inter = max(0.0, min(y + hh, bottom) - max(y, top)) * max(0.0, min(x + ww, right) -
                                                                    max(x, left))
        if inter / area >= minimum:
            return True
    return False


def _sdbb_kernel(image_size: np.ndarray, boxes: np.ndarray, seed: np.ndarray,
                 min_object_covered: np.ndarray, *, aspect_ratio_range: tuple,
                 area_range: tuple, max_attempts: int, use_image: bool) -> tuple:
    size = np.asarray(image_size).reshape(-1)
    if size.size != 3 or np.any(size <= 0):
        raise errors.InvalidArgumentError(errors.with_location(
            f"SampleDistortedBoundingBoxV2: image_size must be 3 positive dims, got "
            f"{size.tolist()}"))
    h, w = int(size[0]), int(size[1])
    flat = np.asarray(boxes, np.float64).reshape(-1, 4)
    if flat.size == 0:
        if not use_image:
            raise errors.InvalidArgumentError(errors.with_location(
                "SampleDistortedBoundingBoxV2: no bounding boxes provided as input. One must "
                "enable use_image_if_no_bounding_boxes if you wish to not provide any boxes."))
        flat = np.asarray([[0.0, 0.0, 1.0, 1.0]])
    if np.any(flat < 0) or np.any(flat > 1):
        raise errors.InvalidArgumentError(errors.with_location(
            "SampleDistortedBoundingBoxV2: all bounding box coordinates must be in [0.0, 1.0]"))
    pixels = flat * np.asarray([h, w, h, w])
    rng = np.random.default_rng(np.asarray(seed, np.int64).reshape(-1) & 0xFFFFFFFF)
    lo_ar, hi_ar = aspect_ratio_range
    rect = None
    for _ in range(max_attempts):
        aspect = rng.random() * (hi_ar - lo_ar) + lo_ar
        candidate = _random_crop_rect(rng, w, h, area_range[0] * h * w, area_range[1] * h * w,
                                      aspect)
        if candidate is not None and _covers(candidate, pixels, float(min_object_covered)):
            rect = candidate
            break
    y, x, hh, ww = rect or (0, 0, h, w)
    begin = np.asarray([y, x, 0], image_size.dtype)
    extent = np.asarray([hh, ww, -1], image_size.dtype)
    box = np.asarray([[[y / h, x / w, (y + hh) / h, (x + ww) / w]]], np.float32)
    return begin, extent, box


SDBB = defop("StatelessSampleDistortedBoundingBox", multi_output=True, same_dtype=False,
             dtypes=(_dtypes.uint8, _dtypes.int8, _dtypes.int16, _dtypes.int32, _dtypes.int64),
             kernel=_sdbb_kernel,
             shape=lambda size, boxes, seed, covered, *, aspect_ratio_range, area_range,
             max_attempts, use_image: [TensorSpec([3], size.dtype), TensorSpec([3], size.dtype),
                                       TensorSpec([1, 1, 4], _dtypes.float32)])


def stateless_sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: Any,
                                            min_object_covered: Any = 0.1,
                                            aspect_ratio_range: Any = None,
                                            area_range: Any = None, max_attempts: Any = None,
                                            use_image_if_no_bounding_boxes: Any = None,
                                            name: Optional[str] = None) -> tuple:
    """(begin, size, bboxes) of a random crop covering min_object_covered of some box,
    fixed by `seed` (TF's rejection sampler; the numbers are not TF's Philox stream)."""
    aspect = tuple(float(v) for v in (aspect_ratio_range or (0.75, 1.33)))
    area = tuple(float(v) for v in (area_range or (0.05, 1.0)))
    if len(aspect) != 2 or len(area) != 2 or aspect[0] <= 0 or aspect[0] > aspect[1] or \
            area[0] <= 0 or area[0] > area[1] or area[1] > 1:
        raise ValueError("sample_distorted_bounding_box: aspect_ratio_range and area_range "
                         "must be increasing positive pairs, area_range within (0, 1]")
    attrs = {"aspect_ratio_range": aspect, "area_range": area,
             "max_attempts": int(max_attempts or 100),
             "use_image": bool(use_image_if_no_bounding_boxes)}
    size = convert_to_tensor(image_size)
    args = (size, convert_to_tensor(bounding_boxes, _dtypes.float32),
            stateless_random.seed_tensor(seed),
            convert_to_tensor(min_object_covered, _dtypes.float32))
    return bind(SDBB, args, attrs, name=name)


def sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any,
                                  seed: Optional[int] = None, min_object_covered: Any = 0.1,
                                  aspect_ratio_range: Any = None, area_range: Any = None,
                                  max_attempts: Any = None,
                                  use_image_if_no_bounding_boxes: Any = None,
                                  name: Optional[str] = None) -> tuple:
    """sample_distorted_bounding_box with a seed drawn from the global/op seed."""
    key = random.uniform([2], 0, np.iinfo(np.int32).max, dtype=_dtypes.int32, seed=seed)
    return stateless_sample_distorted_bounding_box(
        image_size, bounding_boxes, key, min_object_covered, aspect_ratio_range, area_range,
        max_attempts, use_image_if_no_bounding_boxes, name=name)
