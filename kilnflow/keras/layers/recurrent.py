"""Recurrent layers: RNN(cell) with SimpleRNNCell, LSTMCell and GRUCell, and the SimpleRNN,
LSTM and GRU layers built on them.

The recurrence walks the time axis with kf.while_loop: eagerly a Python loop over eager
tensors, under @kf.function ONE While op whose body is a single step (so unknown time
lengths work and the graph does not grow with the sequence). Each step projects its own
inputs, as Keras cells do. return_sequences collects the step outputs in a TensorArray.
unroll=True (Keras's flag) writes the steps out one by one instead, projecting the inputs
of all steps with one matmul.
"""
from __future__ import annotations

from typing import Any

from kilnflow import errors
from kilnflow.keras import activations as _activations
from kilnflow.keras import backend
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers import boundary
from kilnflow.ops import math as kmath
from kilnflow.ops import array
from kilnflow.ops import while_loop as while_ops
from kilnflow.ops.tensor_array import TensorArray
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape
from kilnflow.ops import joining, reshaping
from kilnflow.ops import linalg


def _dims(x: Any) -> list:
    """x's dims: Python ints where static, scalar tensors where known only at run time."""
    return [array.shape(x)[i] if d is None else d for i, d in enumerate(x.shape.as_list())]


def _project(x: Any, kernel: Any) -> Any:
    """x @ kernel over the last axis. A rank-3 x is folded into one 2-D matmul, which is
    much faster than a rank-3 tensordot (an einsum)."""
    if x.shape.rank == 2:
        return linalg.matmul(x, kernel)
    out = linalg.matmul(reshaping.reshape(x, [-1, x.shape[-1]]), kernel)
    out = reshaping.reshape(out, _dims(x)[:-1] + [kernel.shape[-1]])
    out.set_shape(x.shape[:-1].concatenate([kernel.shape[-1]]))  # reshape by tensors: lost
    return out


class _Cell(Layer):
    """A recurrent cell: `project(x, input_weights())` (x @ kernel + bias, for one step or
    all at once), then `step(projected, states, recurrent_weights())`.

    The weights are passed as tensors read once before the time loop: the loop body then
    holds no variable reads, so it stays a stateless While and gradients reach the weights
    through the loop's captured inputs.
    """

    gates = 1

    def __init__(self, units: int, activation: Any = "tanh", use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform",
                 recurrent_initializer: Any = "orthogonal", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, recurrent_regularizer: Any = None,
                 bias_regularizer: Any = None, dropout: float = 0.0,
                 recurrent_dropout: float = 0.0, **kwargs: Any):
        super().__init__(**kwargs)
        self.units = boundary.positive_int(units, "units")
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.recurrent_initializer = _initializers.get(recurrent_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.kernel_regularizer = _regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = _regularizers.get(recurrent_regularizer)
        self.bias_regularizer = _regularizers.get(bias_regularizer)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))

    @property
    def state_size(self) -> Any:
        return self.units

    def _bias_shape(self) -> list:
        return [self.gates * self.units]

    def _bias_initializer(self) -> Any:
        return self.bias_initializer

    def build(self, input_shape: Any) -> None:
        features = TensorShape(input_shape)[-1]
        if features is None:
            raise ValueError(f"{self.name}: the feature dimension of the inputs must be known")
        width = self.gates * self.units
        self.kernel = self.add_weight("kernel", [features, width],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", [self.units, width],
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer)
        self.bias = self.add_weight("bias", self._bias_shape(),
                                    initializer=self._bias_initializer(),
                                    regularizer=self.bias_regularizer) if self.use_bias else None
        self.built = True

    def input_weights(self) -> list:
        """[kernel, input bias or None]."""
        bias = convert_to_tensor(self.bias) if self.bias is not None else None
        return [convert_to_tensor(self.kernel), bias]

    def project(self, x: Any, input_weights: list) -> Any:
        kernel, bias = input_weights
        out = _project(x, kernel)
        return out + bias if bias is not None else out

    def recurrent_weights(self) -> list:
        return [convert_to_tensor(self.recurrent_kernel)]

    def step(self, x_proj: Any, states: list, weights: list) -> tuple:
        raise NotImplementedError

    def call(self, inputs: Any, states: Any) -> tuple:
        """One step on [batch, features] inputs: (output, new states)."""
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        x_proj = self.project(inputs, self.input_weights())
        return self.step(x_proj, states, self.recurrent_weights())

    def get_config(self) -> dict:
        return {**super().get_config(), "units": self.units,
                "activation": _activations.serialize(self.activation),
                "use_bias": self.use_bias, "dropout": self.dropout,
                "recurrent_dropout": self.recurrent_dropout,
                "kernel_initializer": _initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": _initializers.serialize(self.recurrent_initializer),
                "bias_initializer": _initializers.serialize(self.bias_initializer)}


