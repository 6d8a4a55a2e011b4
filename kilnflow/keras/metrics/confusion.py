"""Metrics over confusion counts: TruePositives/..., Precision, Recall, AUC, F1Score/FBeta,
MeanIoU, and R2Score. Labels and predictions meet under Keras's label-shape rule."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend
from kilnflow.keras.losses import squeeze_or_expand_to_same_rank
from kilnflow.keras.metrics.base import Metric, divide_no_nan
from kilnflow.ops import array
from kilnflow.ops import linalg
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction
from kilnflow.ops import reshaping
from kilnflow.ops.convert import convert_to_tensor

EPSILON = 1e-7  # Keras widens the outer AUC thresholds by this much


def _thresholds(thresholds: Any, default: float) -> tuple:
    if thresholds is None:
        return (default,), True
    if isinstance(thresholds, (int, float)):
        return (float(thresholds),), True
    return tuple(float(t) for t in thresholds), False


def confusion_counts(y_true: Any, y_pred: Any, thresholds: Sequence, sample_weight: Any = None,
                     class_id: Optional[int] = None) -> dict:
    """Weighted tp/fp/tn/fn per threshold (a prediction is positive when > threshold)."""
    y_pred = kmath.cast(convert_to_tensor(y_pred), _dtypes.float32)
    y_true = kmath.cast(convert_to_tensor(y_true), _dtypes.float32)
    y_pred, y_true = squeeze_or_expand_to_same_rank(y_pred, y_true)
    weight = None
    if sample_weight is not None:
        weight = kmath.cast(convert_to_tensor(sample_weight), _dtypes.float32)
        y_pred, weight = squeeze_or_expand_to_same_rank(y_pred, weight)
        weight = reshaping.broadcast_to(weight, array.shape(y_pred))
    if class_id is not None:
        y_true, y_pred = y_true[..., class_id], y_pred[..., class_id]
        if weight is not None:
            weight = weight[..., class_id]
    y_true = reshaping.reshape(y_true, [1, -1]) > 0.5
    y_pred = reshaping.reshape(y_pred, [1, -1])
    weight = 1.0 if weight is None else reshaping.reshape(weight, [1, -1])
    cut = convert_to_tensor(np.asarray(thresholds, np.float32).reshape(-1, 1))
    predicted_pos = y_pred > cut
    true_f = kmath.cast(y_true, _dtypes.float32)
    pos_f = kmath.cast(predicted_pos, _dtypes.float32)

    def count(a: Any, b: Any) -> Any:
        return reduction.reduce_sum(a * b * weight, 1)
    return {"tp": count(true_f, pos_f), "fp": count(1.0 - true_f, pos_f),
            "tn": count(1.0 - true_f, 1.0 - pos_f), "fn": count(true_f, 1.0 - pos_f)}


class _ConfusionCount(Metric):
    _which = "tp"

    def __init__(self, thresholds: Any = None, name: Optional[str] = None, dtype: Any = None):
        super().__init__(name, dtype)
        self.thresholds, self._single = _thresholds(thresholds, 0.5)
        self.accumulator = self.add_weight("accumulator", [len(self.thresholds)])

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        counts = confusion_counts(y_true, y_pred, self.thresholds, sample_weight)
        self.accumulator.assign_add(kmath.cast(counts[self._which], self._dtype))

    def result(self) -> Any:
        value = self.accumulator.read_value()
        return value[0] if self._single else value

    def get_config(self) -> dict:
        return {**super().get_config(),
                "thresholds": self.thresholds[0] if self._single else list(self.thresholds)}


class TruePositives(_ConfusionCount):
    """The weighted number of true positives (prediction > threshold, label 1)."""
    _which = "tp"


class FalsePositives(_ConfusionCount):
    """The weighted number of false positives."""
    _which = "fp"


class TrueNegatives(_ConfusionCount):
    """The weighted number of true negatives."""
    _which = "tn"


class FalseNegatives(_ConfusionCount):
    """The weighted number of false negatives."""
    _which = "fn"


class _PrecisionRecall(Metric):
    def __init__(self, thresholds: Any = None, top_k: Optional[int] = None,
                 class_id: Optional[int] = None, name: Optional[str] = None, dtype: Any = None):
        super().__init__(name, dtype)
        if top_k is not None:
            raise NotImplementedError(f"{type(self).__name__}(top_k=) is not supported yet")
        self.thresholds, self._single = _thresholds(thresholds, 0.5)
        self.class_id = class_id
        self.true_positives = self.add_weight("true_positives", [len(self.thresholds)])
        self.other = self.add_weight(self._other_name, [len(self.thresholds)])

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        counts = confusion_counts(y_true, y_pred, self.thresholds, sample_weight,
                                  self.class_id)
        self.true_positives.assign_add(kmath.cast(counts["tp"], self._dtype))
        self.other.assign_add(kmath.cast(counts[self._other], self._dtype))

    def result(self) -> Any:
        tp = self.true_positives.read_value()
        value = divide_no_nan(tp, tp + self.other.read_value())
        return value[0] if self._single else value

    def get_config(self) -> dict:
        return {**super().get_config(), "class_id": self.class_id,
                "thresholds": self.thresholds[0] if self._single else list(self.thresholds)}


class Precision(_PrecisionRecall):
    """tp / (tp + fp): how many predicted positives (score > threshold) are positive."""
    _other, _other_name = "fp", "false_positives"


class Recall(_PrecisionRecall):
    """tp / (tp + fn): how many positives are predicted positive (score > threshold)."""
    _other, _other_name = "fn", "false_negatives"


class AUC(Metric):
    """The area under the ROC or PR curve, from confusion counts at `num_thresholds`
    evenly spaced thresholds (Keras's Riemann sum; PR by Davis & Goadrich interpolation)."""

    def __init__(self, num_thresholds: int = 200, curve: str = "ROC",
                 summation_method: str = "interpolation", name: Optional[str] = None,
                 dtype: Any = None, thresholds: Any = None, multi_label: bool = False,
                 num_labels: Optional[int] = None, label_weights: Any = None,
                 from_logits: bool = False):
        super().__init__(name, dtype)
        if multi_label or label_weights is not None:
            raise NotImplementedError("AUC(multi_label=True / label_weights) is not "
                                      "supported yet")
        self.curve, self.summation_method = curve.upper(), summation_method.lower()
        if self.curve not in ("ROC", "PR"):
            raise ValueError(f"Invalid AUC curve {curve!r}; expected 'ROC' or 'PR'")
        if self.summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f"Invalid summation_method {summation_method!r}")
        if thresholds is not None:
            inner = sorted(float(t) for t in thresholds)
        else:
            if num_thresholds <= 1:
                raise ValueError("num_thresholds must be > 1")
            inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
        self.num_thresholds = len(inner) + 2
        self.thresholds = [0.0 - EPSILON] + inner + [1.0 + EPSILON]
        self.from_logits = from_logits
        self.multi_label = multi_label
        shape = [self.num_thresholds]
        self.true_positives = self.add_weight("true_positives", shape)
        self.false_positives = self.add_weight("false_positives", shape)
        self.true_negatives = self.add_weight("true_negatives", shape)
        self.false_negatives = self.add_weight("false_negatives", shape)

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        if self.from_logits:
            y_pred = kmath.sigmoid(convert_to_tensor(y_pred))
        c = confusion_counts(y_true, y_pred, self.thresholds, sample_weight)
        for var, key in ((self.true_positives, "tp"), (self.false_positives, "fp"),
                         (self.true_negatives, "tn"), (self.false_negatives, "fn")):
            var.assign_add(kmath.cast(c[key], self._dtype))

    def _interpolate_pr_auc(self, tp: Any, fp: Any, fn: Any) -> Any:
        n = self.num_thresholds
        dtp = tp[:n - 1] - tp[1:]
        p = tp + fp
        dp = p[:n - 1] - p[1:]
        slope = divide_no_nan(dtp, kmath.maximum(dp, 0.0))
        intercept = tp[1:] - slope * p[1:]
        both = kmath.logical_and(p[:n - 1] > 0, p[1:] > 0)
        ratio = array.where(both, divide_no_nan(p[:n - 1], kmath.maximum(p[1:], 0.0)),
                            array.ones_like(p[1:]))
        terms = divide_no_nan(slope * (dtp + intercept * kmath.log(ratio)),
                              kmath.maximum(tp[1:] + fn[1:], 0.0))
        return reduction.reduce_sum(terms)

    def result(self) -> Any:
        tp, fp = self.true_positives.read_value(), self.false_positives.read_value()
        tn, fn = self.true_negatives.read_value(), self.false_negatives.read_value()
        if self.curve == "PR" and self.summation_method == "interpolation":
            return self._interpolate_pr_auc(tp, fp, fn)
        recall = divide_no_nan(tp, tp + fn)
        if self.curve == "ROC":
            x, y = divide_no_nan(fp, fp + tn), recall
        else:
            x, y = recall, divide_no_nan(tp, tp + fp)
        n = self.num_thresholds
        if self.summation_method == "interpolation":
            heights = (y[:n - 1] + y[1:]) / 2.0
        elif self.summation_method == "minoring":
            heights = kmath.minimum(y[:n - 1], y[1:])
        else:
            heights = kmath.maximum(y[:n - 1], y[1:])
        return reduction.reduce_sum((x[:n - 1] - x[1:]) * heights)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_thresholds": self.num_thresholds,
                "curve": self.curve, "summation_method": self.summation_method,
                "from_logits": self.from_logits}


