"""Losses: functions returning one loss per example, and Loss classes that reduce them.

`reduction="sum_over_batch_size"` (the default) averages over every example (weighted by
`sample_weight` when given); "sum" adds; "none" returns the per-example values.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import reshaping
from kilnflow.ops import reduction as kreduce

REDUCTIONS = ("sum_over_batch_size", "sum", "none", "auto", "mean")


def same_rank(y_true: Any, y_pred: Any) -> tuple:
    """Keras's rule before labels meet predictions: when one rank exceeds the other by one
    and that tensor's last dim is 1, labels of rank 1 gain a trailing dim, anything else
    loses it; (N,) labels against an (N, 1) output then compare row by row instead of
    broadcasting to (N, N)."""
    r_true, r_pred = y_true.shape.rank, y_pred.shape.rank
    if r_true is None or r_pred is None or r_true == r_pred:
        return y_true, y_pred
    if r_pred == r_true + 1 and y_pred.shape[-1] == 1:
        if r_true == 1:
            return reshaping.expand_dims(y_true, -1), y_pred
        return y_true, reshaping.squeeze(y_pred, [-1])
    if r_true == r_pred + 1 and y_true.shape[-1] == 1:
        return reshaping.squeeze(y_true, [-1]), y_pred
    return y_true, y_pred


def _pair(y_true: Any, y_pred: Any) -> tuple:
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = kmath.cast(y_pred, backend.floatx())
    y_true = convert_to_tensor(y_true)
    if y_true.dtype is not y_pred.dtype:
        y_true = kmath.cast(y_true, y_pred.dtype)
    return same_rank(y_true, y_pred)


def _clip(p: Any) -> Any:
    eps = backend.epsilon()
    return kmath.clip_by_value(p, eps, 1.0 - eps)


def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    """mean((y_pred - y_true) ** 2) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return kreduce.reduce_mean(kmath.square(y_pred - y_true), -1)


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    """mean(|y_pred - y_true|) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return kreduce.reduce_mean(kmath.abs(y_pred - y_true), -1)


def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                        label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """Mean over `axis` of -(y log p + (1 - y) log(1 - p)); p = sigmoid(y_pred) when
    from_logits (computed stably from the logits), else y_pred clipped to [eps, 1 - eps]."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        per_element = backend.nn().sigmoid_cross_entropy_with_logits(labels=y_true,
                                                                     logits=y_pred)
    else:
        p = _clip(y_pred)
        per_element = -(y_true * kmath.log(p) + (1.0 - y_true) * kmath.log(1.0 - p))
    return kreduce.reduce_mean(per_element, axis)


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """-sum(y_true * log(p), axis) with one-hot (or soft) targets; p = softmax(y_pred)
    when from_logits, else y_pred renormalized to sum to 1 and clipped."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        classes = y_pred.shape[axis]
        if classes is None:
            classes = kmath.cast(array.shape(y_pred)[axis], y_pred.dtype)
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        return backend.nn().softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred,
                                                              axis=axis)
    p = _clip(y_pred / kreduce.reduce_sum(y_pred, axis, keepdims=True))
    return -kreduce.reduce_sum(y_true * kmath.log(p), axis)


def _sparse_labels(y_true: Any, y_pred: Any) -> Any:
    labels = convert_to_tensor(y_true)
    rank, pred_rank = labels.shape.rank, y_pred.shape.rank
    if rank is not None and pred_rank is not None and rank == pred_rank and \
            labels.shape[-1] == 1:
        labels = reshaping.squeeze(labels, -1)
    if labels.dtype not in (_dtypes.int32, _dtypes.int64):
        labels = kmath.cast(labels, _dtypes.int32)
    return labels


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    axis: int = -1) -> Any:
    """Categorical cross entropy with integer class labels (shape [batch] or [batch, 1])."""
    y_pred = convert_to_tensor(y_pred)
    labels = _sparse_labels(y_true, y_pred)
    if axis not in (-1, y_pred.shape.rank - 1 if y_pred.shape.rank else -1):
        raise ValueError("sparse_categorical_crossentropy supports axis=-1 only")
    if from_logits:
        return backend.nn().sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                     logits=y_pred)
    depth = y_pred.shape[-1]
    if depth is None:
        raise ValueError("sparse_categorical_crossentropy needs a known number of classes")
    one_hot = array.one_hot(labels, depth, dtype=y_pred.dtype)
    return -kreduce.reduce_sum(one_hot * kmath.log(_clip(y_pred)), -1)


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


class Loss:
    """Base class: `call(y_true, y_pred)` gives per-example losses; `__call__` reduces them.

    >>> from kilnflow import keras
    >>> float(keras.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, reduction: str = "sum_over_batch_size", name: Optional[str] = None):
        if reduction not in REDUCTIONS:
            raise ValueError(f"Invalid reduction {reduction!r}; expected one of {REDUCTIONS}")
        self.reduction = reduction
        self.name = name or type(self).__name__

    def call(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        losses = self.call(y_true, y_pred)
        return reduce_losses(losses, sample_weight, self.reduction)

    def get_config(self) -> dict:
        return {"reduction": self.reduction, "name": self.name}

    @classmethod
    def from_config(cls, config: dict) -> "Loss":
        return cls(**config)


def reduce_losses(losses: Any, sample_weight: Any, reduction: str) -> Any:
    """Weight per-example losses and reduce them as `reduction` says."""
    if sample_weight is not None:
        weight = kmath.cast(convert_to_tensor(sample_weight), losses.dtype)
        if weight.shape.rank is not None and losses.shape.rank is not None and \
                weight.shape.rank > losses.shape.rank:
            weight = reshaping.reshape(weight, array.shape(losses))
        losses = losses * weight
    if reduction == "none":
        return losses
    total = kreduce.reduce_sum(losses)
    if reduction == "sum":
        return total
    count = kmath.cast(array.size(losses), losses.dtype)
    return total / kmath.maximum(count, 1.0)


class LossFunctionWrapper(Loss):
    """A Loss whose per-example values come from a function with extra keyword args."""

    def __init__(self, fn: Callable, reduction: str = "sum_over_batch_size",
                 name: Optional[str] = None, **kwargs: Any):
        super().__init__(reduction, name)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true: Any, y_pred: Any) -> Any:
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}


