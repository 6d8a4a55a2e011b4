"""Control-flow ops used directly: kf.cond, kf.while_loop, kf.case, kf.switch_case,
kf.TensorArray and kf.Assert, eagerly and inside @kf.function with equal results.

In a graph, cond / while_loop are If / While ops whose branches and bodies are
subgraphs; the runtime emits them as a Python `if` / `while True:` in the generated
source (checked on `concrete.code`).
"""
import numpy as np
import pytest

import kilnflow as kf

F32 = kf.float32


def flat(value):
    """Nested lists / tuples / dicts of tensors -> a flat list of NumPy arrays."""
    if isinstance(value, dict):
        return [a for key in sorted(value) for a in flat(value[key])]
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in flat(item)]
    return [np.asarray(value)]


def structure(value):
    if isinstance(value, dict):
        return {key: structure(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(structure(v) for v in value)
    return "leaf"


def eager_and_function(fn, *args):
    """fn(*args) eagerly and under @kf.function: same structure, dtypes and values."""
    eager = fn(*args)
    compiled = kf.function(fn)(*args)
    assert structure(compiled) == structure(eager)
    for got, expected in zip(flat(compiled), flat(eager)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    return eager


def generated_code(fn, *args):
    return kf.function(fn).get_concrete_function(*args).code


def op_types(fn, *args):
    graph = kf.function(fn).get_concrete_function(*args).traced_graph
    return {op.type for op in graph.operations}


# ---------------------------------------------------------------- cond

def cond_pair(x):
    return kf.cond(kf.reduce_sum(x) > 0., lambda: (x * 2., {"n": kf.size(x)}),
                   lambda: (-x, {"n": kf.constant(0)}))


@pytest.mark.parametrize("values", [[1., 2.], [-1., -2.]], ids=["true", "false"])
def test_cond_with_nested_outputs(values):
    result = eager_and_function(cond_pair, kf.constant(values))
    assert isinstance(result, tuple) and set(result[1]) == {"n"}


def cond_captures(x, y):
    scale = y * 3.
    return kf.cond(x > y, lambda: x * scale, lambda: kf.square(scale - x))


@pytest.mark.parametrize("x", [5., -5.], ids=["true", "false"])
def test_cond_branches_capture_outer_tensors(x):
    eager_and_function(cond_captures, kf.constant(x), kf.constant(1.5))


def test_cond_with_python_predicate_runs_one_branch():
    assert kf.cond(True, lambda: 1, lambda: 2) == 1
    calls = []
    kf.cond(kf.constant(False), lambda: calls.append("true"), lambda: calls.append("false"))
    assert calls == ["false"]


def test_cond_in_a_graph_is_an_if_op_and_a_python_if_in_the_code():
    x = kf.constant([1., 2.])
    assert op_types(cond_pair, x) & {"If", "StatelessIf"}
    code = generated_code(cond_pair, x)
    assert "\n    if " in code and "\n    else:" in code


def nested_cond(x):
    return kf.cond(x > 0., lambda: kf.cond(x > 10., lambda: x * 100., lambda: x * 10.),
                   lambda: -x)


@pytest.mark.parametrize("x", [20., 5., -3.], ids=["big", "small", "negative"])
def test_nested_cond(x):
    eager_and_function(nested_cond, kf.constant(x))


def test_cond_errors():
    with pytest.raises(TypeError, match="pred must be a bool tensor"):
        kf.function(lambda x: kf.cond(x, lambda: x, lambda: x))(kf.constant(1))
    with pytest.raises(ValueError, match="same structure"):
        kf.function(lambda x: kf.cond(x > 0, lambda: (x, x), lambda: x))(kf.constant(1))
    with pytest.raises(TypeError, match="same dtypes"):
        kf.function(lambda x: kf.cond(x > 0, lambda: x, lambda: kf.cast(x, F32)))(
            kf.constant(1))
    with pytest.raises(TypeError, match="required"):
        kf.cond(kf.constant(True), lambda: 1)


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


# ---------------------------------------------------------------- case / switch_case

def case_of(x):
    return kf.case([(x < 0, lambda: kf.constant(-1)), (kf.equal(x, 0), lambda: kf.constant(0))],
                   default=lambda: kf.constant(1))


@pytest.mark.parametrize("x, expected", [(-5, -1), (0, 0), (5, 1)])
def test_case_with_default(x, expected):
    assert int(eager_and_function(case_of, kf.constant(x))) == expected


def case_first_true(x):
    return kf.case(((x > 5, lambda: x * 10), (x > 0, lambda: x + 100), (x > -5, lambda: x)),
                   default=lambda: x * 0)


@pytest.mark.parametrize("x, expected", [(7, 70), (3, 103), (-1, -1), (-9, 0)])
def test_case_picks_the_first_true_predicate(x, expected):
    assert int(eager_and_function(case_first_true, kf.constant(x))) == expected


def test_case_without_default_uses_the_last_pair():
    f = lambda x: kf.case([(x > 0, lambda: kf.constant(1)),  # noqa: E731
                           (x < 0, lambda: kf.constant(2))])
    assert int(eager_and_function(f, kf.constant(5))) == 1
    assert int(eager_and_function(f, kf.constant(0))) == 2


def test_case_exclusive_with_two_true_predicates_is_an_error():
    f = lambda x: kf.case([(x > 0, lambda: kf.constant(1)),  # noqa: E731
                           (x > 1, lambda: kf.constant(2))], exclusive=True)
    try:
        kf.function(f)(kf.constant(5))
    except kf.errors.InvalidArgumentError:
        return
    raise AssertionError("no error for two true predicates with exclusive=True")


def switch(i):
    return kf.switch_case(i, [lambda: kf.constant(10.), lambda: kf.constant(20.),
                              lambda: kf.constant(30.)])


@pytest.mark.parametrize("i, expected", [(0, 10.), (2, 30.), (7, 30.), (-1, 30.)],
                         ids=["first", "last", "above_range", "negative"])
def test_switch_case_out_of_range_runs_the_last_branch(i, expected):
    assert float(eager_and_function(switch, kf.constant(i))) == expected


def switch_with_default(i):
    return kf.switch_case(i, {1: lambda: kf.constant(1.), 3: lambda: kf.constant(3.)},
                          default=lambda: kf.constant(-1.))


@pytest.mark.parametrize("i, expected", [(1, 1.), (3, 3.), (2, -1.)])
def test_switch_case_with_a_dict_and_default(i, expected):
    assert float(eager_and_function(switch_with_default, kf.constant(i))) == expected


def test_switch_case_in_a_graph_builds_if_ops():
    assert op_types(switch, kf.constant(0)) & {"If", "StatelessIf"}


# ---------------------------------------------------------------- TensorArray

def tensor_array_ops(x, indices):
    ta = kf.TensorArray(F32, size=4, element_shape=[2])
    ta = ta.write(0, x[0]).write(1, x[1])
    ta = ta.scatter([2, 3], x * 10.)
    unstacked = kf.TensorArray(F32, size=0, dynamic_size=True).unstack(x * 2.)
    return {"stack": ta.stack(), "read": ta.read(2), "gather": ta.gather(indices),
            "size": ta.size(), "unstacked": unstacked.stack(), "unstacked_read":
            unstacked.read(1), "unstacked_size": unstacked.size(), "concat": ta.concat()}


def test_tensor_array_operations_eager_and_function():
    x = kf.constant([[1., 2.], [3., 4.]])
    result = eager_and_function(tensor_array_ops, x, kf.constant([3, 0]))
    assert result["stack"].numpy().tolist() == [[1., 2.], [3., 4.], [10., 20.], [30., 40.]]
    assert result["gather"].numpy().tolist() == [[30., 40.], [1., 2.]]
    assert result["read"].numpy().tolist() == [10., 20.]
    assert int(result["size"]) == 4 and int(result["unstacked_size"]) == 2
    assert result["unstacked_read"].numpy().tolist() == [6., 8.]
    assert result["concat"].shape == (8,)


def dynamic_writes(v):
    ta = kf.TensorArray(F32, size=0, dynamic_size=True, element_shape=[])
    ta = ta.write(0, v).write(3, v * 4.)
    return ta.stack(), ta.size()


def test_dynamic_size_grows_on_write_and_unwritten_elements_are_zero():
    stacked, size = eager_and_function(dynamic_writes, kf.constant(1.5))
    assert stacked.numpy().tolist() == [1.5, 0., 0., 6.] and int(size) == 4


def test_element_shape_and_dtype():
    ta = kf.TensorArray(kf.int32, size=2, element_shape=[3])
    assert ta.element_shape.as_list() == [3] and ta.dtype == kf.int32
    assert ta.stack().shape == (2, 3)
    empty = kf.TensorArray(F32, size=0, element_shape=[3])
    assert empty.stack().shape == (0, 3)
    inferred = kf.TensorArray(F32, size=1).write(0, [1., 2.])
    assert inferred.element_shape.as_list() == [2]


def test_writing_a_wrong_element_shape_is_an_error():
    ta = kf.TensorArray(F32, size=2, element_shape=[2])
    with pytest.raises(kf.errors.InvalidArgumentError, match="shape"):
        ta.write(0, [1., 2., 3.]).stack()


def symbolic_size(n):
    ta = kf.TensorArray(F32, size=n, element_shape=[])
    return ta.write(1, 2.).stack(), ta.size()


def test_symbolic_size_and_index():
    stacked, size = eager_and_function(symbolic_size, kf.constant(3))
    assert stacked.numpy().tolist() == [0., 2., 0.] and int(size) == 3
    def write_at(i, v):
        return kf.TensorArray(F32, size=3, element_shape=[]).write(i, v).stack()
    assert eager_and_function(write_at, kf.constant(2), kf.constant(5.)).numpy().tolist() \
        == [0., 0., 5.]


def tensor_array_in_while_loop(n):
    ta = kf.TensorArray(F32, size=n, element_shape=[])
    _, ta = kf.while_loop(lambda i, ta: i < n,
                          lambda i, ta: (i + 1, ta.write(i, kf.cast(i * i, F32))),
                          (kf.constant(0), ta))
    return ta.stack()


def test_tensor_array_as_a_while_loop_variable():
    result = eager_and_function(tensor_array_in_while_loop, kf.constant(4))
    assert result.numpy().tolist() == [0., 1., 4., 9.]


def test_write_past_the_size_of_a_fixed_size_array_is_an_error():
    with pytest.raises((kf.errors.InvalidArgumentError, ValueError, IndexError)):
        kf.TensorArray(F32, size=2).write(5, 1.).stack()


def test_scatter_with_tensor_indices_in_a_function():
    def scatter(i, v):
        return kf.TensorArray(F32, size=3, element_shape=[]).scatter(i, v).stack()
    eager_and_function(scatter, kf.constant([0, 2]), kf.constant([1., 2.]))


def test_tensor_array_without_element_shape_in_a_graph_while_loop():
    def fill(n):
        ta = kf.TensorArray(F32, size=0, dynamic_size=True)
        return kf.while_loop(lambda i, ta: i < n,
                             lambda i, ta: (i + 1, ta.write(i, kf.cast(i, F32))),
                             (kf.constant(0), ta))[1].stack()
    eager_and_function(fill, kf.constant(3))


# ---------------------------------------------------------------- Assert

def test_assert_eagerly_raises_with_its_data():
    kf.Assert(kf.constant(True), ["never shown"])
    with pytest.raises(kf.errors.InvalidArgumentError, match=r"x is\] \[\[1 2\]\]"):
        kf.Assert(kf.constant(False), ["x is", kf.constant([1, 2])])
    assert kf.debugging.Assert is kf.Assert


def checked_sqrt(x):
    kf.Assert(kf.reduce_all(x >= 0.), ["negative input:", x])
    return kf.sqrt(x)


def test_assert_in_a_function_runs_on_every_call():
    f = kf.function(checked_sqrt)
    assert f(kf.constant([4., 9.])).numpy().tolist() == [2., 3.]
    with pytest.raises(kf.errors.InvalidArgumentError, match="negative input"):
        f(kf.constant([4., -9.]))
    assert f(kf.constant([1., 16.])).numpy().tolist() == [1., 4.]  # the same trace
    assert "Assert" in op_types(checked_sqrt, kf.constant([4., 9.]))


def test_assert_inside_a_loop_body_checks_every_iteration():
    def loop(xs):
        def body(i, s):
            kf.Assert(xs[i] > 0., ["element", i, "is not positive"])
            return i + 1, s + xs[i]
        return kf.while_loop(lambda i, s: i < kf.shape(xs)[0], body,
                             (kf.constant(0), kf.constant(0.)))[1]

    f = kf.function(loop)
    assert float(f(kf.constant([1., 2., 3.]))) == 6.
    with pytest.raises(kf.errors.InvalidArgumentError, match="is not positive"):
        f(kf.constant([1., 2., -3.]))


def test_tensor_array_writes_at_tensor_indices_leave_nothing_to_prune(recwarn):
    def write_at(i, v):
        return kf.TensorArray(F32, size=3, element_shape=[]).write(i, v).stack()
    kf.function(write_at)(kf.constant(2), kf.constant(5.))
    assert not [w for w in recwarn if "never used" in str(w.message)]
