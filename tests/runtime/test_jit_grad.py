"""Gradients of `jit_compile=True` functions run natively in both directions.

A tape inside the function: forward and backward are one compiled graph. A jit function
called eagerly under an outer tape: one compiled forward call and one compiled backward
call (kilnflow/function/jit_grad.py), counted through `jit.stats`. Both agree with the
Python runtime and with finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.function import jit_grad
from kilnflow.runtime import jit

pytest.importorskip("numba")

RNG = np.random.RandomState(7)
W0 = RNG.randn(4, 3)
B0 = RNG.randn(3)
X0 = RNG.randn(5, 4)


def _model(dtype):
    w = kf.Variable(W0.astype(dtype))
    b = kf.Variable(B0.astype(dtype))

    def loss(x):
        h = kf.tanh(kf.matmul(x, w) + b)
        return kf.reduce_sum(h * h) + kf.reduce_mean(kf.nn.relu(x))
    return w, b, loss


def _grads(fn, x, w, b):
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return [float(y)] + [g.numpy() for g in tape.gradient(y, [x, w, b])]


def _finite_differences(loss, x, w, b, eps=1e-6):
    """Central differences of loss on float64 copies of x, w and b."""
    out = []
    for target in ("x", "w", "b"):
        base = {"x": x.numpy().copy(), "w": w.numpy().copy(), "b": b.numpy().copy()}
        grad = np.zeros_like(base[target])
        for i in np.ndindex(grad.shape):
            values = []
            for sign in (1, -1):
                v = {k: a.copy() for k, a in base.items()}
                v[target][i] += sign * eps
                w.assign(v["w"])
                b.assign(v["b"])
                values.append(float(loss(kf.constant(v["x"]))))
            grad[i] = (values[0] - values[1]) / (2 * eps)
        out.append(grad)
    w.assign(base["w"])
    b.assign(base["b"])
    return out


def test_outer_tape_runs_forward_and_backward_natively():
    w, b, loss = _model(np.float32)
    fn = kf.function(loss, jit_compile=True)
    x = kf.constant(X0.astype(np.float32))
    before = jit.stats["calls"]
    got = _grads(fn, x, w, b)
    assert jit.stats["calls"] - before == 2  # one compiled forward, one compiled backward
    grad = jit_grad.gradient_for(fn.get_concrete_function(x))
    assert grad is not None and grad.compiled
    want = _grads(kf.function(loss), x, w, b)
    eager = _grads(loss, x, w, b)
    for a, c, e in zip(got, want, eager):
        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
    # a second call reuses both compiled functions
    before = jit.stats["calls"]
    _grads(fn, x, w, b)
    assert jit.stats["calls"] - before == 2


def test_outer_tape_gradients_match_finite_differences():
    w, b, loss = _model(np.float64)
    fn = kf.function(loss, jit_compile=True)
    x = kf.constant(X0 + 0.1)  # away from relu's kink
    got = _grads(fn, x, w, b)[1:]
    for a, f in zip(got, _finite_differences(fn, x, w, b)):
        np.testing.assert_allclose(a, f, rtol=1e-5, atol=1e-7)


def test_gradient_uses_the_values_the_forward_pass_read():
    w, b, loss = _model(np.float32)
    fn = kf.function(loss, jit_compile=True)
    x = kf.constant(X0.astype(np.float32))
    want = _grads(loss, x, w, b)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    w.assign(w * 3.0)  # after the call, before the gradient: TF keeps the forward's values
    got = tape.gradient(y, [x, w, b])
    for a, e in zip(got, want[1:]):
        np.testing.assert_allclose(a.numpy(), e, rtol=1e-5, atol=1e-6)


def test_outer_tape_through_a_compiled_loop_and_nested_outputs():
    def f(x, n):
        s = x
        for _ in kf.range(n):
            s = kf.sin(s) * 1.5
        return {"s": s, "count": kf.shape(x)[0], "total": kf.reduce_sum(s * x)}

    fn = kf.function(f, jit_compile=True)
    x = kf.constant(np.linspace(0.1, 1.0, 6).astype(np.float32))
    n = kf.constant(4)
    before = jit.stats["calls"]
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        out = fn(x, n)
    got = [tape.gradient(out["total"], x), tape.gradient(out["s"], x)]
    assert jit.stats["calls"] - before == 3
    assert int(out["count"]) == 6
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        ref = f(x, n)
    want = [tape.gradient(ref["total"], x), tape.gradient(ref["s"], x)]
    for a, e in zip(got, want):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)


def test_functions_with_side_effects_are_inlined_under_a_tape():
    v = kf.Variable(1.0)
    counter = kf.Variable(0)

    def f(x):
        counter.assign_add(1)  # a recomputation would count twice
        return x * v

    fn = kf.function(f, jit_compile=True)
    x = kf.constant(2.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    assert float(tape.gradient(y, v)) == 2.0 and int(counter) == 1
    assert jit_grad.gradient_for(fn.get_concrete_function(x)) is None


def test_train_step_with_the_tape_inside_compiles_both_directions():
    w, b, loss = _model(np.float32)

    def step(x):
        with kf.GradientTape() as tape:
            value = loss(x)
        gw, gb = tape.gradient(value, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return value

    fn = kf.function(step, jit_compile=True)
    x = kf.constant(X0.astype(np.float32))
    before = jit.stats["calls"]
    fn(x)
    assert jit.stats["calls"] - before == 1  # forward and backward: one native call
    source = fn.experimental_get_compiler_ir(x)()
    # x @ w and the gradient x.T @ dy: NumPy's BLAS (blas.py) or numba's np.dot; with
    # NumPy's BLAS the gradient's product is one GEMM into w (jit/analysis.gemm_updates)
    assert source.count("np.dot(") + source.count("kf_helpers.matmul_f") + \
        source.count("kf_helpers.gemm_update_f") >= 2


def test_second_order_gradients_through_a_jit_call():
    fn = kf.function(lambda t: kf.reduce_sum(t * t * t), jit_compile=True)
    x = kf.constant([1.0, 2.0, 3.0])
    with kf.GradientTape() as outer:
        outer.watch(x)
        with kf.GradientTape() as inner:
            inner.watch(x)
            y = fn(x)
        g = inner.gradient(y, x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(outer.gradient(g, x).numpy(), 6 * x.numpy())


def test_rnn_loop_weight_and_bias_gradients_are_summed_after_the_loop():
    """An RNN's weight gradients (A^T B per step) and bias gradient (a column sum per step)
    become one GEMM / one column sum over stacked steps; they equal the eager gradients."""
    rng = np.random.default_rng(3)
    wx = kf.constant(rng.standard_normal((3, 5)).astype(np.float32) * 0.5)
    wh = kf.constant(rng.standard_normal((5, 5)).astype(np.float32) * 0.5)
    b = kf.constant(rng.standard_normal(5).astype(np.float32))
    xs = kf.constant(rng.standard_normal((4, 2, 3)).astype(np.float32))

    def grads(xs, wx, wh, b):
        with kf.GradientTape() as tape:
            tape.watch([wx, wh, b])
            h = kf.zeros([2, 5])
            for i in kf.range(4):
                h = kf.tanh(kf.matmul(xs[i], wx) + kf.matmul(h, wh) + b)
            loss = kf.reduce_sum(h * h)
        return tape.gradient(loss, [wx, wh, b])

    fn = kf.function(grads, jit_compile=True)
    source = fn.experimental_get_compiler_ir(xs, wx, wh, b)()
    assert "= kf_helpers.columns_sum(stack" in source
    # dh @ wh^T in the backward loop: wh^T made contiguous once before it, no BLAS transpose
    assert "wh_t = np.ascontiguousarray(wh.T)" in source and \
        "np.ascontiguousarray(wh_t), False, False)" in source
    for got, want in zip(fn(xs, wx, wh, b), grads(xs, wx, wh, b)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_a_loop_that_writes_the_weight_keeps_the_transposed_product():
    """No W^T hoisting when the loop body assigns a variable (W could change under the
    copy): the product stays a transposed GEMM of the current value."""
    w = kf.Variable(np.eye(3, dtype=np.float32))

    def run(x):
        before = w.read_value()
        for _ in kf.range(3):
            x = kf.matmul(x, before, transpose_b=True) + kf.matmul(x, w.read_value(),
                                                                  transpose_b=True)
            w.assign_add(kf.ones([3, 3]))
        return x
    x = kf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    fn = kf.function(run, jit_compile=True)
    assert "_t = np.ascontiguousarray(" not in fn.experimental_get_compiler_ir(x)()
    got = fn(x).numpy()
    w.assign(np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(got, kf.function(run)(x).numpy())
