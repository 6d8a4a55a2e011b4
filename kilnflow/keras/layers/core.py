"""Core layers: Input/InputLayer, Dense, Activation, Flatten, Reshape, Dropout, Embedding,
Lambda, and the merging layers (Add, Subtract, Multiply, Average, Maximum, Minimum,
Concatenate). Each call uses public kf ops only, so it runs eagerly and traced alike."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras import activations as _activations
from kilnflow.keras import backend
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers
from kilnflow.keras.layers.base import KerasTensor, Layer, Node
from kilnflow.keras.layers.weight_options import (kernel_and_bias_config,
                                                    set_kernel_and_bias_options)
from kilnflow.keras.layers import boundary
from kilnflow.keras.layers.layer_utils import InputSpec
from kilnflow.ops import array, slicing
from kilnflow.ops import math as kmath
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.ops import joining, reshaping
from kilnflow.ops import linalg


# ---------------------------------------------------------------- inputs

class InputLayer(Layer):
    """The entry point of a functional model: holds the KerasTensor that `Input` returns."""

    def __init__(self, input_shape: Any = None, batch_size: Optional[int] = None,
                 dtype: Any = None, name: Optional[str] = None, batch_input_shape: Any = None,
                 shape: Any = None, batch_shape: Any = None, sparse: Any = None,
                 ragged: Any = None, **kwargs: Any):
        if sparse or ragged:
            raise NotImplementedError("InputLayer(sparse=True / ragged=True) is not "
                                      "supported: kilnflow has dense tensors only")
        shape = shape if shape is not None else input_shape
        batch_shape = batch_shape if batch_shape is not None else batch_input_shape
        if batch_shape is None:
            if shape is None:
                raise ValueError("InputLayer needs `shape` (without the batch dim) or "
                                 "`batch_shape`")
            batch_shape = (batch_size,) + tuple(shape)
        super().__init__(name=name or backend.unique_object_name("input_layer"),
                         dtype=dtype or backend.floatx(), **kwargs)
        self._batch_input_shape = tuple(batch_shape)
        self.built = True
        tensor = KerasTensor(batch_shape, self._dtype, name=self.name, history=(self, 0, 0))
        self._inbound_nodes.append(Node(self, (), {}, tensor))
        self._last_output_shape = tensor.shape
        self.output = tensor

    def get_config(self) -> dict:
        return {"batch_shape": self._batch_input_shape, "dtype": self.dtype,
                "sparse": False, "name": self.name}


def Input(shape: Any = None, batch_size: Optional[int] = None, name: Optional[str] = None,
          dtype: Any = None, batch_shape: Any = None, **kwargs: Any) -> KerasTensor:
    """A symbolic input for the functional API: `shape` excludes the batch dim.

    >>> from kilnflow import keras
    >>> x = keras.Input(shape=(8,))
    >>> keras.layers.Dense(4)(x).shape
    TensorShape([None, 4])
    """
    layer = InputLayer(shape=shape, batch_size=batch_size, name=name, dtype=dtype,
                       batch_shape=batch_shape, **kwargs)
    return layer.output


# ---------------------------------------------------------------- Dense and friends

class Dense(Layer):
    """activation(inputs @ kernel + bias) over the last axis.

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> layer = keras.layers.Dense(3, kernel_initializer="ones")
    >>> layer(kf.ones([2, 4])).numpy().tolist()
    [[4.0, 4.0, 4.0], [4.0, 4.0, 4.0]]
    """

    def __init__(self, units: int, activation: Any = None, use_bias: bool = True,
                 kernel_initializer: Any = "glorot_uniform", bias_initializer: Any = "zeros",
                 kernel_regularizer: Any = None, bias_regularizer: Any = None,
                 activity_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        self.supports_masking = True
        if int(units) <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        self.units = boundary.positive_int(units, "units")
        self.activation = _activations.get(activation)
        self.use_bias = use_bias
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer,
                                    kernel_regularizer, bias_regularizer, kernel_constraint,
                                    bias_constraint)

    def build(self, input_shape: Any) -> None:
        last = TensorShape(input_shape)[-1]
        if last is None:
            raise ValueError(f"{self.name}: the last dimension of the inputs to a Dense layer "
                             f"should be defined. Found None (input shape {input_shape}).")
        self.kernel = self.add_weight("kernel", [last, self.units],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight("bias", [self.units], initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint) if self.use_bias else None
        self.built = True

    def call(self, inputs: Any) -> Any:
        if inputs.shape.rank == 2:
            out = linalg.matmul(inputs, self.kernel)
        else:
            out = linalg.tensordot(inputs, self.kernel, [[inputs.shape.rank - 1], [0]])
        if self.bias is not None:
            out = out + self.bias
        return self.activation(out)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(TensorShape(input_shape).as_list()[:-1] + [self.units])

    def get_config(self) -> dict:
        return {**super().get_config(), "units": self.units,
                "activation": _activations.serialize(self.activation),
                "use_bias": self.use_bias,
                **kernel_and_bias_config(self)}


class Activation(Layer):
    """Applies an activation function (a name or a callable)."""

    def __init__(self, activation: Any, **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = _activations.get(activation)

    def call(self, inputs: Any) -> Any:
        return self.activation(inputs)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "activation": _activations.serialize(self.activation)}


class Flatten(Layer):
    """Reshapes [batch, d1, d2, ...] to [batch, d1 * d2 * ...]."""

    def __init__(self, data_format: Optional[str] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.input_spec = InputSpec(min_ndim=1)  # TF: a scalar has nothing to flatten
        self.data_format = data_format or "channels_last"

    def call(self, inputs: Any) -> Any:
        if self.data_format == "channels_first" and inputs.shape.rank and inputs.shape.rank > 2:
            rank = inputs.shape.rank
            inputs = reshaping.transpose(inputs, [0] + list(range(2, rank)) + [1])
        inner = TensorShape(inputs.shape[1:])
        if inner.is_fully_defined():
            return reshaping.reshape(inputs, [-1, inner.num_elements()])
        return reshaping.reshape(inputs, [array.shape(inputs)[0], -1])

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape)
        inner = TensorShape(shape[1:])
        return TensorShape([shape[0], inner.num_elements()])

    def get_config(self) -> dict:
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """Reshapes the non-batch dims to `target_shape` (one entry may be -1)."""

    def __init__(self, target_shape: Sequence, **kwargs: Any):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def call(self, inputs: Any) -> Any:
        if -1 not in self.target_shape:
            return reshaping.reshape(inputs, (-1,) + self.target_shape)
        batch = inputs.shape[0] if inputs.shape.rank and inputs.shape[0] is not None \
            else array.shape(inputs)[0]
        return reshaping.reshape(inputs, [batch, *self.target_shape])

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape)
        target = list(self.target_shape)
        if -1 in target:
            inner = TensorShape(shape[1:]).num_elements()
            known = int(np.prod([d for d in target if d != -1]))
            target[target.index(-1)] = inner // known if inner is not None else None
        return TensorShape([shape[0]] + target)

    def get_config(self) -> dict:
        return {**super().get_config(), "target_shape": self.target_shape}


class Dropout(Layer):
    """During training, zeroes inputs with probability `rate` and scales the rest by
    1 / (1 - rate); at inference it passes inputs through unchanged."""

    def __init__(self, rate: float, noise_shape: Any = None, seed: Optional[int] = None,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.supports_masking = True
        if not 0 <= rate <= 1:
            raise ValueError(f"Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        self.rate = float(rate)
        self.noise_shape = noise_shape
        self.seed = seed

    def call(self, inputs: Any, training: Any = None) -> Any:
        if training and self.rate > 0:
            return backend.nn().dropout(inputs, self.rate, noise_shape=self.noise_shape,
                                        seed=self.seed)
        return inputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)

    def get_config(self) -> dict:
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}


class Embedding(Layer):
    """Maps integer indices in [0, input_dim) to rows of a trainable [input_dim, output_dim]
    matrix."""

    def __init__(self, input_dim: int, output_dim: int, embeddings_initializer: Any = "uniform",
                 embeddings_regularizer: Any = None, mask_zero: bool = False,
                 input_length: Optional[int] = None, **kwargs: Any):
        if input_length is not None and "input_shape" not in kwargs:
            kwargs["input_shape"] = (input_length,)
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = (boundary.positive_int(input_dim, "input_dim"),
                                             boundary.positive_int(output_dim, "output_dim"))
        self.mask_zero = bool(mask_zero)
        if embeddings_initializer == "uniform":
            embeddings_initializer = _initializers.RandomUniform(-0.05, 0.05)
        self.embeddings_initializer = _initializers.get(embeddings_initializer)
        self.embeddings_regularizer = _regularizers.get(embeddings_regularizer)

    def build(self, input_shape: Any) -> None:
        self.embeddings = self.add_weight("embeddings", [self.input_dim, self.output_dim],
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer)
        self.built = True

    def call(self, inputs: Any) -> Any:
        if inputs.dtype not in (_dtypes.int32, _dtypes.int64):
            inputs = kmath.cast(inputs, _dtypes.int32)
        return slicing.gather(self.embeddings, inputs)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        """With mask_zero, index 0 is padding: the mask is inputs != 0."""
        if not self.mask_zero:
            return None
        return kmath.not_equal(inputs, kmath.cast(0, inputs.dtype))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape).concatenate([self.output_dim])

    def compute_output_signature(self, input_signature: Any) -> TensorSpec:
        return TensorSpec(self.compute_output_shape(input_signature.shape), self._dtype)

    def get_config(self) -> dict:
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim, "mask_zero": self.mask_zero,
                "embeddings_initializer": _initializers.serialize(self.embeddings_initializer)}


class Lambda(Layer):
    """Wraps a function of tensors as a layer: `Lambda(lambda x: x * 2)`. Extra positional
    call arguments are passed on; `arguments` adds keyword arguments."""

    def __init__(self, function: Callable, output_shape: Any = None, mask: Any = None,
                 arguments: Optional[dict] = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape

    def call(self, inputs: Any, *args: Any) -> Any:
        return self.function(inputs, *args, **self.arguments)

    def get_config(self) -> dict:
        raise NotImplementedError("Lambda layers hold Python code, which kilnflow never "
                                  "serializes; rebuild them in code")


# ---------------------------------------------------------------- merging

def _no_scalars(layer: Layer, inputs: Sequence) -> None:
    """Keras 3 merges tensors with a batch dimension: a scalar input is a ValueError there
    (its rank-matching reshape fails), not a broadcast."""
    for i, x in enumerate(inputs):
        if getattr(getattr(x, "shape", None), "rank", None) == 0:
            raise ValueError(f"A {type(layer).__name__} layer's `inputs[{i}]` is a scalar; "
                             f"every input needs a batch dimension. Received: inputs={inputs}")


class _Merge(Layer):
    """Combines a list of same-shaped tensors elementwise."""

    def _merge(self, a: Any, b: Any) -> Any:
        raise NotImplementedError

    def call(self, inputs: Sequence) -> Any:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A {type(self).__name__} layer should be called on a list of at "
                             f"least 2 inputs. Received: inputs={inputs}")
        _no_scalars(self, inputs)
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return out

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The inputs' shapes broadcast together (None where any is unknown)."""
        shapes = [TensorShape(s).as_list() for s in input_shape]
        rank = max(len(s) for s in shapes)
        out = []
        for dims in zip(*[[1] * (rank - len(s)) + s for s in shapes]):
            known = [d for d in dims if d is not None and d != 1]
            out.append(None if None in dims and not known else (known[0] if known else 1))
        return TensorShape(out)


