"""constant_fold: constant subgraphs are computed at compile time, and nothing else is."""
import numpy as np

import kilnflow as kf
from kilnflow.passes.constant_fold import MAX_ELEMENTS, constant_fold
from kilnflow.passes.prune import prune
from tests.passes._helpers import check_same, op_types, trace

SPEC = kf.TensorSpec([3], kf.float32)
X = np.array([1.0, -2.0, 3.5], np.float32)


def test_a_constant_subexpression_becomes_one_const():
    def f(x):
        c = kf.constant(2.0) * kf.constant(3.0) + 1.0
        return x + c

    graph = trace(f, SPEC)
    after = prune(constant_fold(graph))
    assert after.pretty() == "\n".join([
        "x:0 = Placeholder(dtype=float32, shape=TensorShape([3]))",
        "add:0 = Const(value=7.)",
        "add_1:0 = AddV2(x:0, add:0)"])
    check_same(graph, after, [X])


def test_folded_values_are_read_only_and_keep_dtype_and_shape():
    def f(x):
        return x + kf.reshape(kf.cast(kf.constant([1, 2, 3]), kf.float32), [3])

    after = prune(constant_fold(trace(f, SPEC)))
    const = [op for op in after.operations if op.type == "Const"][0]
    array = const.attrs["value"].array
    assert array.dtype == np.float32 and array.shape == (3,)
    assert not array.flags.writeable
    np.testing.assert_array_equal(array, [1.0, 2.0, 3.0])


def test_inputs_variables_and_random_draws_are_never_constant():
    v = kf.Variable([1.0, 2.0, 3.0])

    def f(x):
        noise = kf.random.uniform([3]) * 2.0
        return x * 2.0 + v.read_value() * 3.0 + noise

    graph = trace(f, SPEC)
    after = constant_fold(graph)
    assert after is graph  # nothing folds: every op depends on an input, a read or a draw
    assert op_types(after).count("Mul") == 3


def test_big_results_are_not_materialized():
    def f(x):
        return kf.reduce_sum(kf.ones([300, 300]) * 2.0) + x

    graph = trace(f, SPEC)
    after = prune(constant_fold(graph))
    assert "Mul" in op_types(after)               # 90,000 elements > MAX_ELEMENTS
    assert 300 * 300 > MAX_ELEMENTS
    check_same(graph, after, [X])


def test_a_kernel_that_raises_is_left_for_the_runtime():
    def f(x):
        return x + kf.cast(kf.constant(1) // kf.constant(0), kf.float32)

    graph = trace(f, SPEC)
    after = constant_fold(graph)
    assert "FloorDiv" in op_types(after)
    after.lint()


def test_ops_with_control_inputs_keep_their_place():
    def f(x):
        p = kf.print("first")
        with kf.control_dependencies([p]):
            c = kf.constant(2.0) * 3.0
        return x * c

    graph = trace(f, SPEC)
    after = constant_fold(graph)
    waiting = [op.type for op in after.operations if op.control_inputs]
    assert waiting == ["Const", "Const", "Mul"]  # the Mul still runs after the print
    check_same(graph, after, [X])
