"""Whole-model saving: model.save('x.keras') / keras.models.load_model rebuild the
architecture from Keras 3 configs, restore weights, compile settings and optimizer state;
custom objects resolve through the registry or custom_objects; a fresh process predicts
identically."""
import json
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers
RNG = np.random.default_rng(0)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _mlp():
    model = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="relu"),
                              L.BatchNormalization(), L.Dropout(0.2),
                              L.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.01), "binary_crossentropy", metrics=["accuracy"])
    return model


def _cnn():
    inputs = keras.Input((8, 8, 2))
    x = L.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    x = L.BatchNormalization()(x)
    x = L.MaxPooling2D()(x)
    x = L.Conv2D(4, 3)(x)
    x = L.GlobalAveragePooling2D()(x)
    outputs = L.Dense(3, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile("rmsprop", keras.losses.SparseCategoricalCrossentropy(),
                  metrics=[keras.metrics.SparseCategoricalAccuracy()])
    return model


def _text():
    inputs = keras.Input((12,), dtype="int32")
    x = L.Embedding(20, 8)(inputs)
    x = L.Conv1D(6, 3, padding="causal", activation="relu")(x)
    a = L.GlobalMaxPooling1D()(x)
    b = L.GlobalAveragePooling1D()(x)
    x = L.Concatenate()([a, b])
    outputs = L.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.SGD(0.1, momentum=0.9), "binary_crossentropy")
    return model


def _mlp_no_dropout():
    model = keras.Sequential([keras.Input((6,)), L.Dense(8, activation="relu"),
                              L.BatchNormalization(), L.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.01), "binary_crossentropy", metrics=["accuracy"])
    return model


def _rnn():
    model = keras.Sequential([keras.Input((5, 3)), L.LSTM(4, return_sequences=True),
                              L.GRU(3), L.Dense(2)])
    model.compile("adam", "mse", metrics=["mae"])
    return model


ZOO = {
    "mlp": (_mlp, lambda n: RNG.normal(size=(n, 6)).astype(np.float32),
            lambda n: RNG.integers(0, 2, n)),
    "mlp_no_dropout": (_mlp_no_dropout, lambda n: RNG.normal(size=(n, 6)).astype(np.float32),
                       lambda n: RNG.integers(0, 2, n)),
    "cnn": (_cnn, lambda n: RNG.normal(size=(n, 8, 8, 2)).astype(np.float32),
            lambda n: RNG.integers(0, 3, n)),
    "text": (_text, lambda n: RNG.integers(0, 20, (n, 12)).astype(np.int32),
             lambda n: RNG.integers(0, 2, (n, 1))),
    "rnn": (_rnn, lambda n: RNG.normal(size=(n, 5, 3)).astype(np.float32),
            lambda n: RNG.normal(size=(n, 2)).astype(np.float32)),
}


@pytest.mark.parametrize("name", sorted(ZOO))
def test_save_and_load_round_trip(name, tmp_path):
    make, xs, ys = ZOO[name]
    model = make()
    x, y = xs(32), ys(32)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    path = str(tmp_path / f"{name}.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert type(loaded) is type(model)
    assert [w.shape for w in loaded.weights] == [w.shape for w in model.weights]
    assert type(loaded.optimizer) is type(model.optimizer)
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())
    if any(isinstance(l, L.Dropout) for l in model.layers):
        return  # a dropout mask is a fresh draw per call: no identical next step to compare
    # the optimizer state came back: one more identical step on both gives equal weights
    loaded.train_on_batch(x[:8], y[:8])
    model.train_on_batch(x[:8], y[:8])
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert loaded.evaluate(x, y, verbose=0) == pytest.approx(model.evaluate(x, y, verbose=0),
                                                            rel=1e-5)


def test_archive_layout_is_keras_3(tmp_path):
    model = _mlp()
    model.fit(np.zeros((4, 6), np.float32), np.zeros(4), verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())
        config = json.loads(archive.read("config.json"))
        metadata = json.loads(archive.read("metadata.json"))
    assert {"config.json", "metadata.json"} < names
    assert names & {"model.weights.h5", "model.weights.npz"}
    assert metadata["keras_version"].startswith("3.")
    assert (config["module"], config["class_name"]) == ("keras", "Sequential")
    first, dense = config["config"]["layers"][:2]
    assert first["class_name"] == "InputLayer" and first["config"]["batch_shape"] == [None, 6]
    assert dense["module"] == "keras.layers" and dense["class_name"] == "Dense"
    assert dense["registered_name"] is None and dense["config"]["units"] == 8
    assert config["compile_config"]["loss"] == "binary_crossentropy"
    paths = sorted(keras.saving.archive.model_variables(model))
    assert paths[:4] == ["layers/batch_normalization/vars/0",
                         "layers/batch_normalization/vars/1",
                         "layers/batch_normalization/vars/2",
                         "layers/batch_normalization/vars/3"]
    assert "layers/dense_1/vars/1" in paths and "optimizer/vars/0" in paths


