"""kf.while_loop eagerly and inside @kf.function with equal results; in a graph, a While op
emitted as a Python `while True:` in the generated code."""
import pytest

import kilnflow as kf
from tests.ops.modes import eager_and_function, generated_code, op_types

F32 = kf.float32


# ---------------------------------------------------------------- while_loop

def count_to(n):
    return kf.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + kf.cast(i, F32)),
                         (kf.constant(0), kf.constant(0.)))


def test_while_loop_eager_and_function():
    i, s = eager_and_function(count_to, kf.constant(5))
    assert int(i) == 5 and float(s) == 10.


def test_while_loop_single_loop_var():
    doubled = lambda x: kf.while_loop(lambda v: v < 100., lambda v: v * 2., x)  # noqa: E731
    assert float(eager_and_function(doubled, kf.constant(3.))) == 192.


def nested_loop_vars(n):
    start = (kf.constant(0), {"a": kf.constant(1.), "pair": [kf.constant(0), kf.constant(1)]})

    def body(i, state):
        a, (x, y) = state["a"], state["pair"]
        return i + 1, {"a": a * 2., "pair": [y, x + y]}

    return kf.while_loop(lambda i, state: i < n, body, start)


def test_while_loop_with_nested_structures():
    i, state = eager_and_function(nested_loop_vars, kf.constant(6))
    assert float(state["a"]) == 64. and [int(v) for v in state["pair"]] == [8, 13]
    assert isinstance(state["pair"], list)


def capped(n):
    return kf.while_loop(lambda i: i < n, lambda i: (i + 1,), [kf.constant(0)],
                         maximum_iterations=4, parallel_iterations=1, back_prop=True,
                         swap_memory=False)


@pytest.mark.parametrize("n, expected", [(10, 4), (2, 2)], ids=["capped", "not_reached"])
def test_while_loop_maximum_iterations(n, expected):
    result = eager_and_function(capped, kf.constant(n))
    assert int(result[0]) == expected


def growing(n):
    return kf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, kf.concat([x, x + 1.], 0)),
                         (kf.constant(0), kf.constant([0.])),
                         shape_invariants=(kf.TensorShape([]), kf.TensorShape([None])))


def test_while_loop_shape_invariants():
    i, x = eager_and_function(growing, kf.constant(3))
    assert x.numpy().tolist() == [0., 1., 1., 2., 1., 2., 2., 3.]
    concrete = kf.function(growing).get_concrete_function(kf.constant(3))
    assert concrete.traced_graph.outputs[1].shape.as_list() == [None]


def test_while_loop_shape_change_without_invariant_is_an_error():
    bad = lambda n: kf.while_loop(  # noqa: E731
        lambda i, x: i < n, lambda i, x: (i + 1, kf.concat([x, x], 0)),
        (kf.constant(0), kf.constant([0.])))
    with pytest.raises(ValueError, match="shape_invariants"):
        kf.function(bad)(kf.constant(3))


def test_while_loop_dtype_change_is_an_error():
    bad = lambda n: kf.while_loop(  # noqa: E731
        lambda i: i < n, lambda i: (kf.cast(i, F32),), [kf.constant(0)])
    with pytest.raises(TypeError, match="must keep its dtype"):
        kf.function(bad)(kf.constant(3))


def test_while_loop_in_a_graph_is_python_while_true_in_the_code():
    assert op_types(count_to, kf.constant(5)) & {"While", "StatelessWhile"}
    code = generated_code(count_to, kf.constant(5))
    assert "while True:" in code and "break" in code
    code = generated_code(capped, kf.constant(5))
    assert "while True:" in code and ">= 4" in code  # the iteration cap


def nested_while(n):
    def outer_body(i, total):
        inner = kf.while_loop(lambda j, t: j < i, lambda j, t: (j + 1, t + j),
                              (kf.constant(0), total))
        return i + 1, inner[1]
    return kf.while_loop(lambda i, total: i < n, outer_body, (kf.constant(0), kf.constant(0)))


def test_nested_while_loops():
    i, total = eager_and_function(nested_while, kf.constant(5))
    assert int(total) == 10
    assert generated_code(nested_while, kf.constant(5)).count("while True:") == 2


def cond_in_while(n):
    return kf.while_loop(
        lambda i, x: i < n,
        lambda i, x: (i + 1, kf.cond(x > 10., lambda: x / 2., lambda: x * 3.)),
        (kf.constant(0), kf.constant(1.)))


def test_cond_inside_while_loop():
    eager_and_function(cond_in_while, kf.constant(7))
    code = generated_code(cond_in_while, kf.constant(7))
    assert "while True:" in code and "        if " in code
