"""elementwise_chain: long elementwise expressions on big float32 vectors (issue 5).

Two expressions on 16M float32 elements (1M with --quick): the tanh approximation of
GELU, and a degree-6 polynomial in Horner form (no transcendental). Each is timed as
NumPy written naively (one temporary per op: the floor), NumPy in place (`out=` scratch
buffers), kilnflow eager and @kf.function, plus fused-engine candidates: NumPy ufuncs
over cache-sized blocks spread over a thread pool, and numexpr / numba when installed.
Every row is also a ratio to np.copyto of the same size, the memory-bandwidth floor.
x**3 is written x*x*x everywhere: NumPy's pow is a transcendental call, a trap that
would flatter whichever variant avoided it.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator, Optional

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads import _common

NAME = "elementwise_chain"
DESCRIPTION = "tanh-approx GELU and a Horner polynomial on 16M float32 (1M with --quick)"
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
POLY = (0.02, -0.1, 0.3, -0.5, 0.7, 1.1, 0.25)  # highest power first
BLOCK = 1 << 15  # elements per block: 128 KiB of float32, a few scratch buffers fit in L2


def gelu(x: Any, ops: Any) -> Any:
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), with ops = np or kf."""
    return 0.5 * x * (1.0 + ops.tanh(SQRT_2_OVER_PI * (x + 0.044715 * (x * x * x))))


def poly(x: Any, ops: Any = None) -> Any:
    y = POLY[0] * x + POLY[1]
    for c in POLY[2:]:
        y = y * x + c
    return y


def _gelu_kf(x):
    return gelu(x, kf)


def _poly_kf(x):
    return poly(x)


