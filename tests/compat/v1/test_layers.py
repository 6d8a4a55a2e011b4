"""compat.v1.layers.dense/flatten: TF1 variable names, reuse, and a Session result equal
to the same layers run eagerly."""
import numpy as np
import pytest

import kilnflow as kf

v1 = kf.compat.v1
X = np.linspace(-1, 1, 24).reshape(2, 3, 4).astype(np.float32)


def _net(x):
    init = v1.glorot_uniform_initializer(seed=4)
    h = v1.layers.dense(v1.layers.flatten(x), 5, activation=kf.nn.tanh,
                        kernel_initializer=init, name="hidden")
    return v1.layers.dense(h, 2, kernel_initializer=init,
                           bias_initializer=v1.constant_initializer(0.1))


def test_session_equals_eager_and_names_are_tf1s():
    eager = _net(kf.constant(X)).numpy()
    with kf.Graph().as_default():
        x = v1.placeholder(kf.float32, [None, 3, 4])
        y = _net(x)
        assert [v.name for v in v1.trainable_variables()] == [
            "hidden/kernel:0", "hidden/bias:0", "dense/kernel:0", "dense/bias:0"]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            np.testing.assert_allclose(sess.run(y, {x: X}), eager, rtol=1e-6)


def test_dense_reuses_by_name_and_checks_inputs():
    with kf.Graph().as_default():
        x = v1.placeholder(kf.float32, [None, 4])
        v1.layers.dense(x, 3, name="d")
        v1.layers.dense(x, 3, name="d", reuse=True)
        v1.layers.dense(x, 3, use_bias=False)
        assert [v.name for v in v1.global_variables()] == ["d/kernel:0", "d/bias:0",
                                                           "dense/kernel:0"]
        with pytest.raises(ValueError, match="already exists"):
            v1.layers.dense(x, 3, name="d")
        with pytest.raises(ValueError, match="last dimension"):
            v1.layers.dense(v1.placeholder(kf.float32, [None, None]), 3)


def test_dense_on_rank_3_and_flatten_with_unknown_dims():
    y = v1.layers.dense(kf.ones([2, 3, 4]), 5)
    assert y.shape == (2, 3, 5)
    with kf.Graph().as_default():
        x = v1.placeholder(kf.float32, [None, None, 2])
        flat = v1.layers.flatten(x)
        with v1.Session() as sess:
            assert sess.run(flat, {x: np.ones((3, 4, 2))}).shape == (3, 8)
