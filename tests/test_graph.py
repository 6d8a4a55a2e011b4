"""Graph IR: TF-style unique names and name scopes, lookups, GraphDef views with control
inputs, printed graph tensors, bool() on symbolic tensors, lint(), the JSON-safe form."""
import json
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.tensor import SymbolicTensor

v1 = kf.compat.v1


def _names(graph):
    return [op.name for op in graph.get_operations()]


# ---------------------------------------------------------------- names

def test_repeated_ops_get_numbered_names():
    g = kf.Graph()
    with g.as_default():
        a = kf.constant([[1.0, 2.0], [3.0, 4.0]])
        b = a + 1.0
        c = b + a
        d = c + b
    assert [t.op.name for t in (b, c, d)] == ["add", "add_1", "add_2"]
    assert _names(g) == ["Const", "Const_1", "add", "add_1", "add_2"]


def test_explicit_names_are_uniquified_too():
    g = kf.Graph()
    with g.as_default():
        a = kf.constant(1.0, name="a")
        b = kf.identity(a, name="out")
        c = kf.identity(a, name="out")
        d = kf.identity(a, name="out")
    assert (a.op.name, b.op.name, c.op.name, d.op.name) == ("a", "out", "out_1", "out_2")


def test_an_explicit_name_that_looks_generated_is_skipped_over():
    g = kf.Graph()
    with g.as_default():
        x = kf.constant(1.0)
        first = kf.identity(x, name="add_1")   # claims 'add_1' before any 'add' exists
        a = kf.add(x, x, name="add")
        b = kf.add(x, x, name="add")          # 'add_1' is taken: must not collide
    assert first.op.name == "add_1"
    assert a.op.name == "add"
    assert b.op.name not in ("add", "add_1")
    assert len(set(_names(g))) == len(_names(g))


def test_name_scopes_prefix_and_are_uniquified():
    g = kf.Graph()
    with g.as_default():
        x = kf.constant([[1.0, 2.0]])
        w = kf.constant([[1.0], [2.0]])
        with kf.name_scope("dense"):
            m1 = kf.matmul(x, w)
        with kf.name_scope("dense"):
            m2 = kf.matmul(x, w)
        with kf.name_scope("outer"):
            with kf.name_scope("inner"):
                m3 = kf.multiply(m1, m2)
            s = kf.add(m1, m2, name="total")
        with kf.name_scope("outer/"):   # trailing slash: re-enter the exact scope
            n = kf.negative(s)
    assert m1.name == "dense/MatMul:0"
    assert m2.name == "dense_1/MatMul:0"
    assert m3.name == "outer/inner/Mul:0"
    assert s.name == "outer/total:0"
    assert n.name == "outer/Neg:0"


def test_name_scope_is_a_no_op_eagerly():
    with kf.name_scope("anything") as scope:
        y = kf.constant(1.0) + 1.0
    assert scope == "anything"
    assert float(y) == 2.0


def test_names_inside_a_function_graph():
    @kf.function
    def f(x):
        with kf.name_scope("dense"):
            return kf.matmul(x, x) + 1.0

    concrete = f.get_concrete_function(kf.TensorSpec([2, 2], kf.float32))
    names = _names(concrete.traced_graph)
    assert names[0] == "x"
    assert "dense/MatMul" in names and "dense/add" in names


def test_variable_initializer_lives_under_the_variable_name():
    g = kf.Graph()
    with g.as_default():
        v = kf.Variable(1.0, name="v")
    assert v.name == "v:0"
    assert v.initializer.name == "v/Assign"


# ---------------------------------------------------------------- lookups

def test_get_operations_and_lookups_by_name():
    g = kf.Graph()
    with g.as_default():
        p = v1.placeholder(kf.float32, (None, 4), name="p")
        left, right = kf.split(p, 2, axis=1)
        y = right * 2.0
    ops = g.get_operations()
    assert [op.type for op in ops] == ["Placeholder", "SplitV", "Const", "Mul"]
    assert g.get_operation_by_name("p") is p.op
    assert g.get_tensor_by_name("p:0") is p
    assert g.get_tensor_by_name(right.name) is right
    assert right.name.endswith(":1") and right.op is left.op
    assert g.get_tensor_by_name(y.name) is y
    assert y.op.type == "Mul"
    assert list(y.op.inputs) == [right, g.get_tensor_by_name("Const:0")]
    # get_operations returns a copy: mutating it does not change the graph
    ops.clear()
    assert len(g.get_operations()) == 4


