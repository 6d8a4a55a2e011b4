"""keras.layers.HashedCrossing against TF 2.21's Keras (tests/keras/data/
keras_hashed_crossing.json, from scripts/record_keras_hashed_crossing.py), eager and in
kf.function, and its input checks."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from tests.keras.hashed_crossing_cases import CASES

with open(os.path.join(os.path.dirname(__file__), "data", "keras_hashed_crossing.json")) as _f:
    RECORDED = json.load(_f)


@pytest.mark.parametrize("name,kwargs,inputs", CASES, ids=[c[0] for c in CASES])
def test_matches_keras(name, kwargs, inputs):
    entry = RECORDED[name]
    layer = keras.layers.HashedCrossing(**kwargs)
    want = np.array([int(v) if entry["dtype"].startswith("int") else float(v)
                     for v in entry["value"]]).reshape(entry["shape"])
    for got in (layer(inputs),
                kf.function(lambda *xs: layer(list(xs)))(*[kf.constant(x) for x in inputs])):
        assert got.dtype.name == entry["dtype"] and list(got.shape) == entry["shape"]
        np.testing.assert_array_equal(got.numpy(), want)
    assert list(layer.compute_output_shape([np.shape(x) for x in inputs])) == entry["shape"]
    again = keras.layers.HashedCrossing.from_config(layer.get_config())
    np.testing.assert_array_equal(again(inputs).numpy(), want)


def test_input_checks():
    layer = keras.layers.HashedCrossing(num_bins=3)
    with pytest.raises(ValueError, match="list or tuple"):
        layer(np.array([1, 2]))
    with pytest.raises(ValueError, match="at least two"):
        layer([np.array([1, 2])])
    with pytest.raises(ValueError, match="equal shape"):
        layer([np.array([1, 2]), np.array([1, 2, 3])])
    with pytest.raises(ValueError, match="integer or string"):
        layer([np.array([1.0, 2.0]), np.array([1, 2])])
    with pytest.raises(ValueError, match=r"\(batch_size, 1\)"):
        layer([np.ones((2, 2), np.int64), np.ones((2, 2), np.int64)])
