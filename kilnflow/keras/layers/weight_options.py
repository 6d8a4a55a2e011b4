"""The kernel and bias options that Dense and the convolutions share, resolved once."""
from __future__ import annotations

from typing import Any

from kilnflow.keras import constraints as _constraints
from kilnflow.keras import initializers as _initializers
from kilnflow.keras import regularizers as _regularizers


def set_kernel_and_bias_options(layer: Any, kernel_initializer: Any, bias_initializer: Any,
                                kernel_regularizer: Any, bias_regularizer: Any,
                                kernel_constraint: Any, bias_constraint: Any) -> None:
    """Resolve the six options (names or objects) and set them on `layer`."""
    layer.kernel_initializer = _initializers.get(kernel_initializer)
    layer.bias_initializer = _initializers.get(bias_initializer)
    layer.kernel_regularizer = _regularizers.get(kernel_regularizer)
    layer.bias_regularizer = _regularizers.get(bias_regularizer)
    layer.kernel_constraint = _constraints.get(kernel_constraint)
    layer.bias_constraint = _constraints.get(bias_constraint)


def kernel_and_bias_config(layer: Any) -> dict:
    """The six options as get_config() writes them (serialized)."""
    return {"kernel_initializer": _initializers.serialize(layer.kernel_initializer),
            "bias_initializer": _initializers.serialize(layer.bias_initializer),
            "kernel_regularizer": _regularizers.serialize(layer.kernel_regularizer),
            "bias_regularizer": _regularizers.serialize(layer.bias_regularizer),
            "kernel_constraint": _constraints.serialize(layer.kernel_constraint),
            "bias_constraint": _constraints.serialize(layer.bias_constraint)}