class FBetaScore(Metric):
    """Per-class F-beta from tp/fp/fn over (N, classes) one-hot labels; `average` None,
    'micro', 'macro' or 'weighted'. Without `threshold` the row maximum is the
    prediction."""

    def __init__(self, average: Optional[str] = None, beta: float = 1.0,
                 threshold: Optional[float] = None, name: str = "fbeta_score",
                 dtype: Any = None):
        super().__init__(name, dtype)
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(f"Invalid `average` {average!r}: expected None, 'micro', "
                             "'macro' or 'weighted'")
        self.average, self.beta, self.threshold = average, float(beta), threshold
        self._built = False

    def _build(self, classes: int) -> None:
        shape = [] if self.average == "micro" else [classes]
        self.true_positives = self.add_weight("true_positives", shape)
        self.false_positives = self.add_weight("false_positives", shape)
        self.false_negatives = self.add_weight("false_negatives", shape)
        self.intermediate_weights = self.add_weight("intermediate_weights", shape)
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_pred = kmath.cast(convert_to_tensor(y_pred), self._dtype)
        y_true = kmath.cast(convert_to_tensor(y_true), self._dtype)
        if not self._built:
            self._build(y_pred.shape[-1])
        if self.threshold is None:
            top = reduction.reduce_max(y_pred, -1, keepdims=True)
            y_pred = kmath.cast(kmath.equal(y_pred, top), self._dtype)
        else:
            y_pred = kmath.cast(y_pred > self.threshold, self._dtype)
        weight = 1.0
        if sample_weight is not None:
            weight = kmath.cast(convert_to_tensor(sample_weight), self._dtype)
            if weight.shape.rank == 1:
                weight = reshaping.expand_dims(weight, -1)
        axis = None if self.average == "micro" else 0

        def total(x: Any) -> Any:
            return reduction.reduce_sum(x * weight, axis)
        self.true_positives.assign_add(total(y_pred * y_true))
        self.false_positives.assign_add(total(y_pred * (1.0 - y_true)))
        self.false_negatives.assign_add(total((1.0 - y_pred) * y_true))
        self.intermediate_weights.assign_add(total(y_true))

    def result(self) -> Any:
        eps = backend.epsilon()
        tp = self.true_positives.read_value()
        precision = tp / (tp + self.false_positives.read_value() + eps)
        recall = tp / (tp + self.false_negatives.read_value() + eps)
        b2 = self.beta ** 2
        score = precision * recall / (b2 * precision + recall + eps) * (1.0 + b2)
        if self.average == "weighted":
            w = self.intermediate_weights.read_value()
            return reduction.reduce_sum(score * w / (reduction.reduce_sum(w) + eps))
        if self.average is not None:
            return reduction.reduce_mean(score)
        return score

    def reset_state(self) -> None:
        if self._built:
            super().reset_state()

    def get_config(self) -> dict:
        return {**super().get_config(), "average": self.average, "beta": self.beta,
                "threshold": self.threshold}


