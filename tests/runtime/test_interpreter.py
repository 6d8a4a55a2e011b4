"""The interpreter is an independent oracle: it evaluates cond and while bodies itself
(never through generated code), frees values, and names the op whose kernel fails."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.runtime import codegen, interpreter


def _traced(fn, *specs):
    return kf.function(fn).get_concrete_function(*specs).traced_graph


def test_control_flow_bodies_are_interpreted_not_compiled(monkeypatch):
    def f(x):
        total = kf.constant(0.0)
        i = kf.constant(0)
        while i < 3:
            if kf.reduce_sum(x) > 0.0:
                total += kf.reduce_sum(x * 2.0)
            else:
                total -= 1.0
            i += 1
        return total

    graph = _traced(f, kf.TensorSpec([2], kf.float32))
    assert {"StatelessWhile"} <= {op.type for op in graph.operations}

    def no_codegen(*args, **kwargs):
        raise AssertionError("the interpreter compiled a subgraph")

    monkeypatch.setattr(codegen, "generate", no_codegen)
    for x, expected in (([1.0, 2.0], 18.0), ([-1.0, -2.0], -3.0)):
        got, = interpreter.evaluate_graph(graph, [np.array(x, np.float32)])
        assert float(got) == expected


def test_a_failing_kernel_names_the_op_and_the_user_line():
    graph = _traced(lambda x: kf.gather(x, kf.constant([5])), kf.TensorSpec([3], kf.float32))
    with pytest.raises(errors.InvalidArgumentError, match=r"While executing node GatherV2 "
                       r"\(GatherV2\) \(created at .*test_interpreter.py:\d+\)") as info:
        interpreter.evaluate_graph(graph, [np.zeros(3, np.float32)])
    assert info.value.__cause__ is not None


def test_values_are_freed_after_their_last_use():
    import unittest.mock
    import weakref

    class Tracked(np.ndarray):
        pass

    graph = _traced(lambda x: ((x * 2.0) + 1.0) * 3.0, kf.TensorSpec([4], kf.float32))
    mul = next(op for op in graph.operations if op.type == "Mul").opdef
    kernel, first, alive_at_second = mul.kernel, [], []

    def tracking(*args, **attrs):  # both Muls run this: the first is tracked
        out = np.asarray(kernel(*args, **attrs))
        if not first:
            out = out.view(Tracked)
            first.append(weakref.ref(out))
        else:
            alive_at_second.append(first[0]() is not None)
        return out

    with unittest.mock.patch.object(mul, "kernel", tracking):
        result, = interpreter.evaluate_graph(graph, [np.ones(4, np.float32)])
    assert result.tolist() == [9.0] * 4
    assert alive_at_second == [False]  # x * 2 was dropped once AddV2 had read it
