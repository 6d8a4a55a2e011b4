"""Two layers transformer code uses: EinsumDense (a dense layer written as an einsum, the
projection inside Keras's MultiHeadAttention) and RMSNormalization
(x * rsqrt(mean(x^2) + epsilon) * scale over `axis`)."""
from __future__ import annotations

import string
from typing import Any

from kilnflow.keras import activations as _activations
from kilnflow.keras.layers.base import Layer
from kilnflow.keras.layers.weight_options import (kernel_and_bias_config,
                                                    set_kernel_and_bias_options)
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops.linalg import einsum
from kilnflow.shapes import TensorShape


def _analyze(equation: str, bias_axes: Any, input_shape: list, output_shape: list) -> tuple:
    """(kernel shape, bias shape or None, full output shape, the equation with any '...'
    spelled out as letters) as Keras derives them."""
    try:
        inputs, output = equation.replace(" ", "").split("->")
        data, weight = inputs.split(",")
    except ValueError:
        raise ValueError(f"Invalid einsum equation {equation!r}. Equations must be in the "
                         "form [X],[Y]->[Z]") from None
    if data.startswith("..."):  # the ellipsis: leading input dims carried to the output
        spare = [c for c in string.ascii_letters if c not in equation][:len(input_shape) -
                                                                        len(data) + 3]
        data = "".join(spare) + data[3:]
        output = "".join(spare) + output.replace("...", "")
        full = list(input_shape[:len(spare)]) + list(output_shape)
    elif len(output) == len(output_shape) + 1:
        full = [input_shape[0]] + list(output_shape)
    else:
        full = list(output_shape)
    if len(full) != len(output):
        raise ValueError(f"EinsumDense: output_shape {output_shape} does not fit the output "
                         f"spec {output!r} of {equation!r}")
    kernel = []
    for c in weight:
        if c in data:
            kernel.append(input_shape[data.index(c)])
        elif c in output:
            kernel.append(full[output.index(c)])
        else:
            raise ValueError(f"Weight dimension {c!r} did not have a match in either the "
                             f"input spec {data!r} or the output spec {output!r}")
    bias = None
    if bias_axes:
        missing = [c for c in bias_axes if c not in output]
        if missing:
            raise ValueError(f"Bias dimension {missing[0]!r} was requested, but is not part "
                             f"of the output spec {output!r}")
        first = min(output.index(c) for c in bias_axes)
        bias = [full[first + i] if c in bias_axes else 1
                for i, c in enumerate(output[first:])]
    return kernel, bias, full, f"{data},{weight}->{output}"


class EinsumDense(Layer):
    """A dense layer as an einsum: `equation` "<input>,<kernel>-><output>", the kernel's
    dims taken from the input and `output_shape` (without the batch dim).

    >>> import kilnflow as kf
    >>> from kilnflow import keras
    >>> keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 4))(
    ...     kf.ones([3, 5, 6])).shape
    TensorShape([3, 5, 2, 4])
    """

    def __init__(self, equation: str, output_shape: Any, activation: Any = None,
                 bias_axes: Any = None, kernel_initializer: Any = "glorot_uniform",
                 bias_initializer: Any = "zeros", kernel_regularizer: Any = None,
                 bias_regularizer: Any = None, kernel_constraint: Any = None,
                 bias_constraint: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.equation = equation
        self.partial_output_shape = tuple(output_shape) if isinstance(
            output_shape, (list, tuple)) else (output_shape,)
        self.bias_axes = bias_axes
        self.activation = _activations.get(activation)
        set_kernel_and_bias_options(self, kernel_initializer, bias_initializer,
                                    kernel_regularizer, bias_regularizer, kernel_constraint,
                                    bias_constraint)

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        kernel, bias, full, self._explicit = _analyze(self.equation, self.bias_axes, dims,
                                                      list(self.partial_output_shape))
        self.full_output_shape = tuple(full)
        self.kernel = self.add_weight("kernel", kernel, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = None if bias is None else self.add_weight(
            "bias", bias, initializer=self.bias_initializer, regularizer=self.bias_regularizer,
            constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs: Any) -> Any:
        out = einsum(self._explicit, inputs, self.kernel)
        if self.bias is not None:
            out = out + self.bias
        return self.activation(out)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        return TensorShape(_analyze(self.equation, self.bias_axes, dims,
                                    list(self.partial_output_shape))[2])

    def get_config(self) -> dict:
        return {**super().get_config(), "output_shape": self.partial_output_shape,
                "equation": self.equation,
                "activation": _activations.serialize(self.activation),
                "bias_axes": self.bias_axes, **kernel_and_bias_config(self)}


class RMSNormalization(Layer):
    """x * rsqrt(mean(x^2 over `axis`) + epsilon) * scale, `scale` a learned weight (ones)."""

    def __init__(self, axis: Any = -1, epsilon: float = 1e-6, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = [axis] if isinstance(axis, int) else list(axis)
        self.epsilon = float(epsilon)

    def build(self, input_shape: Any) -> None:
        dims = TensorShape(input_shape).as_list()
        shape = [dims[a] for a in self.axis]
        self.scale = self.add_weight("scale", shape, initializer="ones")
        self.built = True

    def call(self, inputs: Any) -> Any:
        x = kmath.cast(inputs, self.scale.dtype)
        mean_square = reduction.reduce_mean(kmath.square(x), self.axis, keepdims=True)
        return x * kmath.rsqrt(mean_square + self.epsilon) * self.scale

    def compute_output_shape(self, input_shape: Any) -> Any:
        return input_shape

    def get_config(self) -> dict:
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon}