class SimpleRNNCell(_Cell):
    """h = activation(x @ kernel + h @ recurrent_kernel + bias)."""

    def step(self, x_proj: Any, states: list, weights: list) -> tuple:
        h = self.activation(x_proj + linalg.matmul(states[0], weights[0]))
        return h, [h]


class LSTMCell(_Cell):
    """Long short-term memory: gates i, f, c, o (Keras order); states [h, c]."""

    gates = 4

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", unit_forget_bias: bool = True,
                 **kwargs: Any):
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = _activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias

    @property
    def state_size(self) -> Any:
        return [self.units, self.units]

    def _bias_initializer(self) -> Any:
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, units = self.bias_initializer, self.units

        def init(shape: Any, dtype: Any = None) -> Any:
            # The forget gate starts at 1 so early training remembers (Jozefowicz 2015).
            return joining.concat([base([units], dtype), array.ones([units], dtype),
                                 base([2 * units], dtype)], 0)
        return init

    def step(self, x_proj: Any, states: list, weights: list) -> tuple:
        h, c = states
        z = x_proj + linalg.matmul(h, weights[0])
        z_i, z_f, z_c, z_o = joining.split(z, 4, axis=-1)
        act, gate = self.activation, self.recurrent_activation
        c = gate(z_f) * c + gate(z_i) * act(z_c)
        h = gate(z_o) * act(c)
        return h, [h, c]

    def get_config(self) -> dict:
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias,
                "recurrent_activation": _activations.serialize(self.recurrent_activation)}


class GRUCell(_Cell):
    """Gated recurrent unit, gates z, r, h (Keras order). With reset_after (the default,
    cuDNN-compatible) the reset gate applies after the recurrent matmul and the bias has
    an input row and a recurrent row."""

    gates = 3

    def __init__(self, units: int, activation: Any = "tanh",
                 recurrent_activation: Any = "sigmoid", reset_after: bool = True,
                 **kwargs: Any):
        super().__init__(units, activation, **kwargs)
        self.recurrent_activation = _activations.get(recurrent_activation)
        self.reset_after = reset_after

    def _bias_shape(self) -> list:
        width = 3 * self.units
        return [2, width] if self.reset_after else [width]

    def input_weights(self) -> list:
        kernel, bias = super().input_weights()
        return [kernel, bias[0] if bias is not None and self.reset_after else bias]

    def recurrent_weights(self) -> list:
        weights = super().recurrent_weights()
        if self.reset_after and self.bias is not None:
            weights.append(self.bias[1])
        return weights

    def step(self, x_proj: Any, states: list, weights: list) -> tuple:
        h = states[0]
        x_z, x_r, x_h = joining.split(x_proj, 3, axis=-1)
        gate, units = self.recurrent_activation, self.units
        if self.reset_after:
            inner = linalg.matmul(h, weights[0])
            if len(weights) > 1:
                inner = inner + weights[1]
            r_z, r_r, r_h = joining.split(inner, 3, axis=-1)
            z = gate(x_z + r_z)
            r = gate(x_r + r_r)
            candidate = self.activation(x_h + r * r_h)
        else:
            u = weights[0]
            r_z, r_r = joining.split(linalg.matmul(h, u[:, :2 * units]), 2, axis=-1)
            z = gate(x_z + r_z)
            r = gate(x_r + r_r)
            candidate = self.activation(x_h + linalg.matmul(r * h, u[:, 2 * units:]))
        h = z * h + (1.0 - z) * candidate
        return h, [h]

    def get_config(self) -> dict:
        return {**super().get_config(), "reset_after": self.reset_after,
                "recurrent_activation": _activations.serialize(self.recurrent_activation)}


