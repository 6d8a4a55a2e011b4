"""call_overhead: what one tiny op costs on top of NumPy, eagerly and through @kf.function.

Eager: kf.add on two [16] float32 tensors vs np.add on the same arrays (issue 2: <= 2.5x),
and `x + 1` with a Python scalar vs NumPy's `a + 1` (issue 16: <= 2.5x).
Compiled: a cached @kf.function computing `x + 1` on a [16] float32 tensor vs the same
`a + 1` in NumPy (issue 3: <= 3x). At 16 elements the arithmetic is free, so this is
all dispatch: argument conversion, dtype checks, wrapping, trace-key lookup.
Statements are timed directly (no lambda around them), like `timeit`.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads import _common

NAME = "call_overhead"
DESCRIPTION = "kf.add on [16] float32 (eager) and a cached @kf.function x + 1, vs NumPy"


def cases(config: Config) -> Iterator[Case]:
    rng = np.random.default_rng(0)
    a = _common.random_floats(rng, 16)
    b = _common.random_floats(rng, 16)
    x, y = kf.constant(a), kf.constant(b)
    ns = {"np": np, "kf": kf, "a": a, "b": b, "x": x, "y": y}
    np.testing.assert_array_equal(kf.add(x, y).numpy(), np.add(a, b))

    eager = Case(
        "eager kf.add on [16] float32",
        [Variant("NumPy np.add(a, b)", "np.add(a, b)", ns),
         Variant("kilnflow eager kf.add(x, y)", "kf.add(x, y)", ns),
         Variant("kilnflow eager x + y", "x + y", ns)]
        + _common.peer_variants(_eager_peers(a, b)),
        floor="NumPy np.add(a, b)",
        targets=[Target("kilnflow eager op <= 2.5x the NumPy call",
                        "kilnflow eager kf.add(x, y)", "ratio", 2.5,
                        peers="TF eager 42x, JAX eager 16x, PyTorch eager 3.0x")],
        notes=[_common.peers_note()])
    yield eager

    yield Case(
        "eager x + 1 on [16] float32 (a Python scalar operand)",
        [Variant("NumPy a + 1", "a + 1", ns),
         Variant("kilnflow eager x + 1", "x + 1", ns),
         Variant("kilnflow eager x * 0.5", "x * 0.5", ns)],
        floor="NumPy a + 1",
        targets=[Target("kilnflow eager x + 1 <= 2.5x NumPy a + 1 (issue 16)",
                        "kilnflow eager x + 1", "ratio", 2.5,
                        peers="PyTorch eager 3.4x")])

    f = _compiled(x)
    np.testing.assert_array_equal(f(x).numpy(), a + 1)
    g = _profiled_once(x)
    ns_f = {"np": np, "a": a, "b": b, "x": x, "f": f, "g": g}
    yield Case(
        "compiled x + 1 on [16] float32 (@kf.function, cached)",
        [Variant("NumPy a + 1", "a + 1", ns_f),
         Variant("NumPy np.add(a, b)", "np.add(a, b)", ns_f),
         Variant("kilnflow function f(x)", "f(x)", ns_f),
         Variant("kilnflow function g(x), after a profiler start/stop", "g(x)", ns_f)]
        + _common.peer_variants(_compiled_peers(a)),
        floor="NumPy a + 1",
        targets=[Target("compiled x + 1 call <= 3x a bare NumPy add",
                        "kilnflow function f(x)", "ratio", 3.0,
                        peers="TF tf.function 264x, jax.jit 7.4x, torch.compile 21x")],
        notes=["the floor is the same computation in NumPy (`a + 1`); np.add(a, b) is shown "
               "because a Python-scalar operand costs NumPy itself extra"])


def _plus_one(x):
    return x + 1


def _profiled_once(x: kf.Tensor) -> kf.Function:
    """A function profiled once and then not: profiling off must cost nothing (issue 17)."""
    import tempfile
    g = _compiled(x)
    with tempfile.TemporaryDirectory() as logdir:
        kf.profiler.experimental.start(logdir)
        g(x)
        kf.profiler.experimental.stop()
    return g


def _compiled(x: kf.Tensor) -> kf.Function:
    f = kf.function(_plus_one)
    _common.quiet(f)(x)
    return f


def _eager_peers(a: np.ndarray, b: np.ndarray) -> list:
    def torch_add(torch):
        ta, tb = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
        return lambda: torch.add(ta, tb)

    def tf_add(tf):
        ta, tb = tf.constant(a), tf.constant(b)
        return lambda: tf.add(ta, tb)

    def jax_add(jax):
        jnp = jax.numpy
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        return lambda: jnp.add(ja, jb).block_until_ready()

    return [("PyTorch eager torch.add", "torch", torch_add),
            ("TensorFlow eager tf.add", "tensorflow", tf_add),
            ("JAX eager jnp.add", "jax", jax_add)]


def _compiled_peers(a: np.ndarray) -> list:
    def tf_function(tf):
        f = tf.function(lambda t: t + 1)
        t = tf.constant(a)
        f(t)
        return lambda: f(t)

    def jax_jit(jax):
        f = jax.jit(lambda t: t + 1)
        t = jax.numpy.asarray(a)
        f(t).block_until_ready()
        return lambda: f(t).block_until_ready()

    def torch_compile(torch):
        f = torch.compile(lambda t: t + 1)
        t = torch.from_numpy(a.copy())
        f(t)
        return lambda: f(t)

    return [("TensorFlow tf.function", "tensorflow", tf_function),
            ("JAX jax.jit", "jax", jax_jit),
            ("PyTorch torch.compile", "torch", torch_compile)]
