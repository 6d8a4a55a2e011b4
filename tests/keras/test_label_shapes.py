"""Keras's label-shape rule in every loss and metric: labels of shape (N,), (N, 1) and
one-hot (N, C) meet predictions row by row, never broadcasting (N,) against (N, 1) to
(N, N). Each case is checked against a NumPy reference on explicitly aligned arrays."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

EPS = 1e-7
RNG = np.random.default_rng(3)
N, C = 6, 3
Y01 = np.array([0, 1, 1, 0, 1, 0])
P_COL = RNG.uniform(0.05, 0.95, (N, 1)).astype(np.float32)   # a sigmoid column
SPARSE = np.array([0, 2, 1, 1, 0, 2])
ONE_HOT = np.eye(C, dtype=np.float32)[SPARSE]
P_CAT = RNG.uniform(0.05, 1.0, (N, C)).astype(np.float32)
P_CAT /= P_CAT.sum(-1, keepdims=True)


def _clip(p, hi=1 - EPS):
    return np.clip(p, EPS, hi)


def _bce(y, p):
    p = _clip(p)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def _hinge_y(y):
    return 2 * y - 1 if np.isin(y, [0, 1]).all() else y


def _cosine(y, p):
    yn = y / np.sqrt(np.maximum((y * y).sum(-1, keepdims=True), 1e-12))
    pn = p / np.sqrt(np.maximum((p * p).sum(-1, keepdims=True), 1e-12))
    return -(yn * pn).sum(-1)


def _huber(y, p, d=1.0):
    e = np.abs(p - y)
    return np.where(e <= d, 0.5 * e ** 2, d * e - 0.5 * d * d).mean(-1)


def _focal_bce(y, p):
    p_t = y * p + (1 - y) * (1 - p)
    return ((1 - p_t) ** 2 * _bce(y, p)).mean(-1)


def _focal_cce(y, p):
    p = _clip(p / p.sum(-1, keepdims=True))
    return (0.25 * (1 - p) ** 2 * -y * np.log(p)).sum(-1)


def _dice(y, p):
    return 1 - 2 * (y * p).sum() / (y.sum() + p.sum() + EPS)


def _tversky(y, p):
    tp = (y * p).sum()
    return 1 - tp / (tp + 0.5 * ((1 - p) * y).sum() + 0.5 * (p * (1 - y)).sum() + EPS)


# name -> NumPy loss per example for aligned (N, k) arrays
PER_EXAMPLE = {
    "MeanSquaredError": lambda y, p: ((p - y) ** 2).mean(-1),
    "MeanAbsoluteError": lambda y, p: np.abs(p - y).mean(-1),
    "MeanAbsolutePercentageError":
        lambda y, p: 100 * (np.abs(y - p) / np.maximum(np.abs(y), EPS)).mean(-1),
    "MeanSquaredLogarithmicError": lambda y, p: (
        (np.log(np.maximum(p, EPS) + 1) - np.log(np.maximum(y, EPS) + 1)) ** 2).mean(-1),
    "CosineSimilarity": _cosine,
    "Huber": _huber,
    "LogCosh": lambda y, p: np.log(np.cosh(p - y)).mean(-1),
    "BinaryCrossentropy": lambda y, p: _bce(y, p).mean(-1),
    "BinaryFocalCrossentropy": _focal_bce,
    "KLDivergence": lambda y, p: (_clip(y, 1) * np.log(_clip(y, 1) / _clip(p, 1))).sum(-1),
    "Poisson": lambda y, p: (p - y * np.log(p + EPS)).mean(-1),
    "Hinge": lambda y, p: np.maximum(1 - _hinge_y(y) * p, 0).mean(-1),
    "SquaredHinge": lambda y, p: (np.maximum(1 - _hinge_y(y) * p, 0) ** 2).mean(-1),
    "CategoricalCrossentropy":
        lambda y, p: -(y * np.log(_clip(p / p.sum(-1, keepdims=True)))).sum(-1),
    "CategoricalFocalCrossentropy": _focal_cce,
    "CategoricalHinge": lambda y, p: np.maximum(
        ((1 - y) * p).max(-1) - (y * p).sum(-1) + 1, 0),
    "Dice": _dice,
    "Tversky": _tversky,
}
BINARY_LOSSES = ["MeanSquaredError", "MeanAbsoluteError", "MeanAbsolutePercentageError",
                 "MeanSquaredLogarithmicError", "CosineSimilarity", "Huber", "LogCosh",
                 "BinaryCrossentropy", "BinaryFocalCrossentropy", "KLDivergence", "Poisson",
                 "Hinge", "SquaredHinge", "Dice", "Tversky"]
CATEGORICAL_LOSSES = BINARY_LOSSES + ["CategoricalCrossentropy",
                                      "CategoricalFocalCrossentropy", "CategoricalHinge"]
SCALAR_LOSSES = {"Dice", "Tversky"}  # reduce over every axis: one value per batch


def test_every_keras_loss_class_is_covered():
    assert {c.__name__ for c in keras.losses.ALL_LOSS_CLASSES} == \
        set(PER_EXAMPLE) | {"SparseCategoricalCrossentropy", "Circle",
                            "CategoricalGeneralizedCrossEntropy"}  # integer labels: probes


@pytest.mark.parametrize("name", BINARY_LOSSES)
@pytest.mark.parametrize("labels", ["flat", "column"])
def test_binary_labels_against_a_sigmoid_column(name, labels):
    y = Y01.astype(np.float32) if labels == "flat" else Y01[:, None].astype(np.float32)
    expected = PER_EXAMPLE[name](Y01[:, None].astype(np.float32), P_COL)
    loss = getattr(keras.losses, name)()
    assert float(loss(y, P_COL)) == pytest.approx(np.mean(expected), rel=1e-4, abs=1e-6)
    # a flat prediction against column labels is aligned the same way
    assert float(loss(Y01[:, None].astype(np.float32), P_COL[:, 0])) == pytest.approx(
        np.mean(expected), rel=1e-4, abs=1e-6)
    if name not in SCALAR_LOSSES:
        per = getattr(keras.losses, name)(reduction="none")(y, P_COL).numpy()
        assert per.shape == (N,)
        np.testing.assert_allclose(per, expected, rtol=1e-4, atol=1e-6)
        w = RNG.uniform(0, 2, N).astype(np.float32)
        for weights in (w, w[:, None]):
            assert float(loss(y, P_COL, sample_weight=weights)) == pytest.approx(
                np.sum(expected * w) / N, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("name", CATEGORICAL_LOSSES)
def test_one_hot_labels(name):
    expected = PER_EXAMPLE[name](ONE_HOT, P_CAT)
    loss = getattr(keras.losses, name)()
    assert float(loss(ONE_HOT, P_CAT)) == pytest.approx(np.mean(expected), rel=1e-4)


@pytest.mark.parametrize("labels", [SPARSE, SPARSE[:, None], SPARSE.astype(np.float32)],
                         ids=["flat", "column", "float"])
def test_sparse_labels(labels):
    expected = PER_EXAMPLE["CategoricalCrossentropy"](ONE_HOT, P_CAT)
    loss = keras.losses.SparseCategoricalCrossentropy()
    assert float(loss(labels, P_CAT)) == pytest.approx(np.mean(expected), rel=1e-5)
    logits = np.log(P_CAT)
    assert float(keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
        labels, logits)) == pytest.approx(np.mean(expected), rel=1e-5)
    assert keras.losses.SparseCategoricalCrossentropy(reduction="none")(
        labels, P_CAT).shape == (N,)


def test_custom_loss_functions_get_the_rule_too():
    loss = keras.losses.get(lambda a, b: kf.reduce_mean(kf.square(a - b), -1))
    assert float(loss(Y01.astype(np.float32), P_COL)) == pytest.approx(
        np.mean((P_COL[:, 0] - Y01) ** 2), rel=1e-5)


def test_ranks_differing_by_more_than_a_trailing_one_are_left_alone():
    a, b = keras.losses.squeeze_or_expand_to_same_rank(kf.ones([4, 3]), kf.ones([4]))
    assert (a.shape, b.shape) == ((4, 3), (4,))
    a, b = keras.losses.squeeze_or_expand_to_same_rank(kf.ones([4, 2, 1]), kf.ones([4, 2]))
    assert (a.shape, b.shape) == ((4, 2), (4, 2))


def test_losses_agree_eager_and_in_a_function():
    y, p = kf.constant(Y01.astype(np.float32)), kf.constant(P_COL)
    for name in BINARY_LOSSES:
        loss = getattr(keras.losses, name)()
        traced = kf.function(lambda a, b: loss(a, b))
        assert float(traced(y, p)) == pytest.approx(float(loss(y, p)), rel=1e-5)


# ---------------------------------------------------------------- metrics

P_HARD = np.array([[0.9], [0.8], [0.3], [0.2], [0.6], [0.7]], np.float32)
BINARY_METRICS = {
    "BinaryAccuracy": lambda y, p: np.mean((p > 0.5) == y),
    "Accuracy": lambda y, p: np.mean(p == y),
    "MeanSquaredError": lambda y, p: np.mean((p - y) ** 2),
    "MeanAbsoluteError": lambda y, p: np.mean(np.abs(p - y)),
    "MeanAbsolutePercentageError":
        lambda y, p: np.mean(PER_EXAMPLE["MeanAbsolutePercentageError"](y, p)),
    "MeanSquaredLogarithmicError":
        lambda y, p: np.mean(PER_EXAMPLE["MeanSquaredLogarithmicError"](y, p)),
    "RootMeanSquaredError": lambda y, p: np.sqrt(np.mean((p - y) ** 2)),
    "LogCoshError": lambda y, p: np.mean(np.log(np.cosh(p - y))),
    "BinaryCrossentropy": lambda y, p: np.mean(_bce(y, p)),
    "KLDivergence": lambda y, p: np.mean(PER_EXAMPLE["KLDivergence"](y, p)),
    "Poisson": lambda y, p: np.mean(PER_EXAMPLE["Poisson"](y, p)),
    "Hinge": lambda y, p: np.mean(PER_EXAMPLE["Hinge"](y, p)),
    "SquaredHinge": lambda y, p: np.mean(PER_EXAMPLE["SquaredHinge"](y, p)),
    "CosineSimilarity": lambda y, p: -np.mean(_cosine(y, p)),
    "TruePositives": lambda y, p: np.sum((p > 0.5) & (y == 1)),
    "FalsePositives": lambda y, p: np.sum((p > 0.5) & (y == 0)),
    "TrueNegatives": lambda y, p: np.sum((p <= 0.5) & (y == 0)),
    "FalseNegatives": lambda y, p: np.sum((p <= 0.5) & (y == 1)),
    "Precision": lambda y, p: np.sum((p > 0.5) & (y == 1)) / np.sum(p > 0.5),
    "Recall": lambda y, p: np.sum((p > 0.5) & (y == 1)) / np.sum(y == 1),
    "AUC": lambda y, p: _roc_auc(y.ravel(), p.ravel()),
    "R2Score": lambda y, p: 1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2),
}


def _roc_auc(y, p):
    pos, neg = p[y == 1], p[y == 0]
    return np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg])


@pytest.mark.parametrize("name", sorted(BINARY_METRICS))
@pytest.mark.parametrize("labels", ["flat", "column"])
def test_binary_metrics_with_flat_and_column_labels(name, labels):
    y = Y01 if labels == "flat" else Y01[:, None]
    p = np.round(P_HARD) if name == "Accuracy" else P_HARD  # exact equality
    metric = getattr(keras.metrics, name)()
    metric.update_state(y, p)
    expected = BINARY_METRICS[name](Y01[:, None].astype(np.float32), p)
    tol = 2e-2 if name == "AUC" else 1e-5  # AUC: 200 thresholds, Riemann sum
    assert float(metric.result()) == pytest.approx(expected, rel=tol, abs=1e-6)


CATEGORICAL_METRICS = {
    "CategoricalAccuracy": lambda y, p: np.mean(p.argmax(-1) == y.argmax(-1)),
    "TopKCategoricalAccuracy": lambda y, p: 1.0,  # k=5 > 3 classes
    "CategoricalCrossentropy":
        lambda y, p: np.mean(PER_EXAMPLE["CategoricalCrossentropy"](y, p)),
    "CategoricalHinge": lambda y, p: np.mean(PER_EXAMPLE["CategoricalHinge"](y, p)),
    "F1Score": lambda y, p: _f1(y, np.eye(C)[p.argmax(-1)]),
}


def _f1(y, hard):
    tp, fp, fn = (hard * y).sum(0), (hard * (1 - y)).sum(0), ((1 - hard) * y).sum(0)
    prec, rec = tp / (tp + fp + EPS), tp / (tp + fn + EPS)
    return 2 * prec * rec / (prec + rec + EPS)


@pytest.mark.parametrize("name", sorted(CATEGORICAL_METRICS))
def test_one_hot_metrics(name):
    metric = getattr(keras.metrics, name)()
    metric.update_state(ONE_HOT, P_CAT)
    np.testing.assert_allclose(metric.result().numpy(),
                               CATEGORICAL_METRICS[name](ONE_HOT, P_CAT), rtol=1e-4)


SPARSE_METRICS = {
    "SparseCategoricalAccuracy": lambda: np.mean(P_CAT.argmax(-1) == SPARSE),
    "SparseTopKCategoricalAccuracy": lambda: 1.0,
    "SparseCategoricalCrossentropy":
        lambda: np.mean(PER_EXAMPLE["CategoricalCrossentropy"](ONE_HOT, P_CAT)),
}


@pytest.mark.parametrize("name", sorted(SPARSE_METRICS))
@pytest.mark.parametrize("labels", [SPARSE, SPARSE[:, None]], ids=["flat", "column"])
def test_sparse_metrics_with_flat_and_column_labels(name, labels):
    metric = getattr(keras.metrics, name)()
    metric.update_state(labels, P_CAT)
    assert float(metric.result()) == pytest.approx(SPARSE_METRICS[name](), rel=1e-5)


def test_top_k_counts_ties_as_in_and_sparse_top_k_matches_one_hot():
    p = np.array([[0.1, 0.5, 0.2, 0.2], [0.4, 0.3, 0.2, 0.1]], np.float32)
    top2 = keras.metrics.sparse_top_k_categorical_accuracy([[2], [3]], p, k=2).numpy()
    np.testing.assert_array_equal(top2, [1.0, 0.0])
    np.testing.assert_array_equal(
        keras.metrics.top_k_categorical_accuracy(np.eye(4)[[2, 3]], p, k=2).numpy(), top2)


def test_mean_iou_on_class_ids():
    m = keras.metrics.MeanIoU(num_classes=2)
    m.update_state([0, 0, 1, 1], [0, 1, 0, 1])
    assert float(m.result()) == pytest.approx((1 / 3 + 1 / 3) / 2)


def test_metric_sample_weights_flat_or_column_agree():
    w = np.array([1, 2, 0, 1, 1, 3], np.float32)
    values = []
    for weights in (w, w[:, None]):
        m = keras.metrics.BinaryAccuracy()
        m.update_state(Y01, P_HARD, sample_weight=weights)
        values.append(float(m.result()))
    hits = ((P_HARD[:, 0] > 0.5) == Y01).astype(np.float32)
    assert values == pytest.approx([np.sum(hits * w) / w.sum()] * 2)


# ---------------------------------------------------------------- through fit

@pytest.mark.parametrize("loss", ["binary_crossentropy", "mse", "hinge",
                                  "binary_focal_crossentropy"])
@pytest.mark.parametrize("column", [False, True])
def test_fit_with_flat_or_column_labels_learns_a_separable_problem(loss, column):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 2)).astype(np.float32)
    y = (x[:, 0] - x[:, 1] > 0).astype(np.int32)
    if column:
        y = y[:, None]
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.05), loss, metrics=["binary_accuracy"])
    history = model.fit(x, y, epochs=10, batch_size=32, verbose=0)
    assert history.history["binary_accuracy"][-1] > 0.9
    _, acc = model.evaluate(x, y, verbose=0)
    assert acc > 0.9
