"""Overriding train_step / test_step / predict_step (Keras 3's "customizing fit"): the
step receives (x, y) (or (x, y, sample_weight)) as Keras packs it, and fit/evaluate/
predict report what it returns."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers


class CustomModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = L.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")
        self.steps_seen = []

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        self.steps_seen.append(len(data))
        x, y = data
        with kf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = kf.reduce_mean(kf.square(y_pred - y))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply(grads, self.trainable_variables)
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.mae_metric.update_state(y, y_pred)
        return {"mae": self.mae_metric.result()}

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]


def test_custom_train_and_test_steps():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-1.0], [2.0]], np.float32)
    keras.utils.set_random_seed(0)
    model = CustomModel()
    model.compile(keras.optimizers.SGD(0.1))
    history = model.fit(x, y, epochs=8, batch_size=32, verbose=0)
    assert set(history.history) == {"loss", "mae"}
    assert history.history["loss"][-1] < 0.05 * history.history["loss"][0]
    assert model.steps_seen[0] == 2  # traced once with (x, y)
    result = model.evaluate(x, y, verbose=0, return_dict=True)
    assert set(result) == {"mae"} and result["mae"] < 0.2
    np.testing.assert_allclose(model.predict(x, verbose=0), model(x).numpy(), rtol=1e-6)


def test_train_step_sees_sample_weights_only_when_given():
    seen = []

    class Probe(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(1)

        def call(self, x):
            return self.dense(x)

        def train_step(self, data):
            seen.append(len(data))
            return super().train_step(data)

    model = Probe()
    model.compile("sgd", "mse")
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    model.fit(x, y, verbose=0)
    model.fit(x, y, sample_weight=np.ones(4), verbose=0)
    assert seen[0] == 2 and seen[-1] == 3


def test_custom_predict_step():
    class Doubling(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = L.Dense(2)

        def call(self, x):
            return self.dense(x)

        def predict_step(self, data):
            return self(data[0] if isinstance(data, tuple) else data) * 2.0

    model = Doubling()
    x = np.ones((3, 4), np.float32)
    np.testing.assert_allclose(model.predict(x, verbose=0), model(x).numpy() * 2, rtol=1e-6)
    with pytest.raises(ValueError, match="variables"):
        keras.optimizers.SGD().apply([kf.constant(1.0)])


def _two_outputs():
    inputs = keras.Input((3,))
    hidden = L.Dense(4, activation="tanh", name="hidden")(inputs)
    return keras.Model(inputs, [L.Dense(1, name="reg")(hidden),
                                L.Dense(2, activation="softmax", name="cls")(hidden)])


def test_multi_output_losses_and_loss_weights(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y_reg = rng.normal(size=(16, 1)).astype(np.float32)
    y_cls = rng.integers(0, 2, 16)
    model = _two_outputs()
    reg, cls = model(x)
    mse = float(np.mean((reg.numpy() - y_reg) ** 2))
    probs = cls.numpy()
    xent = float(-np.mean(np.log(probs[np.arange(16), y_cls])))
    for loss, weights in [(["mse", "sparse_categorical_crossentropy"], [2.0, 0.5]),
                          ({"reg": "mse", "cls": "sparse_categorical_crossentropy"},
                           {"reg": 2.0, "cls": 0.5})]:
        model.compile("sgd", loss=loss, loss_weights=weights)
        value = model.evaluate(x, {"reg": y_reg, "cls": y_cls} if isinstance(loss, dict)
                               else [y_reg, y_cls], verbose=0, batch_size=16)
        # Keras 3 returns [loss, reg_loss, cls_loss]: the per-output losses unweighted
        assert value == pytest.approx([2.0 * mse + 0.5 * xent, mse, xent], rel=1e-5)
    model.fit(x, {"reg": y_reg, "cls": y_cls}, epochs=1, verbose=0)
    model.save(str(tmp_path / "two.keras"))
    loaded = keras.models.load_model(str(tmp_path / "two.keras"))
    assert loaded._loss_weights == {"reg": 2.0, "cls": 0.5}
    assert loaded.evaluate(x, {"reg": y_reg, "cls": y_cls}, verbose=0) == pytest.approx(
        model.evaluate(x, {"reg": y_reg, "cls": y_cls}, verbose=0), rel=1e-6)
