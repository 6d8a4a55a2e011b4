"""Random ops under jit_compile=True (kilnflow/runtime/jit/random_ops.py) against the Python
runtime (the same kf.function without it): draws of 1M values and a keras train step with
Dropout. Medians of interleaved calls in one process, one thread; each pair is checked
equal first (bitwise for the draws; the train step's float32 sums may round 1 ulp apart).

    python3 -m benchmarks.jit_random [--repeats 31]
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Callable, List

import numpy as np

import kilnflow as kf
from kilnflow import keras


def _paired(a: Callable[[], Any], b: Callable[[], Any], repeats: int) -> tuple:
    """Median seconds of a() and b(), called alternately (the load hits both alike)."""
    a(), b()
    times: List[list] = [[], []]
    for _ in range(repeats):
        for k, call in enumerate((a, b)):
            start = time.perf_counter()
            call()
            times[k].append(time.perf_counter() - start)
    return float(np.median(times[0])), float(np.median(times[1]))


def _draws(repeats: int) -> None:
    seed = kf.constant([1, 2])
    for name, draw in (("stateless_uniform 1M float32", lambda s: kf.random.stateless_uniform(
                           [1 << 20], s)),
                       ("uniform 1M float32 (stateful)", lambda s: kf.random.uniform(
                           [1 << 20], seed=1)),
                       ("stateless_normal 1M float32", lambda s: kf.random.stateless_normal(
                           [1 << 20], s))):
        python, compiled = kf.function(draw), kf.function(draw, jit_compile=True)
        if "stateful" not in name:
            assert np.array_equal(python(seed).numpy(), compiled(seed).numpy())
        _report(name, *_paired(lambda: python(seed), lambda: compiled(seed), repeats))


def _dropout_step(jit: bool) -> Callable[[], Any]:
    kf.random.set_seed(1)  # the same dropout stream; the weights are set below
    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(256, "relu"),
                              keras.layers.Dropout(0.5), keras.layers.Dense(10)])
    rng = np.random.default_rng(2)
    model.set_weights([rng.normal(0, 0.05, w.shape).astype(np.float32)
                       for w in model.get_weights()])
    opt = keras.optimizers.SGD(0.01)
    x = np.random.default_rng(0).random((64, 784), np.float32)
    y = np.random.default_rng(1).random((64, 10), np.float32)

    @kf.function(jit_compile=jit)
    def step(x, y):
        with kf.GradientTape() as tape:
            loss = kf.reduce_mean((model(x, training=True) - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return lambda: step(x, y)


def _report(name: str, python: float, compiled: float) -> None:
    print(f"{name:34s} Python runtime {python * 1e3:8.3f} ms   jit {compiled * 1e3:8.3f} ms"
          f"   x{python / compiled:5.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31)
    repeats = parser.parse_args().repeats
    # one thread for BLAS and the engine: two spin-waiting OpenBLAS threads on the shared
    # 2 cores made every GEMM many times slower (JIT.md)
    kf.config.threading.set_intra_op_parallelism_threads(1)
    _draws(repeats)
    python, compiled = _dropout_step(False), _dropout_step(True)
    np.testing.assert_allclose(python().numpy(), compiled().numpy(), rtol=1e-4)
    _report("Dropout MLP 784-256-10 train step", *_paired(python, compiled, repeats))


if __name__ == "__main__":
    main()
