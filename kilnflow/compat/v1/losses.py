"""kf.compat.v1.losses: TF1's loss functions. Each weights the per-element losses, reduces
them (by default: the sum over the number of non-zero weights) and adds the result to the
LOSSES collection; get_total_loss adds the regularization losses.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.compat.v1.graph_keys import GraphKeys, add_to_collection, get_collection
from kilnflow.ops import nn as _nn
from kilnflow.ops.array import ones_like, where
from kilnflow.ops.convert import constant, convert_to_tensor
from kilnflow.ops.math import abs as _abs
from kilnflow.ops.math import add_n, cast, not_equal, square
from kilnflow.ops.reduction import reduce_sum
from kilnflow.ops.array import shape as _shape
from kilnflow.tensor import Tensor


class Reduction:
    """How weighted losses are reduced (TF1's tf.losses.Reduction)."""

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE,
                cls.SUM_OVER_NONZERO_WEIGHTS, cls.SUM_BY_NONZERO_WEIGHTS)


def _safe_divide(total: Any, count: Any) -> Any:
    """total / count, 0 where count is 0 (TF's div_no_nan)."""
    nonzero = not_equal(count, 0.0)
    return where(nonzero, total / where(nonzero, count, ones_like(count)), count * 0.0)


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: Optional[str] = None,
                          loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    """losses * weights, reduced as `reduction` says, added to `loss_collection`."""
    if reduction not in Reduction.all():
        raise ValueError(f"Invalid Reduction Key {reduction}.")
    losses = convert_to_tensor(losses)
    dtype = losses.dtype
    wide = cast(losses, "float64") if dtype.name == "float16" else losses
    weights = cast(convert_to_tensor(weights), wide.dtype)
    weighted = wide * weights
    every = ones_like(weighted)
    if reduction == Reduction.NONE:
        loss = weighted
    elif reduction == Reduction.SUM:
        loss = reduce_sum(weighted)
    elif reduction == Reduction.MEAN:
        loss = _safe_divide(reduce_sum(weighted), reduce_sum(every * weights))
    elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
        loss = _safe_divide(reduce_sum(weighted), reduce_sum(every))
    else:
        nonzero = cast(not_equal(every * weights, 0.0), wide.dtype)
        loss = _safe_divide(reduce_sum(weighted), reduce_sum(nonzero))
    loss = cast(loss, dtype)
    if loss_collection:
        add_to_collection(loss_collection, loss)
    return loss


def _pair(labels: Any, predictions: Any) -> tuple:
    predictions = convert_to_tensor(predictions)
    labels = cast(convert_to_tensor(labels), predictions.dtype)
    if labels.shape.rank is not None and predictions.shape.rank is not None and \
            not labels.shape.is_compatible_with(predictions.shape):
        raise ValueError(f"Shapes {labels.shape} and {predictions.shape} are incompatible")
    return labels, predictions


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0,
                       scope: Optional[str] = None,
                       loss_collection: Optional[str] = GraphKeys.LOSSES,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    labels, predictions = _pair(labels, predictions)
    return compute_weighted_loss(square(predictions - labels), weights, scope,
                                 loss_collection, reduction)


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0,
                        scope: Optional[str] = None,
                        loss_collection: Optional[str] = GraphKeys.LOSSES,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    labels, predictions = _pair(labels, predictions)
    return compute_weighted_loss(_abs(predictions - labels), weights, scope,
                                 loss_collection, reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0,
                          label_smoothing: float = 0, scope: Optional[str] = None,
                          loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    labels, logits = _pair(multi_class_labels, logits)
    if label_smoothing > 0:
        labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
    losses = _nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0,
                          label_smoothing: float = 0, scope: Optional[str] = None,
                          loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    labels, logits = _pair(onehot_labels, logits)
    if label_smoothing > 0:
        classes = cast(_shape(labels)[-1], labels.dtype)
        labels = labels * (1 - label_smoothing) + label_smoothing / classes
    losses = _nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0,
                                 scope: Optional[str] = None,
                                 loss_collection: Optional[str] = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Tensor:
    losses = _nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    return compute_weighted_loss(losses, weights, scope, loss_collection, reduction)


def add_loss(loss: Any, loss_collection: str = GraphKeys.LOSSES) -> None:
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope: Optional[str] = None, loss_collection: str = GraphKeys.LOSSES) -> list:
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope: Optional[str] = None) -> list:
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: Optional[str] = None,
                            name: str = "total_regularization_loss") -> Tensor:
    """The sum of the regularization losses (0.0 when there are none)."""
    losses = get_regularization_losses(scope)
    return add_n(losses, name=name) if losses else constant(0.0, name=name)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: Optional[str] = None) -> Tensor:
    """The sum of the LOSSES collection (and of the regularization losses)."""
    losses = get_losses(scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses found in the collection")
    return add_n(losses, name=name)


