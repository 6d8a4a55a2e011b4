"""Converted code on tensors: eager tensors keep Python semantics; graph tensors
inside kf.function become cond / while ops. Graph tests skip until kf.cond and
kf.while_loop exist (TensorArray and Assert tests likewise)."""
import traceback

import pytest

import kilnflow as kf
from kilnflow import autograph
from kilnflow.autograph import api
from kilnflow.autograph.operators import records

needs_graph_ops = pytest.mark.skipif(
    not (hasattr(kf, "cond") and hasattr(kf, "while_loop") and hasattr(kf, "function")),
    reason="kf.cond / kf.while_loop not available yet")
needs_tensor_array = pytest.mark.skipif(not hasattr(kf, "TensorArray"),
                                        reason="kf.TensorArray not available yet")
needs_assert = pytest.mark.skipif(
    not (hasattr(kf, "Assert") or hasattr(getattr(kf, "debugging", None), "Assert")),
    reason="kf.Assert not available yet")


def sum_to(n):
    s = 0
    i = 0
    while i < n:
        s = s + i
        i += 1
    return s


def absval(x):
    if x < 0:
        x = -x
    return x


def sign(x):
    if x > 0:
        return 1.
    return -1.


def break_at(n, limit):
    s = 0
    for i in kf.range(n):
        if s > limit:
            break
        s += i
    return s


def odd_sum(n):
    s = 0
    for i in kf.range(n):
        if i % 2 == 0:
            continue
        s += i
    return s


def row_sums(xs):
    total = kf.constant(0.)
    for row in xs:
        total = total + kf.reduce_sum(row)
    return total


def first_negative(xs):
    for i in kf.range(kf.shape(xs)[0]):
        if xs[i] < 0:
            return i
    return -1


def python_loop_tensor_break(x):
    s = 0.
    for v in [1., 2., 3., 4.]:
        if s + v > x:
            break
        s += v
    return s


def python_then_tensor(x):
    s = 0.
    i = 0
    while i < 3:
        s = s + x
        i = i + kf.constant(1)
    return s


def logic(a, b):
    return a > 0 and b > 0, a > 0 or b > 0, not a > 0, a if a > b else b


def python_loop_in_graph(x):
    for _ in range(3):
        x = x * 2.
    return x


def one_branch(x):
    if x > 0:
        y = 1
    return y


def dtype_changes(n):
    x = 0
    for i in kf.range(n):
        x = kf.cast(x, kf.float32) + 0.5
    return x


def shape_changes(n):
    x = kf.constant([1.])
    for i in kf.range(n):
        x = kf.concat([x, x], 0)
    return x


def grows(n):
    x = kf.constant([1.])
    for i in kf.range(n):
        autograph.experimental.set_loop_options(shape_invariants=[(x, [None])])
        x = kf.concat([x, x], 0)
    return x


def capped(n):
    i = 0
    while i < n:
        autograph.experimental.set_loop_options(maximum_iterations=3)
        i += 1
    return i


def defined_in_loop(n):
    for i in kf.range(n):
        y = i
    return y


def collect(n):
    out = []
    for i in kf.range(n):
        out.append(i * 2)
    return out


def keep_positive(xs):
    out = []
    for x in xs:
        if x > 0:
            out.append(x)
    return out


def first_negative_pair(xs):
    for i in kf.range(kf.shape(xs)[0]):
        if xs[i] < 0:
            return i, xs[i]
    return -1, 0.


def nested_loops(n):
    total = 0
    for i in range(n):  # range of a tensor is kf.range
        j = 0
        while j < i:
            total += j
            j += 1
    return total


def fibonacci_pair(n):
    pair = (kf.constant(0), kf.constant(1))
    for _ in kf.range(n):
        pair = (pair[1], pair[0] + pair[1])
    return pair[0]


def checked(x):
    assert x > 0, "x must be positive"
    return x + 1


def op_types(fn, *args):
    concrete = kf.function(fn).get_concrete_function(*args)
    return {op.type for op in concrete.graph.get_operations()}


# ---------------------------------------------------------------- eager tensors

def test_eager_tensors_run_with_python_semantics():
    converted = api.convert(absval)
    assert float(converted(kf.constant(-3.))) == 3.0
    assert float(converted(kf.constant(2.))) == 2.0
    assert int(api.convert(sum_to)(kf.constant(5))) == 10
    line = absval.__code__.co_firstlineno + 1
    assert "eager" in records.lookup(absval.__code__.co_filename, line)["if"]


# ---------------------------------------------------------------- graph tensors

@needs_graph_ops
def test_tensor_while_becomes_a_while_op():
    assert int(kf.function(sum_to)(kf.constant(5))) == 10
    assert any("While" in t for t in op_types(sum_to, kf.constant(5)))


@needs_graph_ops
def test_tensor_if_becomes_a_cond_op():
    f = kf.function(absval)
    assert float(f(kf.constant(-3.))) == 3.0 and float(f(kf.constant(2.))) == 2.0
    assert any(t.endswith("If") for t in op_types(absval, kf.constant(1.)))


@needs_graph_ops
def test_early_return_in_tensor_if():
    f = kf.function(sign)
    assert float(f(kf.constant(-3.))) == -1.0 and float(f(kf.constant(2.))) == 1.0


@needs_graph_ops
def test_break_and_continue_in_tensor_loops():
    assert int(kf.function(break_at)(kf.constant(10), kf.constant(5))) == 6
    assert int(kf.function(odd_sum)(kf.constant(6))) == 9


@needs_graph_ops
def test_for_over_tensor_rows():
    f = kf.function(row_sums)
    assert float(f(kf.constant([[1., 2.], [3., 4.]]))) == 10.0


