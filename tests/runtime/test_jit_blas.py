"""The jit backend's matrix products through NumPy's own BLAS (kilnflow/runtime/jit/blas.py).

Every transpose combination, both float widths, empty and zero-depth products agree with
NumPy; the generated source names the path it takes (so the disk cache keys on it); a
compiled call leaves the calling thread's BLAS thread count alone.
"""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.runtime.jit import blas

pytest.importorskip("numba")
needs_blas = pytest.mark.skipif(not blas.available(),
                                reason="NumPy's BLAS has no 64-bit CBLAS symbols here")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_matches_numpy_for_every_transpose(dtype, ta, tb):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 3) if ta else (3, 5)).astype(dtype)
    b = rng.standard_normal((4, 5) if tb else (5, 4)).astype(dtype)
    fn = kf.function(lambda x, y: kf.matmul(x, y, transpose_a=ta, transpose_b=tb) * 2.0,
                     jit_compile=True)
    got = fn(kf.constant(a), kf.constant(b)).numpy()
    want = (a.T if ta else a) @ (b.T if tb else b) * 2
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("shapes", [((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (3, 0))])
def test_empty_and_zero_depth_products(shapes):
    a, b = (np.ones(s, np.float32) for s in shapes)
    fn = kf.function(lambda x, y: kf.matmul(x, y) + 1.0, jit_compile=True)
    got = fn(kf.constant(a), kf.constant(b)).numpy()
    np.testing.assert_array_equal(got, a @ b + 1)


def test_batch_size_change_reuses_the_machine_code():
    fn = kf.function(lambda x, w: kf.matmul(x, w), jit_compile=True)
    w = kf.constant(np.eye(3, dtype=np.float32))
    for rows in (2, 7):
        x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        np.testing.assert_array_equal(fn(kf.constant(x), w).numpy(), x)


@needs_blas
def test_source_names_numpys_blas_and_thread_local_count():
    x = kf.constant(np.ones((2, 3), np.float32))
    fn = kf.function(lambda a: kf.matmul(a, a, transpose_b=True), jit_compile=True)
    assert "kf_helpers.matmul_f32(" in fn.experimental_get_compiler_ir(x)()
    before = blas.set_threads(2)
    try:
        np.testing.assert_array_equal(fn(x).numpy(), np.full((2, 2), 3, np.float32))
        assert blas.set_threads(2) in (2, None)  # the compiled call left the count alone
    finally:
        blas.set_threads(before)


def test_without_numpys_blas_the_source_uses_np_dot(monkeypatch):
    monkeypatch.setitem(blas._state, "found", {})
    x = kf.constant(np.ones((2, 3), np.float64))
    fn = kf.function(lambda a: kf.matmul(a, a, transpose_a=True), jit_compile=True)
    source = fn.experimental_get_compiler_ir(x)()
    assert "np.dot(" in source and "matmul_f" not in source
    np.testing.assert_array_equal(fn(x).numpy(), np.full((3, 3), 2.0))
