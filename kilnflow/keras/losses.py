"""Losses: functions returning one loss per example, and Loss classes that reduce them.

Every Loss class first brings labels and predictions to the same rank with Keras's rule
(`squeeze_or_expand_to_same_rank`), so (N,) labels against an (N, 1) sigmoid column compare
row by row instead of broadcasting to (N, N). `reduction="sum_over_batch_size"` (the
default) divides the (weighted) sum by the number of loss values; "sum" adds; "none"
returns them; "mean_with_sample_weight" divides by the sum of the weights.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend
from kilnflow.ops import array
from kilnflow.ops import linalg
from kilnflow.ops import math as kmath
from kilnflow.ops import nn as knn
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import reshaping
from kilnflow.ops import reduction as kreduce

REDUCTIONS = ("sum_over_batch_size", "sum", "none", "auto", "mean", "mean_with_sample_weight",
              None)


def squeeze_or_expand_to_same_rank(x1: Any, x2: Any, expand_rank_1: bool = True) -> tuple:
    """Keras's rule before two tensors meet: when one rank exceeds the other by one and
    that tensor's last dim is 1, a rank-1 partner gains a trailing dim (with
    `expand_rank_1`), otherwise the longer one loses its trailing 1. Anything else is
    returned unchanged (and broadcasts as usual)."""
    r1, r2 = x1.shape.rank, x2.shape.rank
    if r1 is None or r2 is None or r1 == r2:
        return x1, x2
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            return x1, reshaping.expand_dims(x2, -1)
        return reshaping.squeeze(x1, [-1]), x2
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            return reshaping.expand_dims(x1, -1), x2
        return x1, reshaping.squeeze(x2, [-1])
    return x1, x2


same_rank = squeeze_or_expand_to_same_rank


def _pair(y_true: Any, y_pred: Any) -> tuple:
    """Float predictions, labels in their dtype, ranks aligned (Keras's rule)."""
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = kmath.cast(y_pred, backend.floatx())
    y_true = convert_to_tensor(y_true)
    if y_true.dtype is not y_pred.dtype:
        y_true = kmath.cast(y_true, y_pred.dtype)
    return squeeze_or_expand_to_same_rank(y_true, y_pred)


def _clip(p: Any, high: float = None) -> Any:
    eps = backend.epsilon()
    return kmath.clip_by_value(p, eps, 1.0 - eps if high is None else high)


def _mean(x: Any, axis: int = -1) -> Any:
    return kreduce.reduce_mean(x, axis)


# ---------------------------------------------------------------- regression

def mean_squared_error(y_true: Any, y_pred: Any) -> Any:
    """mean((y_pred - y_true) ** 2) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean(kmath.square(y_pred - y_true))


def mean_absolute_error(y_true: Any, y_pred: Any) -> Any:
    """mean(|y_pred - y_true|) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean(kmath.abs(y_pred - y_true))


def mean_absolute_percentage_error(y_true: Any, y_pred: Any) -> Any:
    """100 * mean(|y_true - y_pred| / max(|y_true|, epsilon)) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    scale = kmath.maximum(kmath.abs(y_true), backend.epsilon())
    return 100.0 * _mean(kmath.abs(y_true - y_pred) / scale)


def mean_squared_logarithmic_error(y_true: Any, y_pred: Any) -> Any:
    """mean((log(max(y_pred, eps) + 1) - log(max(y_true, eps) + 1)) ** 2) over the last
    axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    eps = backend.epsilon()
    first = kmath.log(kmath.maximum(y_pred, eps) + 1.0)
    second = kmath.log(kmath.maximum(y_true, eps) + 1.0)
    return _mean(kmath.square(first - second))


def cosine_similarity(y_true: Any, y_pred: Any, axis: int = -1) -> Any:
    """-sum(l2_normalize(y_true) * l2_normalize(y_pred), axis): -1 for equal directions."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = knn.l2_normalize(y_true, axis)
    y_pred = knn.l2_normalize(y_pred, axis)
    return -kreduce.reduce_sum(y_true * y_pred, axis)


def huber(y_true: Any, y_pred: Any, delta: float = 1.0) -> Any:
    """mean over the last axis of 0.5 e^2 where |e| <= delta, else delta (|e| - delta / 2)."""
    y_true, y_pred = _pair(y_true, y_pred)
    error = y_pred - y_true
    abs_error = kmath.abs(error)
    quadratic = 0.5 * kmath.square(error)
    linear = delta * abs_error - 0.5 * delta * delta
    return _mean(array.where(abs_error <= delta, quadratic, linear))


def log_cosh(y_true: Any, y_pred: Any) -> Any:
    """mean(log(cosh(y_pred - y_true))) over the last axis, computed without overflow as
    x + softplus(-2x) - log(2)."""
    y_true, y_pred = _pair(y_true, y_pred)
    x = y_pred - y_true
    return _mean(x + knn.softplus(-2.0 * x) - math.log(2.0))


# ---------------------------------------------------------------- probabilistic

def binary_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                        label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """Mean over `axis` of -(y log p + (1 - y) log(1 - p)); p = sigmoid(y_pred) when
    from_logits (computed stably from the logits), else y_pred clipped to [eps, 1 - eps]."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    return kreduce.reduce_mean(_elementwise_bce(y_true, y_pred, from_logits), axis)


def _elementwise_bce(y_true: Any, y_pred: Any, from_logits: bool) -> Any:
    if from_logits:
        return knn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    p = _clip(y_pred)
    return -(y_true * kmath.log(p) + (1.0 - y_true) * kmath.log(1.0 - p))


def binary_focal_crossentropy(y_true: Any, y_pred: Any, apply_class_balancing: bool = False,
                              alpha: float = 0.25, gamma: float = 2.0,
                              from_logits: bool = False, label_smoothing: float = 0.0,
                              axis: int = -1) -> Any:
    """Binary cross entropy scaled by (1 - p_t) ** gamma (and by alpha / 1 - alpha for the
    positive / negative class with apply_class_balancing), averaged over `axis`."""
    y_true, y_pred = _pair(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        y_pred = kmath.sigmoid(y_pred)
    bce = _elementwise_bce(y_true, y_pred, False)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = kmath.pow(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return kreduce.reduce_mean(focal, axis)


def _smooth_categorical(y_true: Any, y_pred: Any, label_smoothing: float, axis: int) -> Any:
    if not label_smoothing:
        return y_true
    classes = y_pred.shape[axis]
    if classes is None:
        classes = kmath.cast(array.shape(y_pred)[axis], y_pred.dtype)
    return y_true * (1.0 - label_smoothing) + label_smoothing / classes


def categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                             label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """-sum(y_true * log(p), axis) with one-hot (or soft) targets; p = softmax(y_pred)
    when from_logits, else y_pred renormalized to sum to 1 and clipped."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _smooth_categorical(y_true, y_pred, label_smoothing, axis)
    if from_logits:
        return knn.softmax_cross_entropy_with_logits(labels=y_true, logits=y_pred, axis=axis)
    p = _clip(y_pred / kreduce.reduce_sum(y_pred, axis, keepdims=True))
    return -kreduce.reduce_sum(y_true * kmath.log(p), axis)


def categorical_focal_crossentropy(y_true: Any, y_pred: Any, alpha: float = 0.25,
                                   gamma: float = 2.0, from_logits: bool = False,
                                   label_smoothing: float = 0.0, axis: int = -1) -> Any:
    """sum over `axis` of -alpha (1 - p) ** gamma * y_true * log(p), p the renormalized,
    clipped probabilities (softmax of the logits with from_logits)."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true = _smooth_categorical(y_true, y_pred, label_smoothing, axis)
    if from_logits:
        y_pred = knn.softmax(y_pred, axis=axis)
    p = _clip(y_pred / kreduce.reduce_sum(y_pred, axis, keepdims=True))
    weight = alpha * kmath.pow(1.0 - p, gamma)
    return kreduce.reduce_sum(weight * (-y_true * kmath.log(p)), axis)


def sparse_labels(y_true: Any, y_pred: Any) -> Any:
    """Integer class labels of y_pred's rank minus one: an (N, 1) column loses its 1."""
    labels = convert_to_tensor(y_true)
    rank, pred_rank = labels.shape.rank, y_pred.shape.rank
    if rank is not None and pred_rank is not None and rank == pred_rank and \
            labels.shape[-1] == 1:
        labels = reshaping.squeeze(labels, [-1])
    if labels.dtype not in (_dtypes.int32, _dtypes.int64):
        labels = kmath.cast(labels, _dtypes.int32)
    return labels


def sparse_categorical_crossentropy(y_true: Any, y_pred: Any, from_logits: bool = False,
                                    ignore_class: Optional[int] = None,
                                    axis: int = -1) -> Any:
    """Categorical cross entropy with integer class labels (shape [batch] or [batch, 1]);
    labels equal to `ignore_class` contribute 0."""
    y_pred = convert_to_tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = kmath.cast(y_pred, backend.floatx())
    labels = sparse_labels(y_true, y_pred)
    if axis not in (-1, y_pred.shape.rank - 1 if y_pred.shape.rank else -1):
        raise ValueError("sparse_categorical_crossentropy supports axis=-1 only")
    keep = None
    if ignore_class is not None:
        keep = kmath.not_equal(labels, ignore_class)
        labels = array.where(keep, labels, array.zeros_like(labels))
    # Probabilities go through the same op as logits (as Keras's TF backend does): it
    # rejects a label outside [0, classes) with TF's error instead of scoring it 0
    logits = y_pred if from_logits else kmath.log(_clip(y_pred))
    out = knn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return out if keep is None else out * kmath.cast(keep, out.dtype)


def kl_divergence(y_true: Any, y_pred: Any) -> Any:
    """sum(y_true * log(y_true / y_pred)) over the last axis, both clipped to [eps, 1]."""
    y_true, y_pred = _pair(y_true, y_pred)
    y_true, y_pred = _clip(y_true, 1.0), _clip(y_pred, 1.0)
    return kreduce.reduce_sum(y_true * kmath.log(y_true / y_pred), -1)


def poisson(y_true: Any, y_pred: Any) -> Any:
    """mean(y_pred - y_true * log(y_pred + eps)) over the last axis."""
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean(y_pred - y_true * kmath.log(y_pred + backend.epsilon()))


# ---------------------------------------------------------------- hinge

def _hinge_labels(y_true: Any) -> Any:
    """0/1 labels become -1/1 (as Keras does when every label is 0 or 1)."""
    binary = kreduce.reduce_all(kmath.logical_or(kmath.equal(y_true, 0.0),
                                                 kmath.equal(y_true, 1.0)))
    return array.where(binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true: Any, y_pred: Any) -> Any:
    """mean(max(1 - y_true * y_pred, 0)) over the last axis; labels -1/1 (or 0/1)."""
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean(kmath.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0))


def squared_hinge(y_true: Any, y_pred: Any) -> Any:
    """mean(max(1 - y_true * y_pred, 0) ** 2) over the last axis; labels -1/1 (or 0/1)."""
    y_true, y_pred = _pair(y_true, y_pred)
    return _mean(kmath.square(kmath.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)))


def categorical_hinge(y_true: Any, y_pred: Any) -> Any:
    """max(max((1 - y_true) * y_pred) - sum(y_true * y_pred) + 1, 0) with one-hot labels."""
    y_true, y_pred = _pair(y_true, y_pred)
    pos = kreduce.reduce_sum(y_true * y_pred, -1)
    neg = kreduce.reduce_max((1.0 - y_true) * y_pred, -1)
    return kmath.maximum(neg - pos + 1.0, 0.0)


# ---------------------------------------------------------------- segmentation

def dice(y_true: Any, y_pred: Any, axis: Any = None) -> Any:
    """1 - 2 sum(y_true * y_pred) / (sum(y_true) + sum(y_pred) + eps), the sums over `axis`
    (all axes when None)."""
    y_true, y_pred = _pair(y_true, y_pred)
    inter = kreduce.reduce_sum(y_true * y_pred, axis)
    total = kreduce.reduce_sum(y_true, axis) + kreduce.reduce_sum(y_pred, axis)
    return 1.0 - 2.0 * inter / (total + backend.epsilon())


def tversky(y_true: Any, y_pred: Any, alpha: float = 0.5, beta: float = 0.5,
            axis: Any = None) -> Any:
    """1 - TP / (TP + alpha FP + beta FN + eps) with soft counts summed over `axis`."""
    y_true, y_pred = _pair(y_true, y_pred)
    # Keras's own naming of the two error terms, kept so alpha and beta mean what they
    # mean there
    tp = kreduce.reduce_sum(y_true * y_pred, axis)
    fp = kreduce.reduce_sum((1.0 - y_pred) * y_true, axis)
    fn = kreduce.reduce_sum(y_pred * (1.0 - y_true), axis)
    return 1.0 - tp / (tp + alpha * fp + beta * fn + backend.epsilon())


mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


# ---------------------------------------------------------------- Loss classes

def circle(y_true: Any, y_pred: Any, ref_labels: Any = None, ref_embeddings: Any = None,
           remove_diagonal: bool = True, gamma: float = 80.0, margin: float = 0.4) -> Any:
    """Circle loss (Sun et al. 2020) of embeddings `y_pred` (L2-normalized by the caller)
    with integer labels: per anchor, softplus of the log-sum-exp of its weighted positive
    and negative cosine distances; anchors with a zero loss are masked out of the mean."""
    y_pred = convert_to_tensor(y_pred)
    y_true = kmath.cast(convert_to_tensor(y_true), "int32")
    ref = y_pred if ref_embeddings is None else convert_to_tensor(ref_embeddings)
    ref_labels = y_true if ref_labels is None else kmath.cast(convert_to_tensor(ref_labels),
                                                              "int32")
    distances = kmath.maximum(1.0 - linalg.matmul(y_pred, ref, transpose_b=True), 0.0)
    same = kmath.equal(reshaping.reshape(y_true, [-1, 1]), reshaping.reshape(ref_labels, [1, -1]))
    positive = same
    if remove_diagonal:
        eye = np.eye(int(y_true.shape[0]), int(ref_labels.shape[0]), dtype=bool)
        positive = kmath.logical_and(same, convert_to_tensor(~eye))
    pos_f, neg_f = kmath.cast(positive, y_pred.dtype), kmath.cast(kmath.logical_not(same),
                                                                  y_pred.dtype)
    pos_weights = kmath.maximum((margin + distances) * pos_f, 0.0)
    neg_weights = kmath.maximum((1.0 + margin - distances) * neg_f, 0.0)
    pos = -gamma * pos_weights * (margin - distances)
    neg = gamma * neg_weights * (1.0 - margin - distances)
    low = array.fill(array.shape(distances), -np.inf, y_pred.dtype)
    p_loss = kreduce.reduce_logsumexp(array.where(positive, pos, low), 1)
    n_loss = kreduce.reduce_logsumexp(array.where(kmath.logical_not(same), neg, low), 1)
    loss = backend.nn().softplus(p_loss + n_loss)
    backend.set_keras_mask(loss, loss > 0)
    return loss


def categorical_generalized_cross_entropy(y_true: Any, y_pred: Any, q: float) -> Any:
    """Generalized cross entropy (Zhang & Sabuncu 2018) of integer labels and class
    probabilities: (1 - p_true ** q) / q."""
    y_pred = convert_to_tensor(y_pred)
    labels = kmath.cast(convert_to_tensor(y_true), "int32")
    p = kreduce.reduce_sum(y_pred * array.one_hot(labels, int(y_pred.shape[-1]),
                                                  dtype=y_pred.dtype), -1)
    return (1.0 - kmath.pow(p, q)) / q


class Loss:
    """Base class: `call(y_true, y_pred)` gives per-example losses; `__call__` reduces them.

    >>> from kilnflow import keras
    >>> float(keras.losses.MeanSquaredError()([[0.0, 1.0]], [[1.0, 1.0]]))
    0.5
    """

    def __init__(self, name: Optional[str] = None, reduction: Any = "sum_over_batch_size",
                 dtype: Any = None):
        if reduction not in REDUCTIONS:
            raise ValueError(f"Invalid reduction {reduction!r}; expected one of {REDUCTIONS}")
        self.reduction = reduction
        self.name = name or backend.to_snake_case(type(self).__name__)
        self.dtype = dtype

    def call(self, y_true: Any, y_pred: Any) -> Any:
        raise NotImplementedError

    def __call__(self, y_true: Any, y_pred: Any, sample_weight: Any = None) -> Any:
        mask = backend.get_keras_mask(y_pred)  # from Embedding(mask_zero) / Masking
        losses = self.call(y_true, y_pred)
        out_mask = backend.get_keras_mask(losses)  # a loss may mask its own values (Circle)
        if out_mask is not None:
            mask = out_mask if mask is None else kmath.logical_and(mask, out_mask)
        if mask is not None:
            sample_weight = apply_mask(sample_weight, mask, losses.dtype, self.reduction)
        return reduce_weighted_values(losses, sample_weight, self.reduction)

    def get_config(self) -> dict:
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config: dict) -> "Loss":
        return cls(**config)


