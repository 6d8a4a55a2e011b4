"""Weight updates that are one GEMM into the variable (jit/analysis.gemm_updates).

Under jit_compile=True, `v.assign_sub(s * (A @ B))` (assign_add too, any transposes) is
one ?gemm with beta 1 writing into v's array. It rounds once where the separate product,
scaling and subtraction round three times, so values agree with the Python runtime within
float32 rtol 1e-5 / atol 1e-6 over several steps (float64: 1e-12), not bit for bit. Never
inside an autoclustered cluster (the update stays with the Python runtime, whose bits
autoclustering keeps), nor where A or B may be a view of v or of a variable written
before the GEMM would run.
"""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.runtime.jit import blas

pytest.importorskip("numba")
pytestmark = pytest.mark.skipif(not blas.available(),
                                reason="NumPy's BLAS has no 64-bit CBLAS symbols here")
TOLERANCE = {np.float32: dict(rtol=1e-5, atol=1e-6), np.float64: dict(rtol=1e-12, atol=1e-12)}


def _transposes_step(variables, a, b):
    """Four weights, one per transpose pair, updated from products used by nothing else."""
    w_nn, w_tn, w_nt, w_tt = variables
    w_nn.assign_sub(0.1 * kf.matmul(a, b))
    w_tn.assign_sub(kf.matmul(a, b, transpose_a=True) * 0.05)
    w_nt.assign_add(0.2 * kf.matmul(a, b, transpose_b=True))
    w_tt.assign_sub(0.1 * kf.matmul(a, b, transpose_a=True, transpose_b=True))
    return kf.reduce_sum(w_nn.read_value())  # a read after the update sees it


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_updates_are_one_gemm_for_every_transpose(dtype, without_autoclustering):
    rng = np.random.default_rng(3)
    a = kf.constant(rng.standard_normal((6, 6)).astype(dtype))
    b = kf.constant(rng.standard_normal((6, 6)).astype(dtype))
    start = [rng.standard_normal((6, 6)).astype(dtype) for _ in range(4)]
    runs = []
    for jit_compile in (True, False):
        variables = [kf.Variable(s) for s in start]
        f = kf.function(lambda a, b: _transposes_step(variables, a, b),
                        jit_compile=jit_compile)
        if jit_compile:
            source = f.experimental_get_compiler_ir(a, b)()
            bits = np.dtype(dtype).itemsize * 8
            assert source.count(f"kf_helpers.gemm_update_f{bits}(") == 4
            assert "scaled_update(" not in source and "matmul_f" not in source
        values = []
        for step in range(4):
            held = variables[step].read_value() if step % 2 else None  # shared: a copy
            total = float(f(a, b))
            values.append([v.numpy() for v in variables])
            assert total == pytest.approx(float(values[-1][0].sum()), rel=1e-6)
            if held is not None:  # the read taken before the step kept its value
                np.testing.assert_array_equal(held.numpy(), values[-2][step])
        runs.append(values)
    for got, want in zip(*runs):
        for g, w in zip(got, want):
            assert g.dtype == dtype
            np.testing.assert_allclose(g, w, **TOLERANCE[dtype])


def test_mlp_train_step_agrees_with_the_python_runtime(without_autoclustering):
    """GradientTape + SGD on a 2-layer ReLU MLP: both weight updates are one GEMM each."""
    rng = np.random.default_rng(5)
    x = kf.constant(rng.standard_normal((8, 12)).astype(np.float32))
    y = kf.constant(rng.integers(0, 4, 8).astype(np.int32))
    start = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in
             ((12, 16), (16,), (16, 4), (4,))]
    runs = []
    for jit_compile in (True, False):
        variables = [kf.Variable(s) for s in start]

        def step(x, y):
            with kf.GradientTape() as tape:
                h = kf.nn.relu(kf.matmul(x, variables[0]) + variables[1])
                logits = kf.matmul(h, variables[2]) + variables[3]
                loss = kf.reduce_mean(kf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=logits))
            for v, g in zip(variables, tape.gradient(loss, variables)):
                v.assign_sub(0.5 * g)
            return loss
        f = kf.function(step, jit_compile=jit_compile)
        if jit_compile:
            assert f.experimental_get_compiler_ir(x, y)().count("gemm_update_f32(") == 2
        runs.append([(float(f(x, y)), [v.numpy() for v in variables]) for _ in range(5)])
    for (loss, got), (loss_want, want) in zip(*runs):
        assert loss == pytest.approx(loss_want, rel=1e-5)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, **TOLERANCE[np.float32])


