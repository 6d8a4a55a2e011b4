"""ConvLSTM1D/2D/3D: an LSTM whose input and recurrent transformations are convolutions.

Inputs are [batch, time, spatial..., channels] (channels_first: [batch, time, channels,
spatial...]). Per step, with Keras's gate order i, f, c, o:
    z = conv(x_t, kernel) + bias + conv(h, recurrent_kernel, padding="same")
    i, f, o = recurrent_activation(...); c = f c + i activation(z_c); h = o activation(c)
The input convolution takes the layer's strides, padding and dilation. The time loop is a
kf.while_loop (unknown lengths work under kf.function); a masked step keeps the previous
states and repeats the previous output, as Keras's RNNs do. Dropout draws one mask per gate
for the whole sequence (inputs and, with recurrent_dropout, the hidden state).
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.keras import activations as _activations
from kilnflow.keras import constraints as _constraints
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.convolutional import conv_output_length
from kilnflow.keras.layers import boundary
from kilnflow.ops import array, joining, math as kmath, reshaping
from kilnflow.ops import while_loop as while_ops
from kilnflow.ops.conv_extra import conv
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.nn import dropout as nn_dropout
from kilnflow.ops.tensor_array import TensorArray
from kilnflow.shapes import TensorShape


def _tuple(value: Any, rank: int, name: str) -> tuple:
    values = (value,) * rank if isinstance(value, int) else tuple(int(v) for v in value)
    if len(values) != rank:
        raise ValueError(f"The `{name}` argument must be a tuple of {rank} integers. "
                         f"Received: {name}={value}")
    return values


class ConvLSTMCell(Layer):
    """Holds a ConvLSTM layer's kernel, recurrent_kernel and bias (the layer computes)."""

    def call(self, inputs: Any) -> Any:
        raise NotImplementedError("ConvLSTMCell only holds the weights of a ConvLSTM layer")


