"""compat.v1: Session.run fetch structures and feeds, feed checking, missing feeds,
variable initialization, InteractiveSession/eval, graph mode switching, devices,
the per-(fetches, feeds) compile cache, and symbolic gradients."""
import collections

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.compat.v1 import session as session_module

v1 = kf.compat.v1
Pair = collections.namedtuple("Pair", "first second")


def _graph():
    g = kf.Graph()
    with g.as_default():
        x = v1.placeholder(kf.float32, shape=(None, 2), name="x")
        n = v1.placeholder(kf.int32, shape=(), name="n")
        y = x * 2.0
        total = kf.reduce_sum(y, name="total")
        scaled = kf.cast(n, kf.float32) * total
    return g, x, n, y, total, scaled


X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


# ---------------------------------------------------------------- fetches

def test_run_a_single_tensor_returns_an_ndarray_or_numpy_scalar():
    g, x, _, y, total, _ = _graph()
    with v1.Session(graph=g) as sess:
        out = sess.run(y, {x: X})
        assert isinstance(out, np.ndarray) and out.dtype == np.float32
        np.testing.assert_array_equal(out, X * 2)
        value = sess.run(total, {x: X})
        assert isinstance(value, np.float32) and value == 42.0


def test_run_nested_fetch_structures():
    g, x, n, y, total, scaled = _graph()
    feed = {x: X, n: 2}
    with v1.Session(graph=g) as sess:
        as_list = sess.run([y, total], feed)
        assert isinstance(as_list, list) and float(as_list[1]) == 42.0
        as_tuple = sess.run((total, scaled), feed)
        assert isinstance(as_tuple, tuple) and as_tuple == (42.0, 84.0)
        as_dict = sess.run({"t": total, "s": scaled}, feed)
        assert as_dict == {"t": 42.0, "s": 84.0}
        nested = sess.run(Pair(total, [scaled, {"again": total}]), feed)
        assert isinstance(nested, Pair)
        assert nested.first == 42.0 and nested.second[0] == 84.0
        assert nested.second[1] == {"again": 42.0}


def test_run_by_string_names_and_operations():
    g, x, _, y, total, _ = _graph()
    with g.as_default():
        grouped = kf.identity(total, name="out").op
    with v1.Session(graph=g) as sess:
        assert sess.run("total:0", {"x:0": X}) == 42.0
        np.testing.assert_array_equal(sess.run(y.name, {x: X}), X * 2)
        assert sess.run(grouped, {x: X}) is None          # an op fetch returns None
        assert sess.run("out", {x: X}) is None            # ... also by op name
        assert sess.run(["out", "out:0"], {x: X}) == [None, 42.0]


def test_feeds_accept_ndarrays_python_values_and_eager_tensors():
    g, x, n, _, total, scaled = _graph()
    eager = kf.constant(X)  # made outside the session: `with sess` makes g the default graph
    with v1.Session(graph=g) as sess:
        assert sess.run(total, {x: [[1.0, 1.0]]}) == 4.0            # nested list
        assert sess.run(total, {x: X.astype(np.float64)}) == 42.0   # safe cast
        assert sess.run(scaled, {x: X, n: 3}) == 126.0              # Python int
        assert sess.run(scaled, {x: eager, n: np.int32(1)}) == 42.0


def test_any_tensor_can_be_fed_not_only_placeholders():
    g, x, _, y, total, _ = _graph()
    with v1.Session(graph=g) as sess:
        # feeding y cuts the graph there: x is not needed
        assert sess.run(total, {y: np.ones((2, 2), np.float32)}) == 4.0


def test_only_the_needed_part_of_the_graph_runs():
    g, x, n, y, total, scaled = _graph()
    with g.as_default():
        bad = kf.gather(kf.constant([1.0]), kf.constant(7))  # fails if it ever runs
    with v1.Session(graph=g) as sess:
        assert sess.run(total, {x: X}) == 42.0     # n is not fed and not needed
        with pytest.raises(kf.errors.InvalidArgumentError):
            sess.run(bad)


# ---------------------------------------------------------------- feed errors

def test_feed_with_the_wrong_shape_raises_value_error():
    g, x, n, _, total, _ = _graph()
    with v1.Session(graph=g) as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3, 3\) for "
                                             r"Tensor 'x:0', which has shape '\(None, 2\)'"):
            sess.run(total, {x: np.ones((3, 3), np.float32)})
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(total, {x: np.ones(2, np.float32)})
        with pytest.raises(ValueError, match="Cannot feed value of shape"):
            sess.run(n * 2, {n: [1, 2]})


def test_feed_with_an_unsafe_dtype_raises_type_error():
    g, x, n, _, _, scaled = _graph()
    with v1.Session(graph=g) as sess:
        with pytest.raises(TypeError, match="Cannot feed a float64 value to Tensor n:0"):
            sess.run(scaled, {x: X, n: 1.5})