class RNN(Layer):
    """Runs `cell` over the time axis of [batch, time, features] inputs.

    Returns the last output, or all of them ([batch, time, units]) with
    return_sequences; with return_state, also the final states. The time loop is a
    kf.while_loop (any length, also unknown ones); unroll=True writes it out step by step
    instead, which needs a known length and suits short sequences, as in Keras.
    """

    def __init__(self, cell: _Cell, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 time_major: bool = False, **kwargs: Any):
        if stateful:
            raise NotImplementedError("stateful RNNs are not supported yet")
        if time_major:
            raise NotImplementedError("time_major RNNs are not supported; transpose the "
                                      "inputs to [batch, time, features]")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.unroll = unroll

    def build(self, input_shape: Any) -> None:
        shape = TensorShape(input_shape).with_rank(3)
        self.cell.build(TensorShape([shape[0], shape[2]]))
        self.cell.built = True
        self.built = True

    def _initial_states(self, inputs: Any) -> list:
        batch = inputs.shape[0]
        if batch is None:
            batch = array.shape(inputs)[0]
        sizes = self.cell.state_size
        sizes = sizes if isinstance(sizes, list) else [sizes]
        states = [array.zeros([batch, n], inputs.dtype) for n in sizes]
        for state, n in zip(states, sizes):
            state.set_shape([inputs.shape[0], n])  # zeros([tensor, n]) loses the static n
        return states

    def call(self, inputs: Any, initial_state: Any = None, training: Any = None,
             mask: Any = None) -> Any:
        cell = self.cell
        if getattr(inputs, "shape", None) is not None and inputs.shape.rank == 3 \
                and inputs.shape[1] == 0:  # TF: slicing step 0 of no steps fails
            raise errors.InvalidArgumentError(
                f"{type(self).__name__}: `sequences` has no timesteps (shape "
                f"{inputs.shape}); a recurrent layer needs at least one step")
        if initial_state is None:
            states = self._initial_states(inputs)
        else:
            states = list(initial_state) if isinstance(initial_state, (list, tuple)) \
                else [initial_state]
        if training and cell.dropout > 0:
            # One mask for all time steps, as in Keras.
            inputs = backend.nn().dropout(inputs, cell.dropout,
                                          noise_shape=[None, 1, inputs.shape[2]])
        recurrent_mask = None
        if training and cell.recurrent_dropout > 0:
            recurrent_mask = backend.nn().dropout(array.ones_like(states[0]),
                                                  cell.recurrent_dropout)
        input_weights = cell.input_weights()
        out_index = getattr(cell, "output_state_index", 0)  # StackedRNNCells: the last cell's
        recurrent_weights = cell.recurrent_weights()

        # A masked step keeps the previous states, and its output repeats the previous
        # output (Keras's rule); the mask is time-major, [time, batch, 1], 1 = a real step.
        steps_mask = None if mask is None else reshaping.expand_dims(
            reshaping.transpose(kmath.cast(mask, inputs.dtype), [1, 0]), -1)

        def cell_step(x_proj: Any, states: list, t: Any, last: bool = False) -> tuple:
            dropped = states
            if recurrent_mask is not None:
                dropped = [states[0] * recurrent_mask] + states[1:]
            out, new = cell.step(x_proj, dropped, recurrent_weights)
            if steps_mask is None:
                return out, new
            keep = steps_mask[t]
            if last and not self.return_state:  # only the output is still needed
                new = new[:out_index + 1]
            new = [old + keep * (s - old) for s, old in zip(new, states)]
            return new[out_index], new  # a cell's output is a state: kept ones repeat

        # Time-major, so that step t reads one contiguous [batch, features] slice.
        time_major = reshaping.transpose(inputs, [1, 0, 2])
        if self.unroll:
            result, states = self._unrolled(cell_step, cell.project(time_major, input_weights),
                                            states)
        else:
            result, states = self._looped(
                lambda x_t, states, t: cell_step(cell.project(x_t, input_weights), states, t),
                time_major, states)
        if self.return_sequences:
            result = reshaping.transpose(result, [1, 0, 2])
            result.set_shape([inputs.shape[0], inputs.shape[1], result.shape[-1]])
        if self.return_state:  # StackedRNNCells nests them per cell, as Keras returns them
            nest_states = getattr(cell, "nest_states", list)
            return [result] + nest_states(states)
        return result

    def _looped(self, step: Any, time_major: Any, states: list) -> tuple:
        """(last output or time-major outputs, final states) from a kf.while_loop.

        The body slices its step's raw inputs and projects them: the gradient of a tensor
        the body slices is a full-size array on every iteration, so slicing the inputs
        (often data, which needs no gradient) is far cheaper than slicing a projection of
        all steps made before the loop (measured 3-4x for T=200).
        """
        length = time_major.shape[0]
        if length is None:
            length = array.shape(time_major)[0]
        # Loop variables: step index, states, and (return_sequences) a TensorArray of every
        # output. The last output needs none: a cell's output is its new first state.
        loop_vars = [convert_to_tensor(0), states]
        if self.return_sequences:
            out = states[getattr(self.cell, "output_state_index", 0)]
            loop_vars.append(TensorArray(out.dtype, size=length, element_shape=out.shape))

        def one_step(t: Any, states: list, *outputs: Any) -> list:
            index = length - 1 - t if self.go_backwards else t
            out, states = step(time_major[index], states, index)
            return [t + 1, states] + [ta.write(t, out) for ta in outputs]

        _, states, *outputs = while_ops.while_loop(
            lambda t, *_: t < length, one_step, loop_vars)
        last = states[getattr(self.cell, "output_state_index", 0)]
        return (outputs[0].stack() if outputs else last), states

    def _unrolled(self, cell_step: Any, projected: Any, states: list) -> tuple:
        """The same steps written out one by one (unroll=True)."""
        if projected.shape[0] is None:
            raise ValueError(f"{self.name}: unroll=True needs a known number of time steps "
                             f"(got inputs with time dimension None); use unroll=False")
        steps = joining.unstack(projected, num=projected.shape[0])
        order = list(range(len(steps)))
        outputs = []
        order = order[::-1] if self.go_backwards else order
        for t in order:
            out, states = cell_step(steps[t], states, t, last=t == order[-1])
            outputs.append(out)
        return (joining.stack(outputs) if self.return_sequences else outputs[-1]), states

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """All steps' outputs keep the input mask; a last output or final state has none."""
        out_mask = mask if self.return_sequences else None
        if self.return_state:
            return [out_mask] + [None] * len(self._state_sizes())
        return out_mask

    def _state_sizes(self) -> list:
        sizes = self.cell.state_size
        return sizes if isinstance(sizes, list) else [sizes]

    def get_config(self) -> dict:
        config = {**super().get_config(), "return_sequences": self.return_sequences,
                  "return_state": self.return_state, "go_backwards": self.go_backwards,
                  "unroll": self.unroll}
        if type(self) is RNN:  # a plain RNN rebuilds its cell from the config, as Keras's
            from kilnflow.keras.layers.layer_utils import serialize
            config["cell"] = serialize(self.cell)
        return config

    @classmethod
    def from_config(cls, config: dict) -> "RNN":
        if isinstance(config.get("cell"), dict):
            from kilnflow.keras.layers.layer_utils import deserialize
            config = {**config, "cell": deserialize(config["cell"])}
        return cls(**config)


