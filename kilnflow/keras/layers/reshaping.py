"""Reshaping layers: Permute, RepeatVector, ZeroPadding1D/2D, Cropping1D/2D,
UpSampling1D/2D (nearest neighbour). Shapes exclude nothing: the batch dim is kept."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.convolutional import _data_format
from kilnflow.keras.layers import boundary
from kilnflow.keras.layers.layer_utils import InputSpec
from kilnflow.ops import reshaping
from kilnflow.shapes import TensorShape


class Permute(Layer):
    """Reorders the non-batch dims: `dims` is a permutation of 1..rank-1."""

    def __init__(self, dims: Sequence[int], **kwargs: Any):
        super().__init__(**kwargs)
        self.dims = tuple(int(d) for d in dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute layer: "
                             f"{self.dims}. The set of indices in `dims` must be consecutive "
                             "and start from 1.")

    def call(self, inputs: Any) -> Any:
        return reshaping.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        return TensorShape([shape[0]] + [shape[d] for d in self.dims])

    def get_config(self) -> dict:
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """[batch, features] -> [batch, n, features]."""

    def __init__(self, n: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.n = boundary.positive_int(n, "n")

    def call(self, inputs: Any) -> Any:
        return reshaping.tile(reshaping.expand_dims(inputs, 1), [1, self.n, 1])

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, features = TensorShape(input_shape).with_rank(2).as_list()
        return TensorShape([batch, self.n, features])

    def get_config(self) -> dict:
        return {**super().get_config(), "n": self.n}


def _pairs(value: Any, rank: int, what: str) -> tuple:
    """An int, a tuple of ints (symmetric per dim) or of pairs -> rank (before, after)."""
    if isinstance(value, int):
        return ((value, value),) * rank
    value = tuple(value)
    if rank == 1 and len(value) == 2 and all(isinstance(v, int) for v in value):
        return (tuple(value),)
    if len(value) != rank:
        raise ValueError(f"`{what}` should have {rank} entries, got {value}")
    return tuple((v, v) if isinstance(v, int) else tuple(int(u) for u in v) for v in value)


class _Spatial(Layer):
    """A layer acting on the `rank` spatial dims between batch and channels."""
    rank = 1

    def __init__(self, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)  # TF checks the rank before any work

    def _spatial_axes(self) -> list:
        first = 2 if self.data_format == "channels_first" else 1
        return list(range(first, first + self.rank))

    def _map_shape(self, input_shape: Any, fn: Any) -> TensorShape:
        shape = TensorShape(input_shape).with_rank(self.rank + 2).as_list()
        for i, axis in enumerate(self._spatial_axes()):
            shape[axis] = None if shape[axis] is None else fn(i, shape[axis])
        return TensorShape(shape)

    def get_config(self) -> dict:
        config = super().get_config()
        if self.rank > 1:
            config["data_format"] = self.data_format
        return config


class _ZeroPadding(_Spatial):
    def __init__(self, padding: Any = 1, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(data_format, **kwargs)
        self.padding = _pairs(padding, self.rank, "padding")

    def call(self, inputs: Any) -> Any:
        pads = [[0, 0]] * (self.rank + 2)
        for (before, after), axis in zip(self.padding, self._spatial_axes()):
            pads[axis] = [before, after]
        return reshaping.pad(inputs, pads)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return self._map_shape(input_shape, lambda i, d: d + sum(self.padding[i]))

    def get_config(self) -> dict:
        return {**super().get_config(), "padding": self.padding}


class ZeroPadding1D(_ZeroPadding):
    """Zeros added before and after the steps of [batch, steps, features]."""
    rank = 1


class ZeroPadding2D(_ZeroPadding):
    """Rows and columns of zeros around [batch, h, w, c] images."""
    rank = 2


class ZeroPadding3D(_ZeroPadding):
    """Zeros around the three spatial dims of [batch, d1, d2, d3, c] volumes."""
    rank = 3


class _Cropping(_Spatial):
    def __init__(self, cropping: Any = 1, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(data_format, **kwargs)
        self.cropping = _pairs(cropping, self.rank, "cropping")

    def call(self, inputs: Any) -> Any:
        index = [slice(None)] * (self.rank + 2)
        for (before, after), axis in zip(self.cropping, self._spatial_axes()):
            length = inputs.shape[axis]
            if length is not None and before + after >= length:  # Keras 3 refuses, no slice
                raise ValueError(f"`cropping` parameter of `{type(self).__name__}` layer must "
                                 f"be smaller than the input length. Received: inputs.shape="
                                 f"{tuple(inputs.shape)}, cropping={self.cropping}")
            index[axis] = slice(before, -after if after else None)
        return inputs[tuple(index)]

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return self._map_shape(input_shape, lambda i, d: d - sum(self.cropping[i]))

    def get_config(self) -> dict:
        return {**super().get_config(), "cropping": self.cropping}


class Cropping1D(_Cropping):
    """Drops steps from the start and end of [batch, steps, features]."""
    rank = 1


class Cropping2D(_Cropping):
    """Drops rows and columns from the edges of [batch, h, w, c] images."""
    rank = 2


class Cropping3D(_Cropping):
    """Drops entries from the edges of the three spatial dims."""
    rank = 3


class _UpSampling(_Spatial):
    def __init__(self, size: Any = 2, data_format: Optional[str] = None,
                 interpolation: str = "nearest", **kwargs: Any):
        super().__init__(data_format, **kwargs)
        if interpolation != "nearest":
            raise NotImplementedError(f"UpSampling(interpolation={interpolation!r}): only "
                                      "'nearest' is supported yet")
        self.size = (int(size),) * self.rank if isinstance(size, int) else \
            tuple(int(s) for s in size)
        self.interpolation = interpolation

    def call(self, inputs: Any) -> Any:
        out = inputs
        for factor, axis in zip(self.size, self._spatial_axes()):
            out = _repeat(out, factor, axis)
        return out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return self._map_shape(input_shape, lambda i, d: d * self.size[i])

    def get_config(self) -> dict:
        config = {**super().get_config(), "size": self.size}
        if self.rank == 2:
            config["interpolation"] = self.interpolation
        return config


def _repeat(x: Any, factor: int, axis: int) -> Any:
    """Each entry along `axis` repeated `factor` times (np.repeat), with tile + reshape."""
    if factor == 1:
        return x
    rank = x.shape.rank
    expanded = reshaping.expand_dims(x, axis + 1)
    tiled = reshaping.tile(expanded, [1] * (axis + 1) + [factor] + [1] * (rank - axis - 1))
    shape = [-1 if d is None else d for d in x.shape.as_list()]
    dynamic = [i for i, d in enumerate(x.shape.as_list()) if d is None]
    if dynamic:
        from kilnflow.ops import array, joining
        dims = array.shape(x)
        parts = [dims[i] * factor if i == axis else dims[i] for i in range(rank)]
        return reshaping.reshape(tiled, joining.stack(parts))
    shape[axis] *= factor
    return reshaping.reshape(tiled, shape)


class UpSampling1D(_UpSampling):
    """Each step repeated `size` times."""
    rank = 1

    def get_config(self) -> dict:
        config = super().get_config()
        config["size"] = self.size[0]
        return config


class UpSampling2D(_UpSampling):
    """Each row and column repeated size[0] / size[1] times (nearest neighbour)."""
    rank = 2


class UpSampling3D(_UpSampling):
    """Each entry of the three spatial dims repeated `size` times."""
    rank = 3