def gelu_inplace(x: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """GELU with two buffers and no allocation: the best a careful NumPy user writes."""
    np.multiply(x, x, out=tmp)
    tmp *= x
    tmp *= 0.044715
    tmp += x
    tmp *= SQRT_2_OVER_PI
    np.tanh(tmp, out=tmp)
    tmp += 1.0
    np.multiply(tmp, x, out=out)
    out *= 0.5
    return out


def poly_inplace(x: np.ndarray, out: np.ndarray, tmp: Optional[np.ndarray] = None
                 ) -> np.ndarray:
    np.multiply(x, POLY[0], out=out)
    out += POLY[1]
    for c in POLY[2:]:
        out *= x
        out += c
    return out


class Blocked:
    """Evaluate an in-place kernel over cache-sized blocks on a thread pool (the ufuncs
    release the GIL): the 'NumPy blocks x threads' engine candidate of issue 5."""

    def __init__(self, kernel: Callable, size: int, threads: int):
        self.kernel = kernel
        self.pool = ThreadPoolExecutor(threads)
        self.scratch = [np.empty(BLOCK, np.float32) for _ in range(threads)]
        self.threads = threads
        self.size = size

    def __call__(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        per = -(-self.size // self.threads)

        def part(t: int) -> None:
            tmp = self.scratch[t]
            for start in range(t * per, min(self.size, (t + 1) * per), BLOCK):
                stop = min(start + BLOCK, (t + 1) * per, self.size)
                self.kernel(x[start:stop], out[start:stop], tmp[:stop - start])
        list(self.pool.map(part, range(self.threads)))
        return out


def cases(config: Config) -> Iterator[Case]:
    size = config.pick(1 << 24, 1 << 20, 1 << 10)
    threads = os.cpu_count() or 1
    rng = np.random.default_rng(5)
    x_np = rng.standard_normal(size).astype(np.float32)
    yield _case("GELU (tanh approximation)", x_np, lambda a: gelu(a, np), gelu_inplace,
                _gelu_kf, "gelu", threads,
                [Target("GELU under @kf.function within 4x of the copy floor",
                        "kilnflow function", "copy_ratio", 4.0,
                        peers="NumPy naive 39x, NumPy in place 12x, numexpr 33x, numba "
                              "parallel 27x, TF tf.function 8.5x, TF+XLA 5.5x, jax.jit "
                              "4.5x, torch.compile 7.8x"),
                 Target("GELU under @kf.function >= 3x faster than NumPy eager",
                        "kilnflow function", "speedup", 3.0, other="NumPy naive")])
    yield _case("polynomial, degree 6, Horner form", x_np, poly, poly_inplace, _poly_kf,
                "poly", threads,
                [Target("polynomial chain under @kf.function within 2x of the copy floor",
                        "kilnflow function", "copy_ratio", 2.0)])


def _case(title: str, x_np: np.ndarray, naive: Callable, inplace: Callable, kf_fn: Callable,
          kind: str, threads: int, targets: list) -> Case:
    size = x_np.size
    out = np.empty_like(x_np)
    tmp = np.empty_like(x_np)
    x = kf.constant(x_np)
    compiled = kf.function(kf_fn)
    blocked = Blocked(inplace, size, threads)
    expected = naive(x_np.astype(np.float64)).astype(np.float32)
    check = {"NumPy naive": naive(x_np), "NumPy in place": inplace(x_np, out, tmp).copy(),
             "kilnflow eager": kf_fn(x).numpy(),
             "kilnflow function": _common.quiet(compiled)(x).numpy(),
             "blocked": blocked(x_np, out).copy()}
    for what, got in check.items():
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5,
                                   err_msg=f"{title}: {what}")
    variants = [
        Variant("np.copyto (bandwidth floor)", lambda: np.copyto(out, x_np)),
        Variant("NumPy naive", lambda: naive(x_np)),
        Variant("NumPy in place", lambda: inplace(x_np, out, tmp)),
        Variant(f"NumPy blocks x {threads} threads", lambda: blocked(x_np, out)),
        Variant("kilnflow eager", lambda: kf_fn(x)),
        Variant("kilnflow function", lambda: compiled(x)),
        _numexpr_variant(kind, x_np, out),
        _numba_variant(kind, x_np, out),
    ] + _common.peer_variants(peers(kind, x_np))
    passes = ", ".join(k for k, on in kf.config.optimizer.get_experimental_options().items()
                       if on)
    return Case(f"{title} on {size:,} float32", variants, floor="NumPy naive",
                copy_floor="np.copyto (bandwidth floor)", targets=targets,
                notes=[f"graph passes on: {passes or 'none'}", _common.peers_note()])


NUMEXPR = {
    "gelu": "0.5 * x * (1 + tanh(%r * (x + 0.044715 * (x * x * x))))" % SQRT_2_OVER_PI,
    "poly": "(((((%r * x + %r) * x + %r) * x + %r) * x + %r) * x + %r) * x + %r" % POLY,
}


def _numexpr_variant(kind: str, x: np.ndarray, out: np.ndarray) -> Variant:
    name = "numexpr (all threads)"
    ne = _common.peer("numexpr")
    if ne is None:
        return Variant(name, unavailable="numexpr is not installed")
    ne.set_num_threads(os.cpu_count() or 1)  # OMP_NUM_THREADS=1 would pin it otherwise
    expr = NUMEXPR[kind]
    return Variant(name, lambda: ne.evaluate(expr, local_dict={"x": x}, out=out))


def _numba_variant(kind: str, x: np.ndarray, out: np.ndarray) -> Variant:
    name = "numba parallel"
    numba = _common.peer("numba")
    if numba is None:
        return Variant(name, unavailable="numba is not installed")
    c0, c1, c2, c3, c4, c5, c6 = (np.float32(c) for c in POLY)
    k = np.float32(SQRT_2_OVER_PI)

    if kind == "gelu":
        @numba.njit(parallel=True, fastmath=False)
        def kernel(x, out):
            for i in numba.prange(x.size):
                v = x[i]
                out[i] = np.float32(0.5) * v * (np.float32(1) + np.tanh(
                    k * (v + np.float32(0.044715) * v * v * v)))
    else:
        @numba.njit(parallel=True)
        def kernel(x, out):
            for i in numba.prange(x.size):
                v = x[i]
                out[i] = (((((c0 * v + c1) * v + c2) * v + c3) * v + c4) * v + c5) * v + c6
    kernel(x, out)
    return Variant(name, lambda: kernel(x, out))


def peers(kind: str, x_np: np.ndarray, jit_compile: bool = False) -> list:
    """(label, module, build) for TF's tf.function, jax.jit and torch.compile of the chain;
    with `jit_compile` TF's function is compiled by XLA."""
    def expr(t: Any, ops: Any) -> Any:
        return gelu(t, ops) if kind == "gelu" else poly(t)

    def tf_function(tf):
        f = tf.function(lambda t: expr(t, tf.math), jit_compile=jit_compile or None)
        x = tf.constant(x_np)
        f(x)
        return lambda: f(x)

    def jax_jit(jax):
        f = jax.jit(lambda t: expr(t, jax.numpy))
        x = jax.numpy.asarray(x_np)
        f(x).block_until_ready()
        return lambda: f(x).block_until_ready()

    def torch_compile(torch):
        f = torch.compile(lambda t: expr(t, torch))
        x = torch.from_numpy(x_np)
        f(x)
        return lambda: f(x)

    return [(_common.tf_label(jit_compile), "tensorflow", tf_function),
            ("JAX jax.jit", "jax", jax_jit),
            ("PyTorch torch.compile", "torch", torch_compile)]
