"""Augmentations that cut or mix images, as Keras 3 has them: RandomErasing, MixUp and
CutMix (which also mix the labels when given {"images": ..., "labels": ...}), and Pipeline,
which applies a list of layers in order.

Boxes follow Keras: a side of ratio r * size starts at u * (size - r * size), u uniform,
and covers the pixels whose index lies in [start, start + r * size).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.image_base import ImageLayer, factor_pair, value_range_pair
from kilnflow.ops import array, math as kmath, reshaping, slicing
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.sorting import argsort
from kilnflow.ops.stateless_random import stateless_gamma


def _column(values: Any) -> Any:
    return reshaping.reshape(values, [-1, 1, 1, 1])


def box_masks(images: Any, x0: Any, x1: Any, y0: Any, y1: Any) -> Any:
    """[batch, h, w, c] bools: inside each image's [x0, x1) x [y0, y1) box."""
    shape = array.shape(images)
    dtype = x0.dtype
    ys = kmath.cast(array.range(shape[1]), dtype)
    xs = kmath.cast(array.range(shape[2]), dtype)
    gy = reshaping.reshape(ys, [1, -1, 1, 1])
    gx = reshaping.reshape(xs, [1, 1, -1, 1])
    inside = kmath.logical_and(
        kmath.logical_and(gx >= _column(x0), gx < _column(x1)),
        kmath.logical_and(gy >= _column(y0), gy < _column(y1)))
    return reshaping.broadcast_to(inside, shape)


class MixingLayer(ImageLayer):
    _labels: Any = None

    """An image layer that also takes {"images", "labels"} dicts (and returns one)."""

    _MODULE_IGNORED_PROPERTIES = ImageLayer._MODULE_IGNORED_PROPERTIES | {
        "_labels", "_mixed_labels"}

    def call(self, inputs: Any, training: Any = True) -> Any:
        if isinstance(inputs, dict):
            images = convert_to_tensor(inputs["images"])
            self._labels = inputs.get("labels")
            out = dict(inputs)
            out["images"] = super().call(images, training)
            if self._labels is not None:
                out["labels"] = self._mixed_labels
            return out
        self._labels = None
        return super().call(inputs, training)

    def permutation(self, batch: Any) -> Any:
        """A random order of the batch (argsort of uniform draws)."""
        return argsort(self.uniform(batch, 0.0, 1.0))

    def beta(self, batch: Any, alpha: Any) -> Any:
        """[batch] draws of Beta(alpha, alpha), as the ratio of two gamma draws."""
        seeds = self._generator.make_seeds(2)
        shape = reshaping.reshape(batch, [1])
        g1 = stateless_gamma(shape, seeds[:, 0], alpha)
        g2 = stateless_gamma(shape, seeds[:, 1], alpha)
        return g1 / (g1 + g2)

    def mix_labels(self, weight: Any, order: Any, training: Any) -> None:
        labels = self._labels
        if labels is None:
            return
        labels = convert_to_tensor(labels)
        if not training:
            self._mixed_labels = labels
            return
        labels = kmath.cast(labels, self._dtype)
        w = reshaping.reshape(kmath.cast(weight, self._dtype), [-1] + [1] * (
            labels.shape.rank - 1))
        self._mixed_labels = w * labels + (1.0 - w) * slicing.gather(labels, order)