@needs_graph_ops
def test_return_inside_tensor_loop():
    f = kf.function(first_negative)
    assert int(f(kf.constant([1., 2., -3., 4.]))) == 2
    assert int(f(kf.constant([1., 2.]))) == -1


@needs_graph_ops
def test_tensor_break_in_python_loop_gates_later_iterations():
    f = kf.function(python_loop_tensor_break)
    assert float(f(kf.constant(4.))) == 3.0
    assert float(f(kf.constant(100.))) == 10.0


@needs_graph_ops
def test_python_loop_switches_to_a_while_op_when_its_test_becomes_a_tensor():
    assert float(kf.function(python_then_tensor)(kf.constant(2.))) == 6.0


@needs_graph_ops
def test_logical_operators_and_ternary_on_tensors():
    values = kf.function(logic)(kf.constant(1.), kf.constant(-2.))
    assert [bool(v) for v in values[:3]] == [False, True, False]
    assert float(values[3]) == 1.0


@needs_graph_ops
def test_python_loops_unroll_inside_graphs():
    assert float(kf.function(python_loop_in_graph)(kf.constant(1.))) == 8.0
    assert not any("While" in t for t in op_types(python_loop_in_graph, kf.constant(1.)))


def _user_line(fn, offset):
    return f'"{fn.__code__.co_filename}", line {fn.__code__.co_firstlineno + offset}'


@needs_graph_ops
def test_variable_set_in_one_branch_only_names_the_line():
    with pytest.raises(ValueError, match="'y' must also be initialized in the else branch") \
            as info:
        kf.function(one_branch)(kf.constant(1))
    assert _user_line(one_branch, 1) in str(info.value)


@needs_graph_ops
def test_loop_variable_changing_dtype_names_the_line():
    with pytest.raises(TypeError, match="'x' has dtype int32 before the loop") as info:
        kf.function(dtype_changes)(kf.constant(3))
    assert _user_line(dtype_changes, 2) in str(info.value)


@needs_graph_ops
def test_loop_variable_changing_shape_names_the_line():
    with pytest.raises(ValueError, match="'x' has shape") as info:
        kf.function(shape_changes)(kf.constant(3))
    assert _user_line(shape_changes, 2) in str(info.value)


@needs_graph_ops
def test_variable_first_defined_in_a_tensor_loop():
    assert int(kf.function(defined_in_loop)(kf.constant(3))) == 2
    with pytest.raises(kf.errors.InvalidArgumentError, match="initialize y"):
        kf.function(defined_in_loop)(kf.constant(0))


@needs_graph_ops
def test_symbolic_tensor_as_python_bool_points_at_the_users_line():
    def uses_bool(x):
        return bool(x > 0)

    with pytest.raises(TypeError) as info:
        kf.function(uses_bool)(kf.constant(1.))
    frames = [f for f in traceback.extract_tb(info.value.__traceback__)
              if f.filename == __file__]
    assert frames[-1].line == "return bool(x > 0)"


@needs_graph_ops
@needs_tensor_array
def test_list_appended_in_tensor_loop_becomes_a_stacked_tensor():
    result = kf.function(collect)(kf.constant(4))
    assert result.numpy().tolist() == [0, 2, 4, 6]


@needs_graph_ops
@needs_assert
def test_assert_on_tensor_becomes_an_assert_op():
    assert float(kf.function(checked)(kf.constant(1.))) == 2.0
    with pytest.raises(Exception, match="x must be positive"):
        kf.function(checked)(kf.constant(-1.))


@needs_graph_ops
def test_nested_tensor_loops_and_range_of_a_tensor():
    assert int(kf.function(nested_loops)(kf.constant(5))) == 10


@needs_graph_ops
def test_structured_loop_state():
    assert int(kf.function(fibonacci_pair)(kf.constant(10))) == 55


@needs_graph_ops
def test_returning_a_tuple_from_a_tensor_loop():
    f = kf.function(first_negative_pair)
    i, v = f(kf.constant([1., -2., 3.]))
    assert (int(i), float(v)) == (1, -2.0)
    i, v = f(kf.constant([1., 3.]))
    assert (int(i), float(v)) == (-1, 0.0)


@needs_graph_ops
@needs_tensor_array
def test_conditional_append_in_tensor_loop():
    f = kf.function(keep_positive)
    assert f(kf.constant([1., -2., 3.])).numpy().tolist() == [1.0, 3.0]
    assert f(kf.constant([-1., -2.])).numpy().tolist() == []


@needs_graph_ops
def test_ops_built_only_to_decide_are_named_as_such():
    """A while loop's first test is evaluated to choose Python or graph; when a while op
    is built that evaluation feeds nothing and sits under autograph_decision/."""
    from kilnflow.function.func_graph import FuncGraph
    graph = FuncGraph("decision_test")
    with graph.as_default():
        n = graph.placeholder(kf.int32, ())
        graph.outputs = [api.convert(sum_to)(n)]
    consumed = {id(t.op) for op in graph.get_operations() for t in op.inputs}
    outputs = {id(t.op) for t in graph.outputs}
    dead = [op for op in graph.get_operations()
            if id(op) not in consumed | outputs and op.type not in ("Const", "Placeholder")]
    assert dead and all(op.name.startswith("autograph_decision") for op in dead)


@needs_graph_ops
def test_set_loop_options_shape_invariants_and_maximum_iterations():
    assert kf.function(grows)(kf.constant(3)).numpy().tolist() == [1.0] * 8
    assert grows(kf.constant(2)).numpy().tolist() == [1.0] * 4  # a no-op when not converted
    assert int(kf.function(capped)(kf.constant(10))) == 3
