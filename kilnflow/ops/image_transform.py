"""ImageProjectiveTransformV3: resample images through per-image projective transforms.

Each transform is 8 numbers [a0, a1, a2, b0, b1, b2, c0, c1]; output pixel (x, y) reads
the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, as TF's
kernel does. Coordinates outside the image are folded back by `fill_mode` (reflect, wrap,
nearest) or read as `fill_value` (constant). The result is linear in the images, so the
kernel builds, per image, a list of (input index, weight) pairs per output pixel; the
gradient scatters through the same pairs (the *Grad op), whose own gradient is the forward
op again. Keras's affine augmentation layers (RandomRotation, RandomZoom, ...) run on it.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import math
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_FILL_MODES = ("REFLECT", "WRAP", "CONSTANT", "NEAREST")
_INTERPOLATIONS = ("NEAREST", "BILINEAR")


def _fold(coord: np.ndarray, n: int, mode: str) -> np.ndarray:
    """Fold input coordinates along an axis of length n back into it (TF's map_coordinate)."""
    if mode == "CONSTANT":
        return coord  # out-of-range reads become fill_value
    if n <= 1:
        return np.zeros_like(coord)
    if mode == "REFLECT":  # d c b a | a b c d | d c b a
        period = 2.0 * n
        c = np.mod(coord, period)  # in [0, 2n)
        c = np.where(c >= n, period - c - 1.0, c)
    elif mode == "WRAP":  # a b c d | a b c d | a b c d
        c = np.mod(coord, float(n))
        # TF's wrap keeps a coordinate in (n - 1, n) there (its bilinear reads then use the
        # fill value for the upper neighbour), so only coordinates outside [0, n-1] move.
        inside = (coord >= 0) & (coord <= n - 1)
        low = coord < 0
        sz = float(n - 1)
        lo_c = coord + n * (np.floor(-coord / sz) + 1.0)
        hi_c = coord - n * np.floor(coord / sz)
        c = np.where(inside, coord, np.where(low, lo_c, hi_c))
    else:  # NEAREST: clamp
        c = coord
    return np.clip(c, 0.0, n - 1.0)


def _taps(shape: tuple, transform: np.ndarray, out_hw: tuple, interpolation: str,
          fill_mode: str) -> list:
    """[(flat input index, weight, valid)] per output pixel for one image's transform."""
    h, w = shape
    oh, ow = out_hw
    y, x = np.meshgrid(np.arange(oh, dtype=np.float32), np.arange(ow, dtype=np.float32),
                       indexing="ij")
    a0, a1, a2, b0, b1, b2, c0, c1 = transform.astype(np.float32)
    k = c0 * x + c1 * y + np.float32(1)
    bad = k == 0
    k = np.where(bad, np.float32(1), k)
    in_x = _fold((a0 * x + a1 * y + a2) / k, w, fill_mode)
    in_y = _fold((b0 * x + b1 * y + b2) / k, h, fill_mode)

    def tap(yy: np.ndarray, xx: np.ndarray, weight: np.ndarray) -> tuple:
        valid = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w) & ~bad
        index = np.clip(yy, 0, h - 1).astype(np.int64) * w + np.clip(xx, 0, w - 1).astype(
            np.int64)
        return index.ravel(), weight.ravel().astype(np.float64), valid.ravel()

    if interpolation == "NEAREST":  # std::round: halves away from zero
        ry = np.sign(in_y) * np.floor(np.abs(in_y) + 0.5)
        rx = np.sign(in_x) * np.floor(np.abs(in_x) + 0.5)
        return [tap(ry, rx, np.ones_like(in_x))]
    fy, fx = np.floor(in_y), np.floor(in_x)
    dy, dx = in_y - fy, in_x - fx
    return [tap(fy, fx, (1 - dy) * (1 - dx)), tap(fy, fx + 1, (1 - dy) * dx),
            tap(fy + 1, fx, dy * (1 - dx)), tap(fy + 1, fx + 1, dy * dx)]


def _check(images: np.ndarray, transforms: np.ndarray) -> None:
    if transforms.ndim != 2 or transforms.shape[1] != 8:
        raise errors.InvalidArgumentError(
            None, None, f"ImageProjectiveTransformV3: transforms must be [batch, 8] or [1, 8], "
            f"got shape {list(transforms.shape)}")
    if transforms.shape[0] not in (1, images.shape[0]):
        raise errors.InvalidArgumentError(
            None, None, f"ImageProjectiveTransformV3: {transforms.shape[0]} transforms for "
            f"{images.shape[0]} images")


def _kernel(images: np.ndarray, transforms: np.ndarray, fill_value: np.ndarray, *,
            output_shape: tuple, interpolation: str, fill_mode: str) -> np.ndarray:
    _check(images, transforms)
    b, h, w, c = images.shape
    fill = float(np.asarray(fill_value))
    if images.dtype.kind in "iu":  # TF casts the fill value and the result to the image type
        fill = float(np.trunc(fill))
    out = np.empty((b, output_shape[0], output_shape[1], c), np.float64)
    for i in range(b):
        flat = images[i].reshape(h * w, c).astype(np.float64)
        acc = np.zeros((output_shape[0] * output_shape[1], c))
        t = transforms[min(i, transforms.shape[0] - 1)]
        for index, weight, valid in _taps((h, w), t, output_shape, interpolation, fill_mode):
            value = np.where(valid[:, None], flat[index] if h * w else fill, fill)
            acc += weight[:, None] * value
        out[i] = acc.reshape(output_shape[0], output_shape[1], c)
    if images.dtype.kind in "iu":
        info = np.iinfo(images.dtype)
        return np.clip(np.trunc(out), info.min, info.max).astype(images.dtype)
    return out.astype(images.dtype)


