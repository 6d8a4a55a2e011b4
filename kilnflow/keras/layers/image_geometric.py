"""Geometric image layers as Keras 3 has them: Resizing, RandomCrop, and the affine
augmentations RandomRotation, RandomZoom, RandomTranslation and RandomShear.

The affine layers build one [a0 a1 a2 b0 b1 b2 0 0] matrix per image (mapping output pixels
to input pixels) and resample through ImageProjectiveTransformV3 with the layer's
`fill_mode` ('reflect', 'wrap', 'constant', 'nearest') and `interpolation` ('bilinear',
'nearest'), as Keras's TensorFlow backend does. At inference they return their input.
"""
from __future__ import annotations

import math as pymath
from typing import Any, Optional

from kilnflow.keras.layers.image_base import ImageLayer, factor_pair, saturate_to
from kilnflow.keras.layers.layer_utils import image_sizes
from kilnflow.ops import array, joining, math as kmath, reshaping
from kilnflow.ops.image import resize
from kilnflow.ops.image_transform import image_projective_transform_v3
from kilnflow.shapes import TensorShape

_FILL_MODES = ("reflect", "wrap", "constant", "nearest")
_AFFINE_INTERPOLATIONS = ("nearest", "bilinear")
_RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def _float_dim(images: Any, axis: int) -> Any:
    """A spatial size as float32 (a Python float when static)."""
    dim = images.shape[axis]
    return float(dim) if dim is not None else kmath.cast(array.shape(images)[axis], "float32")


def _rows(*columns: Any) -> Any:
    """[batch, 8] transforms from eight [batch] columns."""
    return joining.stack([kmath.cast(c, "float32") for c in columns], 1)


