"""kf.cond, kf.case and kf.switch_case, eagerly and inside @kf.function with equal
results; in a graph, If ops whose branches become a Python `if` in the generated code."""
import pytest

import kilnflow as kf
from tests.ops.modes import eager_and_function, generated_code, op_types

F32 = kf.float32


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
