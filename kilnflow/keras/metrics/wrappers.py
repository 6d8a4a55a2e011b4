"""The mean-of-a-function metrics: accuracies, regression errors, probabilistic and hinge
metrics. Each metric function applies Keras's label-shape rule itself, so (N,), (N, 1)
and one-hot labels mean what they mean in Keras."""
from __future__ import annotations

from typing import Any, Callable

from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend
from kilnflow.keras import losses as _losses
from kilnflow.keras.losses import squeeze_or_expand_to_same_rank
from kilnflow.keras.metrics.base import Mean, MeanMetricWrapper, divide_no_nan
from kilnflow.ops import array
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.ops.convert import convert_to_tensor


def _as_float(x: Any) -> Any:
    return kmath.cast(x, backend.floatx())


def accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where y_true == y_pred exactly, else 0.0."""
    y_pred = convert_to_tensor(y_pred)
    y_true = kmath.cast(convert_to_tensor(y_true), y_pred.dtype)
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return _as_float(kmath.equal(y_true, y_pred))


def binary_accuracy(y_true: Any, y_pred: Any, threshold: float = 0.5) -> Any:
    """1.0 where (y_pred > threshold) == y_true."""
    y_pred = convert_to_tensor(y_pred)
    y_true = _as_float(convert_to_tensor(y_true))
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    return _as_float(kmath.equal(y_true, _as_float(y_pred > threshold)))


def _labels_against_argmax(labels: Any, y_pred: Any) -> Any:
    """1.0 where argmax(y_pred) equals the integer labels; an (N, 1) label column keeps its
    shape in the result (as Keras reshapes the matches back)."""
    labels = convert_to_tensor(labels)
    squeezed = labels.shape.rank is not None and y_pred.shape.rank is not None and \
        labels.shape.rank == y_pred.shape.rank and labels.shape[-1] == 1
    flat = reshaping.squeeze(labels, [-1]) if squeezed else labels
    predicted = reduction.argmax(y_pred, -1)
    if not flat.dtype.is_integer:
        predicted = kmath.cast(predicted, flat.dtype)
    else:
        flat = kmath.cast(flat, predicted.dtype)
    matches = _as_float(kmath.equal(flat, predicted))
    return reshaping.expand_dims(matches, -1) if squeezed else matches


def categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where argmax(y_pred) == argmax(y_true) (one-hot targets)."""
    y_pred = convert_to_tensor(y_pred)
    return _labels_against_argmax(reduction.argmax(y_true, -1), y_pred)


def sparse_categorical_accuracy(y_true: Any, y_pred: Any) -> Any:
    """1.0 where argmax(y_pred) equals the integer label ((N,) or (N, 1) labels)."""
    return _labels_against_argmax(y_true, convert_to_tensor(y_pred))


def _in_top_k(labels: Any, y_pred: Any, k: int) -> Any:
    """1.0 where the label's score is among the k highest (ties count as in, as in TF)."""
    depth = y_pred.shape[-1]
    one_hot = array.one_hot(kmath.cast(labels, _dtypes.int32), depth, dtype=y_pred.dtype)
    target = reduction.reduce_sum(y_pred * one_hot, -1, keepdims=True)
    higher = reduction.reduce_sum(_as_float(y_pred > target), -1)
    # a label outside [0, classes) is never in the top k (TF's InTopKV2), not "in" by
    # comparing the scores against the 0 its empty one-hot row picks
    inside = reduction.reduce_sum(one_hot, -1)
    return _as_float(higher < float(k)) * kmath.cast(inside, higher.dtype)


def top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    """1.0 where the true class (argmax of one-hot y_true) is among the k highest
    predictions."""
    y_pred = convert_to_tensor(y_pred)
    return _in_top_k(reduction.argmax(y_true, -1), y_pred, k)


def sparse_top_k_categorical_accuracy(y_true: Any, y_pred: Any, k: int = 5) -> Any:
    """1.0 where the integer label is among the k highest predictions."""
    y_pred = convert_to_tensor(y_pred)
    return _in_top_k(_losses.sparse_labels(y_true, y_pred), y_pred, k)




