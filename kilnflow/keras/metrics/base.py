"""Metric, Mean, Sum and MeanMetricWrapper: stateful accumulators held in variables.

The state lives in non-trainable variables, so a compiled train step updates it inside the
graph on every call; result() is computed from the state with kf ops. As in Keras 3, a
Mean first reduces values to one per sample (averaging the non-batch axes), weights them,
and counts samples (or their weights).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.context import eager_mode
from kilnflow.keras import backend
from kilnflow.keras.losses import apply_mask, squeeze_or_expand_to_same_rank
from kilnflow.module import Module, camel_to_snake
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.variables import Variable
from kilnflow.keras.variables import make_variable


class Metric(Module):
    """Base class: subclasses create state with add_weight and implement update_state and
    result."""

    def __init__(self, name: Optional[str] = None, dtype: Any = None):
        super().__init__(name=name or camel_to_snake(type(self).__name__))
        self._dtype = _dtypes.as_dtype(dtype or "float32")
        self._state: list = []
        self._initial: list = []

    @property
    def dtype(self) -> str:
        return self._dtype.name

    def add_weight(self, name: str, shape: Any = (), dtype: Any = None,
                   initializer: Any = "zeros") -> Variable:
        """A state variable (zeros unless `initializer` is a number or an array)."""
        dtype = _dtypes.as_dtype(dtype or self._dtype)
        if isinstance(initializer, str):
            value = np.zeros(tuple(shape), dtype.as_numpy_dtype)
        else:
            value = np.broadcast_to(np.asarray(initializer, dtype.as_numpy_dtype),
                                    tuple(shape)).copy()
        with eager_mode():  # metric state is created once, outside any trace
            # a keras.Variable: name `total`, path `mean/total` (Keras 3's)
            var = make_variable(value, name, f"{self.name}/{name}", dtype=dtype,
                                trainable=False)
        self._state.append(var)
        self._initial.append(value)
        return var

    @property
    def variables(self) -> tuple:
        return tuple(self._state)

    def update_state(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def result(self) -> Any:
        raise NotImplementedError

    def reset_state(self) -> None:
        """Set every state variable back to its initial value."""
        for var, value in zip(self._state, self._initial):
            var.assign(value)

    reset_states = reset_state

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config: dict) -> "Metric":
        return cls(**config)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} name={self.name}>"


def reduce_to_samplewise_values(values: Any, sample_weight: Any, dtype: Any,
                                reduce_fn: Callable = reduction.reduce_mean) -> tuple:
    """(values, weights) reduced to one per sample, as Keras's Mean sees them: the weights
    take the values' rank (Keras's rule), values are averaged down to the weights' rank,
    weights broadcast to the values, and both averaged over any axes past the batch."""
    values = kmath.cast(convert_to_tensor(values), dtype)
    if sample_weight is not None:
        weight = kmath.cast(convert_to_tensor(sample_weight), dtype)
        values, weight = squeeze_or_expand_to_same_rank(values, weight)
        w_rank, v_rank = weight.shape.rank, values.shape.rank
        if v_rank > w_rank:
            values = reduce_fn(values, list(range(w_rank, v_rank)))
        weight = reshaping.broadcast_to(weight, array.shape(values))
        values = values * weight
        if w_rank > 1:
            weight = reduce_fn(weight, list(range(1, w_rank)))
        sample_weight = weight
    if values.shape.rank > 1:
        values = reduce_fn(values, list(range(1, values.shape.rank)))
    return values, sample_weight


class Mean(Metric):
    """The (weighted) mean of all values seen since the last reset.

    >>> from kilnflow import keras
    >>> m = keras.metrics.Mean()
    >>> m.update_state([1.0, 2.0, 6.0])
    >>> float(m.result())
    3.0
    """

    def __init__(self, name: str = "mean", dtype: Any = None):
        super().__init__(name, dtype)
        self.total = self.add_weight("total")
        self.count = self.add_weight("count")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values, weight = reduce_to_samplewise_values(values, sample_weight, self._dtype)
        self.total.assign_add(reduction.reduce_sum(values))
        if weight is not None:
            self.count.assign_add(reduction.reduce_sum(weight))
        elif values.shape.rank:
            self.count.assign_add(kmath.cast(array.shape(values)[0], self._dtype))
        else:
            self.count.assign_add(1.0)

    def result(self) -> Any:
        return divide_no_nan(self.total.read_value(), self.count.read_value())


def divide_no_nan(x: Any, y: Any) -> Any:
    """x / y, and 0 where y is 0 (no NaN from an empty metric)."""
    nonzero = kmath.not_equal(y, 0.0)
    safe = array.where(nonzero, y, array.ones_like(y))
    quotient = x / safe
    return array.where(nonzero, quotient, array.zeros_like(quotient))


class Sum(Metric):
    """The (weighted) sum of all values seen since the last reset."""

    def __init__(self, name: str = "sum", dtype: Any = None):
        super().__init__(name, dtype)
        self.total = self.add_weight("total")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values, _ = reduce_to_samplewise_values(values, sample_weight, self._dtype,
                                                reduction.reduce_sum)
        self.total.assign_add(reduction.reduce_sum(values))

    def result(self) -> Any:
        return self.total.read_value()


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over all samples seen."""

    def __init__(self, fn: Callable, name: Optional[str] = None, dtype: Any = None,
                 **kwargs: Any):
        super().__init__(name or getattr(fn, "__name__", "mean"), dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        mask = backend.get_keras_mask(y_pred)
        values = self._fn(y_true, y_pred, **self._fn_kwargs)
        if mask is not None:  # masked entries count for nothing, as in Keras
            sample_weight = apply_mask(sample_weight, mask, values.dtype, "sum")
        super().update_state(values, sample_weight)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}