class AffineLayer(ImageLayer):
    """An augmentation that resamples each image through a random affine matrix."""
    supports_jit = False  # as in Keras 3: compile(jit_compile=True) warns and runs without

    def __init__(self, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: Optional[int] = None, fill_value: float = 0.0,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one "
                                      f"{_FILL_MODES}.")
        if interpolation not in _AFFINE_INTERPOLATIONS:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of "
                                      f"one {_AFFINE_INTERPOLATIONS}.")
        self.fill_mode, self.interpolation = fill_mode, interpolation
        self.fill_value = fill_value

    def matrices(self, images: Any) -> Any:
        raise NotImplementedError

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        images = self.as_compute_dtype(images)
        dims = images.shape.as_list()
        size = dims[1:3] if None not in dims[1:3] else array.shape(images)[1:3]
        out = image_projective_transform_v3(
            images, self.matrices(images), size, fill_value=self.fill_value,
            interpolation=self.interpolation, fill_mode=self.fill_mode)
        return reshaping.reshape(out, array.shape(images)) if None in dims[1:3] else out

    def get_config(self) -> dict:
        return {**super().get_config(), "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "interpolation": self.interpolation}


def affine_matrix(angle_deg: Any, height: Any, width: Any, scale: Any = 1.0,
                  shear_x: Any = 0.0, shear_y: Any = 0.0) -> Any:
    """Keras's rotation-about-the-centre matrix (scale, shear and rotation composed)."""
    theta = angle_deg * (pymath.pi / 180.0)
    cos, sin = kmath.cos(theta), kmath.sin(theta)
    cx, cy = 0.5 * (width - 1.0), 0.5 * (height - 1.0)
    a0 = scale * (cos + shear_x * sin)
    a1 = scale * (-sin + shear_x * cos)
    b0 = scale * (shear_y * cos + sin)
    b1 = scale * (shear_y * -sin + cos)
    zero = array.zeros_like(theta)
    return _rows(a0, a1, cx - cx * a0 - cy * a1, b0, b1, cy - cx * b0 - cy * b1, zero, zero)


class RandomRotation(AffineLayer):
    """Rotates each image by an angle drawn from `factor` (fractions of 2 pi) about its
    centre; a single factor f gives [-f, f]."""

    def __init__(self, factor: Any, fill_mode: str = "reflect", interpolation: str = "bilinear",
                 seed: Optional[int] = None, fill_value: float = 0.0,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = factor_pair(factor, "factor")
        self._factor_arg = factor

    def matrices(self, images: Any) -> Any:
        angle = self.uniform(self.batch(images), self.factor[0] * 360.0, self.factor[1] * 360.0)
        return affine_matrix(angle, _float_dim(images, 1), _float_dim(images, 2))

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


def _signed_pair(factor: Any, name: str, low: float) -> tuple:
    """RandomZoom/Translation factors: in [-1, 1] (zoom excludes -1), sorted pairs, f -> ±f."""
    values = factor if isinstance(factor, (tuple, list)) else [factor]
    if isinstance(factor, (tuple, list)) and len(factor) != 2 or not all(
            isinstance(v, (int, float)) for v in values):
        raise ValueError(f"The `{name}` argument should be a number (or a list of two numbers) "
                         f"in the range [-1.0, 1.0]. Received: {name}={factor}")
    for v in values:
        if v > 1.0 or (v <= -1.0 if low == -1.0 else v < -1.0):
            raise ValueError(f"The `{name}` argument should be a number (or a list of two "
                             f"numbers) in the range [-1.0, 1.0]. Received: input_number={v}")
    if isinstance(factor, (tuple, list)):
        return tuple(sorted(float(v) for v in factor))
    return -abs(float(factor)), abs(float(factor))


class RandomZoom(AffineLayer):
    """Zooms each image about its centre: a height factor f in [lower, upper] (negative
    zooms in) scales the sampling grid by 1 + f; `width_factor` None keeps the aspect."""

    def __init__(self, height_factor: Any, width_factor: Any = None, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: Optional[int] = None,
                 fill_value: float = 0.0, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height = _signed_pair(height_factor, "height_factor", -1.0)
        self._width = None if width_factor is None else \
            _signed_pair(width_factor, "width_factor", -1.0)

    def matrices(self, images: Any) -> Any:
        batch = self.batch(images)
        zy = self.uniform(batch, 1.0 + self._height[0], 1.0 + self._height[1])
        zx = zy if self._width is None else \
            self.uniform(batch, 1.0 + self._width[0], 1.0 + self._width[1])
        h, w = _float_dim(images, 1), _float_dim(images, 2)
        zero = array.zeros_like(zx)
        return _rows(zx, zero, (w - 1.0) / 2.0 * (1.0 - zx), zero, zy,
                     (h - 1.0) / 2.0 * (1.0 - zy), zero, zero)

    def get_config(self) -> dict:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class RandomTranslation(AffineLayer):
    """Shifts each image by fractions of its height and width drawn from the factors."""

    def __init__(self, height_factor: Any, width_factor: Any, fill_mode: str = "reflect",
                 interpolation: str = "bilinear", seed: Optional[int] = None,
                 fill_value: float = 0.0, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor, self.width_factor = height_factor, width_factor
        self._height = _signed_pair(height_factor, "height_factor", -1.01)
        self._width = _signed_pair(width_factor, "width_factor", -1.01)

    def matrices(self, images: Any) -> Any:
        batch = self.batch(images)
        dy = self.uniform(batch, *self._height) * _float_dim(images, 1)
        dx = self.uniform(batch, *self._width) * _float_dim(images, 2)
        one, zero = array.ones_like(dx), array.zeros_like(dx)
        return _rows(one, zero, -dx, zero, one, -dy, zero, zero)

    def get_config(self) -> dict:
        return {**super().get_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class RandomShear(AffineLayer):
    """Shears each image along x and y by factors drawn from [0, 1] ranges, each with a
    random sign (Keras's matrix: [1, sx, 0, sy, 1, 0, 0, 0], about the top-left corner)."""

    def __init__(self, x_factor: Any = 0.0, y_factor: Any = 0.0, interpolation: str = "bilinear",
                 fill_mode: str = "reflect", fill_value: float = 0.0,
                 data_format: Optional[str] = None, seed: Optional[int] = None, **kwargs: Any):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.x_factor = factor_pair(x_factor, "x_factor", (0.0, 1.0))
        self.y_factor = factor_pair(y_factor, "y_factor", (0.0, 1.0))
        if isinstance(x_factor, (int, float)):
            self.x_factor = (-abs(float(x_factor)), abs(float(x_factor)))
        if isinstance(y_factor, (int, float)):
            self.y_factor = (-abs(float(y_factor)), abs(float(y_factor)))

    def matrices(self, images: Any) -> Any:
        batch = self.batch(images)
        sign = array.where(self.uniform(batch, 0.0, 1.0) > 0.5, -1.0, 1.0)
        sy = self.uniform(batch, *self.y_factor) * sign
        sx = self.uniform(batch, *self.x_factor) * sign
        one, zero = array.ones_like(sx), array.zeros_like(sx)
        return _rows(one, sx, zero, sy, one, zero, zero, zero)

    def get_config(self) -> dict:
        return {**super().get_config(), "x_factor": self.x_factor, "y_factor": self.y_factor}


def crop_or_pad_to_aspect(images: Any, height: int, width: int, crop: bool, pad: bool,
                          fill_value: float) -> Any:
    """Keras's resize pre-step: centre-crop (or symmetrically pad with `fill_value`) the
    images to the target aspect ratio. Needs static image sizes."""
    h, w = images.shape[1], images.shape[2]
    if h is None or w is None:
        raise ValueError("Resizing: crop_to_aspect_ratio / pad_to_aspect_ratio need known image "
                         f"sizes, got {images.shape}")
    if crop:
        ch = max(min(h, int(float(w * height) / width)), 1)
        cw = max(min(w, int(float(h * width) / height)), 1)
        top, left = int((h - ch) / 2), int((w - cw) / 2)
        return images[:, top:top + ch, left:left + cw, :]
    if not pad:
        return images
    ph = max(h, int(float(w * height) / width))
    pw = max(w, int(float(h * width) / height))
    top, left = int((ph - h) / 2), int((pw - w) / 2)
    if top <= 0 and left <= 0:
        return images
    # Keras pads `top` rows (or `left` columns) on both sides, so an odd gap loses a line.
    paddings = [[0, 0], [top, top], [left, left], [0, 0]]
    return reshaping.pad(images, paddings, constant_values=fill_value)


class Resizing(ImageLayer):
    """Resizes images to height x width (any kf.image.resize interpolation), optionally
    cropping or padding to the target aspect ratio first. Applied in training and inference."""

    def __init__(self, height: int, width: int, interpolation: str = "bilinear",
                 crop_to_aspect_ratio: bool = False, pad_to_aspect_ratio: bool = False,
                 fill_mode: str = "constant", fill_value: float = 0.0, antialias: bool = False,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(data_format=data_format, **kwargs)
        if interpolation not in _RESIZE_INTERPOLATIONS:
            raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                             f"{_RESIZE_INTERPOLATIONS}. Received: interpolation={interpolation}")
        if fill_mode != "constant":
            raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is "
                             f"supported. Received: fill_mode={fill_mode}")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be "
                             "`True`.")
        self.height, self.width = image_sizes("Resizing", height, width)
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.antialias = bool(antialias)

    def transform(self, images: Any, training: Any) -> Any:
        source = crop_or_pad_to_aspect(images, self.height, self.width, self.crop_to_aspect_ratio,
                                       self.pad_to_aspect_ratio, self.fill_value)
        out = resize(source, [self.height, self.width], method=self.interpolation,
                     antialias=self.antialias)
        return saturate_to(out, images.dtype)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        h_axis = len(shape) - (2 if self.data_format == "channels_first" else 3)
        shape[h_axis], shape[h_axis + 1] = self.height, self.width
        return TensorShape(shape)

    def get_config(self) -> dict:
        config = {**super().get_config(), "height": self.height, "width": self.width,
                  "interpolation": self.interpolation,
                  "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                  "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                  "fill_value": self.fill_value, "antialias": self.antialias}
        config.pop("seed")
        return config


class RandomCrop(ImageLayer):
    """In training, a random height x width window of the batch (one offset for the whole
    batch, as Keras draws it); images no larger than the window are centre-cropped to its
    aspect ratio and resized. At inference Keras 3 returns the images unchanged."""
    supports_jit = False  # as in Keras 3: compile(jit_compile=True) warns and runs without

    def __init__(self, height: int, width: int, seed: Optional[int] = None,
                 data_format: Optional[str] = None, name: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)
        self.height, self.width = image_sizes("RandomCrop", height, width)

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        images = self.as_compute_dtype(images)
        h, w = images.shape[1], images.shape[2]
        if h is None or w is None:
            raise ValueError("RandomCrop requires the input to have a fully defined height and "
                             f"width. Received: images.shape={images.shape}")
        if h > self.height and w > self.width:
            one = reshaping.reshape(1, [1])
            top = kmath.cast(self.uniform(one, 0.0, float(h - self.height + 1)), "int32")[0]
            left = kmath.cast(self.uniform(one, 0.0, float(w - self.width + 1)), "int32")[0]
            from kilnflow.ops.slicing import slice as kslice
            return kslice(images, joining.stack([0, top, left, 0]),
                          [-1, self.height, self.width, -1])
        # Keras takes the offsets of a centred aspect-ratio crop but slices the target size
        # from there (clipped by the image), then resizes what it got.
        ch = max(min(h, int(float(w * self.height) / self.width)), 1)
        cw = max(min(w, int(float(h * self.width) / self.height)), 1)
        top, left = int((h - ch) / 2), int((w - cw) / 2)
        cropped = images[:, top:top + self.height, left:left + self.width, :]
        if cropped.shape[1] == self.height and cropped.shape[2] == self.width:
            return cropped
        return kmath.cast(resize(cropped, [self.height, self.width]), self._dtype)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        h_axis = len(shape) - (2 if self.data_format == "channels_first" else 3)
        shape[h_axis], shape[h_axis + 1] = self.height, self.width
        return TensorShape(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width}


def homography(start: Any, end: Any) -> Any:
    """[batch, 8] projective transforms mapping each `end` corner (output pixel) to its
    `start` corner (input pixel): the 8x8 linear system of the four point pairs, solved."""
    rows, rhs = [], []
    for i in range(4):
        sx, sy, ex, ey = start[:, i, 0], start[:, i, 1], end[:, i, 0], end[:, i, 1]
        one, zero = array.ones_like(ex), array.zeros_like(ex)
        rows.append(joining.stack([ex, ey, one, zero, zero, zero, -sx * ex, -sx * ey], -1))
        rows.append(joining.stack([zero, zero, zero, ex, ey, one, -sy * ex, -sy * ey], -1))
        rhs += [sx, sy]
    from kilnflow.ops.linalg import matrix_solve
    solution = matrix_solve(joining.stack(rows, 1), reshaping.expand_dims(
        joining.stack(rhs, -1), -1))
    return reshaping.squeeze(solution, [-1])


class RandomPerspective(ImageLayer):
    """Moves each image's four corners by up to `scale` / 2 of their coordinates (drawn per
    corner and axis) and resamples through the homography between old and new corners,
    with probability drawn from `factor`; outside pixels read `fill_value`."""
    supports_jit = False  # as in Keras 3: compile(jit_compile=True) warns and runs without

    def __init__(self, factor: Any = 1.0, scale: float = 1.0, interpolation: str = "bilinear",
                 fill_value: float = 0.0, seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        from kilnflow.keras.layers.image_base import factor_pair as _pair
        self.factor = _pair(factor, "factor", (0.0, 1.0))
        if interpolation not in _AFFINE_INTERPOLATIONS:
            raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                             f"{_AFFINE_INTERPOLATIONS}. Received: interpolation={interpolation}")
        self.scale, self.interpolation, self.fill_value = float(scale), interpolation, fill_value

    def transform(self, images: Any, training: Any) -> Any:
        if not training:
            return images
        images = self.as_compute_dtype(images)
        h, w = images.shape[1], images.shape[2]
        if h is None or w is None:
            raise ValueError(f"RandomPerspective needs known image sizes, got {images.shape}")
        batch = self.batch(images)
        probability = self.uniform(batch, *self.factor)
        apply = self.uniform(batch, 0.0, 1.0) < probability
        shift = self.uniform(batch, -0.5 * self.scale, 0.5 * self.scale, dtype=images.dtype,
                             extra=(4, 2))
        corners = [[0.0, 0.0], [w - 1.0, 0.0], [0.0, h - 1.0], [w - 1.0, h - 1.0]]
        start = array.zeros_like(shift) + reshaping.reshape(
            kmath.cast(corners, images.dtype), [1, 4, 2])
        out = image_projective_transform_v3(
            images, homography(start, start + start * shift), [h, w],
            fill_value=self.fill_value, interpolation=self.interpolation, fill_mode="constant")
        keep = reshaping.broadcast_to(reshaping.reshape(apply, [-1, 1, 1, 1]),
                                      array.shape(images))
        return array.where(keep, out, images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_value": self.fill_value}


def map_coordinates_2d(images: Any, ys: Any, xs: Any, order: int, fill_mode: str,
                       fill_value: float) -> Any:
    """keras.ops.image.map_coordinates of each [h, w] channel of [batch, h, w, c] images at
    [batch, h, w] coordinates (order 0: nearest, rounding half to even; order 1: linear),
    with its fill modes constant, nearest, wrap and reflect (Keras's "mirror" can index
    past the edge in its TensorFlow backend, so it is not offered)."""
    from kilnflow.ops import slicing
    if fill_mode not in _FILL_MODES:
        raise ValueError(f"map_coordinates: fill_mode must be one of {_FILL_MODES}, got "
                         f"{fill_mode!r}")
    h, w = images.shape[1], images.shape[2]
    dtype = ys.dtype

    def nodes(coord: Any) -> list:
        if order == 0:
            return [(kmath.cast(kmath.round(coord), "int32"), None)]
        lower = kmath.floor(coord)
        upper_weight = coord - lower
        index = kmath.cast(lower, "int32")
        return [(index, 1.0 - upper_weight), (index + 1, upper_weight)]

    def fold(index: Any, size: int) -> tuple:
        if fill_mode == "constant":
            valid = kmath.logical_and(index >= 0, index < size)
            return kmath.clip_by_value(index, 0, size - 1), valid
        if fill_mode == "nearest":
            return kmath.clip_by_value(index, 0, size - 1), None
        if fill_mode == "wrap":
            return kmath.floormod(index, size), None
        folded = kmath.floormod(kmath.abs(index), 2 * size)  # reflect
        under = folded < size
        return array.where(under, folded, 2 * size - folded - 1), None

    batch = array.shape(images)[0]
    base = reshaping.reshape(kmath.cast(array.range(batch), "int32") * (h * w), [-1, 1, 1])
    flat = reshaping.reshape(images, [-1, images.shape[3]])
    out = None
    for yi, wy in nodes(ys):
        for xi, wx in nodes(xs):
            yy, vy = fold(yi, h)
            xx, vx = fold(xi, w)
            value = kmath.cast(slicing.gather(flat, base + yy * w + xx), dtype)
            if fill_mode == "constant":
                ok = reshaping.expand_dims(kmath.logical_and(vy, vx), -1)
                value = array.where(reshaping.broadcast_to(ok, array.shape(value)), value,
                                    kmath.cast(array.zeros_like(value) + fill_value, dtype))
            weight = None if wy is None else reshaping.expand_dims(wy * wx, -1)
            term = value if weight is None else weight * value
            out = term if out is None else out + term
    if images.dtype.is_integer:
        out = kmath.round(out)
    return kmath.cast(out, images.dtype)


class RandomElasticTransform(ImageLayer):
    """Elastic distortion (Simard et al., 2003) as Keras 3 does it: Gaussian noise smoothed
    by a Gaussian of sigma = 0.05 min(h, w) s, scaled by alpha = 0.1 max(h, w) s (s drawn
    from `scale`), displaces every pixel; resampled with `interpolation` and `fill_mode`,
    applied with a probability drawn from `factor`, clipped to `value_range`. As in Keras,
    the x and y displacement fields are the same draw."""

    def __init__(self, factor: Any = 1.0, scale: Any = 1.0, interpolation: str = "bilinear",
                 fill_mode: str = "reflect", fill_value: float = 0.0,
                 value_range: Any = (0, 255), seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        from kilnflow.keras.layers.image_base import factor_pair as _pair
        self.factor = _pair(factor, "factor", (0.0, 1.0))
        self.scale = _pair(scale, "scale", (0.0, 1.0))
        if interpolation not in _AFFINE_INTERPOLATIONS:
            raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of "
                                      f"one {_AFFINE_INTERPOLATIONS}.")
        if fill_mode not in _FILL_MODES:
            raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one "
                                      f"{_FILL_MODES}.")
        self.interpolation, self.fill_mode, self.fill_value = interpolation, fill_mode, \
            fill_value
        self.value_range = list(value_range)

    def transform(self, images: Any, training: Any) -> Any:
        if not training or self.scale[1] == 0 or self.factor[1] == 0:
            return images
        images = self.as_compute_dtype(images)
        h, w = images.shape[1], images.shape[2]
        if h is None or w is None:
            raise ValueError(f"RandomElasticTransform needs known image sizes, got "
                             f"{images.shape}")
        batch = self.batch(images)
        probability = self.uniform(batch, *self.factor)
        apply = self.uniform(batch, 0.0, 1.0) < probability
        one = reshaping.reshape(1, [1])
        s = self.uniform(one, *self.scale, dtype=images.dtype)[0]
        alpha, sigma = max(h, w) * 0.1 * s, min(h, w) * 0.05 * s
        size = 6 * kmath.cast(sigma, "int32") + 1 - kmath.floormod(6 * kmath.cast(sigma, "int32"),
                                                                 2)
        noise = self._generator.normal(joining.stack([batch, h, w]), dtype=images.dtype) * sigma
        field = self._smooth(noise, size, sigma, h, w)
        ys = reshaping.reshape(kmath.cast(array.range(h), images.dtype), [1, -1, 1])
        xs = reshaping.reshape(kmath.cast(array.range(w), images.dtype), [1, 1, -1])
        order = 0 if self.interpolation == "nearest" else 1
        warped = map_coordinates_2d(images, ys + alpha * field, xs + alpha * field, order,
                                    self.fill_mode, self.fill_value)
        keep = reshaping.broadcast_to(reshaping.reshape(apply, [-1, 1, 1, 1]),
                                      array.shape(images))
        out = array.where(keep, warped, images)
        return kmath.clip_by_value(out, float(self.value_range[0]), float(self.value_range[1]))

    def _smooth(self, field: Any, size: Any, sigma: Any, h: int, w: int) -> Any:
        """keras.ops.image.gaussian_blur of one-channel fields with a size x size kernel.
        The size depends on the drawn scale, so the kernel is laid out at its largest
        (static) size with zeros outside the window: the same sums, a static shape."""
        from kilnflow.ops.nn_extra import depthwise_conv2d
        biggest = 6 * int(min(h, w) * 0.05 * self.scale[1]) | 1
        taps = kmath.cast(array.range(biggest), field.dtype) - (biggest - 1) / 2.0
        inside = kmath.abs(taps) <= kmath.cast(size - 1, field.dtype) / 2.0
        k = array.where(inside, kmath.exp(-0.5 * (taps / sigma) ** 2), array.zeros_like(taps))
        k = k / reduction_sum(k)
        kernel = reshaping.reshape(reshaping.expand_dims(k, 1) * reshaping.expand_dims(k, 0),
                                   [biggest, biggest, 1, 1])
        out = depthwise_conv2d(reshaping.expand_dims(field, -1), kernel, [1, 1, 1, 1], "SAME")
        return reshaping.squeeze(out, [-1])

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "value_range": self.value_range}


def reduction_sum(x: Any) -> Any:
    from kilnflow.ops import reduction
    return reduction.reduce_sum(x)
