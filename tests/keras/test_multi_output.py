"""Multi-output models: per-output losses (dict / list), loss_weights, and per-output
metrics, with the log keys TF 2.21's Keras 3 (3.15.1) gave for the same compile calls
(recorded in the side venv, written here as data)."""
import numpy as np
import pytest

from kilnflow import keras

L = keras.layers
RNG = np.random.default_rng(0)
X = RNG.random((16, 4)).astype("float32")
YA = RNG.random((16, 1)).astype("float32")
YB = RNG.integers(0, 3, (16,))

# Keras 3.15.1: sorted(history.history) after fit(validation_data=...), and evaluate's keys
KERAS_KEYS = {
    "dict": ["a_loss", "a_mae", "b_accuracy", "b_loss", "loss"],
    "list": ["a_loss", "a_mae", "a_mse", "b_accuracy", "b_loss", "loss"],
    "objects": ["a_loss", "a_mean_absolute_error", "b_acc", "b_loss", "loss"],
    "dict_partial": ["a_loss", "b_accuracy", "b_loss", "loss"],
}
COMPILE = {
    "dict": lambda: dict(loss={"a": "mse", "b": "sparse_categorical_crossentropy"},
                         metrics={"a": ["mae"], "b": ["accuracy"]},
                         loss_weights={"a": 1.0, "b": 0.5}),
    "list": lambda: dict(loss=["mse", "sparse_categorical_crossentropy"],
                         metrics=[["mae", "mse"], ["accuracy"]], loss_weights=[2.0, 1.0]),
    "objects": lambda: dict(loss=["mse", "sparse_categorical_crossentropy"],
                            metrics=[[keras.metrics.MeanAbsoluteError()],
                                     [keras.metrics.SparseCategoricalAccuracy(name="acc")]]),
    "dict_partial": lambda: dict(loss={"a": "mse", "b": "sparse_categorical_crossentropy"},
                                 metrics={"b": "accuracy"}),
}


def _model():
    inputs = keras.Input((4,), name="x")
    hidden = L.Dense(8, activation="relu", name="hidden")(inputs)
    return keras.Model(inputs, [L.Dense(1, name="a")(hidden),
                                L.Dense(3, activation="softmax", name="b")(hidden)])


@pytest.mark.parametrize("case", sorted(KERAS_KEYS))
def test_log_keys_match_keras(case):
    model = _model()
    model.compile("sgd", **COMPILE[case]())
    history = model.fit(X, [YA, YB], epochs=1, verbose=0, validation_data=(X, [YA, YB]))
    keys = KERAS_KEYS[case]
    assert sorted(history.history) == sorted(keys + [f"val_{k}" for k in keys])
    assert sorted(model.evaluate(X, [YA, YB], verbose=0, return_dict=True)) == keys
    assert sorted(model.evaluate(X, {"a": YA, "b": YB}, verbose=0, return_dict=True)) == keys


def test_weighted_total_and_unweighted_output_losses():
    model = _model()
    model.compile("sgd", loss=["mse", "sparse_categorical_crossentropy"],
                  loss_weights=[2.0, 0.5], metrics=[["mae"], None])
    logs = model.evaluate(X, [YA, YB], batch_size=5, verbose=0, return_dict=True)
    pa, pb = model.predict(X, verbose=0)
    mse = float(np.mean((pa - YA) ** 2))
    xent = float(np.mean(-np.log(pb[np.arange(16), YB])))
    np.testing.assert_allclose(logs["a_loss"], mse, rtol=1e-5)
    np.testing.assert_allclose(logs["b_loss"], xent, rtol=1e-5)
    np.testing.assert_allclose(logs["a_mae"], np.mean(np.abs(pa - YA)), rtol=1e-5)
    # the total is the per-batch weighted sum, averaged over batches by their sizes
    np.testing.assert_allclose(logs["loss"], 2 * mse + 0.5 * xent, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:kf.function 'test_function' computes")  # b is unused
def test_one_loss_for_every_output_logs_each_and_none_skips():
    model = _model()
    model.compile("sgd", loss=["mse", None])
    model.get_layer("b").trainable = False
    assert sorted(model.evaluate(X, [YA, YB], verbose=0, return_dict=True)) == ["loss"]
    inputs = keras.Input((4,))
    hidden = L.Dense(3)(inputs)
    single = keras.Model(inputs, [L.Dense(1, name="p")(hidden), L.Dense(1, name="q")(hidden)])
    single.compile("sgd", loss="mse")
    logs = single.fit(X, [YA, YA], verbose=0).history
    assert len([k for k in logs if k.endswith("_loss")]) == 2


def test_bad_per_output_metrics():
    model = _model()
    model.compile("sgd", loss=["mse", "sparse_categorical_crossentropy"],
                  metrics={"nope": ["mae"]})
    with pytest.raises(ValueError, match="not outputs"):
        model.evaluate(X, [YA, YB], verbose=0)
