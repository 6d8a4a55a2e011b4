"""Conv2D, MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D, GlobalMaxPooling2D.

Images are channels_last (NHWC) by default; channels_first (NCHW) inputs are transposed
around the NHWC kernels of kf.nn.
"""
from __future__ import annotations

import math
from typing import Any, Optional

from kilnflow.keras import activations as _activations
from kilnflow.keras import backend
from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.weight_options import (kernel_and_bias_config,
                                                    set_kernel_and_bias_options)
from kilnflow.keras.layers import boundary
from kilnflow.keras.layers.layer_utils import InputSpec
from kilnflow.shapes import TensorShape
from kilnflow.ops import reshaping
from kilnflow.ops import reduction


def _integral(v: Any) -> int:
    """int(v) for a whole number; a fractional size raises instead of being truncated."""
    if isinstance(v, float) and not v.is_integer():
        raise ValueError(f"expected an integer size, got {v}")
    return int(v)


def _pair(value: Any, what: str) -> tuple:
    if isinstance(value, int):
        value = (value, value)
    else:
        try:
            value = tuple(_integral(v) for v in value)
        except TypeError:
            raise TypeError(f"`{what}` must be an int or a pair of ints, got "
                            f"{value!r}") from None
    if len(value) != 2:
        raise ValueError(f"`{what}` must be an int or a pair of ints, got {value}")
    if min(value) < 1:  # a window of no size: no work to do
        raise ValueError(f"`{what}` must be positive, got {value}")
    return value


def _padding(padding: str) -> str:
    padding = padding.lower()
    if padding not in ("valid", "same"):
        raise ValueError(f"`padding` must be 'valid' or 'same', got {padding!r}")
    return padding


def _data_format(data_format: Optional[str]) -> str:
    data_format = data_format or "channels_last"
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"`data_format` must be 'channels_last' or 'channels_first', got "
                         f"{data_format!r}")
    return data_format


def conv_output_length(size: Optional[int], kernel: int, padding: str, stride: int,
                       dilation: int = 1) -> Optional[int]:
    """Spatial size after a convolution or pooling window (None stays None)."""
    if size is None:
        return None
    extent = (kernel - 1) * dilation + 1
    if padding == "same":
        return math.ceil(size / stride)
    return max(0, (size - extent) // stride + 1)


def _to_nhwc(x: Any, data_format: str) -> Any:
    return reshaping.transpose(x, [0, 2, 3, 1]) if data_format == "channels_first" else x


def _from_nhwc(x: Any, data_format: str) -> Any:
    return reshaping.transpose(x, [0, 3, 1, 2]) if data_format == "channels_first" else x


def _spatial_shape(input_shape: Any, data_format: str) -> tuple:
    """(batch, height, width, channels) of a rank-4 shape in either layout."""
    dims = TensorShape(input_shape).with_rank(4).as_list()
    if data_format == "channels_first":
        return dims[0], dims[2], dims[3], dims[1]
    return tuple(dims)


def _layout(batch: Any, h: Any, w: Any, c: Any, data_format: str) -> TensorShape:
    if data_format == "channels_first":
        return TensorShape([batch, c, h, w])
    return TensorShape([batch, h, w, c])


class Conv2D(Layer):
    """2-D convolution: `filters` output channels, each a `kernel_size` window.

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.Conv2D(4, 3, padding="same")(kf.ones([1, 8, 8, 2])).shape
    TensorShape([1, 8, 8, 4])
    """

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1),
                 padding: str = "valid", data_format: Optional[str] = None,
                 dilation_rate: Any = (1, 1), groups: int = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if groups != 1:
            raise NotImplementedError("Conv2D(groups > 1) is not supported yet")
        self.filters = boundary.positive_int(filters, "filters")
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)
        self.dilation_rate = _pair(dilation_rate, "dilation_rate")
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer,
                                    kernel_regularizer, bias_regularizer, kernel_constraint,
                                    bias_constraint)

    def build(self, input_shape: Any) -> None:
        channels = _spatial_shape(input_shape, self.data_format)[3]
        if channels is None:
            raise ValueError(f"{self.name}: the channel dimension of the inputs should be "
                             f"defined. Found None (input shape {input_shape}).")
        self.kernel = self.add_weight("kernel", [*self.kernel_size, channels, self.filters],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def call(self, inputs: Any) -> Any:
        x = _to_nhwc(inputs, self.data_format)
        out = backend.nn().conv2d(x, self.kernel, strides=self.strides,
                                  padding=self.padding.upper(), dilations=self.dilation_rate)
        if self.bias is not None:
            out = out + self.bias
        return self.activation(_from_nhwc(out, self.data_format))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, h, w, _ = _spatial_shape(input_shape, self.data_format)
        oh = conv_output_length(h, self.kernel_size[0], self.padding, self.strides[0],
                                self.dilation_rate[0])
        ow = conv_output_length(w, self.kernel_size[1], self.padding, self.strides[1],
                                self.dilation_rate[1])
        return _layout(batch, oh, ow, self.filters, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
                "activation": _activations.serialize(self.activation),
                "use_bias": self.use_bias,
                **kernel_and_bias_config(self)}


class _Pooling2D(Layer):
    def __init__(self, pool_size: Any = (2, 2), strides: Any = None, padding: str = "valid",
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = _pair(strides, "strides") if strides is not None else self.pool_size
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)

    def _pool(self, x: Any) -> Any:
        raise NotImplementedError

    def call(self, inputs: Any) -> Any:
        return _from_nhwc(self._pool(_to_nhwc(inputs, self.data_format)), self.data_format)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, h, w, c = _spatial_shape(input_shape, self.data_format)
        oh = conv_output_length(h, self.pool_size[0], self.padding, self.strides[0])
        ow = conv_output_length(w, self.pool_size[1], self.padding, self.strides[1])
        return _layout(batch, oh, ow, c, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format}


class MaxPooling2D(_Pooling2D):
    """The maximum over each `pool_size` window (stride defaults to the window)."""

    def _pool(self, x: Any) -> Any:
        return backend.nn().max_pool2d(x, self.pool_size, self.strides, self.padding.upper())


class AveragePooling2D(_Pooling2D):
    """The mean over each `pool_size` window (stride defaults to the window)."""

    def _pool(self, x: Any) -> Any:
        return backend.nn().avg_pool2d(x, self.pool_size, self.strides, self.padding.upper())


class _GlobalPooling2D(Layer):
    _reduce: Any = None

    def __init__(self, data_format: Optional[str] = None, keepdims: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=4)  # TF checks the rank before any work

    def call(self, inputs: Any) -> Any:
        axes = [2, 3] if self.data_format == "channels_first" else [1, 2]
        return type(self)._reduce(inputs, axes, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, _, _, c = _spatial_shape(input_shape, self.data_format)
        if self.keepdims:
            return _layout(batch, 1, 1, c, self.data_format)
        return TensorShape([batch, c])

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean over height and width: [batch, h, w, c] -> [batch, c]."""
    _reduce = staticmethod(reduction.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The maximum over height and width: [batch, h, w, c] -> [batch, c]."""
    _reduce = staticmethod(reduction.reduce_max)


MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D
GlobalAvgPool2D, GlobalMaxPool2D = GlobalAveragePooling2D, GlobalMaxPooling2D