def test_feed_that_cannot_convert_names_the_tensor():
    g, x, _, _, total, _ = _graph()
    with v1.Session(graph=g) as sess:
        with pytest.raises((TypeError, ValueError), match="x:0"):
            sess.run(total, {x: "not a number"})


def test_feeding_an_operation_is_rejected():
    g, x, _, _, total, _ = _graph()
    with v1.Session(graph=g) as sess:
        with pytest.raises(TypeError, match="cannot be an Operation"):
            sess.run(total, {total.op: 1.0})


def test_missing_feed_names_the_placeholder():
    g, x, n, _, total, scaled = _graph()
    with v1.Session(graph=g) as sess:
        with pytest.raises(kf.errors.InvalidArgumentError,
                           match=r"You must feed a value for placeholder tensor 'x' with dtype "
                                 r"float32 and shape \[None, 2\]"):
            sess.run(total)
        with pytest.raises(kf.errors.InvalidArgumentError, match="placeholder tensor 'n'"):
            sess.run(scaled, {x: X})


def test_fetch_errors():
    g, x, _, _, total, _ = _graph()
    other = kf.Graph()
    with other.as_default():
        foreign = kf.constant(1.0) + 1.0
    sess = v1.Session(graph=g)
    with pytest.raises(ValueError, match="not an element of this graph"):
        sess.run(foreign)
    with pytest.raises(TypeError, match="has invalid type"):
        sess.run(3.0)
    with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
        sess.run("nothing:0")  # TF 2.21's class and words (recorded)
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        sess.run(total, {object(): 1.0})
    with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
        sess.run(total, {"nothing:0": 1.0})
    with pytest.raises(TypeError, match="feed_dict"):
        sess.run(total, [1.0, 2.0])
    with pytest.raises(TypeError, match="Cannot feed"):
        sess.run(total, {x: object()})
    sess.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(total, {x: X})


# ---------------------------------------------------------------- variables

def test_reading_an_uninitialized_variable_fails_precondition():
    g = kf.Graph()
    with g.as_default():
        v = kf.Variable([1.0, 2.0], name="v")
        doubled = v * 2.0
    with v1.Session(graph=g) as sess:
        with pytest.raises(kf.errors.FailedPreconditionError, match="v:0.*initialized"):
            sess.run(doubled)


def test_global_and_subset_initializers():
    g = kf.Graph()
    with g.as_default():
        a = kf.Variable(1.0, name="a")
        b = kf.Variable([2.0, 3.0], name="b")
        total = a + kf.reduce_sum(b)
        init_a = v1.variables_initializer([a])
        init_all = v1.global_variables_initializer()
        assert v1.global_variables() == [a, b]
    with v1.Session(graph=g) as sess:
        sess.run(init_a)
        assert sess.run(a) == 1.0
        with pytest.raises(kf.errors.FailedPreconditionError):
            sess.run(total)
        assert sess.run(init_all) is None
        assert sess.run(total) == 6.0
        np.testing.assert_array_equal(sess.run(b), [2.0, 3.0])


def test_tf1_graph_with_a_variable_and_matmul():
    g = kf.Graph()
    with g.as_default():
        a = kf.constant([[10, 10], [11.0, 1.0]])
        x = kf.constant([[1.0, 0.0], [0.0, 1.0]])
        b = kf.Variable(12.0)
        y = kf.matmul(a, x) + b
        init_op = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init_op)
        np.testing.assert_array_equal(sess.run(y), [[22, 22], [23, 13]])


def test_running_an_assign_updates_the_variable():
    g = kf.Graph()
    with g.as_default():
        v = kf.Variable(1.0, name="v")
        increment = v.assign_add(1.0)
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        assert sess.run(increment) == 2.0
        assert sess.run(increment) == 3.0
        assert sess.run(v) == 3.0


def test_fetching_a_variable_does_not_grow_the_graph():
    g = kf.Graph()
    with g.as_default():
        v = kf.Variable(1.0)
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        before = len(g.get_operations())
        for _ in range(3):
            assert sess.run(v) == 1.0
        assert len(g.get_operations()) == before
        g.finalize()
        assert sess.run(v) == 1.0


# ---------------------------------------------------------------- sessions as defaults

def test_interactive_session_and_eval():
    g = kf.Graph()
    with g.as_default():
        a = kf.constant(2.0) * 3.0
        p = v1.placeholder(kf.float32, (), name="p")
        sess = v1.InteractiveSession()
        try:
            assert a.eval() == 6.0
            assert (a * p).eval({p: 2.0}) == 12.0
            assert v1.get_default_session() is sess
        finally:
            sess.close()
        with pytest.raises(ValueError, match="No default session"):
            a.eval()


