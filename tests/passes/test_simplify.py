"""simplify: exact algebraic rewrites, and the look-alikes that must stay."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.passes.prune import prune
from kilnflow.passes.simplify import _exact_widening, simplify
from tests.passes._helpers import check_same, op_types, trace

RNG = np.random.default_rng(3)


def _spec(*shape, dtype=kf.float32):
    return kf.TensorSpec(list(shape), dtype)


def test_a_chain_of_no_ops_collapses_to_one_matmul_with_a_transpose_flag():
    def f(x, w):
        a = x * 1.0
        b = 0.0 + a
        c = kf.identity(kf.identity(b - 0.0)) / 1.0
        d = kf.negative(kf.negative(c))
        e = kf.cast(kf.cast(d, kf.float64), kf.float32)
        t = kf.transpose(kf.transpose(e))
        r = kf.reshape(kf.reshape(t, [6]), [3, 2])
        return kf.matmul(kf.transpose(r), w)

    graph = trace(f, _spec(3, 2), _spec(3, 4))
    after = prune(simplify(graph))
    assert after.pretty() == "\n".join([
        "x:0 = Placeholder(dtype=float32, shape=TensorShape([3, 2]))",
        "w:0 = Placeholder(dtype=float32, shape=TensorShape([3, 4]))",
        "MatMul:0 = MatMul(x:0, w:0, transpose_a=True, transpose_b=False)"])
    check_same(graph, after, [RNG.normal(size=(3, 2)).astype(np.float32),
                              RNG.normal(size=(3, 4)).astype(np.float32)])


def test_int_cast_round_trip_and_double_logical_not():
    def f(i, b):
        return (kf.cast(kf.cast(i, kf.int64), kf.int32) * 2,
                kf.logical_not(kf.logical_not(b)) & b)

    graph = trace(f, _spec(4, dtype=kf.int32), _spec(4, dtype=kf.bool))
    after = prune(simplify(graph))
    assert op_types(after) == ["Placeholder", "Placeholder", "Const", "Mul", "LogicalAnd"]
    check_same(graph, after, [np.array([1, -2, 2**31 - 1, -2**31], np.int32),
                              np.array([True, False, True, False])])


def test_transposes_compose_into_one_and_reshapes_into_the_last():
    def f(x):
        t = kf.transpose(kf.transpose(x, [1, 2, 0]), [1, 2, 0])
        return t, kf.reshape(kf.reshape(x, [6, 4]), [4, 6])

    graph = trace(f, _spec(2, 3, 4))
    after = prune(simplify(graph))
    assert after.pretty().splitlines()[1:] == [
        "Transpose_1:0 = Transpose(x:0, perm=(2, 0, 1))",
        "Reshape_1:0 = Reshape(x:0, shape=(4, 6))"]
    check_same(graph, after, [RNG.normal(size=(2, 3, 4)).astype(np.float32)])


def test_matmul_folds_a_transposed_b_and_unsets_an_existing_flag():
    def f(a, b):
        return kf.matmul(kf.transpose(a, [0, 2, 1]), kf.transpose(b, [0, 2, 1]),
                         transpose_a=True)

    graph = trace(f, _spec(2, 4, 3), _spec(2, 5, 3))
    after = prune(simplify(graph))
    assert after.pretty().splitlines()[2:] == [
        "MatMul:0 = MatMul(a:0, b:0, transpose_a=False, transpose_b=True)"]
    check_same(graph, after, [RNG.normal(size=(2, 4, 3)).astype(np.float32),
                              RNG.normal(size=(2, 5, 3)).astype(np.float32)])


@pytest.mark.parametrize("name,fn", [
    ("broadcasting identity element", lambda x: x * kf.ones([2, 3])),
    ("not everywhere the identity", lambda x: x * kf.constant([1.0, 1.0, 2.0])),
    ("identity on the wrong side", lambda x: 0.0 - x),
    ("inexact cast round trip", lambda x: kf.cast(kf.cast(x, kf.float16), kf.float32)),
    ("float to int round trip", lambda x: kf.cast(kf.cast(x, kf.int32), kf.float32)),
    ("transpose not of the last two dims", lambda x: kf.matmul(
        kf.reshape(kf.transpose(kf.reshape(x, [1, 3, 1]), [2, 1, 0]), [1, 3]),
        kf.ones([3, 1]))),
    ("returned input", lambda x: kf.identity(x)),
])
def test_look_alikes_stay(name, fn):
    graph = trace(fn, _spec(3))
    after = simplify(graph)
    assert after is graph, name


def test_unknown_dims_keep_exactness_checks():
    def f(x):
        return kf.exp(x * 1.0 + kf.constant([0.0]))  # both broadcast-neutral for any length

    graph = trace(f, _spec(None))
    after = prune(simplify(graph))
    assert op_types(after) == ["Placeholder", "Exp"]
    check_same(graph, after, [np.arange(5, dtype=np.float32)])


def test_ops_with_control_inputs_and_stateful_ops_are_not_rewritten():
    v = kf.Variable(1.0)

    def f(x):
        p = kf.print("first")
        with kf.control_dependencies([p]):
            y = x * 1.0
        return y + v.read_value() * 1.0

    graph = trace(f, _spec(3))
    after = prune(simplify(graph))
    waiting = [op.type for op in after.operations if op.control_inputs]
    assert waiting == ["Const", "Mul", "ReadVariableOp"]
    assert op_types(after).count("Mul") == 1          # the read's `* 1.0` went
    check_same(graph, after, [np.arange(3, dtype=np.float32)])


def test_exact_widening_table():
    assert _exact_widening(np.int32, np.int64) and _exact_widening(np.int32, np.float64)
    assert _exact_widening(np.float32, np.float64) and _exact_widening(np.bool_, np.int8)
    assert _exact_widening(np.int16, np.float32) and _exact_widening(np.uint8, np.int16)
    assert not _exact_widening(np.int32, np.float32)
    assert not _exact_widening(np.int64, np.float64)
    assert not _exact_widening(np.float32, np.int64)
    assert not _exact_widening(np.int8, np.uint8)