def apply_mask(sample_weight: Any, mask: Any, dtype: Any, reduction: Any) -> Any:
    """Fold a Keras mask into the sample weights. For averaging reductions the kept entries
    weigh total / kept, so the mean runs over the unmasked entries only (Keras's rule)."""
    mask = kmath.cast(mask, dtype)
    if reduction in ("mean", "sum_over_batch_size", "auto"):
        total = kmath.cast(array.size(mask), dtype)
        mask = mask * (total / (kreduce.reduce_sum(mask) + backend.epsilon()))
    if sample_weight is None:
        return mask
    weight = kmath.cast(convert_to_tensor(sample_weight), dtype)
    mask, weight = squeeze_or_expand_to_same_rank(mask, weight)
    return weight * mask


def reduce_weighted_values(values: Any, sample_weight: Any, reduction: Any) -> Any:
    """Weight per-example losses (the weights brought to the losses' rank by Keras's rule)
    and reduce them as `reduction` says."""
    values = convert_to_tensor(values)
    if sample_weight is not None:
        weight = kmath.cast(convert_to_tensor(sample_weight), values.dtype)
        values, weight = squeeze_or_expand_to_same_rank(values, weight)
        values = values * weight
    if reduction in (None, "none") or values.shape.rank == 0:
        return values
    total = kreduce.reduce_sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        count = kreduce.reduce_sum(weight * array.ones_like(values))
    else:
        count = kmath.cast(array.size(values), values.dtype)
    # divide_no_nan: an empty batch gives 0, not NaN
    return array.where(count > 0, total / kmath.maximum(count, 1e-12), array.zeros_like(total))


