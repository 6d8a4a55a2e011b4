"""kf.config.optimizer.set_jit("autoclustering"): compilable runs of ordinary functions
run through the numba backend, the rest on the Python runtime, with the same results.

The whole default suite can run this way: `KF_JIT_AUTOCLUSTERING=1 python3 -m pytest -q
tests/ops` (KF_JIT_MIN_CLUSTER_SIZE=1 clusters even single ops); the slow test below runs
tests/ops like that in a subprocess (about 5 minutes).
"""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.passes import autocluster

pytest.importorskip("numba")


@pytest.fixture
def clustering(monkeypatch):
    monkeypatch.setenv("KF_JIT_MIN_CLUSTER_SIZE", "2")
    before = kf.config.optimizer.get_jit()
    kf.config.optimizer.set_jit("autoclustering")
    yield
    kf.config.optimizer.set_jit(before or False)


def _types(fn, *args):
    return [op.type for op in fn.get_concrete_function(*args).graph.operations]


def test_set_jit_values_as_tf():
    before = kf.config.optimizer.get_jit()
    try:
        kf.config.optimizer.set_jit(True)
        assert kf.config.optimizer.get_jit() == "autoclustering"
        kf.config.optimizer.set_jit(False)
        assert kf.config.optimizer.get_jit() == ""
        kf.config.optimizer.set_jit("autoclustering")
        assert kf.config.optimizer.get_jit() == "autoclustering"
        with pytest.raises(ValueError, match="set_jit"):
            kf.config.optimizer.set_jit("everything")
    finally:
        kf.config.optimizer.set_jit(before or False)


def test_compilable_runs_become_clusters_and_the_rest_stays(clustering):
    w = kf.Variable(np.linspace(-1, 1, 12).reshape(4, 3).astype(np.float32))

    def f(x):
        h = kf.nn.relu(kf.matmul(x, w) + 1.0)
        text = kf.strings.as_string(kf.reduce_sum(h))  # strings: the Python runtime
        return kf.reduce_mean(kf.tanh(h) * 2.0 + h), text

    x = kf.constant(np.random.RandomState(0).rand(5, 4).astype(np.float32))
    fn = kf.function(f)
    types = _types(fn, x)
    assert "JitCluster" in types and "AsString" in types and "ReadVariableOp" in types
    got = fn(x)
    kf.config.optimizer.set_jit(False)
    want = kf.function(f)(x)
    np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6)
    assert float(got[1].numpy()) == pytest.approx(float(want[1].numpy()), rel=1e-6)
    cluster = [op for op in fn.get_concrete_function(x).graph.operations
               if op.type == "JitCluster"][0].attrs["cluster"]
    assert cluster.compiled is True


def test_a_whole_loop_joins_a_cluster(clustering):
    def f(x):
        s = x
        for _ in kf.range(10):
            s = s * 0.5 + 1.0
        return kf.reduce_sum(s)

    x = kf.constant(np.arange(6, dtype=np.float32))
    fn = kf.function(f)
    assert "While" not in _types(fn, x)
    np.testing.assert_allclose(fn(x).numpy(), f(x).numpy(), rtol=1e-6)


def test_gradients_and_jit_compile_functions_under_autoclustering(clustering):
    w = kf.Variable(np.ones((3, 2), np.float32))

    def step(x):
        with kf.GradientTape() as tape:
            loss = kf.reduce_sum(kf.tanh(kf.matmul(x, w)) ** 2)
        w.assign_sub(0.1 * tape.gradient(loss, w))
        return loss

    x = kf.constant(np.random.RandomState(1).rand(4, 3).astype(np.float32))
    plain = kf.function(step)
    compiled = kf.function(step, jit_compile=True)  # lowers through the clusters
    first = float(plain(x))
    w.assign(np.ones((3, 2), np.float32))
    assert float(compiled(x)) == pytest.approx(first, rel=1e-6)


def test_without_the_switch_nothing_changes():
    assert kf.config.optimizer.get_jit() in ("", "autoclustering")
    kf.config.optimizer.set_jit(False)

    def f(x):
        return kf.reduce_sum(kf.exp(x) * 2.0 + kf.matmul(x, x))

    assert "JitCluster" not in _types(kf.function(f), kf.constant(np.eye(3, dtype=np.float32)))
    assert autocluster.get_jit() == ""


@pytest.mark.slow
def test_the_op_suite_passes_with_autoclustering():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # the default cluster size; with KF_JIT_MIN_CLUSTER_SIZE=1 (every op alone) the generic
    # tests' bitwise function == eager check sees 1-ulp float32 differences of numba's libm
    # (sin, tanh, log...) against NumPy's SIMD loops, and 3 tests read the generated code
    env = dict(os.environ, KF_JIT_AUTOCLUSTERING="1")
    env.pop("KF_JIT_MIN_CLUSTER_SIZE", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p",
                           "no:cacheprovider", "tests/ops"], cwd=root, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:]
