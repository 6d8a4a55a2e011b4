"""TextVectorization and StringLookup against TF 2.21's Keras 3: vocabularies and outputs
recorded in tests/keras/data/keras_text.json (scripts/record_keras_text.py), eager and in
kf.function; adapt on lists, arrays and kf.data datasets; configs; model.save."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from tests.keras.text_cases import CASES, CORPUS, PROBE, lookup_data, lookup_probe

L = keras.layers
with open(os.path.join(os.path.dirname(__file__), "data", "keras_text.json")) as f:
    REFERENCE = json.load(f)["results"]


def _layer_and_probe(name, adapt_data=None):
    cls, kwargs = CASES[name]
    layer = getattr(L, cls)(**kwargs)
    if cls == "StringLookup":
        corpus, probe = np.array(lookup_data()[0]), np.array(lookup_probe(kwargs))
    else:
        corpus, probe = CORPUS, np.array(PROBE)
    if "vocabulary" not in kwargs:
        layer.adapt(corpus if adapt_data is None else adapt_data(corpus))
    return layer, probe


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_keras_eager_and_function(name):
    layer, probe = _layer_and_probe(name)
    ref = REFERENCE[name]
    assert layer.get_vocabulary() == ref["vocabulary"]
    expected = np.asarray(ref["value"]).reshape(ref["shape"])
    out = layer(probe)
    assert out.dtype.name == ref["dtype"]
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-6)
    traced = kf.function(lambda t: layer(t))
    np.testing.assert_allclose(np.asarray(traced(kf.constant(probe))), expected, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("name", ["tv_int", "tv_tf_idf", "sl_count"])
def test_adapt_on_a_dataset_and_an_array_agree(name):
    from_list, probe = _layer_and_probe(name)
    from_dataset, _ = _layer_and_probe(
        name, lambda data: kf.data.Dataset.from_tensor_slices(np.array(data)).batch(2))
    assert from_dataset.get_vocabulary() == from_list.get_vocabulary()
    np.testing.assert_allclose(np.asarray(from_dataset(probe)), np.asarray(from_list(probe)))


@pytest.mark.parametrize("name", ["tv_bigrams", "tv_tf_idf", "tv_int_len", "sl_mask",
                                  "sl_tf_idf"])
def test_config_round_trip(name):
    layer, probe = _layer_and_probe(name)
    config = layer.get_config()
    json.dumps(config)
    clone = type(layer).from_config(config)
    assert clone.get_vocabulary() == layer.get_vocabulary()
    np.testing.assert_allclose(np.asarray(clone(probe)), np.asarray(layer(probe)), rtol=1e-6)


def test_invert_maps_indices_back():
    lookup = L.StringLookup(vocabulary=["a", "b", "c"])
    inverse = L.StringLookup(vocabulary=["a", "b", "c"], invert=True)
    ids = lookup(np.array([["c", "zz", "a"]]))
    assert np.asarray(inverse(ids)).tolist() == [[b"c", b"[UNK]", b"a"]]


def test_text_model_trains_saves_and_reloads(tmp_path):
    vectorize = L.TextVectorization(max_tokens=30, output_sequence_length=6)
    vectorize.adapt(kf.data.Dataset.from_tensor_slices(np.array(CORPUS)).batch(3))
    inputs = keras.Input((1,), dtype="string")
    x = L.Embedding(30, 4)(vectorize(inputs))
    outputs = L.Dense(1, activation="sigmoid")(L.GlobalAveragePooling1D()(x))
    model = keras.Model(inputs, outputs)
    model.compile("adam", "binary_crossentropy")
    texts = np.array(CORPUS + PROBE)[:, None]
    labels = (np.arange(len(texts)) % 2).astype("float32")
    model.fit(texts, labels, epochs=2, batch_size=4, verbose=0)
    path = str(tmp_path / "text.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(texts, verbose=0), model.predict(texts, verbose=0),
                               rtol=1e-6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="output_mode"):
        L.StringLookup(output_mode="bag")
    with pytest.raises(ValueError, match="output_sequence_length"):
        L.TextVectorization(output_mode="count", output_sequence_length=3)
    with pytest.raises(ValueError, match="adapt"):
        L.StringLookup()(np.array(["a"]))
    with pytest.raises(ValueError, match="repeated"):
        L.StringLookup(vocabulary=["a", "a"])
    with pytest.raises(ValueError, match="idf_weights"):
        L.StringLookup(vocabulary=["a"], output_mode="tf_idf")
    with pytest.raises(NotImplementedError, match="callable"):
        L.TextVectorization(standardize=str.lower)
