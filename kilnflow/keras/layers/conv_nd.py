"""Conv3D, the transposed convolutions (1/2/3-D), DepthwiseConv1D/2D, SeparableConv1D/2D.

One base class holds what they share: `rank` spatial dims, the per-dim options as tuples,
channels_first inputs transposed around the channels_last kernels of kf.nn, the bias and
activation. The 1-D forms run the 2-D kernels on a [batch, 1, steps, channels] view.
Transposed output sizes follow Keras 3's rule (with `output_padding`), and the kernels are
TF's conv*_transpose, so the values are those of TF's Keras for the same weights.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.keras import activations as _activations
from kilnflow.keras import constraints as _constraints
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.convolutional import _data_format, conv_output_length
from kilnflow.keras.layers.weight_options import (kernel_and_bias_config,
                                                    set_kernel_and_bias_options)
from kilnflow.keras.layers import boundary
from kilnflow.ops import array, conv, reshaping
from kilnflow.ops.conv3d_transpose import conv3d_transpose
from kilnflow.ops.joining import concat
from kilnflow.ops.math import cast
from kilnflow.ops.nn_extra import conv2d_transpose, depthwise_conv2d
from kilnflow.ops.nn_windows import conv3d
from kilnflow.shapes import TensorShape


def _integral(v: Any) -> int:
    """int(v) for a whole number; a fractional size raises instead of being truncated."""
    if isinstance(v, float) and not v.is_integer():
        raise ValueError(f"expected an integer size, got {v}")
    return int(v)


def _tuple(value: Any, rank: int, what: str) -> tuple:
    if isinstance(value, int):
        value = (value,) * rank
    else:
        try:
            value = tuple(_integral(v) for v in value)
        except TypeError:
            raise TypeError(f"`{what}` must be an int or a tuple of {rank} ints, got "
                            f"{value!r}") from None
    if len(value) != rank:
        raise ValueError(f"`{what}` must be an int or a tuple of {rank} ints, got {value}")
    if what != "output_padding" and min(value) < 1:  # a window of no size: no work to do
        raise ValueError(f"`{what}` must be positive, got {value}")
    return value


def transpose_output_length(size: Optional[int], kernel: int, padding: str, stride: int,
                            dilation: int = 1, output_padding: Optional[int] = None) -> Any:
    """Keras 3's output size of a transposed convolution (None stays None)."""
    if size is None:
        return None
    extent = (kernel - 1) * dilation + 1
    if output_padding is None:
        return size * stride + (max(extent - stride, 0) if padding == "valid" else 0)
    pad = extent // 2 if padding == "same" else 0
    return (size - 1) * stride + extent - 2 * pad + output_padding


