"""Metrics: stateful accumulators (variables) with update_state / result / reset_state.

The state lives in non-trainable variables, so a compiled train step updates it inside
the graph on every call; result() is computed from the state with kf ops.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.context import eager_mode
from kilnflow.keras import losses as _losses
from kilnflow.module import Module, camel_to_snake
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.variables import Variable
from kilnflow.ops import reshaping
from kilnflow.ops import reduction


class Metric(Module):
    """Base class: subclasses create state with add_weight and implement update_state and
    result."""

    def __init__(self, name: Optional[str] = None, dtype: Any = None):
        super().__init__(name=name or camel_to_snake(type(self).__name__))
        self._dtype = _dtypes.as_dtype(dtype or "float32")
        self._state: list = []

    @property
    def dtype(self) -> str:
        return self._dtype.name

    def add_weight(self, name: str, shape: Any = (), dtype: Any = None,
                   initializer: Any = "zeros") -> Variable:
        dtype = _dtypes.as_dtype(dtype or self._dtype)
        value = np.zeros(tuple(shape), dtype.as_numpy_dtype)
        with eager_mode():  # metric state is created once, outside any trace
            var = Variable(value, trainable=False, name=f"{self.name}/{name}", dtype=dtype)
        self._state.append(var)
        return var

    @property
    def variables(self) -> tuple:
        return tuple(self._state)

    def update_state(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def result(self) -> Any:
        raise NotImplementedError

    def reset_state(self) -> None:
        """Set every state variable back to zero."""
        for v in self._state:
            v.handle.value = np.zeros(v.shape.as_list(), v.dtype.as_numpy_dtype)

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
        values = kmath.cast(convert_to_tensor(values), self._dtype)
        if sample_weight is not None:
            weight = kmath.cast(convert_to_tensor(sample_weight), self._dtype)
            if weight.shape.rank is not None and values.shape.rank is not None and \
                    weight.shape.rank > values.shape.rank:
                weight = reshaping.reshape(weight, array.shape(values))
            weight = weight * array.ones_like(values)
            self.total.assign_add(reduction.reduce_sum(values * weight))
            self.count.assign_add(reduction.reduce_sum(weight))
        else:
            self.total.assign_add(reduction.reduce_sum(values))
            self.count.assign_add(kmath.cast(array.size(values), self._dtype))

    def result(self) -> Any:
        count = self.count.read_value()
        return self.total.read_value() / kmath.maximum(count, 1e-12)


class Sum(Metric):
    """The (weighted) sum of all values seen since the last reset."""

    def __init__(self, name: str = "sum", dtype: Any = None):
        super().__init__(name, dtype)
        self.total = self.add_weight("total")

    def update_state(self, values: Any, sample_weight: Any = None) -> None:
        values = kmath.cast(convert_to_tensor(values), self._dtype)
        if sample_weight is not None:
            values = values * kmath.cast(convert_to_tensor(sample_weight), self._dtype)
        self.total.assign_add(reduction.reduce_sum(values))

    def result(self) -> Any:
        return self.total.read_value()


class MeanMetricWrapper(Mean):
    """The mean of `fn(y_true, y_pred, **kwargs)` over all examples seen."""

    def __init__(self, fn: Callable, name: Optional[str] = None, dtype: Any = None,
                 **kwargs: Any):
        super().__init__(name or getattr(fn, "__name__", "mean"), dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}


# ---------------------------------------------------------------- accuracy functions

def _as_float(x: Any) -> Any:
    return kmath.cast(x, _dtypes.float32)


def accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where y_true == y_pred exactly, else 0.0."""
    y_pred = convert_to_tensor(y_pred)
    y_true = kmath.cast(convert_to_tensor(y_true), y_pred.dtype)
    y_true, y_pred = _losses.same_rank(y_true, y_pred)
    return _as_float(kmath.equal(y_true, y_pred))


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Any:
    """Mean over the last axis of (y_pred > threshold) == y_true."""
    y_pred = convert_to_tensor(y_pred)
    predicted = _as_float(y_pred > threshold)
    y_true, predicted = _losses.same_rank(_as_float(convert_to_tensor(y_true)), predicted)
    return reduction.reduce_mean(_as_float(kmath.equal(y_true, predicted)), -1)


def categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where argmax(y_pred) == argmax(y_true) (one-hot targets)."""
    return _as_float(kmath.equal(reduction.argmax(y_true, -1), reduction.argmax(y_pred, -1)))


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where argmax(y_pred) equals the integer label."""
    y_pred = convert_to_tensor(y_pred)
    labels = _losses._sparse_labels(y_true, y_pred)
    return _as_float(kmath.equal(kmath.cast(labels, _dtypes.int64),
                                 reduction.argmax(y_pred, -1)))


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    """1.0 where the true class is among the k highest predictions."""
    y_pred = convert_to_tensor(y_pred)
    target = reduction.reduce_sum(y_pred * kmath.cast(convert_to_tensor(y_true), y_pred.dtype),
                              -1, keepdims=True)
    higher = reduction.reduce_sum(_as_float(y_pred > target), -1)
    return _as_float(higher < float(k))


class Accuracy(MeanMetricWrapper):
    def __init__(self, name: str = "accuracy", dtype: Any = None):
        super().__init__(accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name: str = "binary_accuracy", dtype: Any = None,
                 threshold: float = 0.5):
        super().__init__(binary_accuracy, name, dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name: str = "categorical_accuracy", dtype: Any = None):
        super().__init__(categorical_accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name: str = "sparse_categorical_accuracy", dtype: Any = None):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class TopKCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, k: int = 5, name: str = "top_k_categorical_accuracy", dtype: Any = None):
        super().__init__(top_k_categorical_accuracy, name, dtype, k=k)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_squared_error", dtype: Any = None):
        super().__init__(_losses.mean_squared_error, name, dtype)


class MeanAbsoluteError(MeanMetricWrapper):
    def __init__(self, name: str = "mean_absolute_error", dtype: Any = None):
        super().__init__(_losses.mean_absolute_error, name, dtype)


class SparseCategoricalCrossentropy(MeanMetricWrapper):
    def __init__(self, name: str = "sparse_categorical_crossentropy", dtype: Any = None,
                 from_logits: bool = False):
        super().__init__(_losses.sparse_categorical_crossentropy, name, dtype,
                         from_logits=from_logits)


_BY_NAME = {
    "accuracy": Accuracy, "binary_accuracy": BinaryAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError, "mae": MeanAbsoluteError,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
}
_BY_NAME.update({cls.__name__: cls for cls in list(_BY_NAME.values()) + [Mean, Sum]})


def get(identifier: Any) -> Metric:
    """A Metric from a name, a Metric, or a function of (y_true, y_pred)."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown metric {identifier!r}; known: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return cls()
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def resolve_accuracy(name: str, loss: Any, y_true: Any, y_pred: Any) -> Metric:
    """What compile(metrics=['accuracy']) means, as in Keras: chosen from the loss, else
    from the shapes of the first batch."""
    fn = getattr(loss, "fn", None)
    if fn is _losses.sparse_categorical_crossentropy:
        cls: Any = SparseCategoricalAccuracy
    elif fn is _losses.categorical_crossentropy:
        cls = CategoricalAccuracy
    elif fn is _losses.binary_crossentropy:
        cls = BinaryAccuracy
    else:
        true_shape, pred_shape = y_true.shape, y_pred.shape
        if pred_shape.rank and pred_shape[-1] == 1:
            cls = BinaryAccuracy
        elif true_shape.rank is not None and pred_shape.rank is not None and (
                true_shape.rank < pred_shape.rank or true_shape[-1] == 1):
            cls = SparseCategoricalAccuracy
        else:
            cls = CategoricalAccuracy
    return cls(name=name)
