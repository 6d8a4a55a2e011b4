"""The shipped digits data set: contents, split, licence file, and initializers."""
import os

import numpy as np
import pytest

from kilnflow import keras
from kilnflow.keras import initializers
from kilnflow.keras.datasets import digits


def test_load_data_split_and_contents():
    (x_train, y_train), (x_test, y_test) = digits.load_data(test_split=0.25, seed=1)
    assert x_train.shape == (1347, 8, 8) and x_test.shape == (450, 8, 8)
    assert x_train.dtype == np.uint8 and y_train.dtype == np.uint8
    assert x_train.max() == 16 and set(np.unique(y_test)) == set(range(10))
    again = digits.load_data(test_split=0.25, seed=1)
    np.testing.assert_array_equal(again[0][0], x_train)
    (all_x, all_y), (none_x, _) = digits.load_data(test_split=0.0, seed=None)
    assert all_x.shape == (1797, 8, 8) and none_x.shape == (0, 8, 8)
    assert np.bincount(all_y).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    with pytest.raises(ValueError, match="test_split"):
        digits.load_data(test_split=1.5)


def test_licence_is_shipped():
    licence = os.path.join(os.path.dirname(digits.PATH), "DIGITS_LICENSE.txt")
    text = open(licence).read()
    assert "CC BY 4.0" in text and "10.24432/C50P49" in text


def test_to_categorical():
    assert keras.utils.to_categorical([[1], [0]], 3).tolist() == [[0, 1, 0], [1, 0, 0]]
    with pytest.raises(ValueError, match="labels must be in"):
        keras.utils.to_categorical([3], 2)


@pytest.mark.parametrize("name, fan, var", [("glorot_uniform", 6.0, 2 / 60 * 1.0),
                                            ("he_normal", 6.0, 2 / 20),
                                            ("glorot_normal", 6.0, 2 / 60)])
def test_initializer_statistics(name, fan, var):
    values = np.asarray(initializers.get(name)((20, 40)))
    assert values.shape == (20, 40) and values.dtype == np.float32
    assert values.var() == pytest.approx(var, rel=0.15)
    seeded = initializers.get({"class_name": "HeUniform", "config": {"seed": 3}})
    assert np.asarray(seeded((3, 3))).shape == (3, 3)
    q = np.asarray(initializers.Orthogonal()((5, 5)), np.float64)
    np.testing.assert_allclose(q @ q.T, np.eye(5), atol=1e-5)
