"""MaxPooling3D, AveragePooling3D and their global forms over [batch, depth, height, width,
channels] volumes (channels_first transposed around kf.nn's NDHWC kernels), Keras 3's
adaptive pooling layers (1/2/3-D), plus the small layers Identity and
ActivityRegularization."""
from __future__ import annotations

import math
from typing import Any, Optional

from kilnflow import errors
from kilnflow.context import allocation_limit

from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.conv_nd import _tuple
from kilnflow.keras.layers.convolutional import _data_format, conv_output_length
from kilnflow.keras.layers.layer_utils import InputSpec
from kilnflow.ops import reduction, reshaping
from kilnflow.ops.joining import concat
from kilnflow.ops.nn_windows import avg_pool3d, max_pool3d
from kilnflow.shapes import TensorShape


def _dims(input_shape: Any, data_format: str) -> tuple:
    dims = TensorShape(input_shape).with_rank(5).as_list()
    if data_format == "channels_first":
        return dims[0], dims[2:], dims[1]
    return dims[0], dims[1:4], dims[4]


def _layout(batch: Any, spatial: list, channels: Any, data_format: str) -> TensorShape:
    if data_format == "channels_first":
        return TensorShape([batch, channels, *spatial])
    return TensorShape([batch, *spatial, channels])


class _Pooling3D(Layer):
    _pool: Any = None

    def __init__(self, pool_size: Any = (2, 2, 2), strides: Any = None,
                 padding: str = "valid", data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.pool_size = _tuple(pool_size, 3, "pool_size")
        self.strides = _tuple(strides, 3, "strides") if strides is not None \
            else self.pool_size
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"`padding` must be 'valid' or 'same', got {padding!r}")
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any) -> Any:
        first = self.data_format == "channels_first"
        x = reshaping.transpose(inputs, [0, 2, 3, 4, 1]) if first else inputs
        out = type(self)._pool(x, self.pool_size, self.strides, self.padding.upper())
        return reshaping.transpose(out, [0, 4, 1, 2, 3]) if first else out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, spatial, channels = _dims(input_shape, self.data_format)
        sizes = [conv_output_length(s, k, self.padding, st)
                 for s, k, st in zip(spatial, self.pool_size, self.strides)]
        return _layout(batch, sizes, channels, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format}


class MaxPooling3D(_Pooling3D):
    """The maximum over each `pool_size` volume (stride defaults to the window)."""
    _pool = staticmethod(max_pool3d)


class AveragePooling3D(_Pooling3D):
    """The mean over each `pool_size` volume (stride defaults to the window)."""
    _pool = staticmethod(avg_pool3d)


