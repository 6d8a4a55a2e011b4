"""compat.v1 variable sharing: variable_scope names and reuse (True, AUTO_REUSE, inherited),
get_variable's checks and initializers, default_name, scope objects, collections and
GraphKeys, and TF1 models whose Session results equal the same code run eagerly."""
import numpy as np
import pytest

import kilnflow as kf

v1 = kf.compat.v1


def _dense(x, units, name, reuse=None):
    with v1.variable_scope(name, reuse=reuse):
        w = v1.get_variable("w", [x.shape[-1], units],
                            initializer=v1.random_normal_initializer(seed=3))
        b = v1.get_variable("b", [units], initializer=v1.constant_initializer(0.5))
        return kf.nn.relu(kf.matmul(x, w) + b)


X = np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32)


def test_names_follow_variable_scopes_and_ops_get_name_scopes():
    with kf.Graph().as_default():
        x = v1.placeholder(kf.float32, [None, 3])
        with v1.variable_scope("model"):
            y = _dense(x, 2, "dense")
        names = [v.name for v in v1.global_variables()]
        assert names == ["model/dense/w:0", "model/dense/b:0"]
        assert y.name.startswith("model/dense/")
        assert v1.get_variable_scope().name == ""


def test_reuse_true_shares_and_demands_existing_variables():
    with kf.Graph().as_default():
        x = v1.placeholder(kf.float32, [None, 3])
        _dense(x, 2, "d")
        _dense(x, 2, "d", reuse=True)
        assert len(v1.global_variables()) == 2
        with pytest.raises(ValueError, match="already exists, disallowed"):
            _dense(x, 2, "d")
        with pytest.raises(ValueError, match="d2/w does not exist"):
            _dense(x, 2, "d2", reuse=True)
        with pytest.raises(ValueError, match="Trying to share variable d/w"):
            _dense(x, 5, "d", reuse=True)


def test_auto_reuse_creates_once_and_nested_scopes_inherit_reuse():
    with kf.Graph().as_default():
        with v1.variable_scope("outer", reuse=v1.AUTO_REUSE):
            with v1.variable_scope("inner"):
                a = v1.get_variable("v", [1])
            with v1.variable_scope("inner", reuse=False):  # False cannot switch reuse off
                b = v1.get_variable("v", [1])
        assert a is b and a.name == "outer/inner/v:0"


def test_reuse_variables_and_scope_objects():
    with kf.Graph().as_default():
        with v1.variable_scope("s") as scope:
            a = v1.get_variable("v", [2])
            scope.reuse_variables()
            assert v1.get_variable("v") is a
        with v1.variable_scope(scope, reuse=True):
            assert v1.get_variable("v") is a
        assert scope.get_variable("v", [2]) is not None


def test_default_name_is_made_unique():
    with kf.Graph().as_default():
        with v1.variable_scope(None, default_name="layer") as first:
            pass
        with v1.variable_scope(None, default_name="layer") as second:
            pass
        assert (first.name, second.name) == ("layer", "layer_1")


def test_scope_initializer_and_dtype_are_defaults():
    with kf.Graph().as_default():
        with v1.variable_scope("s", initializer=v1.ones_initializer(), dtype=kf.float64):
            v = v1.get_variable("v", [2])
            i = v1.get_variable("i", [2], dtype=kf.int32)  # ints default to zeros
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(v).tolist() == [1.0, 1.0] and v.dtype is kf.float64
            assert sess.run(i).tolist() == [1, 1]


def test_initial_value_given_as_a_tensor_and_shape_errors():
    with kf.Graph().as_default():
        v = v1.get_variable("v", initializer=kf.constant([1.0, 2.0]))
        assert v.shape == (2,)
        with pytest.raises(ValueError, match="fully defined"):
            v1.get_variable("u", [None, 2])
        with pytest.raises(ValueError, match="initializer passed has shape"):
            v1.get_variable("t", [3], initializer=kf.constant([1.0, 2.0]))


def test_unsupported_arguments_are_refused_by_name():
    with kf.Graph().as_default():
        with pytest.raises(NotImplementedError, match="constraint"):
            v1.get_variable("c", [1], constraint=lambda v: v)
        with pytest.raises(NotImplementedError, match="custom_getter"):
            with v1.variable_scope("s", custom_getter=lambda getter, *a, **k: None):
                pass
        v1.get_variable("p", [4], partitioner=lambda shape, dtype: [1])  # accepted: no-op