class ConvLSTM(Layer):
    """The rank-generic ConvLSTM layer (ConvLSTM1D/2D/3D fix `rank`)."""

    rank = 2

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1,
                 padding: str = "valid", data_format: Optional[str] = None,
                 dilation_rate: Any = 1, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 unit_forget_bias: bool = True, kernel_regularizer: Any = None,
                 recurrent_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 recurrent_constraint: Any = None, bias_constraint: Any = None,
                 dropout: float = 0.0, recurrent_dropout: float = 0.0,
                 seed: Optional[int] = None, return_sequences: bool = False,
                 return_state: bool = False, go_backwards: bool = False, stateful: bool = False,
                 unroll: Any = None, **kwargs: Any):
        if stateful:
            raise NotImplementedError("stateful ConvLSTM layers are not supported yet")
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        n = self.rank
        self.filters = boundary.positive_int(filters, "filters")
        self.kernel_size = _tuple(kernel_size, n, "kernel_size")
        self.strides = _tuple(strides, n, "strides")
        self.dilation_rate = _tuple(dilation_rate, n, "dilation_rate")
        self.padding = str(padding).lower()
        if self.padding not in ("valid", "same"):
            raise ValueError(f"Invalid padding: {padding}. Expected 'valid' or 'same'")
        self.data_format = data_format or "channels_last"
        self.activation = _activations.get(activation)
        self.recurrent_activation = _activations.get(recurrent_activation)
        self.use_bias, self.unit_forget_bias = use_bias, unit_forget_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.recurrent_initializer = _initializers.get(recurrent_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.kernel_regularizer = _regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = _regularizers.get(recurrent_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.kernel_constraint = _constraints.get(kernel_constraint)
        self.recurrent_constraint = _constraints.get(recurrent_constraint)
        self.bias_constraint = _constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self.seed = seed
        # Keras 3 keeps the weights on a ConvLSTMCell named "conv_lstm_cell": paths
        # conv_lstm2d/conv_lstm_cell/kernel, and "layers/conv_lstm2d/cell/vars/i" in .weights.h5
        self.cell = ConvLSTMCell(name="conv_lstm_cell", dtype=kwargs.get("dtype"))
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.stateful, self.unroll = go_backwards, stateful, unroll
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape).with_rank(self.rank + 3).as_list()
        channels = shape[2] if self.data_format == "channels_first" else shape[-1]
        if channels is None:
            raise ValueError(f"{self.name}: the channel dimension of the inputs must be known")
        f = self.filters
        cell = self.cell
        cell.kernel = cell.add_weight("kernel", self.kernel_size + (channels, 4 * f),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        cell.recurrent_kernel = cell.add_weight(
            "recurrent_kernel", self.kernel_size + (f, 4 * f),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        cell.bias = None
        if self.use_bias:
            base = self.bias_initializer
            init = base
            if self.unit_forget_bias:
                def init(shape: Any, dtype: Any = None) -> Any:
                    return joining.concat([base([f], dtype), array.ones([f], dtype),
                                           base([2 * f], dtype)], 0)
            cell.bias = cell.add_weight("bias", (4 * f,), initializer=init,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)
        cell.built = True
        self.built = True

    @property
    def kernel(self) -> Any:
        return getattr(self.cell, "kernel", None)

    @property
    def recurrent_kernel(self) -> Any:
        return getattr(self.cell, "recurrent_kernel", None)

    @property
    def bias(self) -> Any:
        return getattr(self.cell, "bias", None)

    def _conv(self, x: Any, kernel: Any, recurrent: bool) -> Any:
        n = self.rank
        if recurrent:
            return conv(x, kernel, [1] * (n + 2), "SAME")
        return conv(x, kernel, [1, *self.strides, 1], self.padding.upper(),
                    dilations=[1, *self.dilation_rate, 1])

    def _gate_masks(self, like: Any, rate: float, training: Any) -> Optional[list]:
        if not training or rate <= 0:
            return None
        ones = array.ones_like(like)
        return [nn_dropout(ones, rate, seed=None if self.seed is None else self.seed + k)
                for k in range(4)]

    def call(self, inputs: Any, mask: Any = None, training: Any = None,
             initial_state: Any = None) -> Any:
        n = self.rank
        x = inputs
        if self.data_format == "channels_first":  # -> [batch, time, spatial..., channels]
            x = reshaping.transpose(x, [0, 1] + list(range(3, n + 3)) + [2])
        kernel = convert_to_tensor(self.kernel)
        recurrent = convert_to_tensor(self.recurrent_kernel)
        bias = None if self.bias is None else convert_to_tensor(self.bias)
        dims = x.shape.as_list()
        # one step's input, for its shape: static zeros when the shape is known
        first = array.zeros([dims[0]] + dims[2:], x.dtype) if None not in dims[:1] + dims[2:] \
            else x[:, 0]
        if initial_state is None:  # zeros shaped as the input convolution's output
            zero = self._conv(array.zeros_like(first), array.zeros_like(
                kernel[..., :self.filters]), False)
            states = [zero, zero]
        else:
            states = [self._to_last(s) for s in initial_state]
        in_masks = self._gate_masks(first, self.dropout, training)
        rec_masks = self._gate_masks(states[0], self.recurrent_dropout, training)
        kernels = joining.split(kernel, 4, axis=-1)
        rkernels = joining.split(recurrent, 4, axis=-1)
        biases = joining.split(bias, 4, axis=-1) if bias is not None else [None] * 4
        time_major = reshaping.transpose(x, [1, 0] + list(range(2, n + 3)))
        # time-major [time, batch] mask: 1 = a real step
        steps_mask = None if mask is None else reshaping.transpose(kmath.cast(mask, x.dtype),
                                                                   [1, 0])

        def step(x_t: Any, h: Any, c: Any, t: Any) -> tuple:
            z = []
            for g in range(4):
                xg = x_t if in_masks is None else x_t * in_masks[g]
                hg = h if rec_masks is None else h * rec_masks[g]
                zg = self._conv(xg, kernels[g], False) + self._conv(hg, rkernels[g], True)
                z.append(zg + biases[g] if biases[g] is not None else zg)
            act, gate = self.activation, self.recurrent_activation
            c_new = gate(z[1]) * c + gate(z[0]) * act(z[2])
            h_new = gate(z[3]) * act(c_new)
            if steps_mask is not None:
                keep = reshaping.reshape(steps_mask[t], [-1] + [1] * (n + 1))
                h_new = h + keep * (h_new - h)
                c_new = c + keep * (c_new - c)
            return h_new, c_new

        length = time_major.shape[0]
        if length is None:
            length = array.shape(time_major)[0]
        loop_vars = [convert_to_tensor(0), states[0], states[1]]
        if self.return_sequences:
            loop_vars.append(TensorArray(states[0].dtype, size=length,
                                         element_shape=states[0].shape))

        def body(t: Any, h: Any, c: Any, *outputs: Any) -> list:
            index = length - 1 - t if self.go_backwards else t
            h, c = step(time_major[index], h, c, index)
            return [t + 1, h, c] + [ta.write(t, h) for ta in outputs]

        _, h, c, *outputs = while_ops.while_loop(lambda t, *_: t < length, body, loop_vars)
        result = h
        if self.return_sequences:
            result = reshaping.transpose(outputs[0].stack(), [1, 0] + list(range(2, n + 3)))
        result = self._from_last(result, sequence=self.return_sequences)
        if self.return_state:
            return [result, self._from_last(h), self._from_last(c)]
        return result

    def _to_last(self, state: Any) -> Any:
        state = convert_to_tensor(state)
        if self.data_format != "channels_first":
            return state
        return reshaping.transpose(state, [0] + list(range(2, self.rank + 2)) + [1])

    def _from_last(self, value: Any, sequence: bool = False) -> Any:
        if self.data_format != "channels_first":
            return value
        lead = [0, 1] if sequence else [0]
        k = len(lead)
        return reshaping.transpose(value, lead + [self.rank + k] + list(range(k, self.rank + k)))

    def compute_output_shape(self, input_shape: Any) -> Any:
        shape = TensorShape(input_shape).as_list()
        cf = self.data_format == "channels_first"
        spatial = shape[3:] if cf else shape[2:-1]
        out = [conv_output_length(d, k, self.padding, s, r) for d, k, s, r in
               zip(spatial, self.kernel_size, self.strides, self.dilation_rate)]
        state = [shape[0]] + ([self.filters] + out if cf else out + [self.filters])
        seq = state[:1] + [shape[1]] + state[1:] if self.return_sequences else state
        if self.return_state:
            return [TensorShape(seq), TensorShape(state), TensorShape(state)]
        return TensorShape(seq)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        out = mask if self.return_sequences else None
        return [out, None, None] if self.return_state else out

    def get_config(self) -> dict:
        ser_i, ser_r = _initializers.serialize, _regularizers.serialize
        return {**super().get_config(), "filters": self.filters,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
                "activation": _activations.serialize(self.activation),
                "recurrent_activation": _activations.serialize(self.recurrent_activation),
                "use_bias": self.use_bias, "unit_forget_bias": self.unit_forget_bias,
                "kernel_initializer": ser_i(self.kernel_initializer),
                "recurrent_initializer": ser_i(self.recurrent_initializer),
                "bias_initializer": ser_i(self.bias_initializer),
                "kernel_regularizer": ser_r(self.kernel_regularizer),
                "recurrent_regularizer": ser_r(self.recurrent_regularizer),
                "bias_regularizer": ser_r(self.bias_regularizer),
                "kernel_constraint": _constraints.serialize(self.kernel_constraint),
                "recurrent_constraint": _constraints.serialize(self.recurrent_constraint),
                "bias_constraint": _constraints.serialize(self.bias_constraint),
                "dropout": self.dropout, "recurrent_dropout": self.recurrent_dropout,
                "seed": self.seed, "return_sequences": self.return_sequences,
                "return_state": self.return_state, "go_backwards": self.go_backwards,
                "stateful": self.stateful, "unroll": self.unroll}


class ConvLSTM1D(ConvLSTM):
    """1D convolutional LSTM over [batch, time, steps, channels]."""
    rank = 1


class ConvLSTM2D(ConvLSTM):
    """2D convolutional LSTM over [batch, time, rows, cols, channels]."""
    rank = 2


class ConvLSTM3D(ConvLSTM):
    """3D convolutional LSTM over [batch, time, d1, d2, d3, channels]."""
    rank = 3