reduce_losses = reduce_weighted_values


class LossFunctionWrapper(Loss):
    """A Loss whose per-example values come from `fn(y_true, y_pred, **kwargs)`; labels and
    predictions are brought to the same rank first (as Keras does for every wrapped fn)."""

    def __init__(self, fn: Callable, reduction: Any = "sum_over_batch_size",
                 name: Optional[str] = None, dtype: Any = None, **kwargs: Any):
        super().__init__(name or getattr(fn, "__name__", None), reduction, dtype)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true: Any, y_pred: Any) -> Any:
        y_true, y_pred = convert_to_tensor(y_true), convert_to_tensor(y_pred)
        if self.fn not in SPARSE_LABEL_FNS:
            y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self) -> dict:
        return {**super().get_config(), **self._fn_kwargs}


def _wrapper(cls_name: str, fn: Callable, default_name: str, doc: str, **defaults: Any) -> type:
    """A LossFunctionWrapper subclass taking Keras's arguments: fn's keyword arguments (in
    order, positionally too) then reduction, name, dtype."""
    order = list(defaults) + ["reduction", "name", "dtype"]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(order):
            raise TypeError(f"{cls_name}() takes at most {len(order)} positional arguments")
        for key, value in zip(order, args):
            if key in kwargs:
                raise TypeError(f"{cls_name}() got multiple values for argument {key!r}")
            kwargs[key] = value
        unknown = set(kwargs) - set(order)
        if unknown:
            raise TypeError(f"{cls_name}() got unexpected keyword argument(s) "
                            f"{sorted(unknown)}")
        reduction = kwargs.pop("reduction", "sum_over_batch_size")
        name = kwargs.pop("name", default_name)
        dtype = kwargs.pop("dtype", None)
        LossFunctionWrapper.__init__(self, fn, reduction, name, dtype,
                                     **{**defaults, **kwargs})
    return type(cls_name, (LossFunctionWrapper,), {
        "__init__": __init__, "__doc__": doc, "__module__": __name__,
        "default_name": default_name})


