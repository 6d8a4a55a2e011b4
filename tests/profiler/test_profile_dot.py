"""concrete.graph.to_dot(): Graphviz DOT text clustered by name scope and user line, fused
groups and cond bodies as clusters; to_svg() when graphviz is installed."""
import importlib.util
import re

import pytest

import kilnflow as kf

HERE = __file__.rsplit("/", 1)[-1]


def _traced():
    @kf.function
    def f(x):
        with kf.name_scope("dense"):
            y = kf.nn.relu(kf.matmul(x, kf.ones([3, 2])))
        z = kf.tanh(y) * 2.0 + 1.0  # <fused>
        if kf.reduce_sum(z) > 0:
            z = z + 1.0
        return z
    return f.get_concrete_function(kf.ones([1, 3]))


@pytest.mark.usefixtures("without_autoclustering")
def test_dot_has_scopes_lines_fused_groups_and_bodies():
    dot = _traced().graph.to_dot()
    assert dot.startswith('digraph "f" {') and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    assert 'label="dense"' in dot                          # the name scope's cluster
    assert re.search(r'tooltip="dense/MatMul \(MatMul\) ' + re.escape(HERE) + r':\d+"', dot)
    assert 'label="fused' in dot and "np.tanh" in dot       # the fused group's steps
    assert 'label="cond: then_branch"' in dot and 'label="cond: else_branch"' in dot
    assert re.search(r'label="' + re.escape(HERE) + r':\d+"; style="filled"', dot)  # a line box
    assert "->" in dot and "(1, 3) float32" in dot


@pytest.mark.usefixtures("without_autoclustering")
def test_dot_annotates_profile_timings():
    concrete = _traced()
    dot = concrete.graph.to_dot(timings={"dense/MatMul": 12_500})
    assert "12.5 µs" in dot


def test_names_with_quotes_are_escaped():
    @kf.function
    def g(x):
        with kf.name_scope('say"hi'):
            return x + 1.0
    dot = g.get_concrete_function(kf.constant(1.0)).graph.to_dot()
    assert '\\"' in dot or "say_hi" in dot


def test_svg_needs_graphviz():
    graph = _traced().graph
    if importlib.util.find_spec("graphviz") is None:
        with pytest.raises(ImportError, match="graphviz"):
            graph.to_svg()
    else:
        try:
            assert "<svg" in graph.to_svg()
        except Exception as exc:  # the Python package without the `dot` binary
            pytest.skip(f"graphviz binary missing: {exc}")


@pytest.mark.usefixtures("without_autoclustering")
def test_svg_through_the_graphviz_package_and_a_missing_binary_named(monkeypatch):
    import sys
    import types
    fake = types.ModuleType("graphviz")

    class ExecutableNotFound(RuntimeError):
        pass

    class Source:
        binary = True

        def __init__(self, text):
            self.text = text

        def pipe(self, format):
            if not Source.binary:
                raise ExecutableNotFound("failed to execute 'dot'")
            assert format == "svg" and self.text.startswith("digraph")
            return b"<svg>" + self.text.encode() + b"</svg>"

    fake.Source, fake.ExecutableNotFound = Source, ExecutableNotFound
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    graph = _traced().graph
    svg = graph.to_svg()
    assert svg.startswith("<svg>digraph") and "MatMul" in svg
    Source.binary = False
    with pytest.raises(RuntimeError, match="Graphviz `dot` binary"):
        graph.to_svg()
