"""Composite names (dict items, list items, attributes, nested ones) changed inside every
kind of tensor-dependent construct: each program runs as plain Python (eager tensors), as
a @kf.function and in a compat.v1 Session over kf.autograph.to_graph, and all three
agree. TF treats `d["a"]`, `xs[0]` and `obj.attr` as loop and branch variables; a target
that stays a plain Python name would count once (or leak a graph tensor) instead."""
import importlib.util
import itertools

import pytest

import kilnflow as kf

from .session_leg import session_ints


# target -> (setup lines, the expression naming it)
TARGETS = {
    "dict_item": (["d = {'a': n * 0, 'b': 5}"], "d['a']"),
    "list_item": (["xs = [n * 0, 7]"], "xs[0]"),
    "attribute": (["box = Box()", "box.count = n * 0"], "box.count"),
    "nested_attribute": (["box = Box()", "box.inner = Box()", "box.inner.count = n * 0"],
                         "box.inner.count"),
    "dict_in_list": (["xs = [{'a': n * 0}]"], "xs[0]['a']"),
    "attribute_item": (["box = Box()", "box.items = [n * 0, 1]"], "box.items[0]"),
}
# construct -> lines changing {t} (indented 4), where `n` is the tensor argument
CONSTRUCTS = {
    "while": ["k = n", "while k > 0:", "    {t} += k", "    k -= 1"],
    "kfrange": ["for i in kf.range(n):", "    {t} += i * 2 + 1"],
    "if": ["if n > 2:", "    {t} = {t} + 10"],
    "if_else": ["if n > 2:", "    {t} = {t} + 10", "else:", "    {t} = {t} - 3"],
    "while_if": ["k = n", "while k > 0:", "    if k % 2 == 0:", "        {t} += k",
                 "    k -= 1"],
    "python_range_if": ["for i in range(3):", "    if n > i:", "        {t} += i + 1"],
    "while_break": ["k = n * 0", "while k < 10:", "    {t} += 2", "    if k >= n:",
                    "        break", "    k += 1"],
}
INPUTS = [0, 1, 3, 6]


def _program(name, target, construct):
    setup, expr = TARGETS[target]
    lines = [f"def {name}(n):"] + ["    " + line for line in setup]
    lines += ["    " + line.format(t=expr) for line in CONSTRUCTS[construct]]
    lines += [f"    return {expr}"]
    return "\n".join(lines) + "\n"


CASES = [(f"{t}_{c}", t, c) for t, c in itertools.product(TARGETS, CONSTRUCTS)]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    path = tmp_path_factory.mktemp("composites") / "composite_programs.py"
    path.write_text("import kilnflow as kf\n\n\nclass Box:\n    pass\n\n\n" + "\n\n".join(
        _program(*case) for case in CASES))
    spec = importlib.util.spec_from_file_location("composite_programs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_combination_is_generated():
    assert len(CASES) == 6 * 7


@pytest.mark.parametrize("name, target, construct", CASES, ids=[c[0] for c in CASES])
def test_python_function_and_session_agree(programs, name, target, construct):
    fn = getattr(programs, name)
    expected = [int(fn(n)) for n in INPUTS]  # plain Python ints
    assert [int(fn(kf.constant(n))) for n in INPUTS] == expected
    compiled = kf.function(fn)
    assert [int(compiled(kf.constant(n))) for n in INPUTS] == expected
    assert session_ints(fn, INPUTS) == expected
