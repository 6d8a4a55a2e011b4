"""fit on kf.data pipelines with Keras 3's iterator semantics: with steps_per_epoch one
iterator carries on across epochs (an infinite `.repeat()` pipeline trains that many batches
per epoch), running out of data warns as Keras does and ends the epoch; validation_data may
be a dataset, read `validation_steps` batches from its start each time. The expected step
sequences were recorded from TF 2.21's Keras 3 for the same calls."""
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.keras.epoch_iterator import OUT_OF_DATA

X = np.random.default_rng(0).random((40, 3)).astype("float32")
Y = X.sum(1, keepdims=True)


def _model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    return model


class _Steps(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.train, self.test = [], []

    def on_train_batch_begin(self, batch, logs=None):
        self.train.append(batch)

    def on_test_batch_begin(self, batch, logs=None):
        self.test.append(batch)


def _dataset():
    return kf.data.Dataset.from_tensor_slices((X, Y)).batch(8)  # 5 batches


def _fit(data, **kwargs):
    steps = _Steps()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = _model().fit(data, verbose=0, callbacks=[steps], **kwargs)
    ran_out = [w for w in caught if str(w.message) == OUT_OF_DATA]
    return history, steps, len(ran_out)


def test_infinite_dataset_with_steps_per_epoch_and_validation_dataset():
    history, steps, ran_out = _fit(_dataset().repeat(), epochs=3, steps_per_epoch=2,
                                   validation_data=_dataset(), validation_steps=2)
    assert steps.train == [0, 1] * 3 and ran_out == 0
    assert sorted(history.history) == ["loss", "val_loss"]
    assert len(history.history["val_loss"]) == 3


def test_iterator_continues_across_epochs_and_warns_when_out_of_data():
    # Keras 3: 5 batches, 3 per epoch -> 3, then 2 (warning, epoch cut short), then a
    # fresh pass of 3
    history, steps, ran_out = _fit(_dataset(), epochs=3, steps_per_epoch=3)
    assert steps.train == [0, 1, 2, 0, 1, 0, 1, 2]
    assert ran_out == 1 and len(history.history["loss"]) == 3


def test_arrays_with_steps_per_epoch_follow_the_same_rule():
    history, steps, ran_out = _fit(X, y=Y, batch_size=8, epochs=2, steps_per_epoch=4,
                                   shuffle=False)
    assert steps.train == [0, 1, 2, 3, 0] and ran_out == 1


def test_exhausted_generator_goes_on_as_keras_does():
    # Keras 3 (TF backend) recorded: fit does not stop. The generator's first two batches
    # are replayed on every new pass, and the step that finds no data still gets its
    # on_train_batch_begin: epochs of 3 steps (0, 1, 2) four times, three warnings.
    def batches():
        for i in range(5):
            yield X[i * 8:(i + 1) * 8], Y[i * 8:(i + 1) * 8]
    history, steps, ran_out = _fit(batches(), epochs=4, steps_per_epoch=3, shuffle=False)
    assert steps.train == [0, 1, 2] * 4
    assert ran_out == 3 and len(history.history["loss"]) == 4


def test_each_epoch_walks_the_whole_dataset_without_steps_per_epoch():
    _, steps, ran_out = _fit(_dataset(), epochs=2)
    assert steps.train == [0, 1, 2, 3, 4] * 2 and ran_out == 0


def test_validation_dataset_matches_evaluate():
    model = _model()
    history = model.fit(_dataset(), epochs=1, verbose=0, validation_data=_dataset())
    np.testing.assert_allclose(history.history["val_loss"][0],
                               model.evaluate(_dataset(), verbose=0), rtol=1e-5)
    partial = model.evaluate(_dataset(), steps=2, verbose=0)
    np.testing.assert_allclose(partial, model.evaluate(X[:16], Y[:16], verbose=0), rtol=1e-5)


def test_bad_validation_data_is_rejected():
    with pytest.raises(ValueError, match="validation_data"):
        _model().fit(X, Y, verbose=0, validation_data=[X, Y, X, Y])