class _Conv(Layer):
    """What the convolutions share; subclasses set `rank` and define _weights/_convolve."""
    rank = 2

    def __init__(self, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: Optional[str] = None, dilation_rate: Any = 1,
                 activation: Any = None, use_bias: bool = True, bias_initializer: Any = "zeros",
                 bias_regularizer: Any = None, bias_constraint: Any = None,
                 activity_regularizer: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.kernel_size = _tuple(kernel_size, self.rank, "kernel_size")
        self.strides = _tuple(strides, self.rank, "strides")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"`padding` must be 'valid' or 'same', got {padding!r}")
        self.data_format = _data_format(data_format)
        self.dilation_rate = _tuple(dilation_rate, self.rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"{type(self).__name__}: strides > 1 together with "
                             "dilation_rate > 1 is not supported")
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.bias_initializer = _initializers.get(bias_initializer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.bias_constraint = _constraints.get(bias_constraint)

    # layout ----------------------------------------------------------------
    def _dims(self, input_shape: Any) -> tuple:
        """(batch, spatial sizes, channels) of an input shape in either layout."""
        dims = TensorShape(input_shape).with_rank(self.rank + 2).as_list()
        if self.data_format == "channels_first":
            return dims[0], dims[2:], dims[1]
        return dims[0], dims[1:-1], dims[-1]

    def _layout(self, batch: Any, spatial: list, channels: Any) -> TensorShape:
        if self.data_format == "channels_first":
            return TensorShape([batch, channels, *spatial])
        return TensorShape([batch, *spatial, channels])

    def _channels_last(self, x: Any) -> Any:
        if self.data_format == "channels_last":
            return x
        return reshaping.transpose(x, [0, *range(2, self.rank + 2), 1])

    def _channels_first(self, x: Any) -> Any:
        if self.data_format == "channels_last":
            return x
        return reshaping.transpose(x, [0, self.rank + 1, *range(1, self.rank + 1)])

    # weights and call ------------------------------------------------------
    def _weight(self, name: str, shape: list, options: str) -> Any:
        return self.add_weight(name, shape, initializer=getattr(self, f"{options}_initializer"),
                               regularizer=getattr(self, f"{options}_regularizer"),
                               constraint=getattr(self, f"{options}_constraint"))

    def build(self, input_shape: Any) -> None:
        channels = self._dims(input_shape)[2]
        if channels is None:
            raise ValueError(f"{self.name}: the channel dimension of the inputs should be "
                             f"defined. Found None (input shape {input_shape}).")
        self._weights(int(channels))
        self.bias = self._weight("bias", [self._out_channels(int(channels))], "bias") \
            if self.use_bias else None
        self.built = True

    def call(self, inputs: Any) -> Any:
        out = self._convolve(self._channels_last(inputs))
        if self.bias is not None:
            out = out + self.bias
        return self.activation(self._channels_first(out))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, spatial, channels = self._dims(input_shape)
        sizes = [conv_output_length(s, k, self.padding, st, d) for s, k, st, d in
                 zip(spatial, self.kernel_size, self.strides, self.dilation_rate)]
        out = None if channels is None else self._out_channels(int(channels))
        return self._layout(batch, sizes, out)

    def get_config(self) -> dict:
        return {**super().get_config(), "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "activation": _activations.serialize(self.activation),
                "use_bias": self.use_bias}


class _PlainConv(_Conv):
    """Conv3D and the transposed convolutions: `filters` outputs, a `kernel` and a bias."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: Optional[str] = None, dilation_rate: Any = 1,
                 activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, activity_regularizer=activity_regularizer, **kwargs)
        self.filters = boundary.positive_int(filters, "filters")
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer,
                                    kernel_regularizer, bias_regularizer, kernel_constraint,
                                    bias_constraint)

    def _out_channels(self, channels: int) -> int:
        return self.filters

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters,
                **kernel_and_bias_config(self)}


class Conv3D(_PlainConv):
    """3-D convolution over [batch, depth, height, width, channels] volumes.

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.Conv3D(2, 3, padding="same")(kf.ones([1, 4, 4, 4, 1])).shape
    TensorShape([1, 4, 4, 4, 2])
    """
    rank = 3

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                 padding: str = "valid", data_format: Optional[str] = None,
                 dilation_rate: Any = (1, 1, 1), groups: int = 1, **kwargs: Any):
        if groups != 1:
            raise NotImplementedError("Conv3D(groups > 1) is not supported yet")
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         **kwargs)

    def _weights(self, channels: int) -> None:
        self.kernel = self._weight("kernel", [*self.kernel_size, channels, self.filters],
                                   "kernel")

    def _convolve(self, x: Any) -> Any:
        return conv3d(x, self.kernel, self.strides, self.padding.upper(),
                      dilations=self.dilation_rate)

    def get_config(self) -> dict:
        return {**super().get_config(), "groups": 1}


class _ConvTranspose(_PlainConv):
    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 output_padding: Any = None, data_format: Optional[str] = None,
                 dilation_rate: Any = 1, **kwargs: Any):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         **kwargs)
        self.output_padding = None if output_padding is None else \
            _tuple(output_padding, self.rank, "output_padding")
        for p, s in zip(self.output_padding or (), self.strides):
            if p >= s:
                raise ValueError(f"`output_padding` must be smaller than `strides`: got "
                                 f"output_padding={self.output_padding}, strides={self.strides}")

    def _weights(self, channels: int) -> None:
        self.kernel = self._weight("kernel", [*self.kernel_size, self.filters, channels],
                                   "kernel")

    def _sizes(self, spatial: list) -> list:
        pads = self.output_padding or (None,) * self.rank
        return [transpose_output_length(s, k, self.padding, st, d, p) for s, k, st, d, p in
                zip(spatial, self.kernel_size, self.strides, self.dilation_rate, pads)]

    def _convolve(self, x: Any) -> Any:
        sizes = self._sizes(x.shape.as_list()[1:-1])
        if None in sizes:
            raise ValueError(f"{self.name}: the spatial sizes of the inputs must be known, "
                             f"got shape {x.shape}")
        padding, dilations = self.padding.upper(), self.dilation_rate
        if self.rank == 3:
            return conv3d_transpose(x, self.kernel, [x.shape[0], *sizes, self.filters],
                                    self.strides, padding, dilations=dilations)
        batch = cast(array.shape(x)[:1], _dtypes.int32)
        if self.rank == 1:  # the 2-D kernel on a height-1 view
            x = reshaping.expand_dims(x, 1)
            kernel, strides = reshaping.expand_dims(self.kernel, 0), (1, *self.strides)
            dilations, sizes = (1, *dilations), [1, *sizes]
        else:
            kernel, strides = self.kernel, self.strides
        shape = concat([batch, [*sizes, self.filters]], 0)
        out = conv2d_transpose(x, kernel, shape, strides, padding, dilations=dilations)
        return reshaping.squeeze(out, [1]) if self.rank == 1 else out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, spatial, _ = self._dims(input_shape)
        return self._layout(batch, self._sizes(spatial), self.filters)

    def get_config(self) -> dict:
        return {**super().get_config(), "output_padding": self.output_padding}


class Conv1DTranspose(_ConvTranspose):
    """The transpose of Conv1D (a "deconvolution"): [batch, steps, channels] inputs, kernel
    [width, filters, channels]; valid padding gives steps * stride + max(k - stride, 0)."""
    rank = 1


class Conv2DTranspose(_ConvTranspose):
    """The transpose of Conv2D: kernel [height, width, filters, channels].

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same")(
    ...     kf.ones([1, 4, 4, 2])).shape
    TensorShape([1, 8, 8, 3])
    """
    rank = 2


class Conv3DTranspose(_ConvTranspose):
    """The transpose of Conv3D: kernel [depth, height, width, filters, channels]."""
    rank = 3


class _Depthwise(_Conv):
    """Each input channel convolved with its own `depth_multiplier` filters."""

    def __init__(self, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 depth_multiplier: int = 1, data_format: Optional[str] = None,
                 dilation_rate: Any = 1, activation: Any = None, use_bias: bool = True,
                 depthwise_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 depthwise_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, depthwise_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, bias_constraint,
                         activity_regularizer, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = _initializers.get(depthwise_initializer)
        self.depthwise_regularizer = _regularizers.get(depthwise_regularizer)
        self.depthwise_constraint = _constraints.get(depthwise_constraint)

    _kernel_name = "kernel"

    def _weights(self, channels: int) -> None:
        kernel = self._weight(self._kernel_name,
                              [*self.kernel_size, channels, self.depth_multiplier],
                              "depthwise")
        setattr(self, self._kernel_name, kernel)

    def _out_channels(self, channels: int) -> int:
        return channels * self.depth_multiplier

    def _depthwise(self, x: Any) -> Any:
        kernel = getattr(self, self._kernel_name)
        if self.rank == 1:
            out = depthwise_conv2d(reshaping.expand_dims(x, 1),
                                   reshaping.expand_dims(kernel, 0), (1, *self.strides),
                                   self.padding.upper(), dilations=(1, *self.dilation_rate))
            return reshaping.squeeze(out, [1])
        return depthwise_conv2d(x, kernel, self.strides, self.padding.upper(),
                                dilations=self.dilation_rate)

    _convolve = _depthwise

    def _options_config(self) -> dict:
        return {"depthwise_initializer": _initializers.serialize(self.depthwise_initializer),
                "bias_initializer": _initializers.serialize(self.bias_initializer),
                "depthwise_regularizer": _regularizers.serialize(self.depthwise_regularizer),
                "bias_regularizer": _regularizers.serialize(self.bias_regularizer),
                "depthwise_constraint": _constraints.serialize(self.depthwise_constraint),
                "bias_constraint": _constraints.serialize(self.bias_constraint)}

    def get_config(self) -> dict:
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                **self._options_config()}


class DepthwiseConv1D(_Depthwise):
    """Per-channel 1-D convolution: kernel [width, channels, depth_multiplier]; output
    channel c * depth_multiplier + m."""
    rank = 1


class DepthwiseConv2D(_Depthwise):
    """Per-channel 2-D convolution: kernel [height, width, channels, depth_multiplier].

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.DepthwiseConv2D(3, depth_multiplier=2)(kf.ones([1, 5, 5, 3])).shape
    TensorShape([1, 3, 3, 6])
    """
    rank = 2


class _Separable(_Depthwise):
    """A depthwise convolution, then a 1x1 convolution to `filters` channels."""
    _kernel_name = "depthwise_kernel"

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: Optional[str] = None,
                 dilation_rate: Any = 1, depth_multiplier: int = 1,
                 pointwise_initializer: Any = "glorot_uniform",
                 pointwise_regularizer: Any = None, pointwise_constraint: Any = None,
                 **kwargs: Any):
        super().__init__(kernel_size, strides, padding, depth_multiplier, data_format,
                         dilation_rate, **kwargs)
        self.filters = boundary.positive_int(filters, "filters")
        self.pointwise_initializer = _initializers.get(pointwise_initializer)
        self.pointwise_regularizer = _regularizers.get(pointwise_regularizer)
        self.pointwise_constraint = _constraints.get(pointwise_constraint)

    def _weights(self, channels: int) -> None:
        super()._weights(channels)
        self.pointwise_kernel = self._weight(
            "pointwise_kernel",
            [*(1,) * self.rank, channels * self.depth_multiplier, self.filters], "pointwise")

    def _out_channels(self, channels: int) -> int:
        return self.filters

    def _convolve(self, x: Any) -> Any:
        depthwise = self._depthwise(x)
        if self.rank == 1:
            out = conv.conv2d(reshaping.expand_dims(depthwise, 1),
                              reshaping.expand_dims(self.pointwise_kernel, 0), 1, "VALID")
            return reshaping.squeeze(out, [1])
        return conv.conv2d(depthwise, self.pointwise_kernel, 1, "VALID")

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters,
                "pointwise_initializer": _initializers.serialize(self.pointwise_initializer),
                "pointwise_regularizer": _regularizers.serialize(self.pointwise_regularizer),
                "pointwise_constraint": _constraints.serialize(self.pointwise_constraint)}


class SeparableConv1D(_Separable):
    """Depthwise-separable 1-D convolution: depthwise_kernel [width, channels, multiplier],
    pointwise_kernel [1, channels * multiplier, filters]."""
    rank = 1


class SeparableConv2D(_Separable):
    """Depthwise-separable 2-D convolution: depthwise_kernel [h, w, channels, multiplier],
    pointwise_kernel [1, 1, channels * multiplier, filters]."""
    rank = 2


Convolution3D = Conv3D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose, Convolution3DTranspose = Conv2DTranspose, Conv3DTranspose
SeparableConvolution1D, SeparableConvolution2D = SeparableConv1D, SeparableConv2D
