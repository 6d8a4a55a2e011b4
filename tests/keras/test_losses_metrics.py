"""Losses and metrics against NumPy: from_logits both ways, label smoothing, sample
weights, reductions; metric state across batches and reset."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

losses, metrics = keras.losses, keras.metrics
EPS = 1e-7
RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((5, 4))
PROBS = np.exp(LOGITS) / np.exp(LOGITS).sum(-1, keepdims=True)
LABELS = np.array([0, 3, 1, 1, 2])
ONE_HOT = np.eye(4)[LABELS]
BINARY = RNG.integers(0, 2, (5, 4)).astype(float)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _bce(y, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(-1)


def _cce(y, p):
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return -(y * np.log(p)).sum(-1)


CASES = [
    (losses.MeanSquaredError(), BINARY, LOGITS, ((LOGITS - BINARY) ** 2).mean(-1)),
    (losses.MeanAbsoluteError(), BINARY, LOGITS, np.abs(LOGITS - BINARY).mean(-1)),
    (losses.BinaryCrossentropy(), BINARY, _sigmoid(LOGITS), _bce(BINARY, _sigmoid(LOGITS))),
    (losses.BinaryCrossentropy(from_logits=True), BINARY, LOGITS,
     _bce(BINARY, _sigmoid(LOGITS))),
    (losses.BinaryCrossentropy(label_smoothing=0.2), BINARY, _sigmoid(LOGITS),
     _bce(BINARY * 0.8 + 0.1, _sigmoid(LOGITS))),
    (losses.CategoricalCrossentropy(), ONE_HOT, PROBS, _cce(ONE_HOT, PROBS)),
    (losses.CategoricalCrossentropy(from_logits=True), ONE_HOT, LOGITS, _cce(ONE_HOT, PROBS)),
    (losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1), ONE_HOT, LOGITS,
     _cce(ONE_HOT * 0.9 + 0.025, PROBS)),
    (losses.SparseCategoricalCrossentropy(), LABELS, PROBS, _cce(ONE_HOT, PROBS)),
    (losses.SparseCategoricalCrossentropy(from_logits=True), LABELS[:, None], LOGITS,
     _cce(ONE_HOT, PROBS)),
]


@pytest.mark.parametrize("loss, y_true, y_pred, per_example", CASES,
                         ids=[f"{type(c[0]).__name__}-{i}" for i, c in enumerate(CASES)])
def test_losses_match_numpy(loss, y_true, y_pred, per_example):
    assert float(loss(y_true, y_pred)) == pytest.approx(per_example.mean(), rel=1e-5)
    weights = np.array([1.0, 0.0, 2.0, 0.5, 1.0])
    assert float(loss(y_true, y_pred, sample_weight=weights)) == pytest.approx(
        (per_example * weights).sum() / 5, rel=1e-5)
    np.testing.assert_allclose(loss.call(y_true, y_pred).numpy(), per_example, rtol=1e-5)


def test_reductions_functions_and_names():
    y, p = BINARY, LOGITS
    per = ((p - y) ** 2).mean(-1)
    assert float(losses.MeanSquaredError(reduction="sum")(y, p)) == pytest.approx(per.sum())
    np.testing.assert_allclose(losses.MeanSquaredError(reduction="none")(y, p).numpy(), per)
    np.testing.assert_allclose(losses.mse(y, p).numpy(), per)
    assert isinstance(losses.get("sparse_categorical_crossentropy"),
                      losses.SparseCategoricalCrossentropy)
    wrapped = losses.get(lambda a, b: kf.reduce_mean(kf.abs(a - b), -1))
    assert float(wrapped(y, p)) == pytest.approx(np.abs(p - y).mean())
    config = losses.BinaryCrossentropy(from_logits=True).get_config()
    assert losses.BinaryCrossentropy.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="reduction"):
        losses.MeanSquaredError(reduction="average")


def test_cross_entropy_gradient_from_logits():
    logits = kf.constant(LOGITS)
    with kf.GradientTape() as tape:
        tape.watch(logits)
        loss = losses.SparseCategoricalCrossentropy(from_logits=True)(LABELS, logits)
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), (PROBS - ONE_HOT) / 5,
                               rtol=1e-6)


def test_metrics_accumulate_and_reset():
    acc = metrics.SparseCategoricalAccuracy()
    pred = np.eye(4)[[0, 3, 2, 1, 2]]
    acc.update_state(LABELS, pred)
    assert float(acc.result()) == pytest.approx(4 / 5)
    acc.update_state(LABELS[:2], pred[:2], sample_weight=[1.0, 3.0])
    assert float(acc.result()) == pytest.approx((4 + 4) / 9)
    acc.reset_state()
    assert float(acc.result()) == 0.0
    cat = metrics.CategoricalAccuracy()
    assert float(cat(ONE_HOT, PROBS)) == pytest.approx(
        (PROBS.argmax(-1) == LABELS).mean())
    binary = metrics.BinaryAccuracy(threshold=0.5)
    assert float(binary(BINARY, _sigmoid(LOGITS))) == pytest.approx(
        ((_sigmoid(LOGITS) > 0.5) == BINARY).mean())
    exact = metrics.Accuracy()
    assert float(exact([1, 2, 3, 4], [1, 2, 0, 4])) == 0.75
    mean = metrics.Mean()
    mean.update_state([1.0, 2.0], sample_weight=[3.0, 1.0])
    assert float(mean.result()) == pytest.approx(1.25)
    mse = metrics.MeanSquaredError()
    assert float(mse(BINARY, LOGITS)) == pytest.approx(((LOGITS - BINARY) ** 2).mean(),
                                                       rel=1e-6)
    top2 = metrics.TopKCategoricalAccuracy(k=2)
    ranks = (PROBS > PROBS[np.arange(5), LABELS][:, None]).sum(-1)
    assert float(top2(ONE_HOT, PROBS)) == pytest.approx((ranks < 2).mean())
    # Keras 3's names and paths, as TF 2.21 gives them
    assert [(v.name, v.path) for v in mean.variables] == [("total", "mean/total"),
                                                          ("count", "mean/count")]


def test_accuracy_string_resolves_like_keras():
    y_sparse, y_pred = kf.constant(LABELS), kf.constant(PROBS)
    pick = metrics.resolve_accuracy
    assert isinstance(pick("accuracy", losses.get("sparse_categorical_crossentropy"),
                           y_sparse, y_pred), metrics.SparseCategoricalAccuracy)
    assert isinstance(pick("acc", None, kf.constant(ONE_HOT), y_pred),
                      metrics.CategoricalAccuracy)
    assert isinstance(pick("acc", None, kf.constant(BINARY[:, :1]),
                           kf.constant(PROBS[:, :1])), metrics.BinaryAccuracy)
    assert isinstance(pick("acc", None, y_sparse, y_pred), metrics.SparseCategoricalAccuracy)


def test_metrics_update_inside_a_function():
    mean = metrics.Mean()

    @kf.function
    def update(x):
        mean.update_state(x)
        return mean.result()
    update(kf.constant([1.0, 3.0]))
    assert float(update(kf.constant([5.0, 7.0]))) == 4.0


LABEL_SHAPE_LOSSES = ["mean_squared_error", "mean_absolute_error", "binary_crossentropy"]


@pytest.mark.parametrize("name", LABEL_SHAPE_LOSSES)
def test_losses_align_label_and_prediction_ranks(name):
    # (N,) labels against an (N, 1) output must not broadcast to (N, N)
    y = np.array([0.0, 1.0, 1.0, 0.0], np.float32)
    p = np.array([[0.2], [0.7], [0.9], [0.4]], np.float32)
    loss = keras.losses.get(name)
    flat = float(loss(y, p))
    column = float(loss(y[:, None], p))
    assert flat == pytest.approx(column)
    expected = {"mean_squared_error": np.mean((p[:, 0] - y) ** 2),
                "mean_absolute_error": np.mean(np.abs(p[:, 0] - y)),
                "binary_crossentropy": -np.mean(y * np.log(p[:, 0]) +
                                                (1 - y) * np.log(1 - p[:, 0]))}[name]
    assert flat == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("metric", ["binary_accuracy", "accuracy", "mse"])
def test_metrics_align_label_and_prediction_ranks(metric):
    y = np.array([0.0, 1.0, 1.0, 0.0], np.float32)
    p = np.array([[0.0], [1.0], [0.9], [0.0]], np.float32)
    values = []
    for labels in (y, y[:, None]):
        m = keras.metrics.get(metric)
        m.update_state(labels, p)
        values.append(float(m.result()))
    assert values[0] == pytest.approx(values[1])
    if metric == "binary_accuracy":
        assert values[0] == 1.0


def test_fit_with_flat_integer_labels_and_a_sigmoid_column_learns():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 2)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)  # linearly separable, labels of shape (N,)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.05), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, epochs=20, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.9
