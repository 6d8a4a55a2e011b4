"""Keras 3's IoU family (IoU, BinaryIoU, OneHotIoU, OneHotMeanIoU), the correlation metrics
(PearsonCorrelation, ConcordanceCorrelation and their functions) and the metrics read off the
confusion curve at a fixed rate (PrecisionAtRecall, RecallAtPrecision,
SensitivityAtSpecificity, SpecificityAtSensitivity)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend
from kilnflow.keras.losses import squeeze_or_expand_to_same_rank
from kilnflow.keras.metrics.base import Metric, MeanMetricWrapper, divide_no_nan
from kilnflow.keras.metrics.confusion import MeanIoU, confusion_counts
from kilnflow.ops import array
from kilnflow.ops import linalg
from kilnflow.ops import math as kmath
from kilnflow.ops import math_extra
from kilnflow.ops import reduction
from kilnflow.ops.convert import convert_to_tensor


class IoU(MeanIoU):
    """Intersection over union of the classes in `target_class_ids`, averaged over those of
    them that occur (in the labels or the predictions)."""

    def __init__(self, num_classes: int, target_class_ids: Sequence[int],
                 name: Optional[str] = None, dtype: Any = None,
                 ignore_class: Optional[int] = None, sparse_y_true: bool = True,
                 sparse_y_pred: bool = True, axis: int = -1):
        super().__init__(num_classes, name, dtype, ignore_class, sparse_y_true, sparse_y_pred,
                         axis)
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which "
                             f"is [0, {num_classes}).")
        self.target_class_ids = list(target_class_ids)

    def result(self) -> Any:
        cm = self.total_cm.read_value()
        tp = linalg.diag_part(cm)
        union = reduction.reduce_sum(cm, 0) + reduction.reduce_sum(cm, 1) - tp
        pick = np.zeros(self.num_classes, np.float32)
        pick[self.target_class_ids] = 1.0
        pick = kmath.cast(convert_to_tensor(pick), self._dtype)
        valid = reduction.reduce_sum(pick * kmath.cast(kmath.not_equal(union, 0.0),
                                                       self._dtype))
        return divide_no_nan(reduction.reduce_sum(pick * divide_no_nan(tp, union)), valid)

    def get_config(self) -> dict:
        return {**super().get_config(), "target_class_ids": self.target_class_ids}


class BinaryIoU(IoU):
    """IoU of binary labels against predictions thresholded at `threshold` (class 1 when
    the prediction is above it)."""

    def __init__(self, target_class_ids: Sequence[int] = (0, 1), threshold: float = 0.5,
                 name: Optional[str] = None, dtype: Any = None):
        super().__init__(2, list(target_class_ids), name, dtype)
        self.threshold = float(threshold)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_pred = kmath.cast(convert_to_tensor(y_pred), self._dtype)
        y_pred = kmath.cast(y_pred >= self.threshold, _dtypes.int32)
        y_true = kmath.cast(convert_to_tensor(y_true), _dtypes.int32)
        super().update_state(y_true, y_pred, sample_weight)

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype,
                "target_class_ids": self.target_class_ids, "threshold": self.threshold}


class OneHotIoU(IoU):
    """IoU with one-hot labels and per-class scores (their argmax is the class)."""

    def __init__(self, num_classes: int, target_class_ids: Sequence[int],
                 name: Optional[str] = None, dtype: Any = None,
                 ignore_class: Optional[int] = None, sparse_y_pred: bool = False,
                 axis: int = -1):
        super().__init__(num_classes, target_class_ids, name, dtype, ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("sparse_y_true")
        return config


class OneHotMeanIoU(MeanIoU):
    """MeanIoU with one-hot labels and per-class scores."""

    def __init__(self, num_classes: int, name: Optional[str] = None, dtype: Any = None,
                 ignore_class: Optional[int] = None, sparse_y_pred: bool = False,
                 axis: int = -1):
        super().__init__(num_classes, name, dtype, ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("sparse_y_true")
        return config


def _pair(y_true: Any, y_pred: Any) -> tuple:
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = kmath.cast(y_pred, backend.floatx())
    y_true = kmath.cast(convert_to_tensor(y_true), y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def pearson_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """Pearson's correlation of y_true and y_pred along `axis`."""
    y_true, y_pred = _pair(y_true, y_pred)
    t = y_true - reduction.reduce_mean(y_true, axis, keepdims=True)
    p = y_pred - reduction.reduce_mean(y_pred, axis, keepdims=True)
    t = t / math_extra.reduce_std(t, axis, keepdims=True)
    p = p / math_extra.reduce_std(p, axis, keepdims=True)
    return reduction.reduce_mean(t * p, axis)