def test_loaded_model_predicts_identically_in_a_fresh_process(tmp_path):
    model = _text()
    x = ZOO["text"][1](16)
    model.fit(x, ZOO["text"][2](16), verbose=0)
    path = str(tmp_path / "text.keras")
    model.save(path)
    np.save(tmp_path / "x.npy", x)
    script = ("import sys, numpy as np\nfrom kilnflow import keras\n"
              "m = keras.models.load_model(sys.argv[1])\n"
              "np.save(sys.argv[3], m.predict(np.load(sys.argv[2]), verbose=0))\n")
    subprocess.run([sys.executable, "-c", script, path, str(tmp_path / "x.npy"),
                    str(tmp_path / "out.npy")], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": os.pathsep.join(
                       [ROOT] + sys.path[1:])})
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), model.predict(x, verbose=0))


@keras.saving.register_keras_serializable(package="tests")
class Scale(L.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight("w", [input_shape[-1]], initializer="ones")

    def call(self, x):
        return x * self.w * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


@keras.saving.register_keras_serializable(package="tests")
class TwoLayer(keras.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.hidden = L.Dense(units, activation="tanh")
        self.out = L.Dense(1)

    def call(self, x):
        return self.out(self.hidden(x))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_registered_custom_layer_and_subclassed_model(tmp_path):
    x = RNG.normal(size=(8, 4)).astype(np.float32)
    seq = keras.Sequential([keras.Input((4,)), Scale(3.0), L.Dense(2)])
    seq.compile("sgd", "mse")
    seq.save(str(tmp_path / "s.keras"))
    loaded = keras.models.load_model(str(tmp_path / "s.keras"))
    assert isinstance(loaded.layers[0], Scale) and loaded.layers[0].factor == 3.0
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), seq.predict(x, verbose=0))

    sub = TwoLayer(units=5)
    sub.compile("adam", "mse")
    sub.fit(x, x[:, :1], verbose=0)
    sub.save(str(tmp_path / "sub.keras"))
    back = keras.models.load_model(str(tmp_path / "sub.keras"))
    assert isinstance(back, TwoLayer) and back.units == 5
    np.testing.assert_array_equal(back.predict(x, verbose=0), sub.predict(x, verbose=0))


def test_custom_objects_and_missing_ones(tmp_path):
    def my_loss(y_true, y_pred):
        return kf.reduce_mean(kf.abs(y_true - y_pred), -1)

    class Shift(L.Layer):
        def call(self, x):
            return x + 1.0

    model = keras.Sequential([keras.Input((3,)), Shift(), L.Dense(1)])
    model.compile("sgd", my_loss)
    path = str(tmp_path / "c.keras")
    model.save(path)
    with pytest.raises(TypeError, match="register_keras_serializable"):
        keras.models.load_model(path)
    with pytest.raises(ValueError, match="custom_objects"):
        keras.models.load_model(path, custom_objects={"Shift": Shift})
    loaded = keras.models.load_model(path, custom_objects={"Shift": Shift,
                                                          "my_loss": my_loss})
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    assert loaded.loss is my_loss
    arch_only = keras.models.load_model(path, custom_objects={"Shift": Shift}, compile=False)
    assert not arch_only._is_compiled


def test_bad_paths_and_formats(tmp_path):
    model = _mlp()
    with pytest.raises(ValueError, match=".keras"):
        model.save(str(tmp_path / "m.h5"))
    (tmp_path / "junk.keras").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not supported"):
        keras.models.load_model(str(tmp_path / "junk.keras"))
    model.save(str(tmp_path / "m.keras"))
    with pytest.raises(FileExistsError):
        model.save(str(tmp_path / "m.keras"), overwrite=False)


def test_json_clone_and_config_round_trips():
    for make, xs, _ in ZOO.values():
        model = make()
        x = xs(4)
        clone = keras.models.clone_model(model)
        assert [w.shape for w in clone.weights] == [w.shape for w in model.weights]
        clone.set_weights(model.get_weights())
        np.testing.assert_allclose(clone.predict(x, verbose=0), model.predict(x, verbose=0),
                                   rtol=1e-6)
        again = keras.models.model_from_json(model.to_json())
        assert again.get_config()["layers"][-1]["config"] == \
            model.get_config()["layers"][-1]["config"]


def test_weights_h5_uses_keras_layout(tmp_path):
    h5py = pytest.importorskip("h5py")
    model = _mlp()
    path = str(tmp_path / "m.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        assert f["layers/dense/vars/0"].shape == (6, 8)
        assert f["layers/batch_normalization/vars/3"].shape == (8,)
    other = _mlp()
    other.load_weights(path)
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    model.save(str(tmp_path / "m.keras"))
    assert "model.weights.h5" in zipfile.ZipFile(str(tmp_path / "m.keras")).namelist()


def test_weights_h5_without_h5py_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"kilnflow\[h5\]"):
        _mlp().save_weights(str(tmp_path / "m.weights.h5"))
