"""The functional names in every mode: eager == kf.function == compat.v1 Session, gradients
against central finite differences (float64), py_function's run-time semantics (runs on
every call, never pruned, gradients through its tape), and the graph utilities."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.compat import v1

# the tests record what tracing sees, and some leave results unused on purpose
pytestmark = [pytest.mark.filterwarnings("ignore:AutoGraph could not convert"),
              pytest.mark.filterwarnings("ignore:.*only while tracing"),
              pytest.mark.filterwarnings("ignore:.*never used")]

X = np.array([0.3, -0.7, 1.1, 0.5])
M = np.array([[0.3, -0.7], [1.1, 0.5], [-0.4, 0.9]])

# name -> (fn of one float64 tensor returning a scalar, input)
LOSSES = {
    "map_fn": (lambda x: kf.reduce_sum(kf.map_fn(lambda t: kf.sin(t) * t, x)), X),
    "map_fn_rows": (lambda x: kf.reduce_sum(kf.map_fn(lambda r: r * kf.reduce_sum(r), x)), M),
    "map_fn_nested": (lambda x: kf.reduce_sum(kf.map_fn(
        lambda t: (t[0] * t[1], t[0] - t[1]), (x, x * x),
        fn_output_signature=(kf.float64, kf.float64))[0]), X),
    "scan": (lambda x: kf.reduce_sum(kf.scan(lambda a, t: a * t + 1.0, x)), X),
    "scan_reverse_init": (lambda x: kf.reduce_sum(kf.scan(
        lambda a, t: kf.sin(a) + t, x, initializer=kf.constant(0.2, kf.float64),
        reverse=True)), X),
    "foldl": (lambda x: kf.foldl(lambda a, t: a * t + t, x), X),
    "foldr_rows": (lambda x: kf.reduce_sum(kf.foldr(lambda a, r: a * r + r, x)), M),
    "vectorized_map": (lambda x: kf.reduce_sum(kf.vectorized_map(lambda t: kf.exp(t) * t, x)),
                       M),
    "vectorized_map_fallback": (lambda x: kf.reduce_sum(kf.vectorized_map(
        lambda r: kf.reduce_prod(r), x)), M),
    "py_function": (lambda x: kf.reduce_sum(kf.py_function(
        lambda t: kf.sin(t) * t * t, [x], kf.float64) * x), X),
    "recompute_grad": (lambda x: kf.reduce_sum(kf.recompute_grad(
        lambda t: kf.tanh(t) * t)(x)), X),
}


def _tape_grad(fn, x):
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return y, tape.gradient(y, x)


def _finite_differences(fn, x, eps=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = (float(fn(kf.constant(up))) - float(fn(kf.constant(down)))) / (2 * eps)
    return out


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_eager_function_and_session_agree_with_finite_differences(name):
    fn, x = LOSSES[name]
    value, grad = _tape_grad(fn, kf.constant(x))
    f_value, f_grad = kf.function(lambda t: _tape_grad(fn, t))(kf.constant(x))
    graph = kf.Graph()
    with graph.as_default():
        p = v1.placeholder(kf.float64, x.shape)
        y = fn(p)
        dy = v1.gradients(y, p)[0]
        with v1.Session(graph=graph) as sess:
            s_value, s_grad = sess.run([y, dy], {p: x})
    numeric = _finite_differences(fn, x)
    for got in (grad, f_grad, s_grad):
        np.testing.assert_allclose(np.asarray(got), numeric, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose([float(f_value), float(s_value)], [float(value)] * 2,
                               rtol=1e-12)


def test_map_fn_in_a_graph_is_one_while_loop_over_tensor_arrays():
    f = kf.function(lambda x: kf.map_fn(lambda t: t * 2.0, x))
    graph = f.get_concrete_function(kf.TensorSpec([None, 3], kf.float32)).traced_graph
    types = [op.type for op in graph.operations]
    assert types.count("While") + types.count("StatelessWhile") == 1
    out = f.get_concrete_function(kf.TensorSpec([None, 3], kf.float32)).structured_outputs
    assert out.shape.as_list() == [None, 3]
    assert f(kf.ones([4, 3])).numpy().tolist() == [[2.0] * 3] * 4


def test_vectorized_map_runs_elementwise_functions_once_on_the_batch():
    calls = []

    def fn(t):
        calls.append(t.shape)
        return t * 2.0 + 1.0
    out = kf.vectorized_map(fn, kf.constant(M))
    assert calls[-1] == (3, 2)  # the last call saw the whole batch
    np.testing.assert_allclose(out.numpy(), M * 2 + 1)
    graph = kf.function(lambda x: kf.vectorized_map(fn, x)).get_concrete_function(
        kf.constant(M)).traced_graph
    assert not any("While" in op.type for op in graph.operations)


def test_vectorized_map_without_fallback_refuses_a_non_elementwise_fn():
    with pytest.raises(ValueError, match="fallback_to_while_loop"):
        kf.vectorized_map(kf.reduce_sum, kf.constant(M), fallback_to_while_loop=False)


# ---------------------------------------------------------------- py_function at run time

def test_py_function_runs_on_every_call_and_is_never_pruned():
    calls = []

    @kf.function
    def f(x):
        kf.py_function(lambda t: calls.append("py") or t, [x], kf.float32)
        kf.numpy_function(lambda t: calls.append("np") or t, [x], kf.float32)
        kf.numpy_function(lambda t: calls.append("pure") or t, [x], kf.float32,
                          stateful=False)
        return x + 1.0
    f(kf.constant(1.0))
    f(kf.constant(2.0))
    assert calls == ["py", "np", "py", "np"]  # as TF: the stateless unused one is pruned


def test_py_function_sees_eager_values_in_functions_and_sessions():
    seen = []

    def record(t):
        seen.append((type(t).__name__, float(t)))
        return t * 10.0
    f = kf.function(lambda x: kf.py_function(record, [x], kf.float32))
    assert float(f(kf.constant(1.5))) == 15.0
    graph = kf.Graph()
    with graph.as_default():
        p = v1.placeholder(kf.float32, [])
        y = kf.py_function(record, [p], kf.float32)
        assert y.shape.rank is None  # unknown until it runs, as in TF
        with v1.Session(graph=graph) as sess:
            assert sess.run(y, {p: 2.0}) == 20.0
    assert seen == [("EagerTensor", 1.5), ("EagerTensor", 2.0)]


def test_numpy_function_hands_ndarrays_and_has_no_gradient():
    x = kf.constant([1.0, 2.0])
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = kf.numpy_function(lambda a: (type(a).__name__ == "ndarray") * a * a, [x],
                              kf.float32)
    assert y.numpy().tolist() == [1.0, 4.0]
    assert tape.gradient(y, x) is None


def test_py_function_second_order_gradient():
    x = kf.constant([0.4, 1.3], kf.float64)
    with kf.GradientTape() as outer:
        outer.watch(x)
        with kf.GradientTape() as inner:
            inner.watch(x)
            y = kf.py_function(lambda t: t ** 3, [x], kf.float64)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), 6 * x.numpy())


def test_py_function_errors_at_run_time_in_a_function():
    f = kf.function(lambda x: kf.py_function(lambda t: 1 / 0, [x], kf.float32))
    with pytest.raises(errors.UnknownError, match="ZeroDivisionError"):
        f(kf.constant(1.0))


# ---------------------------------------------------------------- graph utilities

def test_ensure_shape_checks_at_run_time_and_sets_the_static_shape():
    f = kf.function(lambda x: kf.ensure_shape(x, [3]),
                    input_signature=[kf.TensorSpec([None], kf.float32)])
    assert f.get_concrete_function().structured_outputs.shape.as_list() == [3]
    with pytest.raises(errors.InvalidArgumentError, match=r"\[2\] is not compatible .*\[3\]"):
        f(kf.constant([1.0, 2.0]))
    with pytest.raises(ValueError):  # known while tracing: TF's ValueError
        kf.function(lambda x: kf.ensure_shape(x, [3]))(kf.constant([1.0, 2.0]))


def test_init_scope_lifts_out_of_functions_and_tapes():
    inside = []

    @kf.function
    def f(x):
        with kf.init_scope():
            inside.append((kf.executing_eagerly(), kf.inside_function()))
        inside.append((kf.executing_eagerly(), kf.inside_function(), kf.is_symbolic_tensor(x)))
        return x
    f(kf.constant(1.0))
    assert inside == [(True, False), (False, True, True)]
    graph = kf.Graph()
    with graph.as_default():
        with kf.init_scope():
            assert kf.constant(1.0).graph is graph  # a compat.v1 graph is where it lifts to
            assert not kf.executing_eagerly() and not kf.inside_function()
    assert not kf.inside_function() and not kf.is_symbolic_tensor(kf.constant(1.0))


def test_current_name_scope_eager_and_in_functions():
    with kf.name_scope("outer"):
        with kf.name_scope("inner"):
            assert kf.get_current_name_scope() == "outer/inner"
        assert kf.get_current_name_scope() == "outer"
    assert kf.get_current_name_scope() == ""
    scopes = []

    @kf.function
    def f():
        with kf.name_scope("a"):
            with kf.name_scope("b"):
                scopes.append(kf.get_current_name_scope())
        return kf.constant(0)
    f()
    assert scopes == ["a/b"]


def test_get_static_value_folds_constants_and_static_shapes_only():
    found = {}

    @kf.function
    def f(x, v):
        found["input"] = kf.get_static_value(x)
        found["shape"] = kf.get_static_value(kf.shape(x))
        found["const"] = kf.get_static_value(kf.constant([1, 2]) * 3)
        found["random"] = kf.get_static_value(kf.random.uniform([2]))
        found["variable"] = kf.get_static_value(v)
        return x
    f(kf.constant([1.0, 2.0, 3.0]), kf.Variable(1.0))
    assert found["input"] is None and found["random"] is None and found["variable"] is None
    assert found["shape"].tolist() == [3] and found["const"].tolist() == [3, 6]
    assert kf.get_static_value([1, 2]) == [1, 2]


def test_group_tuple_no_op_and_identity_n_in_graphs():
    graph = kf.Graph()
    with graph.as_default():
        v = kf.Variable(1.0)
        a = v.assign_add(1.0)
        op = kf.group(a, name="updates")
        assert op.type == "NoOp" and kf.no_op().type == "NoOp"
        x, none = kf.tuple([kf.constant(2.0), None])
        assert none is None and x.op.type == "Identity" and x.op.control_inputs
        i, j = kf.identity_n([kf.constant(1.0), kf.constant(2)])
        with v1.Session(graph=graph) as sess:
            sess.run(v.initializer)
            sess.run(op)
            assert sess.run(v) == 2.0 and sess.run([i, j]) == [1.0, 2]
    assert kf.group(kf.constant(1)) is None and kf.no_op() is None
    assert [int(t) for t in kf.tuple([kf.constant(3)])] == [3]


# ---------------------------------------------------------------- gradient utilities

def test_gradients_and_hessians_in_sessions():
    graph = kf.Graph()
    with graph.as_default():
        p = v1.placeholder(kf.float64, [2])
        y = kf.reduce_sum(p ** 3) * p[0]
        g = kf.gradients(y, p)[0]
        h = kf.hessians(y, p)[0]
        with v1.Session(graph=graph) as sess:
            g_val, h_val = sess.run([g, h], {p: [1.0, 2.0]})
    assert g_val.tolist() == [1 + 3 + 8, 12.0]
    assert h_val.tolist() == [[12.0, 12.0], [12.0, 12.0]]
    with pytest.raises(RuntimeError, match="GradientTape"):
        kf.gradients(kf.constant(1.0), kf.constant(1.0))


def test_register_gradient_refuses_ops_that_have_a_gradient():
    from kilnflow.autodiff.accumulate import REGISTERED_GRADIENTS
    with pytest.raises(KeyError, match="two gradient"):
        kf.RegisterGradient("Square")
    with pytest.raises(KeyError):
        kf.no_gradient("MatMul")
    with pytest.raises(TypeError, match="string"):
        kf.RegisterGradient(3)
    kf.no_gradient("NotAnOpYet_functional_test")  # TF accepts names of unknown ops
    assert REGISTERED_GRADIENTS.pop("NotAnOpYet_functional_test") is None


def test_registered_gradient_is_used_for_an_op_declared_without_one():
    from kilnflow.core.opdef import REGISTRY, bind, defop
    from kilnflow.shapes import TensorSpec
    from kilnflow.autodiff.accumulate import REGISTERED_GRADIENTS
    name = "FunctionalTestTriple"
    op = REGISTRY.get(name) or defop(name, shape=lambda x: TensorSpec(x.shape, x.dtype),
                                     kernel=lambda x: 3 * x)
    try:
        @kf.RegisterGradient(name)
        def _triple_grad(record, dy):
            return [3.0 * dy]
        x = kf.constant(2.0)
        with kf.GradientTape() as tape:
            tape.watch(x)
            y = bind(op, (x,))
        assert float(tape.gradient(y, x)) == 3.0
    finally:
        REGISTERED_GRADIENTS.pop(name, None)
        REGISTRY.pop(name, None)


def test_aggregation_method_values_are_tf_s():
    m = kf.AggregationMethod
    assert (m.ADD_N, m.DEFAULT, m.EXPERIMENTAL_TREE, m.EXPERIMENTAL_ACCUMULATE_N) == (0, 0, 1, 2)


def test_recompute_grad_with_variables_still_reaches_them():
    v = kf.Variable(2.0)
    f = kf.recompute_grad(lambda x: x * v)
    with kf.GradientTape() as tape:
        y = f(kf.constant(3.0))
    assert float(tape.gradient(y, v)) == 3.0


# ---------------------------------------------------------------- initializers and types

def test_initializers_configs_and_variables():
    for cls, config in [(kf.constant_initializer, {"value": 0}), (kf.zeros_initializer, {}),
                        (kf.ones_initializer, {}),
                        (kf.random_normal_initializer, {"mean": 0.0, "stddev": 0.05,
                                                        "seed": None}),
                        (kf.random_uniform_initializer, {"minval": -0.05, "maxval": 0.05,
                                                         "seed": None})]:
        init = cls()
        assert init.get_config() == config  # TF 2.21's defaults
        assert type(cls.from_config(config)) is cls
    v = kf.Variable(kf.random_uniform_initializer(-1.0, 1.0, seed=3)([4, 2]))
    assert v.shape == (4, 2) and np.all(np.abs(v.numpy()) <= 1.0)
    a = kf.random_normal_initializer(seed=5)([3])
    b = kf.random_normal_initializer(seed=5)([3])
    assert a.dtype == kf.float32 and a.shape == (3,)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_types_experimental_names():
    t = kf.types.experimental
    f = kf.function(lambda x: x)
    concrete = f.get_concrete_function(kf.constant(1.0))
    assert isinstance(f, t.PolymorphicFunction) and isinstance(f, t.GenericFunction)
    assert isinstance(f, t.Callable) and isinstance(concrete, t.ConcreteFunction)
    assert not isinstance(concrete, t.AtomicFunction)
    assert t.distributed.PerReplica.__name__ == "PerReplica"
    assert kf.Tensor in t.TensorLike.__args__
    assert list(t.FunctionType.from_callable(lambda a, b=1: a).parameters) == ["a", "b"]


def test_gradients_stop_gradients_hold_tensors_constant():
    # TF's documented example: both partials are 1 when a and b are held constant
    graph = kf.Graph()
    with graph.as_default():
        a = kf.constant(0.0)
        b = 2 * a
        g = kf.gradients(a + b, [a, b], stop_gradients=[a, b])
        x = v1.placeholder(kf.float32, [])
        h = x * x
        k = kf.gradients(h * x, x, stop_gradients=[h])[0]
        with v1.Session(graph=graph) as sess:
            assert sess.run(g) == [1.0, 1.0]
            assert sess.run(k, {x: 3.0}) == 9.0


def test_map_fn_scan_and_ensure_shape_survive_a_saved_model(tmp_path):
    class M(kf.Module):
        @kf.function(input_signature=[kf.TensorSpec([None, 2], kf.float32)])
        def f(self, x):
            return kf.scan(lambda a, t: a + t,
                           kf.map_fn(lambda t: kf.ensure_shape(t * 2.0, [2]), x))
    kf.saved_model.save(M(), str(tmp_path))
    loaded = kf.saved_model.load(str(tmp_path))
    assert loaded.f(kf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist() == \
        [[2.0, 4.0], [8.0, 12.0]]


def test_a_py_function_cannot_be_saved(tmp_path):
    # its Python function is not data: saving refuses it instead of writing a model that
    # would fail when loaded
    class M(kf.Module):
        @kf.function(input_signature=[kf.TensorSpec([], kf.float32)])
        def f(self, x):
            return kf.py_function(lambda a: a * 2.0, [x], kf.float32)
    with pytest.raises(TypeError, match="serialize"):
        kf.saved_model.save(M(), str(tmp_path))


def test_tf1_mode_py_function_map_fn_and_gradients():
    v1.disable_eager_execution()
    try:
        p = v1.placeholder(kf.float32, [2])
        y = kf.py_function(lambda t: kf.reduce_sum(t) * t, [p], kf.float32)
        m = kf.map_fn(lambda t: t * 3.0, p)
        g = kf.gradients(kf.reduce_sum(y), p)[0]
        with v1.Session() as sess:
            values = sess.run([y, m, g], {p: [1.0, 2.0]})
    finally:
        v1.enable_eager_execution()
    assert [v.tolist() for v in values] == [[3.0, 6.0], [3.0, 6.0], [6.0, 6.0]]