MeanSquaredError = _wrapper("MeanSquaredError", mean_squared_error, "mean_squared_error",
                            "mean((y_pred - y_true) ** 2) per example.")
MeanAbsoluteError = _wrapper("MeanAbsoluteError", mean_absolute_error, "mean_absolute_error",
                             "mean(|y_pred - y_true|) per example.")
MeanAbsolutePercentageError = _wrapper(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "100 * mean(|y_true - y_pred| / |y_true|) per example.")
MeanSquaredLogarithmicError = _wrapper(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "mean((log(1 + y_pred) - log(1 + y_true)) ** 2).")
CosineSimilarity = _wrapper("CosineSimilarity", cosine_similarity, "cosine_similarity",
                            "Minus the cosine of the angle between labels and predictions.",
                            axis=-1)
Huber = _wrapper("Huber", huber, "huber_loss", "Quadratic below `delta`, linear above.",
                 delta=1.0)
LogCosh = _wrapper("LogCosh", log_cosh, "log_cosh", "mean(log(cosh(y_pred - y_true))).")
BinaryCrossentropy = _wrapper(
    "BinaryCrossentropy", binary_crossentropy, "binary_crossentropy",
    "Cross entropy of 0/1 targets against probabilities (or logits with from_logits).",
    from_logits=False, label_smoothing=0.0, axis=-1)
