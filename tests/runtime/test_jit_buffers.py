"""Buffer donation in the jit backend: an output array the caller dropped is written again
by the next call (no fresh pages); one the caller still holds, directly or through a view
or a tensor, is never touched."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf

pytest.importorskip("numba")


def _gelu(x):
    return 0.5 * x * (1.0 + kf.tanh(0.79788456 * (x + 0.044715 * x * x * x)))


def test_a_dropped_output_is_reused_and_a_held_one_never_changes():
    f = kf.function(_gelu, jit_compile=True)
    x = kf.constant(np.linspace(-3, 3, 1 << 19).astype(np.float32))  # 2 MB
    want = _gelu(x).numpy()
    first = f(x)
    address = first._value.ctypes.data
    held = np.asarray(first)  # the tensor's own array, as a view
    view = held[10:20]
    second = f(x * 2.0)
    assert second._value.ctypes.data != address  # `first` is still held
    np.testing.assert_allclose(first.numpy(), want, rtol=1e-5, atol=1e-6)
    del first, held
    third = f(x)
    assert third._value.ctypes.data != address  # the view still holds its memory
    np.testing.assert_allclose(view, want[10:20], rtol=1e-5, atol=1e-6)
    del view, second
    np.testing.assert_allclose(third.numpy(), want, rtol=1e-5, atol=1e-6)
    address = third._value.ctypes.data
    del third
    fourth = f(x)
    assert fourth._value.ctypes.data == address  # nobody held it: written again
    np.testing.assert_allclose(fourth.numpy(), want, rtol=1e-5, atol=1e-6)


def test_donation_follows_the_batch_size():
    f = kf.function(_gelu, jit_compile=True)
    for n in (1 << 19, 1 << 18, 1 << 19):
        x = kf.constant(np.full(n, 0.5, np.float32))
        got = f(x).numpy()
        assert got.shape == (n,)
        np.testing.assert_allclose(got, _gelu(x).numpy(), rtol=1e-5, atol=1e-6)
