"""keras.layers.Hashing and the FarmHash Fingerprint64 under it against TF 2.21's Keras 3
(tests/keras/data/keras_hashing.json, recorded by scripts/record_keras_hashing.py):
bit-exact buckets for strings of every length branch, and the layer's outputs for strings,
integers, floats, mask_value and the vector modes, eager and in kf.function."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.ops.farmhash import fingerprint64, to_hash_bucket_fast
from tests.keras.hashing_cases import CASES, STRINGS

with open(os.path.join(os.path.dirname(__file__), "data", "keras_hashing.json")) as f:
    REFERENCE = json.load(f)


def test_fingerprint64_matches_tf_for_every_length_branch():
    assert [str(fingerprint64(s) % (2**63 - 1)) for s in STRINGS] == \
        REFERENCE["buckets_2_63_minus_1"]
    buckets = to_hash_bucket_fast(np.array(STRINGS, dtype=object), 1000)
    assert np.asarray(buckets).tolist() == REFERENCE["buckets_1000"]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hashing_layer_matches_keras(case):
    name, kwargs, x = case
    ref = REFERENCE["layers"][name]
    layer = keras.layers.Hashing(**kwargs)
    expected = np.asarray(ref["value"]).reshape(ref["shape"])
    out = layer(kf.constant(x))
    assert out.dtype.name == ref["dtype"]
    np.testing.assert_array_equal(np.asarray(out), expected)
    traced = kf.function(lambda t: layer(t))
    np.testing.assert_array_equal(np.asarray(traced(kf.constant(x))), expected)
    assert list(layer.compute_output_shape(x.shape)) == ref["shape"]
    clone = keras.layers.Hashing.from_config(layer.get_config())
    np.testing.assert_array_equal(np.asarray(clone(kf.constant(x))), expected)


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_bins"):
        keras.layers.Hashing(num_bins=0)
    with pytest.raises(ValueError, match="output_mode"):
        keras.layers.Hashing(num_bins=2, output_mode="tf_idf")
    with pytest.raises(NotImplementedError, match="salt"):
        keras.layers.Hashing(num_bins=2, salt=3)
    with pytest.raises(kf.errors.InvalidArgumentError, match="num_buckets"):
        to_hash_bucket_fast(kf.constant(["a"]), 0)