class _GlobalPooling3D(Layer):
    _reduce: Any = None

    def __init__(self, data_format: Optional[str] = None, keepdims: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=5)  # TF checks the rank before any work

    def call(self, inputs: Any) -> Any:
        axes = [2, 3, 4] if self.data_format == "channels_first" else [1, 2, 3]
        return type(self)._reduce(inputs, axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, _, channels = _dims(input_shape, self.data_format)
        if self.keepdims:
            return _layout(batch, [1, 1, 1], channels, self.data_format)
        return TensorShape([batch, channels])

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalMaxPooling3D(_GlobalPooling3D):
    """The maximum over depth, height and width: [batch, d, h, w, c] -> [batch, c]."""
    _reduce = staticmethod(reduction.reduce_max)


class GlobalAveragePooling3D(_GlobalPooling3D):
    """The mean over depth, height and width: [batch, d, h, w, c] -> [batch, c]."""
    _reduce = staticmethod(reduction.reduce_mean)


class _AdaptivePooling(Layer):
    """Pools each spatial dim of size L into `output_size` windows, window i covering
    [floor(i L / n), ceil((i + 1) L / n)) as Keras 3 does; mean and max over a box are
    taken one axis at a time."""
    rank, _reduce = 1, None

    def __init__(self, output_size: Any, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.output_size = _tuple(output_size, self.rank, "output_size")
        self.data_format = _data_format(data_format)
        self.input_spec = InputSpec(ndim=self.rank + 2)  # TF checks the rank before any work

    def call(self, inputs: Any) -> Any:
        first = self.data_format == "channels_first"
        x = inputs
        mean = type(self)._reduce is reduction.reduce_mean
        if not inputs.dtype.is_floating and (mean or self.rank == 3):
            # TF pools with AvgPool / MaxPool3D, which have float kernels only
            raise errors.InvalidArgumentError(errors.with_location(
                f"Layer '{self.name}' ({type(self).__name__}): `inputs` of dtype "
                f"{inputs.dtype.name} is not in the list of allowed values: half, bfloat16, "
                f"float, double"))
        if mean and 0 in [inputs.shape[a] for a in self._spatial_axes()]:
            raise ValueError(f"Layer '{self.name}' ({type(self).__name__}): `inputs` of shape "
                             f"{inputs.shape} has an empty spatial dimension to average")
        # one slice per output position: check the output's size before the loop
        count = math.prod(self.output_size) * math.prod(
            d or 1 for i, d in enumerate(inputs.shape) if i not in self._spatial_axes())
        if count * inputs.dtype.size > allocation_limit():
            raise errors.ResourceExhaustedError(errors.with_location(
                f"Layer '{self.name}' ({type(self).__name__}): output_size {self.output_size}"
                f" on inputs of shape {inputs.shape} needs {count} elements, past the "
                f"allocation limit of {allocation_limit()} bytes"))
        for k, n in enumerate(self.output_size):
            axis = k + (2 if first else 1)
            size = x.shape[axis]
            if size is None:
                raise ValueError(f"{self.name}: adaptive pooling needs static spatial "
                                 f"sizes, got shape {inputs.shape}")
            pieces = []
            for i in range(n):
                start, end = (i * size) // n, min(-(-((i + 1) * size) // n), size)
                window = slicing_axis(x, axis, min(start, size - 1), end)
                pieces.append(type(self)._reduce(window, axis, keepdims=True))
            x = concat(pieces, axis) if len(pieces) > 1 else pieces[0]
        return x

    def _spatial_axes(self) -> range:
        first = 2 if self.data_format == "channels_first" else 1
        return range(first, first + self.rank)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        dims = TensorShape(input_shape).with_rank(self.rank + 2).as_list()
        if self.data_format == "channels_first":
            return TensorShape([dims[0], dims[1], *self.output_size])
        return TensorShape([dims[0], *self.output_size, dims[-1]])

    def get_config(self) -> dict:
        return {**super().get_config(), "output_size": self.output_size,
                "data_format": self.data_format}


def slicing_axis(x: Any, axis: int, start: int, end: int) -> Any:
    index = [slice(None)] * x.shape.rank
    index[axis] = slice(start, end)
    return x[tuple(index)]


def _adaptive(name: str, rank: int, reduce: Any, doc: str) -> type:
    return type(name, (_AdaptivePooling,), {"rank": rank, "_reduce": staticmethod(reduce),
                                            "__doc__": doc, "__module__": __name__})


AdaptiveAveragePooling1D = _adaptive("AdaptiveAveragePooling1D", 1, reduction.reduce_mean,
                                     "The mean over `output_size` adaptive windows of steps.")
AdaptiveAveragePooling2D = _adaptive("AdaptiveAveragePooling2D", 2, reduction.reduce_mean,
                                     "The mean over an `output_size` grid of windows.")
AdaptiveAveragePooling3D = _adaptive("AdaptiveAveragePooling3D", 3, reduction.reduce_mean,
                                     "The mean over an `output_size` grid of volumes.")
AdaptiveMaxPooling1D = _adaptive("AdaptiveMaxPooling1D", 1, reduction.reduce_max,
                                 "The maximum over `output_size` adaptive windows of steps.")
AdaptiveMaxPooling2D = _adaptive("AdaptiveMaxPooling2D", 2, reduction.reduce_max,
                                 "The maximum over an `output_size` grid of windows.")
AdaptiveMaxPooling3D = _adaptive("AdaptiveMaxPooling3D", 3, reduction.reduce_max,
                                 "The maximum over an `output_size` grid of volumes.")


class Identity(Layer):
    """Returns its inputs unchanged (a placeholder layer)."""

    def call(self, inputs: Any) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape


class ActivityRegularization(Layer):
    """Identity that adds l1 * sum(|x|) + l2 * sum(x^2) of its inputs to the losses."""

    def __init__(self, l1: float = 0.0, l2: float = 0.0, **kwargs: Any):
        from kilnflow.keras import regularizers
        super().__init__(activity_regularizer=regularizers.L1L2(l1=l1, l2=l2), **kwargs)
        self.l1, self.l2 = float(l1), float(l2)

    def call(self, inputs: Any) -> Any:
        return inputs

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        config = {**super().get_config(), "l1": self.l1, "l2": self.l2}
        config.pop("activity_regularizer", None)
        return config


MaxPool3D, AvgPool3D = MaxPooling3D, AveragePooling3D
GlobalMaxPool3D, GlobalAvgPool3D = GlobalMaxPooling3D, GlobalAveragePooling3D