class RandomErasing(ImageLayer):
    """Fills a random box of each image (area ratio drawn from `scale`, per side its square
    root) with `fill_value` (a number, three numbers, or None for Gaussian noise scaled by
    the top of `value_range`), applied with a probability drawn from `factor`."""

    def __init__(self, factor: Any = 1.0, scale: Any = (0.02, 0.33), fill_value: Any = None,
                 value_range: Any = (0, 255), seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor_pair(factor, "factor", (0.0, 1.0))
        self.scale = factor_pair(scale, "scale", (0.0, 1.0))
        if fill_value is not None and not isinstance(fill_value, (int, float)) and (
                not isinstance(fill_value, (tuple, list)) or len(fill_value) != 3):
            raise ValueError("The `fill_value` argument should be a number (or a list of three "
                             f"numbers). Received: fill_value={fill_value}")
        self.fill_value = fill_value
        self.value_range = value_range_pair(value_range)

    def transform(self, images: Any, training: Any) -> Any:
        images = self.as_compute_dtype(images)
        if not training:
            return images
        batch = self.batch(images)
        shape = array.shape(images)
        ratio = kmath.sqrt(self.uniform(batch, *self.scale, dtype=images.dtype, extra=(2,)))
        h = kmath.cast(shape[1], images.dtype)
        w = kmath.cast(shape[2], images.dtype)
        width, height = ratio[:, 0] * w, ratio[:, 1] * h
        x0 = self.uniform(batch, 0.0, 1.0, dtype=images.dtype) * (w - width)
        y0 = self.uniform(batch, 0.0, 1.0, dtype=images.dtype) * (h - height)
        masks = box_masks(images, x0, x0 + width, y0, y0 + height)
        probability = self.uniform(batch, *self.factor)
        apply = self.uniform(batch, 0.0, 1.0) < probability
        if self.fill_value is None:
            fill = self._generator.normal(shape, dtype=images.dtype) * float(self.value_range[1])
        else:
            fill = array.ones_like(images) * convert_to_tensor(
                np.asarray(self.fill_value, np.float64), dtype=images.dtype)
        fill = kmath.clip_by_value(fill, float(self.value_range[0]), float(self.value_range[1]))
        erased = array.where(masks, fill, images)
        return array.where(reshaping.broadcast_to(_column(apply), shape), erased, images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor, "scale": self.scale,
                "fill_value": self.fill_value, "value_range": self.value_range}


class MixUp(MixingLayer):
    """Blends each image (and label) with another of the batch: w x + (1 - w) x[perm], w
    drawn from Beta(alpha, alpha) per image."""

    def __init__(self, alpha: float = 0.2, data_format: Optional[str] = None,
                 seed: Optional[int] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.alpha = alpha

    def transform(self, images: Any, training: Any) -> Any:
        images = self.as_compute_dtype(images)
        if not training:
            self.mix_labels(None, None, False)
            return images
        batch = self.batch(images)
        order = self.permutation(batch)
        weight = kmath.cast(self.beta(batch, float(self.alpha)), images.dtype)
        self.mix_labels(weight, order, True)
        return _column(weight) * images + (1.0 - _column(weight)) * slicing.gather(images, order)

    def get_config(self) -> dict:
        return {**super().get_config(), "alpha": self.alpha}


class CutMix(MixingLayer):
    """Pastes a box of another image of the batch into each image; the box side ratio is
    sqrt(1 - w), w ~ Beta(a, a) with a drawn from `factor`, and the labels mix by the area
    actually kept."""

    def __init__(self, factor: Any = 1.0, seed: Optional[int] = None,
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = factor_pair(factor, "factor", (0.0, 1.0))

    def transform(self, images: Any, training: Any) -> Any:
        images = self.as_compute_dtype(images)
        if not training:
            self.mix_labels(None, None, False)
            return images
        batch = self.batch(images)
        shape = array.shape(images)
        one = reshaping.reshape(1, [1])
        alpha = self.uniform(one, *self.factor)[0] + 1e-6
        ratio = kmath.sqrt(1.0 - kmath.cast(self.beta(batch, alpha), images.dtype))
        h = kmath.cast(shape[1], images.dtype)
        w = kmath.cast(shape[2], images.dtype)
        width, height = ratio * w, ratio * h
        x0 = self.uniform(batch, 0.0, 1.0, dtype=images.dtype) * (w - width)
        y0 = self.uniform(batch, 0.0, 1.0, dtype=images.dtype) * (h - height)
        masks = box_masks(images, x0, x0 + width, y0, y0 + height)
        order = self.permutation(batch)
        if self._labels is not None:  # the kept area, as the labels' weight
            self.mix_labels(1.0 - width * height / (w * h), order, True)
        return array.where(masks, slicing.gather(images, order), images)

    def get_config(self) -> dict:
        return {**super().get_config(), "factor": self.factor}


class Pipeline(Layer):
    """Applies `layers` in order (each called with the same `training`)."""

    def __init__(self, layers: Any, name: Optional[str] = None, **kwargs: Any):
        super().__init__(name=name, **kwargs)
        self._pipeline = list(layers)

    @property
    def layers(self) -> list:
        return list(self._pipeline)

    def call(self, inputs: Any, training: Any = True) -> Any:
        for layer in self._pipeline:
            inputs = layer(inputs, training=training)
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        for layer in self.layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape

    def get_config(self) -> dict:
        from kilnflow.keras.saving.serialization import serialize_keras_object
        return {"layers": [serialize_keras_object(layer) for layer in self.layers],
                "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> "Pipeline":
        from kilnflow.keras.saving.serialization import deserialize_keras_object
        config = dict(config)
        config["layers"] = [deserialize_keras_object(c) for c in config["layers"]]
        return cls(**config)


class MaxNumBoundingBoxes(Layer):
    """Pads (with `fill_value`) or truncates the `bounding_boxes` of a {"images", ...,
    "bounding_boxes": {"boxes": [batch, n, 4], "labels": [batch, n]}} dict to `max_number`
    boxes per image; everything else passes through (a plain tensor too)."""

    def __init__(self, max_number: int, fill_value: int = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.max_number, self.fill_value = int(max_number), int(fill_value)

    def _fit(self, values: Any, inner: list) -> Any:
        values = convert_to_tensor(values)
        values = values[:, :self.max_number]
        have = array.shape(values)[1]
        pad = kmath.maximum(self.max_number - have, 0)
        from kilnflow.ops import joining
        paddings = joining.stack([reshaping.reshape(convert_to_tensor([0, 0]), [2]),
                                  joining.stack([0, pad])] + [
                                      convert_to_tensor([0, 0])] * len(inner))
        values = reshaping.pad(values, paddings,
                               constant_values=convert_to_tensor(self.fill_value,
                                                                 dtype=values.dtype))
        return reshaping.reshape(values, [-1, self.max_number] + inner)

    def call(self, inputs: Any) -> Any:
        if not isinstance(inputs, dict) or "bounding_boxes" not in inputs:
            return inputs
        boxes = dict(inputs["bounding_boxes"])
        extra = set(boxes) - {"boxes", "labels"}
        if extra:
            raise ValueError(f"There are unsupported keys in `bounding_boxes`: {list(extra)}. "
                             "Only `boxes` and `labels` are supported.")
        boxes["boxes"] = self._fit(boxes["boxes"], [4])
        boxes["labels"] = self._fit(boxes["labels"], [])
        out = dict(inputs)
        out["bounding_boxes"] = boxes
        return out

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "max_number": self.max_number,
                "fill_value": self.fill_value}
