"""CategoryEncoding, Discretization, IntegerLookup (the examples in Keras's docs and NumPy
references), RandomFlip and RandomContrast (training-only randomness, identity at
inference); each in kf.function and through a config round trip."""
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
    keras.utils.set_random_seed(3)
    x = np.random.default_rng(1).uniform(size=(16, 3, 4, 2)).astype(np.float32)
    flip = L.RandomFlip("horizontal")
    np.testing.assert_array_equal(flip(x).numpy(), x)  # inference: unchanged
    out = flip(x, training=True).numpy()
    same = [np.array_equal(o, i) for o, i in zip(out, x)]
    mirrored = [np.array_equal(o, i[:, ::-1]) for o, i in zip(out, x)]
    assert all(s or m for s, m in zip(same, mirrored)) and any(same) and any(mirrored)
    both = L.RandomFlip()(x, training=True).numpy()
    for o, i in zip(both, x):
        assert any(np.array_equal(o, v) for v in (i, i[::-1], i[:, ::-1], i[::-1, ::-1]))
    contrast = L.RandomContrast(0.5)
    np.testing.assert_array_equal(contrast(x).numpy(), x)
    changed = contrast(x, training=True).numpy()
    np.testing.assert_allclose(changed.mean((1, 2)), x.mean((1, 2)), atol=1e-6)
    ratio = (changed - changed.mean((1, 2), keepdims=True)) / \
        (x - x.mean((1, 2), keepdims=True))
    assert np.all((ratio > 0.5 - 1e-4) & (ratio < 1.5 + 1e-4))
    assert L.RandomFlip.from_config(flip.get_config()).mode == "horizontal"
    with pytest.raises(ValueError, match="mode"):
        L.RandomFlip("diagonal")
