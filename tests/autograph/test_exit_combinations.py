"""break / continue / return in every combination of loop kinds, nested or not: each
program runs as plain Python (eager tensors), as a @kf.function and in a compat.v1
Session over kf.autograph.to_graph, and all three must agree.

Loops are tensor `while`, `for` over kf.range, a Python range, a Python list, a Python
dict, a tensor's rows and a TensorArray's elements; the exit's condition always depends
on the tensor argument `n`, so inside a graph every exit is tensor-dependent. 315
programs: each kind alone and every (outer, inner) pair, each exit in the inner or the
outer loop; the default tier runs the 117 over the first four kinds, the slow tier all. The programs are written out as a module (AutoGraph
reads source) and imported.
"""
import importlib.util
import itertools

import pytest

import kilnflow as kf

from .session_leg import session_ints


# kind -> (header lines for index `v` over range(b), as text with {v} and {b})
LOOPS = {
    "while": ["{v} = n * 0 - 1", "while {v} < {b} - 1:", "    {v} += 1"],
    "kfrange": ["for {v} in kf.range({b}):"],
    "range": ["for {v} in range({b}):"],
    "list": ["for {v} in {items}:"],
    "dict": ["for {v} in {keys}:"],
    "rows": ["for {v} in kf.constant({items}):"],
    "tensorarray": ["for {v} in kf.TensorArray(kf.int32, size={b}).unstack(kf.range({b}))"
                    ".stack():"],  # a TensorArray is not iterable eagerly (nor in TF)
}
BASIC = ("while", "kfrange", "range", "list")  # the default tier nests these four
EXITS = {"break": "break", "continue": "continue", "return": "return s * 10 + 7"}
INPUTS = [0, 2, 4, 9]


def _loop(kind, var, bound, indent):
    keys = {k: str(k) for k in range(bound)}
    lines = [line.format(v=var, b=bound, items=list(range(bound)), keys=keys)
             for line in LOOPS[kind]]
    return [" " * indent + line for line in lines]


def _program(name, outer, inner, exit_kind, where):
    body = [f"def {name}(n):", "    s = n * 0"]
    body += _loop(outer, "i", 4, 4)
    if inner is None:
        body += ["        if i * 2 > n:", f"            {EXITS[exit_kind]}",
                 "        s += i * 3 + 1"]
    else:
        body += _loop(inner, "j", 3, 8)
        if where == "inner":
            body += ["            if i + j > n:", f"                {EXITS[exit_kind]}"]
        body += ["            s += i * 4 + j + 1"]
        if where == "outer":
            body += ["        if s > n * 3:", f"            {EXITS[exit_kind]}"]
        body += ["        s += 100"]
    body += ["    return s"]
    return "\n".join(body) + "\n"


def _cases():
    cases = []
    for outer, exit_kind in itertools.product(LOOPS, EXITS):
        cases.append((f"{outer}_{exit_kind}", outer, None, exit_kind, "outer"))
        for inner, where in itertools.product(LOOPS, ("inner", "outer")):
            case = (f"{outer}_{inner}_{exit_kind}_{where}", outer, inner, exit_kind, where)
            slow = outer not in BASIC or inner not in BASIC
            cases.append(pytest.param(*case, marks=pytest.mark.slow) if slow else case)
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    path = tmp_path_factory.mktemp("exits") / "exit_programs.py"
    path.write_text("import kilnflow as kf\n\n\n" + "\n\n".join(
        _program(*_values(case)) for case in CASES))
    spec = importlib.util.spec_from_file_location("exit_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _values(case):
    return case.values if hasattr(case, "values") else case


def test_every_combination_is_generated():
    assert len(CASES) == 7 * 3 * (1 + 7 * 2) == 315
    assert sum(not hasattr(case, "values") for case in CASES) == 21 + 4 * 3 * 4 * 2


@pytest.mark.parametrize("name, outer, inner, exit_kind, where", CASES,
                         ids=[_values(c)[0] for c in CASES])
def test_python_function_and_session_agree(programs, name, outer, inner, exit_kind, where):
    fn = getattr(programs, name)
    expected = [int(fn(kf.constant(n))) for n in INPUTS]
    assert expected == [int(fn(n)) for n in INPUTS]  # eager tensors behave as Python ints
    compiled = kf.function(fn)
    assert [int(compiled(kf.constant(n))) for n in INPUTS] == expected
    assert session_ints(fn, INPUTS) == expected
