"""Measure the fused elementwise engine against its candidates (issue 5); not a test.

    OPENBLAS_NUM_THREADS=1 python -m benchmarks.measure_engine [--size N] [--repeat R]

Every variant runs in this one process, round-robin (so load from elsewhere hits them
alike), and is reported as the median time and as a ratio to np.copyto of the same size,
the memory-bandwidth floor. Candidates: NumPy naive and in place, kilnflow eager and
@kf.function (with and without fusion; with the numba backend when numba is importable
and the group has no transcendental), the NumPy-blocks engine at several block sizes and
thread counts, and numexpr / numba kernels written by hand (into a preallocated output). The figures and the choice are recorded in
kilnflow/runtime/ENGINE.md.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from typing import Any, Callable, Dict, List, Tuple

import numpy as np

import kilnflow as kf
from kilnflow.ops import fused
from kilnflow.runtime import fused_engine as engine
from kilnflow.passes import pipeline

# the workloads themselves, as the benchmark defines them
from benchmarks.workloads.elementwise_chain import POLY, gelu, gelu_inplace, poly, poly_inplace
from benchmarks.workloads.elementwise_chain import SQRT_2_OVER_PI as K


NUMEXPR = {"gelu": f"0.5 * x * (1 + tanh({K!r} * (x + 0.044715 * (x * x * x))))",
           "poly": "(((((%r * x + %r) * x + %r) * x + %r) * x + %r) * x + %r) * x + %r" % POLY}


def _numexpr(kind: str, x: np.ndarray, out: np.ndarray) -> Any:
    try:
        import numexpr
    except ImportError:
        return None
    numexpr.set_num_threads(os.cpu_count() or 1)
    expr = NUMEXPR[kind]
    return lambda: numexpr.evaluate(expr, local_dict={"x": x}, out=out)


def _numba(kind: str, x: np.ndarray, out: np.ndarray) -> Any:
    try:
        import numba
    except ImportError:
        return None
    c0, c1, c2, c3, c4, c5, c6 = (np.float32(v) for v in POLY)
    k, a = np.float32(K), np.float32(0.044715)
    half, one = np.float32(0.5), np.float32(1.0)
    if kind == "gelu":
        @numba.njit(parallel=True)
        def kernel(x, out):
            for i in numba.prange(x.size):
                v = x[i]
                out[i] = half * v * (one + np.tanh(k * (v + a * v * v * v)))
    else:
        @numba.njit(parallel=True)
        def kernel(x, out):
            for i in numba.prange(x.size):
                v = x[i]
                out[i] = (((((c0 * v + c1) * v + c2) * v + c3) * v + c4) * v + c5) * v + c6
    kernel(x, out)
    return lambda: kernel(x, out)


def _engine(block_bytes: int, threads: int, fn: Callable) -> Callable:
    def run() -> Any:
        saved = engine.BLOCK_BYTES, engine.get_num_threads()
        engine.BLOCK_BYTES = block_bytes
        engine.set_num_threads(threads)
        try:
            return fn()
        finally:
            engine.BLOCK_BYTES = saved[0]
            engine.set_num_threads(saved[1])
    return run


def _numpy_backend(fn: Callable) -> Callable:
    def run() -> Any:
        engine.set_backend("numpy")
        try:
            return fn()
        finally:
            engine.set_backend("auto")
    return run


def _program_of(compiled: Any, x: Any) -> Any:
    graph = compiled.get_concrete_function(x).graph
    (op,) = [op for op in graph.operations if op.opdef is fused.FUSED]
    return op.attrs["program"]


def variants(kind: str, x_np: np.ndarray, sweep: bool) -> List[Tuple[str, Callable]]:
    out, tmp = np.empty_like(x_np), np.empty_like(x_np)
    x = kf.constant(x_np)
    py = gelu if kind == "gelu" else poly
    inplace = gelu_inplace if kind == "gelu" else poly_inplace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = kf.function(lambda t: py(t, kf))
        compiled(x)
        saved = pipeline.get_options()
        pipeline.set_options({"fuse_elementwise": False})
        unfused = kf.function(lambda t: py(t, kf))
        unfused(x)
        pipeline.set_options(saved)
    want = py(x_np.astype(np.float64), np).astype(np.float32)
    np.testing.assert_allclose(compiled(x).numpy(), want, rtol=1e-4, atol=1e-5)
    rows = [("np.copyto (floor)", lambda: np.copyto(out, x_np)),
            ("NumPy naive", lambda: py(x_np, np)),
            ("NumPy in place", lambda: inplace(x_np, out, tmp)),
            ("kilnflow eager", lambda: py(x, kf)),
            ("kilnflow function, unfused", lambda: unfused(x)),
            ("kilnflow function", lambda: compiled(x))]  # numba for arithmetic, if any
    if engine._numba() is not None and engine.numba_source(
            _program_of(compiled, x), [True]) is not None:
        rows.append(("kilnflow function, NumPy blocks", _numpy_backend(lambda: compiled(x))))
    if sweep:
        for threads in (1, os.cpu_count() or 1):
            for kib in (32, 64, 128, 256, 512, 1024):
                rows.append((f"engine {kib:4d} KiB x {threads} threads", _numpy_backend(
                    _engine(kib << 10, threads, lambda: compiled(x)))))
    for name, make in (("numexpr", _numexpr), ("numba parallel", _numba)):
        run = make(kind, x_np, out)
        if run is not None:
            rows.append((name, run))
    return rows


def measure(rows: List[Tuple[str, Callable]], repeat: int) -> Dict[str, List[float]]:
    times: Dict[str, List[float]] = {name: [] for name, _ in rows}
    for _ in range(repeat):
        for name, fn in rows:
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1 << 24)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--no-sweep", action="store_true")
    args = parser.parse_args()
    x_np = np.random.default_rng(0).standard_normal(args.size).astype(np.float32)
    print(f"{args.size:,} float32, {args.repeat} rounds, {os.cpu_count()} CPUs, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}, "
          f"engine default: blocks within {engine.CACHE_BYTES >> 10} KiB of cache x "
          f"{engine.get_num_threads()} threads")
    for kind in ("gelu", "poly"):
        rows = variants(kind, x_np, not args.no_sweep)
        times = measure(rows, args.repeat)
        # medians, and minima (the least disturbed run, when other work shares the CPUs)
        for label, pick in (("median", statistics.median), ("min", min)):
            best = {name: pick(t) for name, t in times.items()}
            floor, naive = best["np.copyto (floor)"], best["NumPy naive"]
            print(f"\n{kind}, {label}s:{' ' * (26 - len(kind) - len(label))}"
                  f"{'ms':>8} {'x copy':>8} {'vs naive':>9}")
            for name, _ in rows:
                t = best[name]
                print(f"  {name:32s} {t * 1e3:8.1f} {t / floor:8.2f} {naive / t:8.2f}x")


if __name__ == "__main__":
    main()