def test_lookup_errors():
    g = kf.Graph()
    with g.as_default():
        kf.constant(1.0) + 1.0
    with pytest.raises(KeyError, match="'nope' refers to an Operation not in the graph"):
        g.get_operation_by_name("nope")
    with pytest.raises(ValueError, match="Tensor names must be of the form"):
        g.get_tensor_by_name("add")
    with pytest.raises(KeyError, match="has 1 outputs"):
        g.get_tensor_by_name("add:3")
    with pytest.raises(KeyError, match="not in the graph"):
        g.get_tensor_by_name("missing:0")


def test_ops_go_to_the_default_graph_and_mode_is_restored():
    g = kf.Graph()
    assert kf.executing_eagerly()
    with g.as_default():
        assert not kf.executing_eagerly()
        assert v1.get_default_graph() is g
        t = kf.constant(1.0) * 2.0
    assert kf.executing_eagerly()
    assert t.graph is g and t.op in g.get_operations()


def test_tensor_from_another_graph_is_rejected():
    g, h = kf.Graph(), kf.Graph()
    with g.as_default():
        t = kf.constant(1.0) + 1.0
    with h.as_default():
        with pytest.raises(ValueError, match=r"add:0 must be from the same graph") as info:
            kf.identity(t)
    assert "test_graph.py" in str(info.value)


# ---------------------------------------------------------------- GraphDef

def test_graph_def_nodes_have_name_op_input_and_control_inputs():
    g = kf.Graph()
    with g.as_default():
        a = kf.constant([[1.0, 2.0], [3.0, 4.0]], name="a")
        b = kf.add(a, a, name="b")
        with kf.name_scope("dense"):
            m = kf.matmul(a, b)
        with kf.control_dependencies([m, b.op]):
            out = kf.identity(b, name="out")
        parts = kf.split(a, 2, axis=0)
        last = kf.identity(parts[1], name="last")
    nodes = {n.name: n for n in g.as_graph_def().node}
    assert [n.name for n in g.as_graph_def().node] == _names(g)
    assert nodes["a"].op == "Const" and list(nodes["a"].input) == []
    assert nodes["b"].op == "AddV2" and list(nodes["b"].input) == ["a", "a"]
    assert nodes["dense/MatMul"].op == "MatMul"
    assert list(nodes["dense/MatMul"].input) == ["a", "b"]
    assert list(nodes["out"].input) == ["b", "^dense/MatMul", "^b"]
    assert list(nodes["last"].input) == [parts[1].op.name + ":1"]
    assert out.op.control_inputs == [m.op, b.op]
    assert last.op.node_def.name == "last"


def test_control_dependencies_accept_none_and_are_eager_no_ops():
    with kf.control_dependencies([None]):
        assert float(kf.constant(1.0) + 1.0) == 2.0
    g = kf.Graph()
    with g.as_default():
        x = kf.constant(1.0)
        with kf.control_dependencies(None):
            y = kf.identity(x)
    assert y.op.control_inputs == []


def test_function_graph_def_shows_automatic_control_dependencies():
    v = kf.Variable(1.0)

    @kf.function
    def f():
        v.assign(2.0)
        v.assign_add(1.0)
        return v.read_value()

    graph = f.get_concrete_function().graph
    nodes = [n for n in graph.as_graph_def().node if n.op != "Const"]
    assert [n.op for n in nodes] == ["AssignVariableOp", "AssignAddVariableOp",
                                     "ReadVariableOp"]
    assert "^" + nodes[0].name in nodes[1].input
    assert "^" + nodes[1].name in nodes[2].input


# ---------------------------------------------------------------- printing, bool

def test_graph_tensors_print_like_tf():
    g = kf.Graph()
    with g.as_default():
        a = kf.constant([[1.0, 2.0], [3.0, 4.0]])
        y = a + 1.0
        p = v1.placeholder(kf.int32, (None, 3), name="p")
    assert str(y) == 'Tensor("add:0", shape=(2, 2), dtype=float32)'
    assert str(p) == 'Tensor("p:0", shape=(None, 3), dtype=int32)'
    assert isinstance(y, SymbolicTensor) and kf.is_tensor(y)
    assert repr(y.op) == "<tf.Operation 'add' type=AddV2>"


