"""Calls TF rejects must not silently return a result (issue: silent acceptances)."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors, keras

X = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: kf.math.cumsum(X, axis=5), errors.InvalidArgumentError, "Cumsum"),
    (lambda: kf.reshape(X, [-5]), errors.InvalidArgumentError, "Reshape"),
    (lambda: kf.cond(lambda: False, lambda: 1, lambda: 2), TypeError, "callable"),
    (lambda: kf.math.argmax(X, output_type=kf.float32), TypeError, "output_type"),
    (lambda: kf.Variable(np.ones((2, 2)), shape=[3, 3]), ValueError, "shape"),
    (lambda: kf.nn.dropout(X, rate=[1.0, 2.0]), ValueError, "rate"),
], ids=["cumsum_axis", "reshape_negative", "cond_callable", "argmax_float",
        "variable_shape", "dropout_rate_vector"])
def test_tf_rejects_these(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()


def test_cumsum_negative_axis_still_counts_from_the_end():
    np.testing.assert_array_equal(kf.math.cumsum(X, axis=-1).numpy(), np.cumsum(X, -1))


def test_average_layer_averages():
    a, b = np.ones((2, 3), np.float32), 3 * np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(keras.layers.Average()([a, b]).numpy(), 2 * a)


def test_a_huge_pooling_window_is_refused_before_any_work():
    x = np.ones((1, 4, 4, 1), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="ksize"):
        kf.nn.max_pool2d(x, ksize=10 ** 9, strides=1, padding="SAME")
    assert kf.nn.max_pool2d(x, ksize=9, strides=1, padding="SAME").shape == (1, 4, 4, 1)