class MeanSquaredError(LossFunctionWrapper):
    def __init__(self, reduction: str = "sum_over_batch_size",
                 name: str = "mean_squared_error"):
        super().__init__(mean_squared_error, reduction, name)

    def get_config(self) -> dict:
        return Loss.get_config(self)


class MeanAbsoluteError(LossFunctionWrapper):
    def __init__(self, reduction: str = "sum_over_batch_size",
                 name: str = "mean_absolute_error"):
        super().__init__(mean_absolute_error, reduction, name)

    def get_config(self) -> dict:
        return Loss.get_config(self)


class BinaryCrossentropy(LossFunctionWrapper):
    """Cross entropy of 0/1 targets against probabilities (or logits with from_logits)."""

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0,
                 axis: int = -1, reduction: str = "sum_over_batch_size",
                 name: str = "binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction, name, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross entropy of one-hot targets against class probabilities (or logits)."""

    def __init__(self, from_logits: bool = False, label_smoothing: float = 0.0,
                 axis: int = -1, reduction: str = "sum_over_batch_size",
                 name: str = "categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction, name, from_logits=from_logits,
                         label_smoothing=label_smoothing, axis=axis)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross entropy of integer class targets against class probabilities (or logits)."""

    def __init__(self, from_logits: bool = False, reduction: str = "sum_over_batch_size",
                 name: str = "sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction, name,
                         from_logits=from_logits)


_BY_NAME = {
    "mean_squared_error": MeanSquaredError, "mse": MeanSquaredError,
    "MeanSquaredError": MeanSquaredError, "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError, "MeanAbsoluteError": MeanAbsoluteError,
    "binary_crossentropy": BinaryCrossentropy, "BinaryCrossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "CategoricalCrossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "SparseCategoricalCrossentropy": SparseCategoricalCrossentropy,
}


def get(identifier: Any) -> Any:
    """A Loss from a name ('mse', 'sparse_categorical_crossentropy'), a Loss, a config
    dict, or a function of (y_true, y_pred) (wrapped so it is reduced)."""
    if identifier is None or isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown loss function {identifier!r}; known: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"Unknown loss config {identifier!r}")
        return cls.from_config(identifier.get("config", {}))
    if callable(identifier):
        return LossFunctionWrapper(identifier, name=getattr(identifier, "__name__", "loss"))
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}")


def serialize(loss: Loss) -> dict:
    return {"class_name": type(loss).__name__, "config": loss.get_config()}