def _grad_kernel(dy: np.ndarray, images: np.ndarray, transforms: np.ndarray, *,
                 output_shape: tuple, interpolation: str, fill_mode: str) -> np.ndarray:
    b, h, w, c = images.shape
    dx = np.zeros((b, h * w, c), np.float64)
    for i in range(b):
        g = dy[i].reshape(-1, c).astype(np.float64)
        t = transforms[min(i, transforms.shape[0] - 1)]
        for index, weight, valid in _taps((h, w), t, output_shape, interpolation, fill_mode):
            np.add.at(dx[i], index[valid], weight[valid, None] * g[valid])
    return dx.reshape(images.shape).astype(images.dtype)


def _rule(images: Any, transforms: Any, fill_value: Any, *, output_shape: tuple,
          interpolation: str, fill_mode: str) -> TensorSpec:
    if images.shape.rank is not None and images.shape.rank != 4:
        raise ValueError(f"ImageProjectiveTransformV3: images must be 4-D, got shape "
                         f"{images.shape}")
    if transforms.shape.rank is not None and transforms.shape.rank != 2:
        raise ValueError(f"ImageProjectiveTransformV3: transforms must be 2-D, got shape "
                         f"{transforms.shape}")
    dims = [None] * 4 if images.shape.rank is None else images.shape.as_list()
    return TensorSpec([dims[0], output_shape[0], output_shape[1], dims[3]], images.dtype)


def _grad_rule(dy: Any, images: Any, transforms: Any, *, output_shape: tuple,
               interpolation: str, fill_mode: str) -> TensorSpec:
    return TensorSpec(images.shape, images.dtype)


def _grad(op: Any, dy: Any) -> list:
    images, transforms, _ = op.inputs
    if not images.dtype.is_floating:
        return [None, None, None]
    return [bind(TRANSFORM_GRAD, (dy, images, transforms), dict(op.attrs)), None, None]


def _grad_of_grad(op: Any, ddx: Any) -> list:
    dy, _, transforms = op.inputs
    fill = convert_to_tensor(0.0, dtype=_dtypes.float32)
    return [bind(TRANSFORM, (ddx, transforms, fill), dict(op.attrs)), None, None]


_TYPES = (_dtypes.uint8, _dtypes.int32, _dtypes.int64, _dtypes.float16, _dtypes.float32,
          _dtypes.float64)
TRANSFORM = defop("ImageProjectiveTransformV3", shape=_rule, kernel=_kernel, grad=_grad,
                  same_dtype=False, dtypes=_TYPES)
TRANSFORM_GRAD = defop("ImageProjectiveTransformV3Grad", shape=_grad_rule, kernel=_grad_kernel,
                       grad=_grad_of_grad, same_dtype=False,
                       dtypes=(_dtypes.float16, _dtypes.float32, _dtypes.float64))


def image_projective_transform_v3(images: Any, transforms: Any, output_shape: Any,
                                  fill_value: Any = 0.0, interpolation: str = "BILINEAR",
                                  fill_mode: str = "CONSTANT",
                                  name: Optional[str] = None) -> Tensor:
    """tf.raw_ops.ImageProjectiveTransformV3: images [batch, h, w, c] resampled through
    `transforms` ([batch, 8] or [1, 8], float32) into `output_shape` = [new_h, new_w].

    interpolation: 'NEAREST' or 'BILINEAR'; fill_mode: 'REFLECT', 'WRAP', 'CONSTANT' (reads
    outside the image give `fill_value`) or 'NEAREST' (edge pixels repeat).
    """
    interpolation, fill_mode = str(interpolation).upper(), str(fill_mode).upper()
    if interpolation not in _INTERPOLATIONS:
        raise errors.InvalidArgumentError(
            None, None, f"ImageProjectiveTransformV3: invalid interpolation {interpolation!r}")
    if fill_mode not in _FILL_MODES:
        raise errors.InvalidArgumentError(
            None, None, f"ImageProjectiveTransformV3: invalid fill_mode {fill_mode!r}")
    images = convert_to_tensor(images)
    transforms = math.cast(convert_to_tensor(transforms), _dtypes.float32)
    size = output_shape
    if not isinstance(size, (list, tuple)):
        size = rules.constant_value(convert_to_tensor(size))
        if size is None:
            raise ValueError("ImageProjectiveTransformV3: output_shape must be known when the "
                             "graph is built")
    size = tuple(int(s) for s in np.asarray(size).ravel())
    if len(size) != 2 or min(size) <= 0:  # TF: "output dimensions must be positive"
        raise errors.InvalidArgumentError(
            None, None, f"ImageProjectiveTransformV3: `output_shape` must be 2 positive ints "
            f"(output dimensions must be positive), got {list(size)}")
    fill = convert_to_tensor(fill_value, dtype=_dtypes.float32)
    return bind(TRANSFORM, (images, transforms, fill),
                {"output_shape": size, "interpolation": interpolation, "fill_mode": fill_mode},
                name=name)
