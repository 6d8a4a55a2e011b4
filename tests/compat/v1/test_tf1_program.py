"""A TF1 program written against `import tensorflow.compat.v1 as tf` runs with
`import kilnflow.compat.v1 as tf`: TF 2 names reach through compat.v1, the renamed TF1
names (to_float, random_normal, reduce_sum(keep_dims=), name_scope(name, default_name))
and tf.logging exist, and its Session result equals the same math done eagerly."""
import logging

import numpy as np
import pytest

import kilnflow as kf
import kilnflow.compat.v1 as tf


def _fit_in_a_session(xs, ys, steps):
    tf.disable_v2_behavior()
    try:
        tf.reset_default_graph()
        tf.set_random_seed(0)
        x = tf.placeholder(tf.float32, [None, 1], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.variable_scope("linear"):
            w = tf.get_variable("w", [1, 1], initializer=tf.constant_initializer(0.5))
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        with tf.name_scope(None, default_name="loss"):
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), keep_dims=False)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_or_create_global_step())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(steps):
                _, value = sess.run([train_op, loss], feed_dict={x: xs, y: ys})
            return sess.run([w, b]), value, loss.name
    finally:
        tf.enable_v2_behavior()


def test_tf1_linear_regression_matches_eager_gradient_descent():
    xs = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    ys = 2.0 * xs + 1.0
    (w, b), last_loss, loss_name = _fit_in_a_session(xs, ys, steps=5)
    assert loss_name.startswith("loss/")
    ew, eb = kf.Variable([[0.5]]), kf.Variable([0.0])
    for _ in range(5):
        with kf.GradientTape() as tape:
            loss = kf.reduce_mean(kf.square(kf.matmul(xs, ew) + eb - ys))
        gw, gb = tape.gradient(loss, [ew, eb])
        ew.assign_sub(0.1 * gw)
        eb.assign_sub(0.1 * gb)
    np.testing.assert_allclose(w, ew.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b, eb.numpy(), rtol=1e-6)
    assert kf.executing_eagerly()


def test_renamed_tf1_names():
    x = kf.constant([[1, 2], [3, 4]])
    assert tf.to_float(x).dtype is kf.float32 and tf.to_int64(x).dtype is kf.int64
    assert tf.to_double(x).dtype is kf.float64 and tf.to_int32(x).dtype is kf.int32
    assert tf.reduce_sum(x, reduction_indices=1, keep_dims=True).numpy().tolist() == [[3], [7]]
    assert tf.reduce_max(x, axis=0).numpy().tolist() == [3, 4]
    with pytest.raises(ValueError, match="both"):
        tf.reduce_sum(x, axis=0, reduction_indices=0)
    assert tf.random_normal([2, 3], seed=1).shape == (2, 3)
    assert tf.truncated_normal([2], seed=1).shape == (2,)
    assert tf.random_uniform([2], maxval=3, dtype=tf.int32, seed=1).dtype is kf.int32
    assert float(tf.log(kf.constant(1.0))) == 0.0
    assert tf.Variable is kf.Variable and tf.matmul is kf.matmul and tf.nn is kf.nn
    assert tf.train.Checkpoint is kf.train.Checkpoint
    with pytest.raises(AttributeError, match="no attribute 'not_a_tf_name'"):
        tf.not_a_tf_name
    with pytest.raises(AttributeError, match="train' has no attribute"):
        tf.train.not_a_tf_name


def test_tf1_logging(caplog):
    tf.logging.set_verbosity(tf.logging.INFO)
    assert tf.logging.get_verbosity() == logging.INFO
    with caplog.at_level(logging.INFO, logger="kilnflow"):
        tf.logging.info("step %d", 3)
        tf.logging.warn("careful")
    assert "step 3" in caplog.text and "careful" in caplog.text
    tf.logging.set_verbosity(tf.logging.WARN)