def _cell_kwargs(kwargs: dict) -> dict:
    names = ("use_bias", "kernel_initializer", "recurrent_initializer", "bias_initializer",
             "kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "dropout",
             "recurrent_dropout", "recurrent_activation", "unit_forget_bias", "reset_after")
    return {k: kwargs.pop(k) for k in names if k in kwargs}


class _CellOwningRNN(RNN):
    """An RNN that makes its own cell from keyword arguments (SimpleRNN, LSTM, GRU)."""

    cell_class: Any = None
    cell_name = ""

    def __init__(self, units: int, activation: Any = "tanh", **kwargs: Any):
        cell_args = _cell_kwargs(kwargs)
        cell = self.cell_class(units, activation, name=self.cell_name,
                               dtype=kwargs.get("dtype"), **cell_args)
        super().__init__(cell, **kwargs)

    @property
    def units(self) -> int:
        return self.cell.units

    def get_config(self) -> dict:
        cell = self.cell.get_config()
        for key in ("name", "trainable", "dtype", "batch_input_shape"):
            cell.pop(key, None)
        return {**super().get_config(), **cell}


class SimpleRNN(_CellOwningRNN):
    """A fully connected RNN: h_t = tanh(x_t W + h_{t-1} U + b).

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.SimpleRNN(4, return_sequences=True)(kf.ones([2, 5, 3])).shape
    TensorShape([2, 5, 4])
    """

    cell_class = SimpleRNNCell
    cell_name = "simple_rnn_cell"


class LSTM(_CellOwningRNN):
    """Long short-term memory over the time axis (states h and c)."""

    cell_class = LSTMCell
    cell_name = "lstm_cell"


class GRU(_CellOwningRNN):
    """Gated recurrent unit over the time axis."""

    cell_class = GRUCell
    cell_name = "gru_cell"
