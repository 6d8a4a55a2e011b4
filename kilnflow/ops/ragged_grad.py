"""RaggedFillEmptyRowsGrad (tf.ragged_fill_empty_rows_grad): the gradient of
ragged_fill_empty_rows with respect to its values and its default value. The output
values at `reverse_index_map` came from the input values; every other output value was
the default, so its gradient sums there."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor


def _rule(reverse_index_map: Any, grad_values: Any) -> list:
    if grad_values.shape.rank not in (None, 1):
        raise ValueError(f"grad_values must be a vector, saw: {grad_values.shape.as_list()}")
    if reverse_index_map.shape.rank not in (None, 1):
        raise ValueError(f"reverse_index_map must be a vector, saw: "
                         f"{reverse_index_map.shape.as_list()}")
    return [TensorSpec(reverse_index_map.shape, grad_values.dtype),
            TensorSpec(TensorShape([]), grad_values.dtype)]


def _kernel(reverse_index_map: np.ndarray, grad_values: np.ndarray) -> tuple:
    n = len(grad_values)
    bad = reverse_index_map[(reverse_index_map < 0) | (reverse_index_map >= n)]
    if bad.size:
        raise errors.InvalidArgumentError(errors.with_location(
            f"Elements in reverse index must be in [0, {n}) but got {int(bad[0])} "
            "[Op:RaggedFillEmptyRowsGrad]"))
    d_values = grad_values[reverse_index_map]
    d_default = np.asarray(grad_values.sum() - d_values.sum(), grad_values.dtype)
    return d_values, d_default


RAGGED_FILL_EMPTY_ROWS_GRAD = defop("RaggedFillEmptyRowsGrad", shape=_rule, kernel=_kernel,
                                    multi_output=True, check_eager=True, same_dtype=False)


def ragged_fill_empty_rows_grad(reverse_index_map: Any, grad_values: Any,
                                name: Optional[str] = None) -> tuple:
    """(d_values, d_default_value): the gradients of ragged_fill_empty_rows' values and
    default value, given the gradient of its output values.

    >>> import kilnflow as kf
    >>> d_values, d_default = kf.ragged_fill_empty_rows_grad([0, 2, 3], [1., 2., 3., 4., 5.])
    >>> d_values.numpy().tolist(), float(d_default)
    ([1.0, 3.0, 4.0], 7.0)
    """
    index = convert_to_tensor(reverse_index_map, _dtypes.int64)
    grads = convert_to_tensor(grad_values)
    return tuple(bind(RAGGED_FILL_EMPTY_ROWS_GRAD, (index, grads), name=name))
