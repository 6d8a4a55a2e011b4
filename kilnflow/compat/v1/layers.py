"""kf.compat.v1.layers: the functional TF1 layers migration code calls, built on
get_variable so they share variables through variable scopes ('dense/kernel',
'dense_1/kernel', or `name` with `reuse`). Only dense and flatten: other TF1 layers
(conv2d, dropout, batch_normalization, ...) are not provided; use kf.keras.layers.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from kilnflow.compat.v1.variable_scope import get_variable, variable_scope, zeros_initializer
from kilnflow.ops.array import shape as _shape
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.linalg import tensordot
from kilnflow.ops.reshaping import reshape
from kilnflow.tensor import Tensor


def dense(inputs: Any, units: int, activation: Optional[Callable] = None,
          use_bias: bool = True, kernel_initializer: Any = None,
          bias_initializer: Any = None, kernel_regularizer: Any = None,
          bias_regularizer: Any = None, activity_regularizer: Any = None,
          kernel_constraint: Any = None, bias_constraint: Any = None, trainable: bool = True,
          name: Optional[str] = None, reuse: Any = None) -> Tensor:
    """activation(inputs @ kernel + bias) over the last dim, with variables
    `<scope>/kernel` and `<scope>/bias` (scope: `name`, else a unique 'dense')."""
    if kernel_constraint is not None or bias_constraint is not None:
        raise NotImplementedError("compat.v1.layers.dense: constraints are not supported")
    x = convert_to_tensor(inputs)
    if x.shape.rank is None or x.shape[-1] is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    with variable_scope(name, default_name="dense", reuse=reuse):
        kernel = get_variable("kernel", [x.shape[-1], units], dtype=x.dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable)
        y = tensordot(x, kernel, [[x.shape.rank - 1], [0]]) if x.shape.rank != 2 else \
            x @ kernel
        if use_bias:
            bias = get_variable("bias", [units], dtype=x.dtype, trainable=trainable,
                                initializer=bias_initializer or zeros_initializer(),
                                regularizer=bias_regularizer)
            y = y + bias
        if activation is not None:
            y = activation(y)
    return y


def flatten(inputs: Any, name: Optional[str] = None, data_format: str = "channels_last") -> Tensor:
    """Each example (dim 0) as a vector: [batch, d1, d2, ...] -> [batch, d1 * d2 * ...]."""
    x = convert_to_tensor(inputs)
    if data_format == "channels_first" and x.shape.rank is not None and x.shape.rank > 2:
        from kilnflow.ops.reshaping import transpose
        x = transpose(x, [0] + list(range(2, x.shape.rank)) + [1])
    known = x.shape.as_list()[1:] if x.shape.rank is not None else None
    if known is not None and all(d is not None for d in known):
        size = 1
        for d in known:
            size *= d
        return reshape(x, [-1, size], name=name)
    return reshape(x, [_shape(x)[0], -1], name=name)
