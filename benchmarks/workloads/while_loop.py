"""while_loop: tensor-dependent Python loops that AutoGraph turns into while ops (issue 4).

Newton's square root on a [1000] float32 vector, iterated until the relative residual
is below 1e-6 (`while` on a tensor condition); and `for i in range(n)` with n a tensor,
s = s * 0.5 + i (n = 10000). Both are plain Python control flow inside @kf.function.
Figures are per loop iteration; the floor is the same loop over NumPy values. Eager
kilnflow runs the same Python loops today; the function rows wait for AutoGraph's
while loops.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads import _common

NAME = "while_loop"
DESCRIPTION = "Newton sqrt until convergence on [1000]; for i in range(n) accumulate, n=10000"
TOLERANCE = 1e-6


def newton_sqrt(a):
    """sqrt(a) by Newton's method from x = a; the loop condition is a tensor."""
    x = a
    while kf.reduce_max(kf.abs(x * x - a) / a) > TOLERANCE:
        x = 0.5 * (x + a / x)
    return x


def newton_sqrt_numpy(a: np.ndarray) -> tuple:
    """The same loop in NumPy (float32 throughout); returns (root, iterations)."""
    x = a
    iterations = 0
    while np.max(np.abs(x * x - a) / a) > TOLERANCE:
        x = 0.5 * (x + a / x)
        iterations += 1
        if iterations > 200:
            raise RuntimeError("Newton's method did not converge")
    return x, iterations


def accumulate(n):
    """s = s * 0.5 + i for i in range(n), with n a tensor."""
    s = kf.constant(0.0)
    for i in range(n):
        s = s * 0.5 + kf.cast(i, kf.float32)
    return s


def accumulate_numpy(n: int) -> np.float32:
    s = np.float32(0.0)
    half = np.float32(0.5)
    for i in range(n):
        s = s * half + np.float32(i)
    return s


def peers(kind: str, value: Any, expected: Any, jit_compile: bool = False) -> list:
    """(label, module, build) for TF's tf.function (AutoGraph loop; compiled by XLA with
    `jit_compile`) and jax.jit (lax loops) of `kind`: 'newton' on the array `value`, or
    'accumulate' to the int `value`. Each build checks its result against `expected`."""
    def checked(run: Any) -> Any:
        np.testing.assert_allclose(np.asarray(run()), expected, rtol=1e-6)
        return run

    def tf_function(tf):
        if kind == "newton":
            def loop(a):
                x = a
                while tf.reduce_max(tf.abs(x * x - a) / a) > TOLERANCE:
                    x = 0.5 * (x + a / x)
                return x
        else:
            def loop(n):
                s = tf.constant(0.0)
                for i in tf.range(n):
                    s = s * 0.5 + tf.cast(i, tf.float32)
                return s
        f = tf.function(loop, jit_compile=jit_compile or None)
        arg = tf.constant(value)
        return checked(lambda: f(arg))

    def jax_jit(jax):
        jnp, lax = jax.numpy, jax.lax
        if kind == "newton":
            def loop(a):
                return lax.while_loop(lambda x: jnp.max(jnp.abs(x * x - a) / a) > TOLERANCE,
                                      lambda x: 0.5 * (x + a / x), a)
        else:
            def loop(n):
                return lax.fori_loop(0, n, lambda i, s: s * 0.5 + i.astype(jnp.float32),
                                     jnp.float32(0.0))
        f = jax.jit(loop)
        arg = jnp.asarray(value)
        return checked(lambda: f(arg).block_until_ready())

    return [(_common.tf_label(jit_compile), "tensorflow", tf_function),
            ("JAX jax.jit (lax loop)", "jax", jax_jit)]


def _function_variant(fn: Any, expected: np.ndarray, *args: Any) -> Variant:
    def build() -> Any:
        compiled = kf.function(fn)
        np.testing.assert_allclose(_common.quiet(compiled)(*args).numpy(), expected,
                                   rtol=1e-6)
        ops = {op.type for op in compiled.get_concrete_function(*args).graph.operations}
        if not any("While" in t for t in ops):
            raise AssertionError(f"no while op in the graph (ops: {sorted(ops)})")
        return lambda: compiled(*args)
    return _common.autograph_variant("kilnflow function (AutoGraph)", build)


def cases(config: Config) -> Iterator[Case]:
    rng = np.random.default_rng(6)
    length = config.pick(1000, smoke=8)
    a_np = rng.uniform(1.0, 1000.0, length).astype(np.float32)
    a = kf.constant(a_np)
    root, iterations = newton_sqrt_numpy(a_np)
    np.testing.assert_allclose(newton_sqrt(a).numpy(), root, rtol=1e-6)
    function = _function_variant(newton_sqrt, root, a)
    yield Case(
        f"Newton sqrt on [{length}] float32 until converged ({iterations} iterations)",
        [Variant("NumPy loop", lambda: newton_sqrt_numpy(a_np)),
         Variant("kilnflow eager", lambda: newton_sqrt(a)),
         function] + _common.peer_variants(peers("newton", a_np, root)),
        floor="NumPy loop", per_unit=("iteration", iterations),
        targets=[Target("Newton loop <= 15 us per iteration", "kilnflow function (AutoGraph)",
                        "per_unit", 15e-6,
                        peers="TF tf.function 47.8 us, PyTorch eager 39.7 us")],
        notes=[_common.peers_note()])

    n_value = config.pick(10000, smoke=10)
    n = kf.constant(n_value)
    expected = accumulate_numpy(n_value)
    np.testing.assert_allclose(accumulate(n).numpy(), expected, rtol=1e-6)
    function = _function_variant(accumulate, expected, n)
    yield Case(
        f"for i in range(n), s = s * 0.5 + i, n = {n_value} (a tensor)",
        [Variant("NumPy loop (float32 scalars)", lambda: accumulate_numpy(n_value)),
         Variant("kilnflow eager", lambda: accumulate(n)),
         function] + _common.peer_variants(peers("accumulate", n_value, expected)),
        floor="NumPy loop (float32 scalars)", per_unit=("iteration", n_value),
        targets=[Target("converted for loop <= 2 us per iteration",
                        "kilnflow function (AutoGraph)", "per_unit", 2e-6,
                        peers="TF tf.function 9.05 us")],
        notes=[_common.peers_note()])
