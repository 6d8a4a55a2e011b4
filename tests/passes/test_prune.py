"""prune: ops feeding no output go; stateful ops and their inputs stay."""
import numpy as np

import kilnflow as kf
from kilnflow.passes.prune import needed_ops, prune
from tests.passes._helpers import check_same, trace


def test_dead_ops_are_dropped_and_side_effects_stay():
    def f(x):
        kf.print("hi")
        unused = kf.exp(x)  # noqa: F841 - dead on purpose
        return x * 2.0

    graph = trace(f, kf.TensorSpec([3], kf.float32))
    after = prune(graph)
    assert after.pretty() == "\n".join([
        "x:0 = Placeholder(dtype=float32, shape=TensorShape([3]))",
        "_ = PrintV2(output_stream='stderr', summarize=3, template=('hi\\n',))",
        "Const:0 = Const(value=2.)",
        "mul:0 = Mul(x:0, Const:0)"])
    check_same(graph, after, [np.arange(3, dtype=np.float32)])


def test_a_graph_with_nothing_dead_is_returned_as_is():
    graph = trace(lambda x: x + 1.0, kf.TensorSpec([2], kf.float32))
    assert prune(graph) is graph
    assert len(needed_ops(graph)) == len(graph.operations)


def test_variable_updates_and_what_feeds_them_stay():
    v = kf.Variable([1.0, 2.0])

    def f(x):
        v.assign_add(kf.sqrt(x))
        kf.exp(x)
        return kf.constant(0.0)

    after = prune(trace(f, kf.TensorSpec([2], kf.float32)))
    types = [op.type for op in after.operations]
    assert "Sqrt" in types and "AssignAddVariableOp" in types and "Exp" not in types
    after.lint()
