"""Conv1D, MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D.

Sequences are [batch, steps, channels] (channels_last) or [batch, channels, steps]. The 1-D
forms run the 2-D kernels of kf.nn on a [batch, 1, steps, channels] view, so their values
and gradients are the 2-D ones'. `padding="causal"` pads (kernel - 1) * dilation steps on
the left, so output t sees inputs up to t only.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras import activations as _activations
from kilnflow.keras import backend
from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.weight_options import (kernel_and_bias_config,
                                                    set_kernel_and_bias_options)
from kilnflow.keras.layers.convolutional import _data_format, conv_output_length
from kilnflow.keras.layers import boundary
from kilnflow.keras.layers.layer_utils import InputSpec
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.shapes import TensorShape


def _single(value: Any, what: str) -> int:
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ValueError(f"`{what}` must be an int or a 1-tuple, got {value}")
        value = value[0]
    try:
        if isinstance(value, float) and not value.is_integer():
            raise ValueError("not an integer")  # int() would truncate it
        value = int(value)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"`{what}` must be an int or a 1-tuple, got {value!r}") from None
    if value < 1 and what != "output_padding":  # a window of no size: no work to do
        raise ValueError(f"`{what}` must be positive, got {value}")
    return value


def _to_nlc(x: Any, data_format: str) -> Any:
    return reshaping.transpose(x, [0, 2, 1]) if data_format == "channels_first" else x


def _from_nlc(x: Any, data_format: str) -> Any:
    return reshaping.transpose(x, [0, 2, 1]) if data_format == "channels_first" else x


def _steps_channels(input_shape: Any, data_format: str) -> tuple:
    batch, a, b = TensorShape(input_shape).with_rank(3).as_list()
    return (batch, b, a) if data_format == "channels_first" else (batch, a, b)


def _layout(batch: Any, steps: Any, channels: Any, data_format: str) -> TensorShape:
    if data_format == "channels_first":
        return TensorShape([batch, channels, steps])
    return TensorShape([batch, steps, channels])


class Conv1D(Layer):
    """1-D convolution over steps: `filters` output channels, windows of `kernel_size`.

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.Conv1D(4, 3, padding="causal")(kf.ones([2, 10, 3])).shape
    TensorShape([2, 10, 4])
    """

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: Optional[str] = None,
                 dilation_rate: Any = 1, groups: int = 1, activation: Any = None,
                 use_bias: bool = True, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, activity_regularizer: Any = None,
                 kernel_constraint: Any = None, bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if groups != 1:
            raise NotImplementedError("Conv1D(groups > 1) is not supported yet")
        self.filters = boundary.positive_int(filters, "filters")
        self.kernel_size = (_single(kernel_size, "kernel_size"),)
        self.strides = (_single(strides, "strides"),)
        self.padding = padding.lower()
        if self.padding not in ("valid", "same", "causal"):
            raise ValueError(f"`padding` must be 'valid', 'same' or 'causal', got {padding!r}")
        self.data_format = _data_format(data_format)
        self.dilation_rate = (_single(dilation_rate, "dilation_rate"),)
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer,
                                    kernel_regularizer, bias_regularizer, kernel_constraint,
                                    bias_constraint)

    def build(self, input_shape: Any) -> None:
        channels = _steps_channels(input_shape, self.data_format)[2]
        if channels is None:
            raise ValueError(f"{self.name}: the channel dimension of the inputs should be "
                             f"defined. Found None (input shape {input_shape}).")
        self.kernel = self.add_weight("kernel", [self.kernel_size[0], channels, self.filters],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", [self.filters], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def call(self, inputs: Any) -> Any:
        x = _to_nlc(inputs, self.data_format)
        padding = self.padding
        if padding == "causal":
            left = (self.kernel_size[0] - 1) * self.dilation_rate[0]
            x = reshaping.pad(x, [[0, 0], [left, 0], [0, 0]])
            padding = "valid"
        out = backend.nn().conv2d(reshaping.expand_dims(x, 1),
                                  reshaping.expand_dims(self.kernel, 0),
                                  strides=(1, self.strides[0]), padding=padding.upper(),
                                  dilations=(1, self.dilation_rate[0]))
        out = reshaping.squeeze(out, [1])
        if self.bias is not None:
            out = out + self.bias
        return self.activation(_from_nlc(out, self.data_format))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, steps, _ = _steps_channels(input_shape, self.data_format)
        padding = self.padding
        if padding == "causal":  # the left padding, then a valid convolution
            padding = "valid"
            if steps is not None:
                steps = steps + (self.kernel_size[0] - 1) * self.dilation_rate[0]
        out = conv_output_length(steps, self.kernel_size[0], padding, self.strides[0],
                                 self.dilation_rate[0])
        return _layout(batch, out, self.filters, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
                "activation": _activations.serialize(self.activation),
                "use_bias": self.use_bias,
                **kernel_and_bias_config(self)}


class _Pooling1D(Layer):
    _pool_name = ""

    def __init__(self, pool_size: Any = 2, strides: Any = None, padding: str = "valid",
                 data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.pool_size = (_single(pool_size, "pool_size"),)
        self.strides = (_single(strides, "strides"),) if strides is not None \
            else self.pool_size
        self.padding = padding.lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"`padding` must be 'valid' or 'same', got {padding!r}")
        self.data_format = _data_format(data_format)

    def call(self, inputs: Any) -> Any:
        x = reshaping.expand_dims(_to_nlc(inputs, self.data_format), 1)
        pool = getattr(backend.nn(), self._pool_name)
        out = pool(x, (1, self.pool_size[0]), (1, self.strides[0]), self.padding.upper())
        return _from_nlc(reshaping.squeeze(out, [1]), self.data_format)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, steps, channels = _steps_channels(input_shape, self.data_format)
        out = conv_output_length(steps, self.pool_size[0], self.padding, self.strides[0])
        return _layout(batch, out, channels, self.data_format)

    def get_config(self) -> dict:
        return {**super().get_config(), "pool_size": self.pool_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format}


class MaxPooling1D(_Pooling1D):
    """The maximum over each `pool_size` window of steps (stride defaults to the window)."""
    _pool_name = "max_pool2d"


class AveragePooling1D(_Pooling1D):
    """The mean over each `pool_size` window of steps (stride defaults to the window)."""
    _pool_name = "avg_pool2d"


class _GlobalPooling1D(Layer):
    _reduce: Any = None

    def __init__(self, data_format: Optional[str] = None, keepdims: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = _data_format(data_format)
        self.keepdims = keepdims
        self.input_spec = InputSpec(ndim=3)  # TF checks the rank before any work

    def call(self, inputs: Any) -> Any:
        axis = 2 if self.data_format == "channels_first" else 1
        return type(self)._reduce(inputs, axis, keepdims=self.keepdims)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        batch, _, channels = _steps_channels(input_shape, self.data_format)
        if self.keepdims:
            return _layout(batch, 1, channels, self.data_format)
        return TensorShape([batch, channels])

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalAveragePooling1D(_GlobalPooling1D):
    """The mean over steps: [batch, steps, channels] -> [batch, channels]; with a mask
    (from Embedding(mask_zero=True) or Masking) the mean of the unmasked steps only."""
    _reduce = staticmethod(reduction.reduce_mean)

    def call(self, inputs: Any, mask: Any = None) -> Any:  # type: ignore[override]
        axis = 2 if self.data_format == "channels_first" else 1
        if mask is None:
            return reduction.reduce_mean(inputs, axis, keepdims=self.keepdims)
        weight = reshaping.expand_dims(kmath.cast(mask, inputs.dtype), 3 - axis)
        total = reduction.reduce_sum(inputs * weight, axis, keepdims=self.keepdims)
        return total / reduction.reduce_sum(weight, axis, keepdims=self.keepdims)


class GlobalMaxPooling1D(_GlobalPooling1D):
    """The maximum over steps: [batch, steps, channels] -> [batch, channels]."""
    _reduce = staticmethod(reduction.reduce_max)


Convolution1D = Conv1D
MaxPool1D, AvgPool1D = MaxPooling1D, AveragePooling1D
GlobalAvgPool1D, GlobalMaxPool1D = GlobalAveragePooling1D, GlobalMaxPooling1D