class F1Score(FBetaScore):
    """FBetaScore with beta = 1: the harmonic mean of precision and recall."""

    def __init__(self, average: Optional[str] = None, threshold: Optional[float] = None,
                 name: str = "f1_score", dtype: Any = None):
        super().__init__(average, 1.0, threshold, name, dtype)

    def get_config(self) -> dict:
        config = super().get_config()
        config.pop("beta")
        return config


class MeanIoU(Metric):
    """The mean over classes of intersection / union, from a confusion matrix of class ids
    (predictions are ids unless sparse_y_pred=False, then their argmax)."""

    def __init__(self, num_classes: int, name: Optional[str] = None, dtype: Any = None,
                 ignore_class: Optional[int] = None, sparse_y_true: bool = True,
                 sparse_y_pred: bool = True, axis: int = -1):
        super().__init__(name, dtype)
        self.num_classes, self.ignore_class = int(num_classes), ignore_class
        self.sparse_y_true, self.sparse_y_pred, self.axis = sparse_y_true, sparse_y_pred, axis
        self.total_cm = self.add_weight("total_confusion_matrix",
                                        [self.num_classes, self.num_classes])

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        if not self.sparse_y_true:
            y_true = reduction.argmax(y_true, self.axis)
        if not self.sparse_y_pred:
            y_pred = reduction.argmax(y_pred, self.axis)
        y_true = kmath.cast(reshaping.reshape(y_true, [-1]), _dtypes.int32)
        y_pred = kmath.cast(reshaping.reshape(y_pred, [-1]), _dtypes.int32)
        weight = array.ones_like(kmath.cast(y_true, self._dtype))
        if sample_weight is not None:
            weight = weight * reshaping.reshape(
                kmath.cast(convert_to_tensor(sample_weight), self._dtype), [-1])
        if self.ignore_class is not None:
            weight = weight * kmath.cast(kmath.not_equal(y_true, self.ignore_class),
                                         self._dtype)
        rows = array.one_hot(y_true, self.num_classes, dtype=self._dtype)
        cols = array.one_hot(y_pred, self.num_classes, dtype=self._dtype)
        cm = linalg.matmul(rows * reshaping.expand_dims(weight, -1), cols, transpose_a=True)
        self.total_cm.assign_add(cm)

    def result(self) -> Any:
        cm = self.total_cm.read_value()
        predicted = reduction.reduce_sum(cm, 0)
        actual = reduction.reduce_sum(cm, 1)
        tp = linalg.diag_part(cm)
        union = predicted + actual - tp
        valid = reduction.reduce_sum(kmath.cast(kmath.not_equal(union, 0.0), self._dtype))
        return divide_no_nan(reduction.reduce_sum(divide_no_nan(tp, union)), valid)

    def get_config(self) -> dict:
        return {**super().get_config(), "num_classes": self.num_classes,
                "ignore_class": self.ignore_class, "sparse_y_true": self.sparse_y_true,
                "sparse_y_pred": self.sparse_y_pred, "axis": self.axis}


