"""plan_buffers: dead intermediates lend their buffers; inputs, outputs, constants,
variable values and anything a view may still see never do."""
import numpy as np

import kilnflow as kf
from kilnflow.passes.plan_buffers import MIN_BYTES, plan, plan_buffers
from kilnflow.passes.prune import prune
from tests.passes._helpers import check_same, compiled, trace

SIDE = 256
assert SIDE * SIDE * 4 >= MIN_BYTES
SPEC = kf.TensorSpec([SIDE, SIDE], kf.float32)
RNG = np.random.default_rng(5)


def _x():
    return RNG.normal(size=(SIDE, SIDE)).astype(np.float32)


def _chosen(graph):
    return {graph.operations[[id(o) for o in graph.operations].index(k)].name: t.name
            for k, t in plan(graph).items()}


def test_in_place_and_from_the_pool():
    def f(x):
        a = x + 1.0
        b = a * 2.0
        c = a * 3.0                           # a dies here: c is computed in place
        m = kf.cast(c > 0.0, kf.float32)      # c dies at the compare (a bool): m takes it
        return b + m                          # b dies here: in place

    graph = prune(trace(f, SPEC))
    after = plan_buffers(graph)
    assert after.pretty().splitlines()[6:] == [
        "mul_1:0 = FusedElementwise(add:0, Const_2:0, into=0, program='t0 = a0 * a1')",
        "Const_3:0 = Const(value=0.)",
        "Greater:0 = Greater(mul_1:0, Const_3:0)",
        "Cast:0 = FusedElementwise(Greater:0, mul_1:0, into=1, "
        "program='t0 = a0.astype(np.float32)')",
        "add_1:0 = FusedElementwise(mul:0, Cast:0, into=0, program='t0 = a0 + a1')"]
    check_same(graph, after, [_x()])


def test_inputs_outputs_constants_and_variable_values_are_never_donated():
    v = kf.Variable(np.ones((SIDE, SIDE), np.float32))
    big = kf.constant(np.ones((SIDE, SIDE), np.float32))

    def f(x):
        a = x * 2.0                                  # returned
        return a, v.read_value() + big, a + x        # a variable's value, a captured
                                                     # constant and the input die here

    graph = prune(trace(f, SPEC))
    assert plan(graph) == {}
    assert plan_buffers(graph) is graph


def test_a_value_seen_through_a_view_is_not_donated():
    def f(x):
        a = x + 1.0
        flat = kf.reshape(a, [-1])            # a view of a's buffer lives on
        b = kf.exp(a)                         # a's last reader
        return kf.reduce_sum(flat), b * 2.0

    graph = prune(trace(f, SPEC))
    assert "add" not in _chosen(graph).values()
    after = plan_buffers(graph)
    check_same(graph, after, [_x()])


def test_small_values_are_left_to_malloc():
    def f(x):
        return (x + 1.0) * 2.0

    graph = prune(trace(f, kf.TensorSpec([8], kf.float32)))
    assert plan_buffers(graph) is graph


def test_unknown_dims_are_checked_when_the_function_runs():
    def f(x, y):
        a = x * 2.0
        keep = a > 0.0                  # a's last reader makes a bool: a goes to the pool
        d = y * 3.0                     # same static shape [None]: planned into a
        return keep, d

    graph = prune(trace(f, kf.TensorSpec([None], kf.float32), kf.TensorSpec([None],
                                                                            kf.float32)))
    after = plan_buffers(graph)
    assert _chosen(graph) == {"mul_1": "mul:0"}
    for n, m in ((5, 7), (300_000, 300_000), (300_000, 5)):
        x = RNG.normal(size=n).astype(np.float32)
        y = RNG.normal(size=m).astype(np.float32)
        check_same(graph, after, [x, y])
        keep, d = compiled(after, [x, y])
        np.testing.assert_array_equal(d, y * np.float32(3.0))


def test_a_select_never_writes_over_its_operands():
    def f(x):
        a = x + 1.0
        return kf.where(a > x * 1.5, a, x * 2.0) + x   # a dies at the select

    graph = prune(trace(f, SPEC))
    assert "add:0" not in [t for op, t in _chosen(graph).items() if op == "SelectV2"]
    check_same(graph, plan_buffers(graph), [_x()])


def test_a_matmul_result_is_scaled_in_place_but_a_transposed_view_is_not():
    """`lr * (x.T @ d)`, as in an SGD update: MatMul always allocates its result, so the
    scaling may write over it; a Transpose's result is a view of its input and may not."""
    def f(x, w):
        scaled = 0.01 * kf.matmul(x, w, transpose_a=True)
        viewed = 2.0 * kf.transpose(x)
        return scaled, viewed

    graph = prune(trace(f, SPEC, SPEC))
    assert _chosen(graph) == {"mul": "MatMul:0"}
    check_same(graph, plan_buffers(graph), [_x(), _x()])