class Add(_Merge):
    def _merge(self, a: Any, b: Any) -> Any:
        return a + b


class Multiply(_Merge):
    def _merge(self, a: Any, b: Any) -> Any:
        return a * b


class Maximum(_Merge):
    def _merge(self, a: Any, b: Any) -> Any:
        return kmath.maximum(a, b)


class Minimum(_Merge):
    def _merge(self, a: Any, b: Any) -> Any:
        return kmath.minimum(a, b)


class Subtract(_Merge):
    def call(self, inputs: Sequence) -> Any:
        if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
            raise ValueError("A Subtract layer should be called on exactly 2 inputs")
        _no_scalars(self, inputs)
        return inputs[0] - inputs[1]


class Average(_Merge):
    def _merge(self, a: Any, b: Any) -> Any:
        return a + b

    def call(self, inputs: Sequence) -> Any:
        return super().call(inputs) / float(len(inputs))


class Concatenate(Layer):
    """Concatenates a list of tensors along `axis`."""

    def __init__(self, axis: int = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs: Sequence) -> Any:
        return joining.concat(list(inputs), axis=self.axis)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shapes = [TensorShape(s).as_list() for s in input_shape]
        out = list(shapes[0])
        axis = self.axis % len(out)
        sizes = [s[axis] for s in shapes]
        out[axis] = None if None in sizes else sum(sizes)
        return TensorShape(out)

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis}