BinaryFocalCrossentropy = _wrapper(
    "BinaryFocalCrossentropy", binary_focal_crossentropy, "binary_focal_crossentropy",
    "Binary cross entropy down-weighting easy examples by (1 - p_t) ** gamma.",
    apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False,
    label_smoothing=0.0, axis=-1)
CategoricalCrossentropy = _wrapper(
    "CategoricalCrossentropy", categorical_crossentropy, "categorical_crossentropy",
    "Cross entropy of one-hot targets against class probabilities (or logits).",
    from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalFocalCrossentropy = _wrapper(
    "CategoricalFocalCrossentropy", categorical_focal_crossentropy,
    "categorical_focal_crossentropy", "Categorical cross entropy scaled by alpha (1 - p) ** "
    "gamma.", alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)
SparseCategoricalCrossentropy = _wrapper(
    "SparseCategoricalCrossentropy", sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy",
    "Cross entropy of integer class targets against class probabilities (or logits).",
    from_logits=False, ignore_class=None, axis=-1)
KLDivergence = _wrapper("KLDivergence", kl_divergence, "kl_divergence",
                        "sum(y_true * log(y_true / y_pred)) per example.")
Poisson = _wrapper("Poisson", poisson, "poisson", "mean(y_pred - y_true * log(y_pred)).")
Hinge = _wrapper("Hinge", hinge, "hinge", "mean(max(1 - y_true * y_pred, 0)).")
SquaredHinge = _wrapper("SquaredHinge", squared_hinge, "squared_hinge",
                        "mean(max(1 - y_true * y_pred, 0) ** 2).")
CategoricalHinge = _wrapper("CategoricalHinge", categorical_hinge, "categorical_hinge",
                            "max(max_neg - pos + 1, 0) with one-hot labels.")
Dice = _wrapper("Dice", dice, "dice", "1 - the Dice coefficient of labels and predictions.",
                axis=None)
Tversky = _wrapper("Tversky", tversky, "tversky", "1 - the Tversky index (alpha, beta).",
                   alpha=0.5, beta=0.5, axis=None)

Circle = _wrapper("Circle", circle, "circle", "Circle loss of embeddings with integer labels "
                  "(see circle).", gamma=80.0, margin=0.4, remove_diagonal=True)
CategoricalGeneralizedCrossEntropy = _wrapper(
    "CategoricalGeneralizedCrossEntropy", categorical_generalized_cross_entropy,
    "categorical_generalized_cross_entropy", "(1 - p_true ** q) / q: cross entropy robust "
    "to noisy labels.", q=0.5)
SPARSE_LABEL_FNS = (sparse_categorical_crossentropy, circle,
                    categorical_generalized_cross_entropy)

ALL_LOSS_CLASSES = (
    MeanSquaredError, MeanAbsoluteError, MeanAbsolutePercentageError,
    MeanSquaredLogarithmicError, CosineSimilarity, Huber, LogCosh, BinaryCrossentropy,
    BinaryFocalCrossentropy, CategoricalCrossentropy, CategoricalFocalCrossentropy,
    SparseCategoricalCrossentropy, KLDivergence, Poisson, Hinge, SquaredHinge,
    CategoricalHinge, Dice, Tversky, Circle, CategoricalGeneralizedCrossEntropy)
_BY_NAME = {cls.__name__: cls for cls in ALL_LOSS_CLASSES}
for _cls in ALL_LOSS_CLASSES:
    _BY_NAME[_cls.default_name] = _cls
_BY_NAME.update({"mse": MeanSquaredError, "mae": MeanAbsoluteError,
                 "mape": MeanAbsolutePercentageError, "msle": MeanSquaredLogarithmicError,
                 "kld": KLDivergence, "kullback_leibler_divergence": KLDivergence,
                 "huber": Huber, "logcosh": LogCosh})
from kilnflow.keras.losses_ctc import CTC, ctc  # noqa: E402  (needs Loss defined above)
_BY_NAME.update({"CTC": CTC, "ctc": CTC})


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


def deserialize(config: dict) -> Loss:
    return get(config)
