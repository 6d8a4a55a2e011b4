"""model.export(dir) writes a serving SavedModel that kf.saved_model.load runs without the
model's code; `.weights.h5` files written by TF 2.21's Keras 3 (tests/keras/data, recorded by
scripts/record_keras_weights_h5.py) load into the same architectures built with kilnflow and
predict as Keras did; kilnflow's own .weights.h5 files round-trip."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from tests.keras.h5_reference_models import MODELS, probe

L = keras.layers
DATA = os.path.join(os.path.dirname(__file__), "data")


def _model():
    inputs = keras.Input((6,))
    x = L.Dense(4, activation="relu")(inputs)
    x = L.Dropout(0.5)(x)
    x = L.BatchNormalization()(x)
    model = keras.Model(inputs, L.Dense(2)(x))
    model.compile("adam", "mse")
    model.fit(np.ones((8, 6), "float32"), np.ones((8, 2), "float32"), verbose=0)
    return model


def test_export_serves_inference_and_loads_without_the_model(tmp_path, capsys):
    model = _model()
    x = np.random.default_rng(0).random((3, 6)).astype("float32")
    model.export(str(tmp_path / "served"))
    assert "Endpoint 'serve'" in capsys.readouterr().out
    restored = kf.saved_model.load(str(tmp_path / "served"))
    expected = model.predict(x, verbose=0)  # training=False: no dropout, moving BN stats
    np.testing.assert_allclose(np.asarray(restored.serve(x)), expected, rtol=1e-6)
    assert sorted(restored.signatures) == ["serve", "serving_default"]
    outputs = restored.signatures["serving_default"](kf.constant(x))
    np.testing.assert_allclose(np.asarray(nest_first(outputs)), expected, rtol=1e-6)
    assert len(restored.model_variables) == len(model.variables)


def nest_first(outputs):
    return list(outputs.values())[0] if isinstance(outputs, dict) else outputs


def test_export_sequential_and_multi_input(tmp_path):
    seq = keras.Sequential([keras.Input((3,)), L.Dense(2)])
    seq.export(str(tmp_path / "seq"), verbose=False)
    x = np.ones((2, 3), "float32")
    np.testing.assert_allclose(np.asarray(kf.saved_model.load(str(tmp_path / "seq")).serve(x)),
                               np.asarray(seq(x)), rtol=1e-6)
    a, b = keras.Input((2,)), keras.Input((3,))
    two = keras.Model([a, b], L.Dense(1)(L.Concatenate()([a, b])))
    two.export(str(tmp_path / "two"), verbose=False)
    pair = [np.ones((4, 2), "float32"), np.ones((4, 3), "float32")]
    np.testing.assert_allclose(
        np.asarray(kf.saved_model.load(str(tmp_path / "two")).serve(pair)),
        np.asarray(two(pair)), rtol=1e-6)


def test_export_needs_known_inputs(tmp_path):
    with pytest.raises(ValueError, match="no known inputs"):
        keras.Sequential([L.Dense(2)]).export(str(tmp_path / "x"), verbose=False)
    with pytest.raises(ValueError, match="format"):
        _model().export(str(tmp_path / "x"), format="onnx")


@pytest.mark.parametrize("name", sorted(MODELS))
def test_keras3_weights_h5_load_and_predict_as_keras(name):
    pytest.importorskip("h5py")
    with open(os.path.join(DATA, "keras3_weights_h5_predictions.json")) as f:
        expected = json.load(f)[name]
    build, shape = MODELS[name]
    model = build(keras)
    model.load_weights(os.path.join(DATA, f"keras3_{name}.weights.h5"))
    np.testing.assert_allclose(model.predict(probe(shape), verbose=0), expected, rtol=1e-4,
                               atol=1e-5)


def test_weights_h5_round_trip(tmp_path):
    pytest.importorskip("h5py")
    build, shape = MODELS["cnn"]
    model, other = build(keras), build(keras)
    path = str(tmp_path / "m.weights.h5")
    model.save_weights(path)
    other.load_weights(path)
    np.testing.assert_allclose(other.predict(probe(shape), verbose=0),
                               model.predict(probe(shape), verbose=0), rtol=1e-6)
