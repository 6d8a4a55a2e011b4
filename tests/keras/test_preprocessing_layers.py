"""CategoryEncoding, Discretization, IntegerLookup (the examples in Keras's docs and NumPy
references), RandomFlip and RandomContrast (Keras 3: a direct call augments, identity at
inference; values recorded from TF 2.21's Keras in tests/keras/data/keras_augmentation.json
by scripts/record_keras_augmentation.py); each in kf.function and through a config round
trip."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers
PAIRS = np.array([[0, 1], [0, 0], [1, 2], [3, 1]])


@pytest.mark.parametrize("mode, inputs, expected", [
    ("one_hot", [3, 2, 0, 1], np.eye(4)[[3, 2, 0, 1]]),
    ("one_hot", [[3], [2]], np.eye(4)[[3, 2]]),
    ("multi_hot", PAIRS, [[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]]),
    ("count", PAIRS, [[1, 1, 0, 0], [2, 0, 0, 0], [0, 1, 1, 0], [0, 1, 0, 1]]),
])
def test_category_encoding(mode, inputs, expected):
    layer = L.CategoryEncoding(num_tokens=4, output_mode=mode)
    np.testing.assert_array_equal(layer(inputs).numpy(), expected)
    np.testing.assert_array_equal(kf.function(lambda t: layer(t))(kf.constant(inputs))
                                  .numpy(), expected)
    assert tuple(layer.compute_output_shape(np.shape(inputs))) == np.shape(expected)
    clone = L.CategoryEncoding.from_config(layer.get_config())
    np.testing.assert_array_equal(clone(inputs).numpy(), expected)


def test_discretization():
    x = np.array([[-1.5, 1.0, 3.4, 0.5], [0.0, 3.0, 1.3, 0.0]])
    layer = L.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    np.testing.assert_array_equal(layer(x).numpy(), [[0, 2, 3, 1], [1, 3, 2, 1]])
    np.testing.assert_array_equal(layer(x).numpy(), np.digitize(x, [0.0, 1.0, 2.0]))
    data = np.random.default_rng(0).normal(size=1000)
    adapted = L.Discretization(num_bins=4)
    adapted.adapt(data)
    counts = np.bincount(adapted(data).numpy(), minlength=4)
    assert counts.tolist() == [250, 250, 250, 250]
    assert L.Discretization.from_config(adapted.get_config()).bin_boundaries == \
        adapted.bin_boundaries
    assert keras.Input((3,)).shape and layer(keras.Input((4,))).dtype.name == "int64"


def test_integer_lookup():
    data = np.array([[12, 1138, 42], [42, 1000, 36]])
    layer = L.IntegerLookup()
    layer.adapt(data)
    assert layer.get_vocabulary() == [-1, 42, 1138, 1000, 36, 12]
    np.testing.assert_array_equal(layer(data).numpy(), [[5, 2, 1], [1, 3, 4]])
    np.testing.assert_array_equal(layer([[7]]).numpy(), [[0]])  # out of vocabulary
    inverse = L.IntegerLookup(vocabulary=[12, 36, 1138, 42], invert=True)
    np.testing.assert_array_equal(inverse([[1, 3, 4], [4, 0, 2]]).numpy(),
                                  [[12, 1138, 42], [42, -1, 36]])
    masked = L.IntegerLookup(vocabulary=[12, 36], mask_token=0)
    assert masked.get_vocabulary() == [0, -1, 12, 36]
    np.testing.assert_array_equal(masked([[12, 0, 7, 36]]).numpy(), [[2, 0, 1, 3]])
    clone = L.IntegerLookup.from_config(layer.get_config())
    np.testing.assert_array_equal(clone(data).numpy(), layer(data).numpy())
    traced = kf.function(lambda t: layer(t))
    np.testing.assert_array_equal(traced(kf.constant(data)).numpy(), layer(data).numpy())
    small = L.IntegerLookup(max_tokens=3)
    small.adapt(data)
    assert small.get_vocabulary() == [-1, 42, 1138]


def test_random_flip_and_contrast():
    # Keras 3 semantics (values checked against TF 2.21's Keras, see AUG below): a direct
    # call augments (training defaults to True); training=False passes images through
    keras.utils.set_random_seed(3)
    x = np.random.default_rng(1).uniform(size=(16, 3, 4, 2)).astype(np.float32)
    flip = L.RandomFlip("horizontal")
    np.testing.assert_array_equal(flip(x, training=False).numpy(), x)  # inference: unchanged
    out = flip(x).numpy()  # direct call: augments, as in Keras 3
    same = [np.array_equal(o, i) for o, i in zip(out, x)]
    mirrored = [np.array_equal(o, i[:, ::-1]) for o, i in zip(out, x)]
    assert all(s or m for s, m in zip(same, mirrored)) and any(same) and any(mirrored)
    both = L.RandomFlip()(x).numpy()
    for o, i in zip(both, x):  # Keras 3: one coin per image for both axes
        assert any(np.array_equal(o, v) for v in (i, i[::-1, ::-1]))
    contrast = L.RandomContrast(0.5, value_range=(-10, 10))
    np.testing.assert_array_equal(contrast(x, training=False).numpy(), x)
    assert contrast.factor == (0.0, 0.5)  # Keras 3: a number f gives (0, f) -> f in [1, 1.5]
    changed = contrast(x).numpy()
    np.testing.assert_allclose(changed.mean((1, 2)), x.mean((1, 2)), atol=1e-6)
    ratio = (changed - changed.mean((1, 2), keepdims=True)) / \
        (x - x.mean((1, 2), keepdims=True))
    assert np.all((ratio > 1.0 - 1e-4) & (ratio < 1.5 + 1e-4))
    assert L.RandomFlip.from_config(flip.get_config()).mode == "horizontal"
    with pytest.raises(ValueError, match="mode"):  # Keras 3 ignores an unknown mode silently
        L.RandomFlip("diagonal")


AUG = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                  "keras_augmentation.json")))


def test_random_contrast_factor_zero_clips_to_value_range_like_keras():
    x = np.array(AUG["x"], np.float32)
    layer = L.RandomContrast(0.0, value_range=(0, 1))
    np.testing.assert_allclose(layer(x).numpy(), AUG["contrast0_direct"], atol=1e-6)
    np.testing.assert_allclose(layer(x[0]).numpy(), AUG["contrast0_rank3"], atol=1e-6)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), AUG["contrast0_train_false"])
    traced = kf.function(lambda t: layer(t))
    np.testing.assert_allclose(traced(kf.constant(x)).numpy(), AUG["contrast0_direct"],
                               atol=1e-6)
    assert str(layer(x.astype(np.float64)).dtype) == AUG["contrast_f64_dtype"]


def test_random_contrast_factor_rule_errors_and_config_like_keras():
    for text, expected in AUG["contrast_factor_attr"].items():
        factor = eval(text)  # "0.2", "(0.3, 0.5)": the recorded argument
        assert list(L.RandomContrast(factor).factor) == pytest.approx(expected)
    for text, (kind, message) in AUG["contrast_errors"].items():
        with pytest.raises(ValueError) as e:
            L.RandomContrast(eval(text))
        assert kind == "ValueError" and str(e.value) == message
    config = L.RandomContrast((0.3, 0.5), value_range=(0, 1), seed=4).get_config()
    for key in ("factor", "value_range", "seed", "data_format"):
        assert json.loads(json.dumps(config[key])) == AUG["contrast_config"][key]
    again = L.RandomContrast.from_config(json.loads(json.dumps(config)))
    assert again.factor == (0.3, 0.5) and list(again.value_range) == [0, 1]


def test_random_flip_seeded_coin_inference_and_config_like_keras():
    x = np.array(AUG["x"], np.float32)
    np.testing.assert_array_equal(L.RandomFlip("horizontal", seed=1)(x, training=False).numpy(),
                                  AUG["flip_train_false"])
    assert str(L.RandomFlip()(x.astype(np.int32), training=False).dtype) == \
        AUG["flip_int_dtype"]
    big = np.random.RandomState(0).rand(64, 3, 4, 1).astype(np.float32)
    out = L.RandomFlip(seed=3)(big).numpy()
    kinds = set()
    for o, i in zip(out, big):
        kinds |= {k for k, v in (("same", i), ("v", i[::-1]), ("h", i[:, ::-1]),
                                 ("hv", i[::-1, ::-1])) if np.array_equal(o, v)}
    assert sorted(kinds) == AUG["flip_both_kinds"]
    # a seeded layer flips the same images every time it is rebuilt, eager and traced
    first = L.RandomFlip("horizontal", seed=7)(big).numpy()
    flipped = [np.array_equal(o, i[:, ::-1]) for o, i in zip(first, big)]
    assert any(flipped) and not all(flipped)
    traced = kf.function(lambda t, layer=L.RandomFlip("horizontal", seed=7): layer(t))
    np.testing.assert_array_equal(traced(kf.constant(big)).numpy(), first)
    config = L.RandomFlip("vertical", seed=2).get_config()
    for key in ("seed", "mode", "data_format"):
        assert config[key] == AUG["flip_config"][key]


def test_augmentation_passes_through_in_predict_like_keras():
    x = np.array(AUG["x"], np.float32)
    model = keras.Sequential([keras.Input((3, 4, 2)), L.RandomFlip(),
                              L.RandomContrast(0.5, value_range=(0, 1))])
    assert np.array_equal(model.predict(x, verbose=0), x) == AUG["predict_passthrough"]
