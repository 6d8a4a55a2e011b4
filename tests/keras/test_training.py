"""compile / fit / evaluate / predict for Sequential, functional and subclassed models,
eager vs @kf.function training, callbacks, the progress bar and summary()."""
import io
import os

import numpy as np
import pytest

from kilnflow import keras

L = keras.layers


def _blobs(n=200, seed=0):
    """Three separable clusters in 4-D: a task any model here learns in a few epochs."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centers = np.array([[2.0, 0, 0, 1], [0, 2.0, 0, -1], [0, 0, 2.0, 0]])
    x = (centers[y] + 0.5 * rng.standard_normal((n, 4))).astype("float32")
    return x, y.astype("int64")


def _mlp():
    return keras.Sequential([keras.Input(shape=(4,)), L.Dense(16, activation="relu"),
                             L.Dense(3)])


def _compile(model, run_eagerly=False, lr=0.05):
    model.compile(keras.optimizers.Adam(lr),
                  keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"], run_eagerly=run_eagerly)
    return model


def test_fit_reduces_loss_and_learns():
    keras.utils.set_random_seed(0)
    x, y = _blobs()
    model = _compile(_mlp())
    history = model.fit(x, y, batch_size=32, epochs=6, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert accuracy > 0.9 and loss == pytest.approx(model.evaluate(x, y, verbose=0)[0])
    assert model.predict(x, batch_size=64, verbose=0).shape == (200, 3)
    assert model.metrics_names == ["loss", "compile_metrics"]  # as Keras 3 names them
    assert history.epoch == list(range(6)) and model.history is history


def test_eager_and_compiled_training_agree():
    x, y = _blobs(96)
    results = []
    for eager in (True, False):
        keras.utils.set_random_seed(3)
        model = _compile(_mlp(), run_eagerly=eager)
        history = model.fit(x, y, batch_size=32, epochs=2, verbose=0, shuffle=False)
        results.append((history.history["loss"], model.get_weights()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_compiled_step_traces_at_most_twice_and_creates_slots_once():
    keras.utils.set_random_seed(0)
    x, y = _blobs(70)  # 32 + 32 + 6: the short last batch relaxes the batch dim once
    model = _compile(_mlp())
    model.fit(x, y, batch_size=32, epochs=3, verbose=0)
    function = model.train_function
    # One trace for the full batches, one relaxed to [None, 4] for the short one (the first
    # call may trace twice internally when it creates variables: slots, metric state).
    assert len(function.explain_retracing().splitlines()) == 2
    slots = model.optimizer.variables
    assert len(slots) == 2 + 2 * len(model.trainable_variables)


def test_functional_and_subclassed_models_train():
    x, y = _blobs(120)
    inputs = keras.Input(shape=(4,))
    a = L.Dense(8, activation="relu")(inputs)
    b = L.Dense(8, activation="tanh")(inputs)
    outputs = L.Dense(3)(L.Concatenate()([a, b]))
    functional = _compile(keras.Model(inputs, outputs))

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = [L.Dense(8, activation="relu"), L.LayerNormalization()]
            self.out = L.Dense(3)

        def call(self, x, training=None):
            for layer in self.hidden:
                x = layer(x)
            return self.out(x)
    subclassed = _compile(Net())
    for model in (functional, subclassed):
        keras.utils.set_random_seed(1)
        history = model.fit(x, y, epochs=5, batch_size=16, verbose=0)
        assert history.history["loss"][-1] < history.history["loss"][0]
    assert len(subclassed.trainable_variables) == 6
    assert [l.name for l in functional.layers][0].startswith("input_layer")


def test_validation_callbacks_and_csv(tmp_path):
    keras.utils.set_random_seed(0)
    x, y = _blobs(120)
    model = _compile(_mlp())
    log = tmp_path / "log.csv"
    seen = []
    history = model.fit(
        x, y, epochs=4, batch_size=32, verbose=0, validation_split=0.25,
        callbacks=[keras.callbacks.LearningRateScheduler(lambda epoch, lr: 0.05 * 0.5 ** epoch),
                   keras.callbacks.CSVLogger(str(log)),
                   keras.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e)),
                   keras.callbacks.ModelCheckpoint(str(tmp_path / "w-{epoch:02d}"),
                                                   save_weights_only=True)])
    assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy",
                                    "learning_rate"}
    assert history.history["learning_rate"] == pytest.approx([0.05, 0.025, 0.0125, 0.00625])
    assert seen == [0, 1, 2, 3]
    rows = log.read_text().strip().splitlines()
    assert rows[0] == "epoch,accuracy,learning_rate,loss,val_accuracy,val_loss"
    assert len(rows) == 5
    assert os.path.exists(tmp_path / "w-04.safetensors")
    other = _mlp()
    other.load_weights(str(tmp_path / "w-04")).assert_consumed()
    np.testing.assert_allclose(other.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5)


def test_early_stopping_restores_best_weights():
    keras.utils.set_random_seed(0)
    x, y = _blobs(60)
    model = _compile(_mlp(), lr=0.05)
    stop = keras.callbacks.EarlyStopping(monitor="loss", patience=1, min_delta=10.0,
                                         restore_best_weights=True)
    history = model.fit(x, y, epochs=20, verbose=0, callbacks=[stop])
    assert len(history.epoch) == 2 and stop.stopped_epoch == 1


def test_sample_weight_and_validation_data():
    x, y = _blobs(64)
    model = _compile(_mlp())
    weights = np.zeros(64, "float32")
    before = model.get_weights()
    model.fit(x, y, sample_weight=weights, epochs=1, verbose=0, batch_size=64)
    # A zero-weighted loss has zero gradients: Adam does not move the weights.
    for a, b in zip(before, model.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-7)
    history = model.fit(x, y, validation_data=(x[:10], y[:10]), epochs=1, verbose=0)
    assert "val_loss" in history.history
    result = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(result) == {"loss", "accuracy"}


def test_train_on_batch_and_generators():
    x, y = _blobs(64)
    model = _compile(_mlp())
    loss, acc = model.train_on_batch(x[:16], y[:16])
    assert np.isfinite(loss) and 0 <= acc <= 1
    assert set(model.test_on_batch(x[:16], y[:16], return_dict=True)) == {"loss", "accuracy"}
    assert model.predict_on_batch(x[:5]).shape == (5, 3)

    def batches():
        for i in range(0, 64, 16):
            yield x[i:i + 16], y[i:i + 16]
    history = model.fit(batches(), epochs=1, verbose=0)
    assert len(history.history["loss"]) == 1


def test_errors_are_clear():
    model = _mlp()
    with pytest.raises(RuntimeError, match="must compile"):
        model.fit(np.ones((2, 4)), np.ones(2))
    _compile(model)
    with pytest.raises(ValueError, match="cardinality"):
        model.fit(np.ones((3, 4), "float32"), np.ones(2), verbose=0)
    with pytest.raises(ValueError, match="Unknown loss"):
        model.compile("adam", "not_a_loss")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_on_a_terminal_only():
    x, y = _blobs(64)
    model = _compile(_mlp())
    screen = _Terminal()
    model.fit(x, y, epochs=2, batch_size=16, verbose=0,
              callbacks=[keras.callbacks.ProgbarLogger(1, stream=screen)])
    text = screen.getvalue()
    assert "Epoch 1/2" in text and "Epoch 2/2" in text
    assert "\x1b[1m4/4\x1b[0m \x1b[32m" + "━" * 20 in text  # Keras 3's coloured bar
    assert "s/step" in text and "loss: " in text and "accuracy: " in text
    pipe = io.StringIO()  # not a terminal: one complete line per epoch, no redraws
    model.fit(x, y, epochs=2, batch_size=16, verbose=0,
              callbacks=[keras.callbacks.ProgbarLogger(1, pipe)])
    text = pipe.getvalue()
    assert "\r" not in text
    assert text.count("4/4 " + "━" * 20 + " ") == 2 and "\x1b" not in text
    assert text.splitlines()[0] == "Epoch 1/2" and "loss: " in text.splitlines()[1]
    lines = io.StringIO()  # verbose=2: one line per epoch anywhere
    model.fit(x, y, epochs=2, verbose=0, callbacks=[keras.callbacks.ProgbarLogger(2, lines)])
    assert lines.getvalue().count("s/step - loss: ") == 2


def test_fit_evaluate_predict_print_when_piped(capsys):
    x, y = _blobs(64)
    model = _compile(_mlp())
    model.fit(x, y, epochs=2, batch_size=32, validation_split=0.25)
    out = capsys.readouterr().out  # captured: not a terminal
    lines = out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    assert "val_loss: " in lines[1] and "\r" not in out
    model.evaluate(x, y)
    assert "2/2 ━━" in capsys.readouterr().out
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    assert capsys.readouterr().out == ""
    model.predict(x)
    assert "s/step" in capsys.readouterr().out


def test_progbar_utility():
    out = io.StringIO()
    bar = keras.utils.Progbar(4, stream=out)
    for i in range(4):
        bar.update(i + 1, [("loss", float(i))])
    # Keras 3: the finalizing update's value is shown as given, not averaged in
    assert out.getvalue().count("\n") == 1 and "loss: 3.0000" in out.getvalue()
    half = io.StringIO()
    bar = keras.utils.Progbar(4, stream=half, verbose=2)
    bar.update(2, [("loss", 1.0)])
    bar.update(3, [("loss", 2.0)])
    bar.update(4, [("loss", 0.0001)], finalize=True)
    assert half.getvalue().startswith("4/4 - 0s -") and half.getvalue().endswith(
        " - loss: 1.0000e-04\n")
    screen = _Terminal()
    live = keras.utils.Progbar(3, stream=screen, interval=0.0)
    live.add(1, [("acc", 1.0)])
    live.add(2, [("acc", 0.5)])
    assert screen.getvalue().startswith("\r\x1b[1m1/3") and "acc: 1.0000" in screen.getvalue()
    assert screen.getvalue().endswith("acc: 0.5000\n")


def test_summary():
    model = keras.Sequential([keras.Input(shape=(8, 8, 1)),
                              L.Conv2D(4, 3, padding="same", name="conv"),
                              L.BatchNormalization(name="bn"), L.Flatten(name="flat"),
                              L.Dense(10, name="out")])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "conv (Conv2D)" in text and "(None, 8, 8, 4)" in text and "40" in text
    assert "(None, 256)" in text and "2,570" in text  # Keras 3 groups digits
    assert "Total params: 2,626" in text and "Non-trainable params: 8" in text
    with pytest.raises(ValueError, match="not yet been built"):
        keras.Sequential([L.Dense(2)]).summary()


def test_sequential_api():
    model = keras.Sequential()
    model.add(L.Dense(4, input_shape=(3,)))
    model.add(L.Dense(2))
    assert model.built and [w.shape.as_list() for w in model.weights] == [[3, 4], [4], [4, 2],
                                                                          [2]]
    assert model.pop().units == 2 and len(model.layers) == 1
    clone = keras.Sequential.from_config(model.get_config())
    assert [type(l).__name__ for l in clone.layers] == ["Dense"]
    lazy = keras.Sequential([L.Dense(5)])
    lazy.build((None, 7))
    assert lazy.weights[0].shape.as_list() == [7, 5]
    with pytest.raises(TypeError, match="instance of class Layer"):
        model.add("dense")


def test_digits_mlp_reaches_high_accuracy():
    keras.utils.set_random_seed(0)
    (x_train, y_train), (x_test, y_test) = keras.datasets.digits.load_data()
    x_train = x_train.reshape(-1, 64).astype("float32") / 16
    x_test = x_test.reshape(-1, 64).astype("float32") / 16
    model = keras.Sequential([keras.Input(shape=(64,)), L.Dense(64, activation="relu"),
                              L.Dense(10)])
    _compile(model, lr=0.01)
    model.fit(x_train, y_train, epochs=8, batch_size=32, verbose=0)
    assert model.evaluate(x_test, y_test, verbose=0)[1] > 0.93


def test_predict_matches_a_direct_call():
    model = _mlp()
    x = np.random.default_rng(0).random((70, 4)).astype("float32")
    np.testing.assert_allclose(model.predict(x, batch_size=32, verbose=0), model(x).numpy(),
                               rtol=1e-6)
