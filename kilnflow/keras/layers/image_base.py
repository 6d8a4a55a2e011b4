"""The shared part of Keras 3's image preprocessing layers (BaseImagePreprocessingLayer).

Keras runs these layers with `training=True` unless told otherwise (a direct call augments;
`predict` and `evaluate` pass training=False, which makes the random ones the identity).
Images are [batch, h, w, c] or one [h, w, c] image (channels_first moves c first). Like
Keras's SeedGenerator, each layer draws from its own kf.random.Generator (a state variable,
so draws advance inside kf.function too): two layers built with the same `seed` give the
same sequence; seed None draws from fresh entropy. The state is not a layer weight.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras.layers.base import Layer
from kilnflow.ops import array, math as kmath, reshaping
from kilnflow.ops.random_generator import Generator
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape


def factor_pair(factor: Any, name: str, bounds: tuple = (-1.0, 1.0),
                symmetric: bool = True) -> tuple:
    """(lower, upper) from a number f (-> (-f, f), clipped to bounds; (0, f) when not
    symmetric) or a pair (sorted), checked against `bounds` as Keras checks it."""
    message = (f"The `{name}` argument should be a number (or a list of two numbers) in the "
               f"range [{bounds[0]}, {bounds[1]}]. Received: {name}={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(message)
        lower, upper = sorted(float(f) for f in factor)
        if lower > bounds[1] or upper < bounds[0]:
            raise ValueError(message)
        return lower, upper
    if isinstance(factor, (int, float)) and not isinstance(factor, bool):
        if factor < bounds[0] or factor > bounds[1]:
            raise ValueError(message)
        factor = abs(float(factor))
        return (max(-factor, bounds[0]) if symmetric else 0.0), factor
    raise ValueError(message)


def value_range_pair(value_range: Any) -> list:
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError("The `value_range` argument should be a list of two numbers. "
                         f"Received: value_range={value_range}")
    return sorted(value_range)


def rescale(images: Any, source: Any, target: Any) -> Any:
    """Map values linearly from the `source` range to the `target` range."""
    if tuple(source) == tuple(target):
        return images
    images = (images - source[0]) / (source[1] - source[0])
    return images * (target[1] - target[0]) + target[0]


class ImageLayer(Layer):
    """An image preprocessing layer: `transform(images, training)` on 4-D channels_last
    images; this class adds the rank-3 and channels_first handling and the seeded draws."""

    _MODULE_IGNORED_PROPERTIES = Layer._MODULE_IGNORED_PROPERTIES | {"_generator"}

    def __init__(self, seed: Optional[int] = None, data_format: Optional[str] = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.seed = seed
        self.data_format = data_format or "channels_last"
        if self.data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"{type(self).__name__}: data_format must be 'channels_last' or "
                             f"'channels_first', got {data_format!r}")
        self._generator = Generator.from_non_deterministic_state() if seed is None else \
            Generator.from_seed(int(seed))

    def uniform(self, batch: Any, lower: float, upper: float, dtype: Any = "float32",
                extra: tuple = ()) -> Any:
        """[batch, *extra] values uniform in [lower, upper) (exactly `lower` when equal)."""
        shape = reshaping.reshape(batch, [1]) if not extra else None
        if extra:
            from kilnflow.ops import joining
            shape = joining.concat([reshaping.reshape(batch, [1]),
                                    convert_to_tensor(list(extra), dtype="int32")], 0)
        u = self._generator.uniform(shape, dtype=dtype)
        return u * (upper - lower) + lower

    def call(self, inputs: Any, training: Any = True) -> Any:
        images = convert_to_tensor(inputs)
        rank = images.shape.rank
        if rank not in (3, 4):
            raise ValueError(f"{type(self).__name__}: expected images of rank 3 or 4, got shape "
                             f"{images.shape}")
        if rank == 3:
            images = reshaping.expand_dims(images, 0)
        if self.data_format == "channels_first":
            images = reshaping.transpose(images, [0, 2, 3, 1])
        out = self.transform(images, training)
        if self.data_format == "channels_first":
            out = reshaping.transpose(out, [0, 3, 1, 2])
        if rank == 3:
            out = reshaping.squeeze(out, [0])
        return out

    def transform(self, images: Any, training: Any) -> Any:
        raise NotImplementedError

    def as_compute_dtype(self, images: Any) -> Any:
        return images if images.dtype == self._dtype else kmath.cast(images, self._dtype)

    def batch(self, images: Any) -> Any:
        return array.shape(images)[0]

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "seed": self.seed, "data_format": self.data_format}


def saturate_to(images: Any, dtype: Any) -> Any:
    """Cast float results back to an integer input dtype as Keras does: round, clip, cast."""
    from kilnflow import dtypes as _dtypes
    dtype = _dtypes.as_dtype(dtype)
    if images.dtype == dtype:
        return images
    if dtype.is_integer:
        images = kmath.clip_by_value(kmath.round(images), float(dtype.min), float(dtype.max))
    return kmath.cast(images, dtype)