def test_printing_a_tensor_while_tracing(capsys):
    @kf.function
    def f(x):
        y = x + 1.0
        print(y)
        return y

    f(kf.constant([[1.0, 2.0], [3.0, 4.0]]))
    assert capsys.readouterr().out.strip() == 'Tensor("add:0", shape=(2, 2), dtype=float32)'


def test_bool_of_a_graph_tensor_explains_what_to_do():
    g = kf.Graph()
    with g.as_default():
        t = kf.constant(1.0) > 0.0
        with pytest.raises(TypeError) as info:
            bool(t)
    message = str(info.value)
    assert "Greater:0" in message
    assert "bool" in message and "AutoGraph" in message and "cond" in message


def test_bool_of_a_traced_tensor_without_autograph_raises_type_error():
    @kf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError, match="as a Python `bool` is not allowed"):
        f(kf.constant(1.0))


def test_symbolic_tensor_has_no_numpy_value():
    g = kf.Graph()
    with g.as_default():
        t = kf.constant([1.0, 2.0]) * 2.0
        with pytest.raises(NotImplementedError, match="Cannot convert a symbolic"):
            np.asarray(t)
        assert len(t) == 2


# ---------------------------------------------------------------- lint

def _built_graphs():
    g = kf.Graph()
    with g.as_default():
        p = v1.placeholder(kf.float32, (None, 3), name="p")
        w = kf.constant(np.ones((3, 2), np.float32))
        h = kf.tanh(kf.matmul(p, w))
        s = kf.reduce_sum(h, axis=1, keepdims=True)
        with kf.control_dependencies([s]):
            out = kf.concat([h, s], axis=1)
        kf.transpose(out)
        v1.gradients(kf.reduce_sum(out), p)
    yield g

    @kf.function
    def step(x, y):
        with kf.GradientTape() as tape:
            tape.watch(x)
            loss = kf.reduce_mean(kf.square(kf.tanh(x) - y))
        return loss, tape.gradient(loss, x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gradient ops nobody asked for are pruned
        concrete = step.get_concrete_function(kf.TensorSpec([None, 4], kf.float64),
                                              kf.TensorSpec([None, 4], kf.float64))
    yield concrete.traced_graph
    yield concrete.graph


def test_lint_accepts_built_graphs():
    for graph in _built_graphs():
        graph.lint()


def test_lint_catches_out_of_order_and_duplicate_ops():
    g = kf.Graph()
    with g.as_default():
        x = kf.constant(1.0)
        kf.identity(x + 1.0)
    g._operations.reverse()  # deliberately corrupt the order
    with pytest.raises(AssertionError, match="before it is computed"):
        g.lint()
    g._operations.reverse()
    g._operations.append(g._operations[-1])
    with pytest.raises(AssertionError, match="duplicate op name"):
        g.lint()


# ---------------------------------------------------------------- JSON-safe form

def _to_dict_or_skip(graph):
    try:
        from kilnflow.saving.graph_json import graph_to_dict
        return graph_to_dict(graph)
    except ImportError as exc:
        pytest.skip(f"Graph.to_dict is not available yet: {exc}")


def test_dict_form_is_json_safe_and_round_trips():
    g = kf.Graph()
    with g.as_default():
        p = v1.placeholder(kf.float32, (None, 2), name="p")
        with kf.name_scope("dense"):
            y = kf.matmul(p, kf.constant([[1.0], [2.0]])) + 1.0
        with kf.control_dependencies([y]):
            kf.identity(p, name="out")
    data = _to_dict_or_skip(g)
    text = json.dumps(data)
    from kilnflow.saving.graph_json import graph_from_dict
    rebuilt = graph_from_dict(json.loads(text), kf.Graph())
    assert _names(rebuilt) == _names(g)
    before = [(n.name, n.op, list(n.input)) for n in g.as_graph_def().node]
    after = [(n.name, n.op, list(n.input)) for n in rebuilt.as_graph_def().node]
    assert after == before
    rebuilt.lint()
    feed = np.array([[1.0, 1.0], [2.0, 0.0]], np.float32)
    with v1.Session(graph=g) as s1, v1.Session(graph=rebuilt) as s2:
        np.testing.assert_array_equal(s1.run(y.name, {"p:0": feed}),
                                      s2.run(y.name, {"p:0": feed}))
