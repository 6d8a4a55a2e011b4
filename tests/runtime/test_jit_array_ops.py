"""jit_compile=True over the array ops of kilnflow/runtime/jit/array_ops.py (ArgMax/ArgMin,
OneHot, LogSoftmax, SoftmaxCrossEntropyWithLogits, Tile/DynamicTile, PadV2, Range and
DynamicRange, Cumsum/Cumprod, MatrixDiagPart, SplitV; Size, DynamicFill, SumToShape and
StridedSliceGrad with unknown batch dims): eager == kf.function == jit, gradients too, bad values
raising TF's error classes.

Tolerances per dtype: integers and bools exact (scans store every step in the input's
dtype, as NumPy's accumulate, so int32 overflow wraps the same); float64 rtol 1e-12 and
float32 rtol 2e-6 (log-softmax and the cross entropy sum in float64, NumPy pairwise in the
input's dtype). Several ops share one compiled function: each numba compile costs seconds.
"""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.runtime import jit

pytest.importorskip("numba")
pytestmark = pytest.mark.filterwarnings("ignore:AutoGraph could not convert <lambda>")

RTOL = {np.dtype(np.float32): 2e-6, np.dtype(np.float64): 1e-12}


def _close(got, want, label):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), label
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=RTOL[want.dtype], atol=RTOL[want.dtype],
                                   err_msg=label)
    else:
        np.testing.assert_array_equal(got, want, err_msg=label)


def _same(fn, *args):
    """fn compiled (natively run: jit.stats counts it) == fn traced == fn eager."""
    calls = jit.stats["calls"]
    got = kf.function(fn, jit_compile=True)(*args)
    assert jit.stats["calls"] == calls + 1
    for mode, want in (("function", kf.function(fn)(*args)), ("eager", fn(*args))):
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, f"output {i}: jit vs {mode}")


