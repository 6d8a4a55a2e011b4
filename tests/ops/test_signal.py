"""kf.signal windows, framing, STFT, DCT/MDCT, mel matrix and MFCCs against values TF 2.21
computed (tests/ops/data/tf_signal_reference.json); gradients by finite differences; eager
agrees with kf.function."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

with open(os.path.join(os.path.dirname(__file__), "data",
          "tf_signal_reference.json")) as _file:
    REF = json.load(_file)
S = kf.signal
X = np.asarray(REF["x"], np.float32)


def close(got, want, rtol=2e-5, atol=2e-5):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def cplx(pair):
    return np.asarray(pair[0]) + 1j * np.asarray(pair[1])


def test_windows_match_tf():
    for n in (8, 9):
        for periodic in (True, False):
            close(S.hann_window(n, periodic), REF[f"hann-{n}-{periodic}"], atol=1e-6)
            close(S.hamming_window(n, periodic), REF[f"hamming-{n}-{periodic}"], atol=1e-6)
        close(S.kaiser_window(n, 5.0), REF[f"kaiser-{n}"], atol=1e-6)
        close(S.vorbis_window(n), REF[f"vorbis-{n}"], atol=1e-6)
    close(S.kaiser_bessel_derived_window(8, 6.0), REF["kbd-8"], atol=1e-6)
    close(S.kaiser_bessel_derived_window(10), REF["kbd-10"], atol=1e-6)
    assert S.hann_window(4, dtype=kf.float64).dtype == kf.float64


def test_frame_and_overlap_and_add_match_tf():
    close(S.frame(X, 8, 5), REF["frame"])
    close(S.frame(X, 8, 5, pad_end=True, pad_value=7.0), REF["frame_pad"])
    close(S.frame(X.T, 8, 5, axis=0), REF["frame_axis0"])
    close(S.overlap_and_add(np.asarray(REF["fr"], np.float32), 3), REF["ola"])


def test_stft_and_inverse_match_tf():
    close(S.stft(X, 16, 4), cplx(REF["stft"]), atol=1e-4)
    close(S.stft(X, 12, 5, fft_length=16, pad_end=True), cplx(REF["stft2"]), atol=1e-4)
    spectrum = cplx(REF["stft"]).astype(np.complex64)
    close(S.inverse_stft(spectrum, 16, 4, window_fn=S.inverse_stft_window_fn(4)),
          REF["istft"], atol=1e-4)
    close(S.inverse_stft(spectrum, 16, 4), REF["istft_plain"], atol=1e-4)
    close(S.inverse_stft_window_fn(4)(16, kf.float32), REF["istft_win"], atol=1e-6)


def test_dct_idct_match_tf():
    d = np.asarray(REF["d"], np.float32)
    for t in (1, 2, 3, 4):
        for norm in (None, "ortho"):
            want = REF[f"dct-{t}-{norm}"]
            if isinstance(want, str):
                with pytest.raises(ValueError):
                    S.dct(d, type=t, norm=norm)
                continue
            close(S.dct(d, type=t, norm=norm), want, atol=1e-5)
            close(S.idct(d, type=t, norm=norm), REF[f"idct-{t}-{norm}"], atol=1e-5)
        if t != 1:
            close(S.dct(d, type=t, n=6), REF[f"dct-{t}-n6"], atol=1e-5)
            close(S.dct(d, type=t, n=10), REF[f"dct-{t}-n10"], atol=1e-5)


def test_mdct_mel_mfcc_match_tf():
    close(S.mdct(X, 8), REF["mdct"], atol=1e-5)
    close(S.mdct(X, 8, norm="ortho"), REF["mdct_ortho"], atol=1e-5)
    close(S.inverse_mdct(S.mdct(X, 8)), REF["imdct"], atol=1e-5)
    close(S.inverse_mdct(S.mdct(X, 8, norm="ortho"), norm="ortho"), REF["imdct_ortho"],
          atol=1e-5)
    close(S.linear_to_mel_weight_matrix(10, 33, 8000, 20.0, 3000.0), REF["mel"], atol=1e-5)
    close(S.linear_to_mel_weight_matrix(), REF["mel_default"], atol=1e-5)
    close(S.mfccs_from_log_mel_spectrograms(np.asarray(REF["lm"], np.float32)), REF["mfcc"],
          atol=1e-5)


def test_multi_dim_ffts_and_shifts_match_tf():
    r3 = np.asarray(REF["r3"], np.float32)
    close(S.rfft2d(r3, fft_length=[4, 5]), cplx(REF["rfft2d_45"]), atol=1e-5)
    close(S.irfft2d(cplx(REF["rfft2d_45"]).astype(np.complex64), fft_length=[4, 5]),
          REF["irfft2d_45"], atol=1e-5)
    c = cplx(REF["c"]).astype(np.complex64)
    close(S.fft2d(c), cplx(REF["fft2d"]), atol=1e-5)
    close(S.fftshift(np.arange(10)), REF["fftshift"])
    close(S.fftshift(np.arange(12).reshape(3, 4), axes=1), REF["fftshift_axes"])
    close(S.ifftshift(np.arange(11)), REF["ifftshift"])


def _fd(fn, x, eps=1e-6):
    x = kf.constant(x)
    w = np.random.default_rng(0).normal(size=fn(x).shape)
    with kf.GradientTape() as tape:
        tape.watch(x)
        loss = kf.reduce_sum(fn(x) * w)
    got = tape.gradient(loss, x).numpy().ravel()
    flat = x.numpy().ravel()
    want = np.zeros_like(flat)
    for i in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        want[i] = (np.sum(fn(kf.constant(up.reshape(x.shape))).numpy() * w)
                   - np.sum(fn(kf.constant(down.reshape(x.shape))).numpy() * w)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda x: S.frame(x, 5, 3), lambda x: S.overlap_and_add(kf.reshape(x, [2, 4, 5]), 2),
    lambda x: kf.math.real(S.stft(x, 8, 4)) + kf.math.imag(S.stft(x, 8, 4)),
    lambda x: S.dct(x, type=3, norm="ortho"),
    lambda x: S.mdct(x, 8), lambda x: S.inverse_mdct(kf.reshape(x, [2, 5, 4])),
    lambda x: S.mfccs_from_log_mel_spectrograms(x)], ids=range(7))
def test_gradients_match_finite_differences(fn):
    _fd(fn, np.random.default_rng(2).uniform(-1, 1, (2, 20)))


def test_function_matches_eager_and_bad_inputs_raise():
    f = kf.function(lambda x: S.inverse_stft(S.stft(x, 16, 4), 16, 4,
                                             window_fn=S.inverse_stft_window_fn(4)))
    close(f(X), REF["istft"], atol=1e-4)
    with pytest.raises(ValueError):
        S.mdct(X, 6)
    with pytest.raises(ValueError):
        S.dct(X, type=5)
    with pytest.raises(errors.InvalidArgumentError):
        S.frame(X, 0, 2)
    with pytest.raises(ValueError):
        S.linear_to_mel_weight_matrix(lower_edge_hertz=5000.0)
    with pytest.raises(errors.InvalidArgumentError):
        S.rfft2d(np.zeros((2, 3), np.float32), fft_length=[4])