def test_no_gemm_where_an_operand_may_see_the_write(without_autoclustering):
    """`w -= s * (w @ g)` reads the array it would write; `w1 -= s * (x^T w2)` after an
    in-place write of w2 (the read of w1 used later puts the GEMM after that write):
    both keep the separate product, and the values the Python runtime gives."""
    rng = np.random.default_rng(6)
    x = kf.constant(rng.standard_normal((5, 5)).astype(np.float32))
    start = [rng.standard_normal((5, 5)).astype(np.float32) for _ in range(3)]
    runs = []
    for jit_compile in (True, False):
        w, w1, w2 = (kf.Variable(s) for s in start)

        def step(x):
            w.assign_sub(0.1 * kf.matmul(w, x))
            p = kf.matmul(x, w2, transpose_a=True)
            w2.assign_sub(0.5 * x)
            out = kf.reduce_sum(kf.matmul(x, w1))
            w1.assign_sub(0.1 * p)
            return out
        f = kf.function(step, jit_compile=jit_compile)
        if jit_compile:
            assert "gemm_update" not in f.experimental_get_compiler_ir(x)()
        runs.append([(float(f(x)), [v.numpy() for v in (w, w1, w2)]) for _ in range(3)])
    for (out, got), (out_want, want) in zip(*runs):
        assert out == pytest.approx(out_want, rel=1e-5)
        for g, v in zip(got, want):
            np.testing.assert_allclose(g, v, **TOLERANCE[np.float32])


def test_autoclustering_keeps_the_python_runtimes_bits(monkeypatch):
    """An ordinary function under autoclustering: the update stays with the Python
    runtime (stateful), so the values equal the unclustered run bit for bit."""
    monkeypatch.setenv("KF_JIT_MIN_CLUSTER_SIZE", "2")
    rng = np.random.default_rng(7)
    a = kf.constant(rng.standard_normal((6, 5)).astype(np.float32))
    b = kf.constant(rng.standard_normal((6, 4)).astype(np.float32))
    start = rng.standard_normal((5, 4)).astype(np.float32)
    before = kf.config.optimizer.get_jit()
    runs = []
    try:
        for mode in ("autoclustering", False):
            kf.config.optimizer.set_jit(mode)
            w = kf.Variable(start)

            def step(a, b):
                w.assign_sub(0.1 * kf.matmul(a * 2.0, b + 1.0, transpose_a=True))
                return kf.reduce_sum(a)
            f = kf.function(step)
            graph = f.get_concrete_function(a, b).graph
            clusters = [op.attrs["cluster"] for op in graph.operations
                        if op.type == "JitCluster"]
            assert bool(clusters) == (mode == "autoclustering")
            for _ in range(3):
                f(a, b)
            runs.append(w.numpy())
            for cluster in clusters:
                assert cluster.compiled is True and "gemm_update" not in cluster._run.source
    finally:
        kf.config.optimizer.set_jit(before or False)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_bias_and_relu_run_in_place_over_the_gemms_output(without_autoclustering):
    """relu(x @ w + b), b + x @ w: the add (and max) write over the GEMM's own output,
    with the Python runtime's bits; a product used twice keeps its own array."""
    rng = np.random.default_rng(8)
    x = kf.constant(rng.standard_normal((7, 5)).astype(np.float32))
    w = kf.constant(rng.standard_normal((5, 6)).astype(np.float32))
    b = kf.constant(rng.standard_normal(6).astype(np.float32))

    def f(x, w, b):
        h = kf.nn.relu(kf.matmul(x, w) + b)
        logits = b + kf.matmul(h, w, transpose_b=True) @ w
        shared = kf.matmul(x * 2.0, w)
        return h, logits, shared + b, shared * 2.0
    jit = kf.function(f, jit_compile=True)
    assert jit.experimental_get_compiler_ir(x, w, b)().count("kf_helpers.bias_add(") == 2
    for got, want in zip(jit(x, w, b), kf.function(f)(x, w, b)):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_keras_sgd_apply_gradients_updates_kernels_with_one_gemm(without_autoclustering):
    """keras.optimizers.SGD's `variable.assign_sub(gradient * learning_rate)` (a read of
    its learning-rate variable) on Dense kernels: one GEMM each, the biases one loop."""
    keras = kf.keras
    rng = np.random.default_rng(9)
    x = kf.constant(rng.standard_normal((8, 12)).astype(np.float32))
    y = kf.constant(np.arange(8) % 4)
    model = keras.Sequential([keras.Input((12,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(4)])
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    start = [v.numpy() for v in model.variables]
    runs = []
    for jit_compile in (True, False):
        for v, w in zip(model.variables, start):
            v.assign(w)
        optimizer = keras.optimizers.SGD(0.1)

        def step(x, y):
            with kf.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        f = kf.function(step, jit_compile=jit_compile)
        if jit_compile:
            assert f.experimental_get_compiler_ir(x, y)().count("gemm_update_f32(") == 2
        runs.append(([float(f(x, y)) for _ in range(3)],
                     [v.numpy() for v in model.trainable_variables]))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-5)
    for g, w in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(g, w, **TOLERANCE[np.float32])
