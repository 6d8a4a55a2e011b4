"""subgraphs: loop bodies and cond branches go through the same pipeline; the traced
graph (which gradients replay) keeps its own subgraphs."""
import numpy as np

import kilnflow as kf
from kilnflow.passes import pipeline
from tests.passes._helpers import check_same, trace


def f(x):
    def body(i, y):
        return i + 1, kf.tanh(y * 1.0) * 2.0 + 1.0

    _, y = kf.while_loop(lambda i, y: i < 3, body, [kf.constant(0), x])
    return kf.cond(kf.reduce_sum(y) > 0.0, lambda: kf.exp(y) * 1.0 + 0.0, lambda: -y)


def _control_flow(graph):
    return {op.type: op for op in graph.operations if op.type in ("StatelessWhile",
                                                                  "StatelessIf")}


def test_bodies_and_branches_are_optimized_and_the_traced_ones_kept():
    graph = trace(f, kf.TensorSpec([4], kf.float32))
    traced_body = _control_flow(graph)["StatelessWhile"].attrs["body_graph"]
    traced_ops = traced_body.graph.pretty()
    after, _ = pipeline.optimize(graph)
    ops = _control_flow(after)
    body = ops["StatelessWhile"].attrs["body_graph"].graph
    assert body.pretty().splitlines()[-1] == (
        "add_1:0 = FusedElementwise(loop_var1:0, Const_2:0, Const_1:0, into=None, "
        "program='t0 = np.tanh(a0); t1 = t0 * a1; t2 = t1 + a2')")
    then = ops["StatelessIf"].attrs["then_branch"].graph
    assert [op.type for op in then.operations] == ["Placeholder", "Exp"]
    assert traced_body.graph.pretty() == traced_ops       # untouched
    body.lint()
    then.lint()
    for x in ([0.5, -1.0, 2.0, 0.0], [-3.0, -2.0, -1.0, -4.0]):
        check_same(graph, after, [np.array(x, np.float32)], exact=False)


def test_switching_the_pass_off_leaves_subgraphs_as_traced():
    graph = trace(f, kf.TensorSpec([4], kf.float32))
    saved = pipeline.get_options()
    pipeline.set_options({"subgraphs": False})
    try:
        after, _ = pipeline.optimize(graph)
    finally:
        pipeline.set_options(saved)
    assert _control_flow(after)["StatelessWhile"].attrs["body_graph"] is \
        _control_flow(graph)["StatelessWhile"].attrs["body_graph"]
