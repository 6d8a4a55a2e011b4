"""Audio preprocessing: MelSpectrogram, as Keras 3 computes it on kf.signal.

Per signal: a centred STFT (reflect-padded by fft_length // 2, a periodic Hann or Hamming
window of `sequence_length` zero-padded to `fft_length`), magnitudes ** mag_exp, the HTK
mel filterbank (kf.signal.linear_to_mel_weight_matrix), and optionally decibels relative
to `ref_power`, floored `top_db` below the maximum over the whole batch (Keras's choice).
Output: [batch, num_mel_bins, frames].
"""
from __future__ import annotations

import math as pymath
from typing import Any, Optional

from kilnflow.keras.layers.base import Layer
from kilnflow.ops import complex as kcomplex, linalg, math as kmath, reduction, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape


def _window(name: str, length: int, dtype: Any) -> Any:
    from kilnflow import signal
    if name == "hann":
        return signal.hann_window(length, periodic=True, dtype=dtype)
    if name == "hamming":
        return signal.hamming_window(length, periodic=True, dtype=dtype)
    raise ValueError('If a string is passed to `window`, it must be one of `"hann"`, '
                     f'`"hamming"`. Received: window={name}')


def centered_stft(x: Any, sequence_length: int, sequence_stride: int, fft_length: int,
                  window: Any = "hann") -> Any:
    """keras.ops.stft(center=True) as a complex tensor [..., frames, fft_length // 2 + 1]."""
    from kilnflow import signal
    half = fft_length // 2
    paddings = [[0, 0]] * (x.shape.rank - 1) + [[half, half]]
    x = reshaping.pad(x, paddings, mode="REFLECT")
    left = (fft_length - sequence_length) // 2
    right = fft_length - sequence_length - left
    win = None
    if window is not None:
        win = _window(window, sequence_length, x.dtype) if isinstance(window, str) else \
            convert_to_tensor(window, dtype=x.dtype)
        win = reshaping.pad(win, [[left, right]])
    return signal.stft(x, fft_length, sequence_stride, fft_length,
                       window_fn=None if win is None else (lambda n, dtype: win))


class MelSpectrogram(Layer):
    """Mel spectrograms of [batch, samples] (or [samples]) audio."""

    def __init__(self, fft_length: int = 2048, sequence_stride: int = 512,
                 sequence_length: Optional[int] = None, window: Any = "hann",
                 sampling_rate: int = 16000, num_mel_bins: int = 128, min_freq: float = 20.0,
                 max_freq: Optional[float] = None, power_to_db: bool = True,
                 top_db: float = 80.0, mag_exp: float = 2.0, min_power: float = 1e-10,
                 ref_power: float = 1.0, **kwargs: Any):
        self.fft_length, self.sequence_stride = int(fft_length), int(sequence_stride)
        self.sequence_length = int(sequence_length or fft_length)
        if self.fft_length < self.sequence_length:
            raise ValueError("`fft_length` must be greater than or equal to  `sequence_length`."
                             f" Received: `sequence_length`={self.sequence_length}, "
                             f"`fft_length`={self.fft_length}.")
        super().__init__(**kwargs)
        self.window, self.sampling_rate = window, sampling_rate
        self.num_mel_bins, self.min_freq = int(num_mel_bins), min_freq
        self.max_freq = max_freq or int(sampling_rate / 2)
        self.power_to_db, self.top_db, self.mag_exp = power_to_db, top_db, mag_exp
        self.min_power, self.ref_power = min_power, ref_power

    def call(self, inputs: Any) -> Any:
        dtype = self._dtype if self._dtype.name in ("float32", "float64") else "float32"
        x = kmath.cast(inputs, dtype) if inputs.dtype != dtype else inputs
        spec = centered_stft(x, self.sequence_length, self.sequence_stride, self.fft_length,
                             self.window)
        power = kmath.sqrt(kmath.square(kcomplex.real(spec)) + kmath.square(kcomplex.imag(spec)))
        power = power ** self.mag_exp
        from kilnflow import signal
        matrix = signal.linear_to_mel_weight_matrix(
            self.num_mel_bins, self.fft_length // 2 + 1, self.sampling_rate, self.min_freq,
            self.max_freq, dtype=x.dtype)
        out = linalg.tensordot(power, matrix, 1)
        if self.power_to_db:
            out = self._db(out)
        rank = out.shape.rank
        out = reshaping.transpose(out, list(range(rank - 2)) + [rank - 1, rank - 2])
        return out if out.dtype == self._dtype else kmath.cast(out, self._dtype)

    def _db(self, spec: Any) -> Any:
        ten_over_ln10 = 10.0 / pymath.log(10.0)
        log_spec = ten_over_ln10 * kmath.log(kmath.maximum(spec, self.min_power))
        ref = max(abs(float(self.ref_power)), self.min_power)
        log_spec = log_spec - 10.0 * pymath.log10(ref)
        floor = reduction.reduce_max(log_spec) - self.top_db
        return kmath.maximum(log_spec, floor)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        n = shape[-1]
        frames = None if n is None else (n + self.sequence_stride + 1) // self.sequence_stride
        return TensorShape(shape[:-1] + [self.num_mel_bins, frames])

    def get_config(self) -> dict:
        return {**super().get_config(), "fft_length": self.fft_length,
                "sequence_stride": self.sequence_stride,
                "sequence_length": self.sequence_length, "window": self.window,
                "sampling_rate": self.sampling_rate, "num_mel_bins": self.num_mel_bins,
                "min_freq": self.min_freq, "max_freq": self.max_freq,
                "power_to_db": self.power_to_db, "top_db": self.top_db,
                "mag_exp": self.mag_exp, "min_power": self.min_power,
                "ref_power": self.ref_power}
