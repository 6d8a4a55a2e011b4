"""Hostile saved models: names and attrs that carry code, Unicode look-alikes, keywords,
dunders, very long names and out-of-range slots either load safely and compute the right
values, or fail with a named error. No case ever runs code (a canary file stays absent)."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.module import Module
from kilnflow.saving import saved_model

X = np.array([1.0, -2.0, 3.0], np.float32)


class Pair(Module):
    """Two outputs through Mul, AddN and a cond, so names appear in branches too."""

    @kf.function(input_signature=[kf.TensorSpec([3], kf.float32)])
    def __call__(self, x):
        a = x * 2.0
        b = kf.add_n([x, a])
        c = kf.cond(kf.reduce_sum(x) > 0.0, lambda: a + 1.0, lambda: a - 1.0)
        return a, b, c


def expected(x):
    a = x * 2.0
    return a, x + a, a + 1.0 if x.sum() > 0 else a - 1.0


def _document(path):
    return saved_model.read_document(path)


def _write(path, document):  # sealed, as a crafted file would be: load() must still refuse
    saved_model.write_document(path, document)


def _graphs(graph):
    """The function graph and every branch/body graph inside it."""
    yield graph
    for node in graph["nodes"]:
        for attr in node["attrs"].values():
            if attr.get("t") == "subgraph":
                yield from _graphs(attr["graph"])


def _rename(graph, old, new):
    """Rename node `old` to `new` in `graph` and every reference to it."""
    def fix(ref):
        name, _, index = ref.rpartition(":")
        return f"{new}:{index}" if name == old else ref
    for node in graph["nodes"]:
        if node["name"] == old:
            node["name"] = new
        node["inputs"] = [fix(r) for r in node["inputs"]]
        node["control_inputs"] = [new if c == old else c for c in node["control_inputs"]]
    for key in ("inputs", "outputs"):
        if key in graph:
            graph[key] = [fix(r) for r in graph[key]]


@pytest.fixture
def saved(tmp_path):
    path = str(tmp_path / "model")
    saved_model.save(Pair(), path)
    return path


@pytest.fixture
def canary(tmp_path):
    return tmp_path / "CANARY"


def _payload(canary):
    return f"__import__('pathlib').Path({str(canary)!r}).touch()"


def _call(path):
    return [np.asarray(t) for t in saved_model.load(path)(kf.constant(X))]


def _main_graph(document):
    return document["functions"]["__call__"]["graph"]


def _node_names(document):
    return [n["name"] for g in _graphs(_main_graph(document)) for n in g["nodes"]]


NAME_CASES = {
    "code_in_name": lambda c: f"a=1)\n{_payload(c)}\ndef g(b",
    "code_after_newline": lambda c: f"x\n{_payload(c)}\n#",
    "keyword": lambda c: "lambda",
    "keyword_none": lambda c: "None",
    "dunder_builtins": lambda c: "__builtins__",
    "dunder_import": lambda c: "__import__",
    "very_long": lambda c: "n" * 20_000,
    "digits": lambda c: "123",
    "empty_after_sanitising": lambda c: "%%%",
}


@pytest.mark.parametrize("case", sorted(NAME_CASES))
def test_hostile_node_names_load_safely_and_compute_right(saved, canary, case):
    document = _document(saved)
    hostile = NAME_CASES[case](canary)
    for graph in _graphs(_main_graph(document)):
        nodes = [n for n in graph["nodes"] if n["op"] != "Placeholder"]
        for j, node in enumerate(nodes):  # the first keeps the exact name: unique per graph
            _rename(graph, node["name"], hostile if j == 0 else f"{hostile}{j}")
    _write(saved, document)
    got = _call(saved)
    assert not canary.exists()
    for g, e in zip(got, expected(X)):
        np.testing.assert_allclose(g, e)


@pytest.mark.parametrize("pair", [("fi", "\ufb01"), ("x1", "\uff58\uff11"),
                                  ("A", "\U0001d400"), ("ka", "k\u0430")])
def test_unicode_lookalike_names_never_share_a_variable(saved, pair):
    # Python folds identifiers under NFKC: "fi" and the ligature would be one variable
    document = _document(saved)
    graph = _main_graph(document)
    names = [n["name"] for n in graph["nodes"] if n["op"] in ("Mul", "AddN")]
    assert len(names) == 2
    _rename(graph, names[0], pair[0])
    _rename(graph, names[1], pair[1])
    _write(saved, document)
    for g, e in zip(_call(saved), expected(X)):
        np.testing.assert_allclose(g, e)


ATTR_NAME_CASES = [
    "a=1)\n{payload}\ndef g(b",
    "__class__",
    "where",              # a real keyword of the ufunc kernel, but not an attr of AddN
    "lambda",
    "x" * 5000,
    "\uff58",
]


@pytest.mark.parametrize("op_type", ["AddN", "Mul", "StatelessIf"])
@pytest.mark.parametrize("template", ATTR_NAME_CASES, ids=range(len(ATTR_NAME_CASES)))
def test_undeclared_attr_names_are_refused(saved, canary, op_type, template):
    document = _document(saved)
    graph = _main_graph(document)
    node = next(n for n in graph["nodes"] if n["op"] == op_type)
    node["attrs"][template.format(payload=_payload(canary))] = {"t": "py", "v": 1}
    _write(saved, document)
    with pytest.raises(saved_model.SavedModelError, match="has no attr"):
        saved_model.load(saved)
    assert not canary.exists()


def test_attr_in_branch_graph_is_refused(saved, canary):
    document = _document(saved)
    branch = list(_graphs(_main_graph(document)))[1]
    node = next(n for n in branch["nodes"] if n["op"] != "Placeholder")
    node["attrs"][f"a=1)\n{_payload(canary)}\ndef g(b"] = {"t": "py", "v": 1}
    _write(saved, document)
    with pytest.raises(saved_model.SavedModelError, match="has no attr"):
        saved_model.load(saved)
    assert not canary.exists()


@pytest.mark.parametrize("slot", [-1, 3, 1.0, "0", True, None])
def test_output_slots_are_range_checked(saved, slot):
    document = _document(saved)
    outputs = document["functions"]["__call__"]["outputs"]
    outputs["tuple"][0] = {"slot": slot}
    _write(saved, document)
    with pytest.raises(saved_model.SavedModelError):
        saved_model.load(saved)


@pytest.mark.parametrize("ref", ["x:-1", "x:1", "x:", "x:\u0661"])
def test_tensor_references_are_range_checked(saved, ref):
    document = _document(saved)
    graph = _main_graph(document)
    node = next(n for n in graph["nodes"] if n["op"] == "Mul")
    node["inputs"][0] = ref
    _write(saved, document)
    with pytest.raises(saved_model.SavedModelError):
        saved_model.load(saved)


def test_graph_tensor_lookup_refuses_negative_slots():
    graph = kf.Graph()
    with graph.as_default():
        kf.constant(1.0, name="c")
    assert graph.get_tensor_by_name("c:0").name == "c:0"
    for bad in ("c:-1", "c:1", "c:x"):
        with pytest.raises(KeyError):
            graph.get_tensor_by_name(bad)


@pytest.mark.usefixtures("without_autoclustering")
def test_sanitised_names_still_read_well(saved):
    # Ordinary names stay as they were: the generated code remains readable
    code = saved_model.load(saved).__dict__["__call__"].concrete_functions[0].code
    assert "mul = " in code and "AddN" in code
