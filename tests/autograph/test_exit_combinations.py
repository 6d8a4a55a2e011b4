"""break / continue / return in every combination of loop kinds, nested or not: each
program runs as plain Python (eager tensors), as a @kf.function and in a compat.v1
Session over kf.autograph.to_graph, and all three must agree.

Loops are tensor `while`, `for` over kf.range, `for` over a Python range and `for` over a
Python list; the exit's condition always depends on the tensor argument `n`, so inside
a graph every exit is tensor-dependent. The programs are written out as a module (AutoGraph
reads source) and imported.
"""
import importlib.util
import itertools

import numpy as np
import pytest

import kilnflow as kf

v1 = kf.compat.v1

# kind -> (header lines for index `v` over range(b), as text with {v} and {b})
LOOPS = {
    "while": ["{v} = n * 0 - 1", "while {v} < {b} - 1:", "    {v} += 1"],
    "kfrange": ["for {v} in kf.range({b}):"],
    "range": ["for {v} in range({b}):"],
    "list": ["for {v} in {items}:"],
}
EXITS = {"break": "break", "continue": "continue", "return": "return s * 10 + 7"}
INPUTS = [0, 2, 4, 9]


def _loop(kind, var, bound, indent):
    lines = [line.format(v=var, b=bound, items=list(range(bound))) for line in LOOPS[kind]]
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
            cases.append((f"{outer}_{inner}_{exit_kind}_{where}", outer, inner, exit_kind,
                          where))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    path = tmp_path_factory.mktemp("exits") / "exit_programs.py"
    path.write_text("import kilnflow as kf\n\n\n" + "\n\n".join(
        _program(*case) for case in CASES))
    spec = importlib.util.spec_from_file_location("exit_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_combination_is_generated():
    assert len(CASES) == 4 * 3 * (1 + 4 * 2) == 108


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_python_function_and_session_agree(programs, case):
    fn = getattr(programs, case[0])
    expected = [int(fn(kf.constant(n))) for n in INPUTS]
    assert expected == [int(fn(n)) for n in INPUTS]  # eager tensors behave as Python ints
    compiled = kf.function(fn)
    assert [int(compiled(kf.constant(n))) for n in INPUTS] == expected
    graph = kf.Graph()
    with graph.as_default():
        n = v1.placeholder(kf.int32, [])
        out = kf.autograph.to_graph(fn)(n)
    with v1.Session(graph=graph) as sess:
        assert [int(np.asarray(sess.run(out, {n: value}))) for value in INPUTS] == expected
