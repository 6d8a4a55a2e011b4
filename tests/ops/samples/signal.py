"""Samples of the ops in kilnflow/ops/signal.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from tests.ops.samples import add, rand


def _complex(*shape):
    return rand(*shape) + 1j * rand(*shape)


add("FFT", kf.signal.fft, (_complex(2, 8),), lambda x: np.fft.fft(x), differentiable=True,
    rtol=1e-10)
add("IFFT", kf.signal.ifft, (_complex(3, 5),), lambda x: np.fft.ifft(x), differentiable=True,
    rtol=1e-10)
add("RFFT", kf.signal.rfft, (rand(2, 8),), lambda x: np.fft.rfft(x), rtol=1e-10)
add("RFFT", lambda x: kf.signal.rfft(x, [6]), (rand(7),), lambda x: np.fft.rfft(x, 6),
    rtol=1e-10, name="fft_length")
add("IRFFT", kf.signal.irfft, (_complex(2, 5),), lambda x: np.fft.irfft(x), rtol=1e-10)
