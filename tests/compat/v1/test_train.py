"""compat.v1.train: Saver (TF1 names, global_step suffixes, max_to_keep, the state file,
restore into a fresh graph and eagerly), TF1 optimizers in a Session equal to the same
steps taken eagerly, and the global step helpers."""
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

v1 = kf.compat.v1


def _variables():
    with v1.variable_scope("net"):
        w = v1.get_variable("w", [2, 2], initializer=v1.random_normal_initializer(seed=1))
        b = v1.get_variable("b", [2], initializer=v1.zeros_initializer())
    return w, b


def test_saver_round_trip_by_tf1_names(tmp_path):
    with kf.Graph().as_default():
        w, b = _variables()
        saver = v1.train.Saver(max_to_keep=2)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            saved_w = sess.run(w)
            paths = [saver.save(sess, str(tmp_path / "model.ckpt"), global_step=step)
                     for step in (1, 2, 3)]
            sess.run(v1.assign(w, np.zeros((2, 2), np.float32)))
            saver.restore(sess, paths[-1])
            np.testing.assert_array_equal(sess.run(w), saved_w)
    assert paths[-1] == str(tmp_path / "model.ckpt-3")
    assert saver.last_checkpoints == paths[1:]
    assert not os.path.exists(paths[0] + ".json")  # max_to_keep swept it
    assert kf.train.latest_checkpoint(str(tmp_path)) == paths[-1]
    assert v1.train.latest_checkpoint(str(tmp_path)) == paths[-1]
    assert v1.train.checkpoint_exists(paths[-1])
    names = sorted(n.split("/.ATTRIBUTES")[0] for n, _ in kf.train.list_variables(paths[-1]))
    assert names == ["net/b", "net/w"]
    # a new graph, and eager variables, restore by the same names
    with kf.Graph().as_default():
        w2, _ = _variables()
        with v1.Session() as sess:
            v1.train.Saver().restore(sess, paths[-1])  # no initializer needed
            np.testing.assert_array_equal(sess.run(w2), saved_w)
    eager_w = kf.Variable(np.zeros((2, 2), np.float32), name="net/w")
    v1.train.Saver([eager_w]).restore(None, paths[-1])
    np.testing.assert_array_equal(eager_w.numpy(), saved_w)


def test_saver_var_list_dict_and_errors(tmp_path):
    with kf.Graph().as_default():
        w, b = _variables()
        saver = v1.train.Saver({"weights": w})
        with v1.Session() as sess:
            with pytest.raises(errors.FailedPreconditionError, match="not initialized"):
                saver.save(sess, str(tmp_path / "bad"))
            sess.run(v1.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "named"))
            with pytest.raises(errors.NotFoundError, match="Key net/b not found"):
                v1.train.Saver([b]).restore(sess, path)
            with pytest.raises(ValueError, match="None"):
                saver.restore(sess, None)
    with kf.Graph().as_default():
        with pytest.raises(ValueError, match="No variables to save"):
            v1.train.Saver()
    with pytest.raises(RuntimeError, match="var_list"):
        v1.train.Saver()  # eagerly there is no graph to collect variables from


def _loss(w, b, x, y):
    return kf.reduce_mean(kf.square(kf.matmul(x, w) + b - y))


X = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]], np.float32)
Y = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)


@pytest.mark.parametrize("make", [
    lambda: v1.train.GradientDescentOptimizer(0.1),
    lambda: v1.train.MomentumOptimizer(0.1, 0.9),
    lambda: v1.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    lambda: v1.train.AdamOptimizer(0.05),
], ids=["sgd", "momentum", "nesterov", "adam"])
def test_optimizer_in_a_session_equals_eager_steps(make):
    init_w = np.array([[0.1, -0.2], [0.3, 0.4]], np.float32)
    w = kf.Variable(init_w)
    b = kf.Variable(np.zeros(2, np.float32))
    opt = make()
    for _ in range(3):
        opt.minimize(lambda: _loss(w, b, kf.constant(X), kf.constant(Y)), var_list=[w, b])
    eager = (w.numpy(), b.numpy())
    with kf.Graph().as_default():
        gw = kf.Variable(init_w, name="w")
        gb = kf.Variable(np.zeros(2, np.float32), name="b")
        x = v1.placeholder(kf.float32, [None, 2])
        y = v1.placeholder(kf.float32, [None, 2])
        step = v1.train.get_or_create_global_step()
        train_op = make().minimize(_loss(gw, gb, x, y), global_step=step)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {x: X, y: Y})
            graph = sess.run([gw, gb])
            assert sess.run(step) == 3
    for g, e in zip(graph, eager):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_compute_and_apply_gradients_and_slots():
    with kf.Graph().as_default():
        w = kf.Variable(2.0, name="w")
        opt = v1.train.MomentumOptimizer(0.5, 0.0)
        pairs = opt.compute_gradients(w * w)
        assert pairs[0][1] is w
        train_op = opt.apply_gradients(pairs)
        assert train_op.name == "Momentum"
        slot = opt.get_slot(w, "momentum")
        assert slot.name == "w/Momentum:0" and opt.variables() == [slot]
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(train_op)
            assert sess.run(w) == 0.0
        with pytest.raises(ValueError, match="No gradients"):
            opt.apply_gradients([(None, w)])
    with pytest.raises(RuntimeError, match="should be a function"):
        v1.train.GradientDescentOptimizer(0.1).compute_gradients(kf.constant(1.0))


def test_global_step_helpers():
    with kf.Graph().as_default():
        assert v1.train.get_global_step() is None
        step = v1.train.create_global_step()
        assert step.dtype is kf.int64 and step.name == "global_step:0"
        assert v1.train.get_or_create_global_step() is step
        with pytest.raises(ValueError, match="already exists"):
            v1.train.create_global_step()


def test_saver_keys_keras_weights_by_their_paths(tmp_path):
    # Keras 3 weights share short names ('kernel'); a Saver over model.weights keys by path
    import kilnflow as kf
    model = kf.keras.Sequential([kf.keras.Input((3,)), kf.keras.layers.Dense(2),
                                 kf.keras.layers.Dense(1)])
    saver = kf.compat.v1.train.Saver(model.weights)
    prefix = saver.save(None, str(tmp_path / "ckpt"))
    names = sorted(n for n, _ in kf.train.list_variables(prefix))
    assert names == sorted(w.path for w in model.weights) and len(names) == 4