def test_session_as_default_and_operation_run():
    g = kf.Graph()
    with g.as_default():
        v = kf.Variable(5.0)
        init = v1.global_variables_initializer()
    sess = v1.Session(graph=g)
    with sess.as_default():
        init.run()
        assert v.eval() == 5.0
    with pytest.raises(ValueError, match="No default session"):
        init.run()


def test_disable_and_enable_eager_execution():
    v1.disable_eager_execution()
    try:
        assert not kf.executing_eagerly()
        p = v1.placeholder(kf.float32, [2], name="p")
        q = p + 1.0
        assert 'Tensor("' in str(q)
        with v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(q, {p: [1.0, 2.0]}), [2.0, 3.0])
    finally:
        v1.enable_eager_execution()
        v1.reset_default_graph()
    assert kf.executing_eagerly()
    assert float(kf.constant(1.0) + 1.0) == 2.0
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        v1.placeholder(kf.float32, [2])


@pytest.mark.parametrize("device", ["/cpu:0", "/gpu:0", "/device:GPU:1", None])
def test_device_strings_are_accepted_with_soft_placement(device):
    g = kf.Graph()
    with g.as_default():
        with kf.device(device):
            y = kf.constant([1.0, 2.0]) * 2.0
    assert y.op.device == (device or "")
    with v1.Session(graph=g, config=v1.ConfigProto(allow_soft_placement=True)) as sess:
        np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])
    with kf.device(device):   # eagerly too
        assert float(kf.reduce_sum(kf.constant([1.0, 2.0]))) == 3.0


def test_session_with_an_unknown_remote_target_is_unimplemented():
    # a target needs a kf.distribute.Server of this process or a cluster_def (on Ray:
    # tests/distribute/test_cluster_session.py)
    with pytest.raises(kf.errors.UnimplementedError, match="distributed.*Server"):
        v1.Session("grpc://localhost:2222")


# ---------------------------------------------------------------- compile cache

def test_session_compiles_once_per_fetches_and_feeds(monkeypatch):
    compiled = []
    real_load = session_module.loader.load

    def counting_load(source, globals_, label):
        compiled.append(source)
        return real_load(source, globals_, label)

    monkeypatch.setattr(session_module.loader, "load", counting_load)
    g, x, n, y, total, scaled = _graph()
    with v1.Session(graph=g) as sess:
        for value in (X, X + 1, X * 0):
            sess.run(total, {x: value})
        assert len(compiled) == 1
        for value in (1, 2):
            sess.run([total, scaled], {x: X, n: value})
        assert len(compiled) == 2
        assert sess.run(total, {x: X + 1}) == 54.0   # the first entry is still used
        assert len(compiled) == 2
        sess.run(total, {y: X})                      # different feeds: new entry
        assert len(compiled) == 3
    assert "def session_run(" in compiled[0]


# ---------------------------------------------------------------- gradients

def test_compat_v1_gradients():
    g = kf.Graph()
    with g.as_default():
        x = v1.placeholder(kf.float64, (None, 3), name="x")
        w = kf.constant(np.arange(6.0).reshape(3, 2))
        loss = kf.reduce_sum(kf.square(kf.matmul(x, w)))
        dx, dw = v1.gradients(loss, [x, w])
        unrelated = v1.placeholder(kf.float64, (), name="u")
        (none,) = v1.gradients(loss, [unrelated])
    assert none is None
    feed = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    wv = np.arange(6.0).reshape(3, 2)
    with v1.Session(graph=g) as sess:
        gx, gw = sess.run([dx, dw], {x: feed})
    np.testing.assert_allclose(gx, 2 * (feed @ wv) @ wv.T)
    np.testing.assert_allclose(gw, feed.T @ (2 * (feed @ wv)))


def test_compat_v1_gradients_through_a_variable():
    g = kf.Graph()
    with g.as_default():
        v = kf.Variable([1.0, 2.0, 3.0])
        loss = kf.reduce_sum(v * v)
        (grad,) = v1.gradients(loss, [v])
        init = v1.global_variables_initializer()
    with v1.Session(graph=g) as sess:
        sess.run(init)
        np.testing.assert_allclose(sess.run(grad), [2.0, 4.0, 6.0])


def test_a_control_dependency_on_an_assert_runs_it():
    # TF1 code guards a value with `with control_dependencies([tf.Assert(...)])`: the Assert
    # must run when the value is fetched (it returned None and the guard was dropped)
    graph = kf.Graph()
    with graph.as_default():
        x = kf.compat.v1.placeholder(kf.float32, [])
        check = kf.debugging.Assert(x > 0, [x])
        with kf.control_dependencies([check]):
            y = kf.identity(x)
    assert check.type == "Assert"
    assert kf.debugging.Assert(True, [1]) is None  # eagerly
    with kf.compat.v1.Session(graph=graph) as sess:
        assert sess.run(y, {x: 2.0}) == 2.0
        with pytest.raises(kf.errors.InvalidArgumentError, match="assertion failed"):
            sess.run(y, {x: -1.0})
