"""Callbacks with Keras 3's semantics, driven by a scripted sequence of monitored values
so every branch (patience, min_delta, baseline, start_from_epoch, cooldown) is exact; and
the fit features class_weight and BackupAndRestore."""
import os

import numpy as np
import pytest

from kilnflow import keras

L = keras.layers


class _Scripted(keras.callbacks.Callback):
    """Writes the next scripted value into the epoch logs (before the tested callback)."""

    def __init__(self, key, values):
        super().__init__()
        self.key, self.values = key, list(values)

    def on_epoch_end(self, epoch, logs=None):
        logs[self.key] = self.values[epoch]


def _model():
    model = keras.Sequential([keras.Input((2,)), L.Dense(1)])
    model.compile(keras.optimizers.SGD(0.1), "mse")
    return model


DATA = (np.ones((4, 2), np.float32), np.ones(4, np.float32))


def _run(model, script, callback, epochs):
    history = model.fit(*DATA, epochs=epochs, verbose=0, shuffle=False,
                        callbacks=[_Scripted("score", script), callback])
    return len(history.history["loss"])


@pytest.mark.parametrize("script, kwargs, epochs_run", [
    ([5, 4, 4, 4, 4, 4], dict(patience=2), 4),               # stops 2 epochs after the best
    ([5, 4, 3.95, 3.9, 3.85, 3.8], dict(patience=1, min_delta=0.1), 3),
    ([5, 4, 3, 2, 1, 0], dict(patience=1), 6),                # keeps improving
    ([1, 1, 1, 1, 1, 1], dict(patience=1, start_from_epoch=3), 5),
    ([5, 5, 5, 5, 5, 5], dict(patience=2, baseline=4.0), 2),  # never beats the baseline
    ([5, 4, 3, 2, 1, 0], dict(patience=2, baseline=-1.0), 6),  # improving: never stops
])
def test_early_stopping(script, kwargs, epochs_run):
    stop = keras.callbacks.EarlyStopping(monitor="score", mode="min", **kwargs)
    assert _run(_model(), script, stop, 6) == epochs_run


def test_early_stopping_restores_the_best_weights_even_without_stopping():
    model = _model()
    seen = []
    snap = keras.callbacks.LambdaCallback(
        on_epoch_end=lambda e, logs: seen.append(model.get_weights()))
    stop = keras.callbacks.EarlyStopping(monitor="score", mode="min", patience=10,
                                         restore_best_weights=True)
    model.fit(*DATA, epochs=4, verbose=0, shuffle=False,
              callbacks=[_Scripted("score", [3, 1, 2, 2]), snap, stop])
    for a, b in zip(model.get_weights(), seen[1]):
        np.testing.assert_array_equal(a, b)
    assert stop.best_epoch == 1


def test_reduce_lr_on_plateau_with_cooldown_and_floor():
    model = _model()
    reduce = keras.callbacks.ReduceLROnPlateau(monitor="score", factor=0.5, patience=1,
                                               cooldown=1, min_lr=0.03, mode="min")
    history = model.fit(*DATA, epochs=6, verbose=0, shuffle=False,
                        callbacks=[_Scripted("score", [1, 1, 1, 1, 1, 1]), reduce])
    # the logged rate is the one used in that epoch: epoch 1 plateaus (halve), epoch 2
    # ends the cooldown and plateaus again (halve, floored at min_lr)
    assert history.history["learning_rate"] == pytest.approx([0.1, 0.1, 0.05, 0.03, 0.03,
                                                              0.03])
    with pytest.raises(ValueError, match="factor"):
        keras.callbacks.ReduceLROnPlateau(factor=1.5)


def test_model_checkpoint_whole_model_best_only(tmp_path):
    model = _model()
    path = str(tmp_path / "best-{epoch}.keras")
    ckpt = keras.callbacks.ModelCheckpoint(path, monitor="score", save_best_only=True,
                                           mode="max")
    model.fit(*DATA, epochs=4, verbose=0, shuffle=False,
              callbacks=[_Scripted("score", [1, 3, 2, 4]), ckpt])
    assert sorted(os.listdir(tmp_path)) == ["best-1.keras", "best-2.keras", "best-4.keras"]
    loaded = keras.models.load_model(str(tmp_path / "best-4.keras"))
    np.testing.assert_array_equal(loaded.predict(DATA[0], verbose=0),
                                  model.predict(DATA[0], verbose=0))
    with pytest.raises(ValueError, match=".keras"):
        keras.callbacks.ModelCheckpoint(str(tmp_path / "weights"))


def test_class_weight_matches_sample_weight():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 2)).astype(np.float32)
    y = rng.integers(0, 3, 32)
    results = []
    for kwargs in (dict(class_weight={0: 1.0, 1: 3.0, 2: 0.5}),
                   dict(sample_weight=np.array([1.0, 3.0, 0.5])[y])):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((2,)), L.Dense(3, activation="softmax")])
        model.compile(keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy")
        results.append(model.fit(x, y, epochs=2, verbose=0, shuffle=False,
                                 **kwargs).history["loss"])
    assert results[0] == pytest.approx(results[1])
    one_hot = np.eye(3)[y]
    weights = keras.training.class_weights_to_samples(one_hot, {1: 2.0})
    np.testing.assert_array_equal(weights, np.where(y == 1, 2.0, 1.0))
    with pytest.raises(ValueError, match="same time"):
        model.fit(x, y, class_weight={0: 1.0}, sample_weight=np.ones(32), verbose=0)


def test_backup_and_restore_resumes_after_an_interruption(tmp_path):
    backup = str(tmp_path / "backup")

    class Interrupt(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 2:
                raise RuntimeError("preempted")

    model = _model()
    with pytest.raises(RuntimeError, match="preempted"):
        model.fit(*DATA, epochs=4, verbose=0,
                  callbacks=[keras.callbacks.BackupAndRestore(backup), Interrupt()])
    assert os.path.exists(os.path.join(backup, "latest.keras"))
    weights_after_two = model.get_weights()
    fresh = _model()
    epochs = []
    fresh.fit(*DATA, epochs=4, verbose=0, callbacks=[
        keras.callbacks.BackupAndRestore(backup),
        keras.callbacks.LambdaCallback(on_epoch_begin=lambda e, logs: epochs.append(e))])
    assert epochs == [2, 3]
    assert int(fresh.optimizer.iterations.numpy()) == 4  # 2 restored + 2 new steps
    assert not os.path.exists(os.path.join(backup, "latest.keras"))
    assert weights_after_two is not None