class R2Score(Metric):
    """The coefficient of determination 1 - SS_res / SS_tot per output, aggregated by
    `class_aggregation` ('uniform_average', 'variance_weighted_average' or None)."""

    def __init__(self, class_aggregation: Optional[str] = "uniform_average",
                 num_regressors: int = 0, name: str = "r2_score", dtype: Any = None):
        super().__init__(name, dtype)
        if class_aggregation not in (None, "uniform_average", "variance_weighted_average"):
            raise ValueError(f"Invalid class_aggregation {class_aggregation!r}")
        self.class_aggregation, self.num_regressors = class_aggregation, int(num_regressors)
        self.num_samples = self.add_weight("num_samples", dtype="int32")
        self._built = False

    def _build(self, outputs: int) -> None:
        for name in ("squared_sum", "sum", "total_mse", "count"):
            setattr(self, name, self.add_weight(name, [outputs]))
        self._built = True

    def update_state(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> None:
        y_true = kmath.cast(convert_to_tensor(y_true), self._dtype)
        y_pred = kmath.cast(convert_to_tensor(y_pred), self._dtype)
        y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        if y_true.shape.rank == 1:
            y_true, y_pred = reshaping.expand_dims(y_true, 1), reshaping.expand_dims(y_pred, 1)
        if not self._built:
            self._build(y_pred.shape[-1])
        weight = 1.0 if sample_weight is None else \
            kmath.cast(convert_to_tensor(sample_weight), self._dtype)
        if getattr(weight, "shape", None) is not None and weight.shape.rank == 1:
            weight = reshaping.expand_dims(weight, 1)
        weight = reshaping.broadcast_to(convert_to_tensor(weight, dtype=self._dtype),
                                        array.shape(y_true))
        weighted = y_true * weight
        self.sum.assign_add(reduction.reduce_sum(weighted, 0))
        self.squared_sum.assign_add(reduction.reduce_sum(y_true * weighted, 0))
        self.total_mse.assign_add(reduction.reduce_sum(kmath.square(y_true - y_pred) * weight,
                                                       0))
        self.count.assign_add(reduction.reduce_sum(weight, 0))
        self.num_samples.assign_add(array.shape(y_true)[0])

    def result(self) -> Any:
        mean = self.sum.read_value() / self.count.read_value()
        total = self.squared_sum.read_value() - self.sum.read_value() * mean
        raw = 1.0 - self.total_mse.read_value() / total
        raw = array.where(kmath.is_inf(raw), array.zeros_like(raw), raw)
        if self.class_aggregation == "uniform_average":
            score = reduction.reduce_mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = reduction.reduce_sum(total * raw) / reduction.reduce_sum(total)
        else:
            score = raw
        if self.num_regressors:
            n = kmath.cast(self.num_samples.read_value(), self._dtype)
            p = float(self.num_regressors)
            score = 1.0 - (1.0 - score) * (n - 1.0) / (n - p - 1.0)
        return score

    def get_config(self) -> dict:
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}


CONFUSION = (TruePositives, FalsePositives, TrueNegatives, FalseNegatives, Precision, Recall,
             AUC, FBetaScore, F1Score, MeanIoU, R2Score)
