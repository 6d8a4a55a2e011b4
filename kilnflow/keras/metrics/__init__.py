"""keras.metrics: stateful metrics (update_state / result / reset_state) and the metric
functions. Every metric applies Keras's label-shape rule, so (N,), (N, 1) and one-hot
labels are compared with predictions as Keras compares them."""
from __future__ import annotations

from typing import Any

from kilnflow.keras import losses as _losses
from kilnflow.keras.metrics.base import Metric as Metric
from kilnflow.keras.metrics.base import Mean as Mean
from kilnflow.keras.metrics.base import Sum as Sum
from kilnflow.keras.metrics.base import MeanMetricWrapper as MeanMetricWrapper
from kilnflow.keras.metrics.wrappers import accuracy as accuracy
from kilnflow.keras.metrics.wrappers import binary_accuracy as binary_accuracy
from kilnflow.keras.metrics.wrappers import categorical_accuracy as categorical_accuracy
from kilnflow.keras.metrics.wrappers import sparse_categorical_accuracy as sparse_categorical_accuracy
from kilnflow.keras.metrics.wrappers import top_k_categorical_accuracy as top_k_categorical_accuracy
from kilnflow.keras.metrics.wrappers import sparse_top_k_categorical_accuracy as sparse_top_k_categorical_accuracy
from kilnflow.keras.metrics.wrappers import cosine_similarity as cosine_similarity
from kilnflow.keras.metrics.wrappers import Accuracy as Accuracy
from kilnflow.keras.metrics.wrappers import BinaryAccuracy as BinaryAccuracy
from kilnflow.keras.metrics.wrappers import CategoricalAccuracy as CategoricalAccuracy
from kilnflow.keras.metrics.wrappers import SparseCategoricalAccuracy as SparseCategoricalAccuracy
from kilnflow.keras.metrics.wrappers import TopKCategoricalAccuracy as TopKCategoricalAccuracy
from kilnflow.keras.metrics.wrappers import SparseTopKCategoricalAccuracy as SparseTopKCategoricalAccuracy
from kilnflow.keras.metrics.wrappers import MeanSquaredError as MeanSquaredError
from kilnflow.keras.metrics.wrappers import MeanAbsoluteError as MeanAbsoluteError
from kilnflow.keras.metrics.wrappers import MeanAbsolutePercentageError as MeanAbsolutePercentageError
from kilnflow.keras.metrics.wrappers import MeanSquaredLogarithmicError as MeanSquaredLogarithmicError
from kilnflow.keras.metrics.wrappers import CosineSimilarity as CosineSimilarity
from kilnflow.keras.metrics.wrappers import LogCoshError as LogCoshError
from kilnflow.keras.metrics.wrappers import BinaryCrossentropy as BinaryCrossentropy
from kilnflow.keras.metrics.wrappers import CategoricalCrossentropy as CategoricalCrossentropy
from kilnflow.keras.metrics.wrappers import SparseCategoricalCrossentropy as SparseCategoricalCrossentropy
from kilnflow.keras.metrics.wrappers import KLDivergence as KLDivergence
from kilnflow.keras.metrics.wrappers import Poisson as Poisson
from kilnflow.keras.metrics.wrappers import Hinge as Hinge
from kilnflow.keras.metrics.wrappers import SquaredHinge as SquaredHinge
from kilnflow.keras.metrics.wrappers import CategoricalHinge as CategoricalHinge
from kilnflow.keras.metrics.wrappers import RootMeanSquaredError as RootMeanSquaredError
from kilnflow.keras.metrics.confusion import TruePositives as TruePositives
from kilnflow.keras.metrics.confusion import FalsePositives as FalsePositives
from kilnflow.keras.metrics.confusion import TrueNegatives as TrueNegatives
from kilnflow.keras.metrics.confusion import FalseNegatives as FalseNegatives
from kilnflow.keras.metrics.confusion import Precision as Precision
from kilnflow.keras.metrics.confusion import Recall as Recall
from kilnflow.keras.metrics.confusion import AUC as AUC
from kilnflow.keras.metrics.confusion import FBetaScore as FBetaScore
from kilnflow.keras.metrics.confusion import F1Score as F1Score
from kilnflow.keras.metrics.confusion import MeanIoU as MeanIoU
from kilnflow.keras.metrics.confusion import R2Score as R2Score
from kilnflow.keras.metrics.iou_correlation import IoU as IoU
from kilnflow.keras.metrics.iou_correlation import BinaryIoU as BinaryIoU
from kilnflow.keras.metrics.iou_correlation import OneHotIoU as OneHotIoU
from kilnflow.keras.metrics.iou_correlation import OneHotMeanIoU as OneHotMeanIoU
from kilnflow.keras.metrics.iou_correlation import PearsonCorrelation as PearsonCorrelation
from kilnflow.keras.metrics.iou_correlation import ConcordanceCorrelation as ConcordanceCorrelation
from kilnflow.keras.metrics.iou_correlation import PrecisionAtRecall as PrecisionAtRecall
from kilnflow.keras.metrics.iou_correlation import RecallAtPrecision as RecallAtPrecision
from kilnflow.keras.metrics.iou_correlation import SensitivityAtSpecificity as SensitivityAtSpecificity
from kilnflow.keras.metrics.iou_correlation import SpecificityAtSensitivity as SpecificityAtSensitivity
from kilnflow.keras.metrics.iou_correlation import pearson_correlation as pearson_correlation
from kilnflow.keras.metrics.iou_correlation import concordance_correlation as concordance_correlation
from kilnflow.keras.metrics import confusion as _confusion
from kilnflow.keras.metrics import iou_correlation as _iou_correlation
from kilnflow.keras.metrics import wrappers as _wrappers

