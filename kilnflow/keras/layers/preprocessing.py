"""Numeric preprocessing layers: Rescaling, Normalization (with `adapt`), CenterCrop,
UnitNormalization. They hold no trainable weights."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.layer_utils import image_sizes
from kilnflow.ops import math as kmath
from kilnflow.ops import nn as knn
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape


class Rescaling(Layer):
    """inputs * scale + offset (e.g. scale=1/255 for image bytes)."""

    def __init__(self, scale: Any, offset: Any = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.scale, self.offset = scale, offset

    def call(self, inputs: Any) -> Any:
        inputs = kmath.cast(inputs, self._dtype) if not inputs.dtype.is_floating else inputs
        return inputs * self.scale + self.offset

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


class Normalization(Layer):
    """(inputs - mean) / sqrt(variance), per feature along `axis`; the statistics are
    given or computed from data by `adapt` (or inverted with `invert=True`)."""

    def __init__(self, axis: Any = -1, mean: Any = None, variance: Any = None,
                 invert: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = (axis,) if isinstance(axis, int) else tuple(axis or ())
        self.invert = invert
        if (mean is None) != (variance is None):
            raise ValueError("Normalization: pass both `mean` and `variance`, or neither")
        self.input_mean, self.input_variance = mean, variance
        self._stats: Optional[tuple] = None
        if mean is not None:
            self._stats = (np.asarray(mean, np.float32), np.asarray(variance, np.float32))

    def _broadcast(self, value: np.ndarray, rank: int) -> np.ndarray:
        """Statistics shaped to broadcast against rank-`rank` inputs (kept axes only)."""
        axes = [a % rank for a in self.axis]
        shape = [1] * rank
        if value.ndim:
            for a, size in zip(sorted(axes), value.shape if value.ndim == len(axes)
                               else [value.size]):
                shape[a] = size
        return value.reshape(shape)

    def adapt(self, data: Any, batch_size: Any = None, steps: Any = None) -> None:
        """Compute the mean and variance of `data` (an array or an iterable of batches)
        over every axis but `axis`."""
        if hasattr(data, "__iter__") and not isinstance(data, np.ndarray) and \
                not hasattr(data, "shape"):
            data = np.concatenate([np.asarray(b[0] if isinstance(b, tuple) else b)
                                   for b in data], 0)
        data = np.asarray(data, np.float64)
        keep = [a % data.ndim for a in self.axis]
        reduce_axes = tuple(i for i in range(data.ndim) if i not in keep)
        mean = data.mean(axis=reduce_axes)
        variance = data.var(axis=reduce_axes)
        self._stats = (mean.astype(np.float32), variance.astype(np.float32))
        self.built = True

    def call(self, inputs: Any) -> Any:
        if self._stats is None:
            raise ValueError(f"{self.name}: call adapt() or pass mean and variance before "
                             "using a Normalization layer")
        rank = inputs.shape.rank
        mean = convert_to_tensor(self._broadcast(self._stats[0], rank), dtype=inputs.dtype)
        variance = self._broadcast(self._stats[1], rank)
        std = convert_to_tensor(np.maximum(np.sqrt(variance), 1e-7).astype(np.float32),
                                dtype=inputs.dtype)
        inputs = inputs if inputs.dtype.is_floating else kmath.cast(inputs, self._dtype)
        if self.invert:
            return inputs * std + mean
        return (inputs - mean) / std

    @property
    def mean(self) -> Any:
        return None if self._stats is None else self._stats[0]

    @property
    def variance(self) -> Any:
        return None if self._stats is None else self._stats[1]

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        mean = None if self.input_mean is None else np.asarray(self.input_mean).tolist()
        var = None if self.input_variance is None else np.asarray(self.input_variance).tolist()
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": mean, "variance": var}

    def get_build_config(self) -> dict:
        """The adapted statistics, which the config does not hold (saved with the model)."""
        if self._stats is None:
            return {}
        return {"mean": self._stats[0].tolist(), "variance": self._stats[1].tolist()}

    def build_from_config(self, config: dict) -> None:
        if config.get("mean") is not None:
            self._stats = (np.asarray(config["mean"], np.float32),
                           np.asarray(config["variance"], np.float32))
            self.built = True


class CenterCrop(Layer):
    """The central height x width window of [batch, h, w, c] images."""

    def __init__(self, height: int, width: int, data_format: Optional[str] = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.height, self.width = image_sizes("CenterCrop", height, width)
        self.data_format = data_format or "channels_last"

    def call(self, inputs: Any) -> Any:
        rank = inputs.shape.rank
        if rank not in (3, 4):  # Keras 3: a batch of images or one image
            raise ValueError(f"Layer '{self.name}' (CenterCrop): `inputs` must be 3-D or 4-D "
                             f"images, got shape {inputs.shape}")
        h_axis = rank - (2 if self.data_format == "channels_first" else 3)
        h, w = inputs.shape[h_axis], inputs.shape[h_axis + 1]
        if h is None or w is None or h < self.height or w < self.width:
            raise NotImplementedError(f"{self.name}: CenterCrop needs known image sizes at "
                                      f"least {self.height}x{self.width}, got {h}x{w} "
                                      "(resizing smaller images is not supported yet)")
        top, left = (h - self.height) // 2, (w - self.width) // 2
        index = [slice(None)] * inputs.shape.rank
        index[h_axis] = slice(top, top + self.height)
        index[h_axis + 1] = slice(left, left + self.width)
        return inputs[tuple(index)]

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        h_axis = 2 if self.data_format == "channels_first" else 1
        shape[h_axis], shape[h_axis + 1] = self.height, self.width
        return TensorShape(shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "height": self.height, "width": self.width,
                "data_format": self.data_format}


class UnitNormalization(Layer):
    """x / ||x|| over `axis` (L2)."""

    def __init__(self, axis: Any = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis
        self.supports_masking = True

    def call(self, inputs: Any) -> Any:
        return knn.l2_normalize(inputs, self.axis)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}