def _float_ops(x, z):
    return (kf.argmax(x, 1), kf.argmin(x, 0, output_type=kf.int32), kf.argmax(x[0]),
            kf.math.cumsum(x, 1, exclusive=True, reverse=True), kf.math.cumprod(x, 0),
            kf.tile(x, [2, 1]), kf.pad(x, [[1, 0], [0, 2]], constant_values=1.5),
            kf.linalg.diag_part(x), kf.nn.log_softmax(x),
            kf.nn.softmax_cross_entropy_with_logits(z, x), kf.range(0.5, 2.0, 0.25),
            kf.one_hot(kf.argmax(x, 1), 4, on_value=x[0, 0], off_value=-1.0, dtype=x.dtype),
            kf.nn.log_softmax(x, axis=0), kf.nn.softmax_cross_entropy_with_logits(
                kf.transpose(z[:, :3]), kf.transpose(x[:, :3]), axis=0),
            *kf.split(x, [1, 2, 1], axis=1), *kf.split(x, [2, -1]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_ops_match_the_python_runtime(dtype):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(3, 4)).astype(dtype)
    x[2, 1] = np.nan  # ArgMax/ArgMin: NumPy's rule, the first NaN is the extreme
    x[1, :2] = x[1, 3]  # ties: the first one wins
    z = rng.dirichlet(np.ones(4), 3).astype(dtype)
    _same(_float_ops, kf.constant(x), kf.constant(z))


def _int_ops(x, i, start, limit):
    return (kf.argmax(x, 0), kf.argmin(x, 1), kf.math.cumsum(x, 0), kf.math.cumprod(x, 1),
            kf.math.cumsum(x, 1, exclusive=True), kf.tile(x, [1, 0]), kf.tile(x, [2, 3]),
            kf.pad(x, [[0, 1], [2, 0]], constant_values=7), kf.range(7, -1, -2),
            kf.range(start, limit, 3), kf.one_hot(i, 3), kf.one_hot(i, 3, axis=0,
                                                                    on_value=5, off_value=-1),
            kf.linalg.diag_part(kf.reshape(x, [1, 3, 2])),
            kf.tile(x, kf.stack([start, limit - 9])))  # DynamicTile: [1, 2]


def test_int_ops_match_the_python_runtime():
    x = np.array([[3, 1], [2**30, 2**30], [-5, 7]], np.int32)  # cumsum/cumprod wrap at int32
    i = np.array([[0, 2, 5], [-1, 1, 2]], np.int32)  # out of range: off_value everywhere
    _same(_int_ops, kf.constant(x), kf.constant(i), kf.constant(1), kf.constant(11))


def test_gradients_through_the_lowered_ops_run_natively():
    rng = np.random.default_rng(2)
    x0 = rng.uniform(0.5, 1.5, size=(3, 4)).astype(np.float32)
    z0 = rng.dirichlet(np.ones(4), 3).astype(np.float32)

    def loss_and_grad(x, z):
        with kf.GradientTape() as tape:
            tape.watch(x)
            parts = [kf.reduce_sum(kf.nn.softmax_cross_entropy_with_logits(z, x)),
                     kf.reduce_sum(kf.nn.log_softmax(x) * z),
                     kf.reduce_sum(kf.tile(x, [1, 2]) * kf.tile(z, [1, 2])),
                     kf.reduce_sum(kf.pad(x, [[1, 1], [0, 1]]) ** 2),
                     kf.reduce_sum(kf.math.cumsum(x, 1) * z),
                     kf.reduce_sum(kf.math.cumprod(x, 0))]
            total = kf.add_n(parts)
        return total, tape.gradient(total, x)

    _same(loss_and_grad, kf.constant(x0), kf.constant(z0))


def test_unknown_batch_dims_sum_gradients_to_shapes_known_when_run():
    # a partial last batch retraces with None dims (Keras's reduce_retracing): the
    # gradient's SumToShape and StridedSliceGrad targets, Size and DynamicFill are values
    # of the run
    spec = kf.TensorSpec([None, 3], kf.float32)

    def step(x, y, b):
        with kf.GradientTape() as tape:
            tape.watch([x, b])
            loss = kf.reduce_mean((x + b - y) ** 2) + kf.cast(kf.size(x), kf.float32)
            # StridedSliceGrad to x's run-time shape: ints (GRU's bias[0]), bounded slices
            loss += kf.reduce_sum(x[0] * b[0]) + kf.reduce_sum(x[:, 1:3] ** 2) + \
                kf.reduce_sum(x[-1, -2:] * 3.0) + kf.reduce_sum(b[:, :-1])
        return (loss,) + tuple(tape.gradient(loss, [x, b])) + (kf.ones_like(x),)

    compiled = kf.function(step, input_signature=[spec, spec, kf.TensorSpec([1, 3])],
                           jit_compile=True)
    rng = np.random.default_rng(3)
    b = kf.constant(rng.normal(size=(1, 3)).astype(np.float32))
    for rows in (4, 1):
        x, y = (kf.constant(rng.normal(size=(rows, 3)).astype(np.float32)) for _ in "xy")
        calls = jit.stats["calls"]
        got = compiled(x, y, b)
        assert jit.stats["calls"] == calls + 1
        for i, (g, w) in enumerate(zip(got, step(x, y, b))):
            _close(g, w, f"output {i}, {rows} rows")


def test_bad_values_raise_tf_errors():
    arg = kf.function(lambda x: kf.argmax(x, 1), jit_compile=True)
    np.testing.assert_array_equal(arg(kf.constant(np.eye(2, 3))).numpy(), [0, 1])
    with pytest.raises(errors.InvalidArgumentError, match="empty sequence"):
        arg(kf.zeros([2, 0], kf.float64))  # same rank: the compiled code, not a retrace
    span = kf.function(lambda a, b, c: kf.range(a, b, c), jit_compile=True)
    np.testing.assert_array_equal(span(*map(kf.constant, (1, 9, 3))).numpy(), [1, 4, 7])
    for bad in ((1, 5, 0), (5, 1, 1), (1, 5, -1)):
        with pytest.raises(errors.InvalidArgumentError, match="Requires"):
            span(*map(kf.constant, bad))


def test_an_op_still_without_a_lowering_is_listed():
    f = kf.function(lambda x: kf.pad(x, [[1, 1]], mode="REFLECT") + kf.cast(kf.argmax(x), kf.int32),
                    jit_compile=True)
    with pytest.raises(errors.InvalidArgumentError) as info:
        f(kf.constant([1, 2, 3]))
    message = str(info.value)
    assert "(MirrorPad)" in message and "ArgMax" not in message