def test_eager_get_variable_makes_a_new_variable_each_call():
    a = v1.get_variable("eager_v", [2], initializer=v1.zeros_initializer())
    b = v1.get_variable("eager_v", [2], initializer=v1.zeros_initializer())
    assert a is not b and a.numpy().tolist() == [0.0, 0.0]


def test_collections_and_graph_keys():
    with kf.Graph().as_default():
        with v1.variable_scope("a"):
            w = v1.get_variable("w", [1], regularizer=lambda v: kf.reduce_sum(v * v))
            local = v1.get_variable("l", [1], trainable=False,
                                    collections=[v1.GraphKeys.LOCAL_VARIABLES])
        other = v1.get_variable("b", [1])
        v1.add_to_collection(v1.GraphKeys.LOSSES, "loss")
        v1.add_to_collections(["x", "y"], 1)
        # as TF: naming collections replaces the default GLOBAL_VARIABLES
        assert v1.get_collection(v1.GraphKeys.GLOBAL_VARIABLES, scope="a") == [w]
        assert v1.trainable_variables() == [w, other]
        assert v1.local_variables() == [local]
        assert v1.get_collection(v1.GraphKeys.LOSSES) == ["loss"]
        assert v1.get_collection("x") == v1.get_collection("y") == [1]
        ref = v1.get_collection_ref("refs")
        ref.append(7)
        assert v1.get_collection("refs") == [7]
        (reg,) = v1.get_collection(v1.GraphKeys.REGULARIZATION_LOSSES)
        with v1.Session() as sess:
            sess.run(v1.variables_initializer([w]))
            assert sess.run(reg) == pytest.approx(float(sess.run(w)[0]) ** 2)
            sess.run(v1.local_variables_initializer())
            sess.run(local)


def _model(x):
    """A TF1-style two-layer model: the same code runs in a Session and eagerly."""
    h = _dense(x, 4, "hidden")
    return kf.reduce_sum(_dense(h, 1, "out"))


def test_session_result_equals_eager_result():
    eager = _model(kf.constant(X)).numpy()
    with kf.Graph().as_default():
        x = v1.placeholder(kf.float32, [None, 3])
        y = _model(x)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            graph = sess.run(y, {x: X})
    np.testing.assert_allclose(graph, eager, rtol=1e-6)


def test_disable_eager_execution_builds_into_the_default_graph():
    v1.reset_default_graph()
    v1.disable_eager_execution()
    try:
        assert not kf.executing_eagerly()
        v = v1.get_variable("g", [2], initializer=v1.ones_initializer())
        total = kf.reduce_sum(v)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(total) == 2.0
        v1.reset_default_graph()  # a fresh graph: the name is free again
        again = v1.get_variable("g", [3])
        assert again.graph is v1.get_default_graph() is not v.graph
    finally:
        v1.enable_eager_execution()
    assert kf.executing_eagerly()


def test_v2_behavior_switches_and_tensor_equality():
    v1.disable_v2_behavior()
    try:
        assert not kf.executing_eagerly()
    finally:
        v1.enable_v2_behavior()
    assert kf.executing_eagerly()
    v1.enable_tensor_equality()
    with pytest.raises(kf.errors.UnimplementedError, match="elementwise"):
        v1.disable_tensor_equality()


def test_assign_functions_and_constant():
    with kf.Graph().as_default():
        v = kf.Variable(1.0)
        plus = v1.assign_add(v, 2.0)
        with v1.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(plus) == 3.0
            assert sess.run(v1.assign(v, v1.constant(7.0))) == 7.0
            assert sess.run(v1.assign_sub(v, 1.0)) == 6.0


def test_wrap_function_traces_once_and_keeps_variables():
    def scale(x):
        with v1.variable_scope("wrap"):
            w = v1.get_variable("w", [], initializer=v1.constant_initializer(3.0))
        return x * w
    f = v1.wrap_function(scale, [kf.TensorSpec([None], kf.float32)])
    assert f(kf.constant([1.0, 2.0])).numpy().tolist() == [3.0, 6.0]
    assert f(kf.constant([4.0])).numpy().tolist() == [12.0]  # one trace serves every length