# the loss functions Keras also exports from keras.metrics
mean_squared_error = mse = _losses.mean_squared_error
mean_absolute_error = mae = _losses.mean_absolute_error
mean_absolute_percentage_error = mape = _losses.mean_absolute_percentage_error
mean_squared_logarithmic_error = msle = _losses.mean_squared_logarithmic_error
binary_crossentropy = _losses.binary_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
kl_divergence = kld = _losses.kl_divergence
poisson = _losses.poisson
hinge = _losses.hinge
squared_hinge = _losses.squared_hinge
categorical_hinge = _losses.categorical_hinge
log_cosh_error = logcosh = log_cosh = _losses.log_cosh
huber = _losses.huber
binary_focal_crossentropy = _losses.binary_focal_crossentropy
categorical_focal_crossentropy = _losses.categorical_focal_crossentropy

_BY_NAME: dict = {}
for _cls in _wrappers.WRAPPED:
    _BY_NAME[_cls.__name__] = _BY_NAME[_cls.default_name] = _cls
for _cls in _confusion.CONFUSION + _iou_correlation.IOU_AND_CORRELATION + (
        Mean, Sum, RootMeanSquaredError):
    _BY_NAME[_cls.__name__] = _cls
_BY_NAME.update({"mse": MeanSquaredError, "mae": MeanAbsoluteError,
                 "mape": MeanAbsolutePercentageError, "msle": MeanSquaredLogarithmicError,
                 "kld": KLDivergence, "auc": AUC, "precision": Precision, "recall": Recall,
                 "root_mean_squared_error": RootMeanSquaredError, "log_cosh": LogCoshError})


def get(identifier: Any) -> Metric:
    """A Metric from a name, a Metric, a config dict, or a function of (y_true, y_pred)."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Unknown metric {identifier!r}; known: "
                             f"{', '.join(sorted(_BY_NAME))}")
        return cls()
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"Unknown metric config {identifier!r}")
        return cls.from_config(identifier.get("config", {}))
    if callable(identifier):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}")


def serialize(metric: Metric) -> dict:
    return {"class_name": type(metric).__name__, "config": metric.get_config()}


def deserialize(config: dict) -> Metric:
    return get(config)


def resolve_accuracy(name: str, loss: Any, y_true: Any, y_pred: Any) -> Metric:
    """What compile(metrics=['accuracy']) means, as in Keras: chosen from the loss, else
    from the shapes of the first batch."""
    fn = getattr(loss, "fn", None)
    if fn is _losses.sparse_categorical_crossentropy:
        cls: Any = SparseCategoricalAccuracy
    elif fn is _losses.categorical_crossentropy:
        cls = CategoricalAccuracy
    elif fn in (_losses.binary_crossentropy, _losses.binary_focal_crossentropy):
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
