"""jit_compile=True: one elementwise op over float or bool arrays of rank >= 3 is a flat loop
helper (jit/fused.py emit_elementwise), not a NumPy array expression, because numba types a
4-D array expression for minutes (six chained ops: 112 s, as loops 4 s).

Differential against the Python runtime: IEEE-exact ops (+ - * / max min where, comparisons,
sqrt, floor) bit for bit, transcendental ones within float32 rtol 2e-6 (numba's libm and
NumPy's SIMD loops may differ by an ulp); broadcasting of every kind (size-1 dims, lower
ranks, scalars), non-contiguous inputs, NaN, float64 and bool, and gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf

pytest.importorskip("numba")

RNG = np.random.default_rng(11)


def _pair(fn, *args):
    """(jit result, non-jit function result) as lists of NumPy arrays."""
    got = kf.function(fn, jit_compile=True)(*args)
    want = kf.function(fn)(*args)
    return [np.asarray(v) for v in got], [np.asarray(v) for v in want]


def _source(fn, *args):
    return kf.function(fn, jit_compile=True).experimental_get_compiler_ir(*args)()


def exact_ops(x, y, b, s):
    """Ops whose results are correctly rounded, so both runtimes agree bit for bit."""
    a = x + y            # same shape
    m = a * b            # b: [1, 1, 1, C], broadcast over the leading dims
    d = m / (kf.abs(y) + 1.0)
    e = kf.maximum(d, x) - kf.minimum(a, s)   # s: a scalar tensor
    w = kf.where(x > y, e, -m)
    r = kf.sqrt(kf.abs(w)) + kf.floor(m)
    t = kf.transpose(x, [0, 2, 1, 3]) * 2.0   # non-contiguous input to the loop
    return a, m, d, e, w, r, t, x >= y


def test_exact_ops_over_4d_arrays_agree_bit_for_bit():
    x = RNG.standard_normal((2, 3, 3, 5)).astype(np.float32)
    y = RNG.standard_normal((2, 3, 3, 5)).astype(np.float32)
    b = RNG.standard_normal((1, 1, 1, 5)).astype(np.float32)
    s = np.float32(0.25)
    x[0, 0, 0, 0] = np.nan  # NaN goes through maximum/minimum/where as in the kernels
    got, want = _pair(exact_ops, x, y, b, s)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_the_ops_are_loops_and_one_helper_serves_repeated_ops():
    x = np.ones((2, 3, 4, 5), np.float32)
    source = _source(exact_ops, x, x, x[:1, :1, :1], np.float32(1))
    assert "def loop_AddV2(" in source and "def loop_Mul(" in source
    assert "for i in range(flat_out.size):" in source
    assert source.count("def loop_AddV2(") == 1  # `x + y` and `sqrt(...) + floor(...)`


def test_lower_ranks_and_size_one_dims_broadcast():
    def f(x, row, col):
        return x + row, x * col, row - col

    x = RNG.standard_normal((3, 4, 5)).astype(np.float64)
    row = RNG.standard_normal((5,)).astype(np.float64)          # rank 1 under rank 3
    col = RNG.standard_normal((3, 4, 1)).astype(np.float64)     # size-1 last dim
    got, want = _pair(f, x, row, col)
    for g, w in zip(got, want):
        assert g.dtype == np.float64
        np.testing.assert_array_equal(g, w)


def test_transcendental_ops_within_an_ulp_or_two():
    def f(x):
        return kf.exp(x), kf.tanh(x), kf.math.log1p(kf.abs(x)), kf.nn.sigmoid(x)

    x = RNG.standard_normal((2, 4, 3, 6)).astype(np.float32)
    got, want = _pair(f, x)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-7)


def test_bool_ops_and_integers_left_as_array_expressions():
    def f(p, q, n):
        both = kf.logical_and(p, q)     # returned and used again: not fused away
        tripled = n * 3
        return both, kf.logical_or(both, q), tripled, tripled + n

    p = RNG.random((2, 3, 4)) > 0.5
    q = RNG.random((2, 3, 4)) > 0.5
    n = RNG.integers(-2**30, 2**30, (2, 3, 4)).astype(np.int32)  # wraps as int32 does
    got, want = _pair(f, p, q, n)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    source = _source(f, p, q, n)
    assert "def loop_LogicalAnd(" in source
    assert "loop_Mul" not in source  # int32 products stay NumPy's (numba widens scalars)


def test_gradients_of_4d_elementwise_chains():
    w = kf.Variable(RNG.standard_normal((1, 1, 1, 4)).astype(np.float32))

    def step(x):
        with kf.GradientTape() as tape:
            h = kf.nn.relu(x * w + 0.5)
            loss = kf.reduce_sum(h * h - x)
        return tape.gradient(loss, w)

    x = RNG.standard_normal((3, 2, 5, 4)).astype(np.float32)
    got = np.asarray(kf.function(step, jit_compile=True)(x))
    want = np.asarray(kf.function(step)(x))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_add_n_over_4d_arrays_is_a_loop_with_the_same_sums():
    def f(a, b, c):
        total = kf.add_n([a, b, c])
        return total, kf.add_n([total, a])

    a, b, c = (RNG.standard_normal((2, 3, 4, 5)).astype(np.float32) for _ in range(3))
    got, want = _pair(f, a, b, c)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)  # (a + b) + c in float32 in both runtimes
    assert "def loop_AddN(" in _source(f, a, b, c)