def concordance_correlation(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """Lin's concordance correlation along `axis`:
    2 cov(t, p) / (var(t) + var(p) + (mean(t) - mean(p))^2)."""
    y_true, y_pred = _pair(y_true, y_pred)
    t_mean = reduction.reduce_mean(y_true, axis, keepdims=True)
    p_mean = reduction.reduce_mean(y_pred, axis, keepdims=True)
    t_var = math_extra.reduce_variance(y_true, axis, keepdims=True)
    p_var = math_extra.reduce_variance(y_pred, axis, keepdims=True)
    covariance = (y_true - t_mean) * (y_pred - p_mean)
    norm = t_var + p_var + kmath.square(t_mean - p_mean)
    return reduction.reduce_mean(2.0 * covariance / (norm + backend.epsilon()), axis)


class PearsonCorrelation(MeanMetricWrapper):
    """The mean over samples of pearson_correlation along `axis`."""

    def __init__(self, name: str = "pearson_correlation", dtype: Any = None, axis: int = -1):
        super().__init__(pearson_correlation, name, dtype, axis=axis)
        self.axis = axis

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "axis": self.axis}


class ConcordanceCorrelation(MeanMetricWrapper):
    """The mean over samples of concordance_correlation along `axis`."""

    def __init__(self, name: str = "concordance_correlation", dtype: Any = None,
                 axis: int = -1):
        super().__init__(concordance_correlation, name, dtype, axis=axis)
        self.axis = axis

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "axis": self.axis}


class _AtRate(Metric):
    """Counts tp/fp/tn/fn at num_thresholds evenly spaced thresholds in [0, 1]; result()
    is the best `dependent` rate among the thresholds whose `constrained` rate reaches
    `value` (0 when none does)."""

    _value_name = "value"

    def __init__(self, value: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None,
                 dtype: Any = None):
        super().__init__(name, dtype)
        if not 0 <= value <= 1:
            raise ValueError(f"Argument `{self._value_name}` must be in the range [0, 1]. "
                             f"Received: {self._value_name}={value}")
        if num_thresholds <= 0:
            raise ValueError("Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        self.value, self.num_thresholds, self.class_id = float(value), num_thresholds, class_id
        if num_thresholds == 1:
            self.thresholds = [0.5]
        else:
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
            self.thresholds = [0.0 - 1e-7] + inner + [1.0 + 1e-7]
        shape = [len(self.thresholds)]
        self.true_positives = self.add_weight("true_positives", shape)
        self.false_positives = self.add_weight("false_positives", shape)
        self.true_negatives = self.add_weight("true_negatives", shape)
        self.false_negatives = self.add_weight("false_negatives", shape)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        counts = confusion_counts(y_true, y_pred, self.thresholds, sample_weight,
                                  self.class_id)
        self.true_positives.assign_add(counts["tp"])
        self.false_positives.assign_add(counts["fp"])
        self.true_negatives.assign_add(counts["tn"])
        self.false_negatives.assign_add(counts["fn"])

    def _rates(self) -> dict:
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        return {"recall": divide_no_nan(tp, tp + fn), "precision": divide_no_nan(tp, tp + fp),
                "specificity": divide_no_nan(tn, tn + fp)}

    def _best(self, constrained: Any, dependent: Any) -> Any:
        feasible = kmath.greater_equal(constrained, self.value)
        return kmath.maximum(reduction.reduce_max(
            array.where(feasible, dependent, array.zeros_like(dependent))), 0.0)

    def get_config(self) -> dict:
        return {"name": self.name, "dtype": self.dtype, "class_id": self.class_id,
                "num_thresholds": self.num_thresholds, self._value_name: self.value}


class PrecisionAtRecall(_AtRate):
    """The best precision at thresholds where recall >= `recall`."""
    _value_name = "recall"

    def __init__(self, recall: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None,
                 dtype: Any = None):
        super().__init__(recall, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._best(rates["recall"], rates["precision"])


class RecallAtPrecision(_AtRate):
    """The best recall at thresholds where precision >= `precision`."""
    _value_name = "precision"

    def __init__(self, precision: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None,
                 dtype: Any = None):
        super().__init__(precision, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._best(rates["precision"], rates["recall"])


class SensitivityAtSpecificity(_AtRate):
    """The best sensitivity (recall) at thresholds where specificity >= `specificity`."""
    _value_name = "specificity"

    def __init__(self, specificity: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None,
                 dtype: Any = None):
        super().__init__(specificity, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._best(rates["specificity"], rates["recall"])


class SpecificityAtSensitivity(_AtRate):
    """The best specificity at thresholds where sensitivity (recall) >= `sensitivity`."""
    _value_name = "sensitivity"

    def __init__(self, sensitivity: float, num_thresholds: int = 200,
                 class_id: Optional[int] = None, name: Optional[str] = None,
                 dtype: Any = None):
        super().__init__(sensitivity, num_thresholds, class_id, name, dtype)

    def result(self) -> Any:
        rates = self._rates()
        return self._best(rates["recall"], rates["specificity"])


IOU_AND_CORRELATION = (IoU, BinaryIoU, OneHotIoU, OneHotMeanIoU, PearsonCorrelation,
                       ConcordanceCorrelation, PrecisionAtRecall, RecallAtPrecision,
                       SensitivityAtSpecificity, SpecificityAtSensitivity)
