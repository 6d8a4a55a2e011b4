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
from kilnflow.ops import array, math, random, reshaping, slicing, stateless_random
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.image import image_rank
from kilnflow.ops.image_color import (adjust_brightness, adjust_contrast, adjust_hue,
                                      adjust_saturation)
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