def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): +1 for equal directions."""
    return -_losses.cosine_similarity(y_true, y_pred, axis)


def _wrapper(cls_name: str, fn: Callable, default_name: str, doc: str, **defaults: Any) -> type:
    """A MeanMetricWrapper subclass: Keras's (name, dtype, fn keyword arguments)."""
    def __init__(self: Any, name: str = default_name, dtype: Any = None, **kwargs: Any) -> None:
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"{cls_name}() got unexpected keyword argument(s) "
                            f"{sorted(unknown)}")
        MeanMetricWrapper.__init__(self, fn, name, dtype, **{**defaults, **kwargs})
    return type(cls_name, (MeanMetricWrapper,), {
        "__init__": __init__, "__doc__": doc, "__module__": "kilnflow.keras.metrics",
        "default_name": default_name})


Accuracy = _wrapper("Accuracy", accuracy, "accuracy", "How often predictions equal labels.")
BinaryAccuracy = _wrapper("BinaryAccuracy", binary_accuracy, "binary_accuracy",
                          "How often (y_pred > threshold) equals the 0/1 labels.",
                          threshold=0.5)
CategoricalAccuracy = _wrapper("CategoricalAccuracy", categorical_accuracy,
                               "categorical_accuracy",
                               "How often argmax(y_pred) matches one-hot labels.")
SparseCategoricalAccuracy = _wrapper("SparseCategoricalAccuracy", sparse_categorical_accuracy,
                                     "sparse_categorical_accuracy",
                                     "How often argmax(y_pred) matches integer labels.")
TopKCategoricalAccuracy = _wrapper("TopKCategoricalAccuracy", top_k_categorical_accuracy,
                                   "top_k_categorical_accuracy",
                                   "How often one-hot labels are in the top k.", k=5)
SparseTopKCategoricalAccuracy = _wrapper(
    "SparseTopKCategoricalAccuracy", sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy", "How often integer labels are in the top k.", k=5)
MeanSquaredError = _wrapper("MeanSquaredError", _losses.mean_squared_error,
                            "mean_squared_error", "The mean squared error.")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", _losses.mean_absolute_error,
                             "mean_absolute_error", "The mean absolute error.")
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", _losses.mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "The mean absolute percentage error.")
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", _losses.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "The mean squared logarithmic error.")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity",
                            "The mean cosine of the angle between labels and predictions.",
                            axis=-1)
LogCoshError = _wrapper("LogCoshError", _losses.log_cosh, "logcosh",
                        "The mean of log(cosh(y_pred - y_true)).")
BinaryCrossentropy = _wrapper("BinaryCrossentropy", _losses.binary_crossentropy,
                              "binary_crossentropy", "The mean binary cross entropy.",
                              from_logits=False, label_smoothing=0.0)
CategoricalCrossentropy = _wrapper("CategoricalCrossentropy", _losses.categorical_crossentropy,
                                   "categorical_crossentropy",
                                   "The mean categorical cross entropy.", from_logits=False,
                                   label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", _losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "The mean sparse categorical cross entropy.",
    from_logits=False, axis=-1)
KLDivergence = _wrapper("KLDivergence", _losses.kl_divergence, "kl_divergence",
                        "The mean Kullback-Leibler divergence.")
Poisson = _wrapper("Poisson", _losses.poisson, "poisson", "The mean Poisson loss.")
Hinge = _wrapper("Hinge", _losses.hinge, "hinge", "The mean hinge loss.")
SquaredHinge = _wrapper("SquaredHinge", _losses.squared_hinge, "squared_hinge",
                        "The mean squared hinge loss.")
CategoricalHinge = _wrapper("CategoricalHinge", _losses.categorical_hinge, "categorical_hinge",
                            "The mean categorical hinge loss.")


class RootMeanSquaredError(Mean):
    """sqrt of the (weighted) mean squared error over all samples seen."""

    def __init__(self, name: str = "root_mean_squared_error", dtype: Any = None):
        super().__init__(name, dtype)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_pred = kmath.cast(convert_to_tensor(y_pred), self._dtype)
        y_true = kmath.cast(convert_to_tensor(y_true), self._dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        super().update_state(kmath.square(y_pred - y_true), sample_weight)

    def result(self) -> Any:
        return kmath.sqrt(divide_no_nan(self.total.read_value(), self.count.read_value()))


WRAPPED = (Accuracy, BinaryAccuracy, CategoricalAccuracy, SparseCategoricalAccuracy,
           TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy, MeanSquaredError,
           MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredLogarithmicError,
           CosineSimilarity, LogCoshError, BinaryCrossentropy, CategoricalCrossentropy,
           SparseCategoricalCrossentropy, KLDivergence, Poisson, Hinge, SquaredHinge,
           CategoricalHinge)
