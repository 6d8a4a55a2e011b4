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
from kilnflow.ops import array, complex as kcomplex, linalg, math as kmath, reduction, reshaping
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


def _window_values(window: Any, length: int, periodic: bool) -> Any:
    """scipy.signal.get_window's values for the windows NumPy can make (hann, hamming,
    boxcar), or a given array."""
    import numpy as np
    if window is None:
        return None
    if not isinstance(window, str):
        values = np.asarray(window, np.float64)
        if values.shape != (length,):
            raise ValueError("The shape of `window` must be equal to [frame_length]. "
                             f"Received: window shape={values.shape}")
        return values
    makers = {"hann": np.hanning, "hanning": np.hanning, "hamming": np.hamming,
              "boxcar": np.ones, "rectangular": np.ones, "ones": np.ones}
    if window not in makers:
        raise ValueError(f"STFTSpectrogram: window {window!r} is not supported (use 'hann', "
                         "'hamming', 'boxcar' or an array)")
    if makers[window] is np.ones:
        return np.ones(length)
    return makers[window](length + 1)[:-1] if periodic else makers[window](length)


class STFTSpectrogram(Layer):
    """Spectrograms of [batch, time, channels] signals (channels_first: [batch, channels,
    time]) as 1-D convolutions with Fourier kernels (real_kernel, imag_kernel: trainable
    weights initialised as Keras's STFT initializer), one frame per `frame_step`.

    mode: 'log' (log magnitude), 'magnitude', 'psd', 'real', 'imag', 'angle' or 'stft'
    (real and imaginary parts side by side)."""

    def __init__(self, mode: str = "log", frame_length: int = 256,
                 frame_step: Optional[int] = None, fft_length: Optional[int] = None,
                 window: Any = "hann", periodic: bool = False, scaling: Any = "density",
                 padding: str = "valid", expand_dims: bool = False,
                 data_format: Optional[str] = None, **kwargs: Any):
        if frame_step is not None and (frame_step > frame_length or frame_step < 1):
            raise ValueError("`frame_step` should be a positive integer not greater than "
                             f"`frame_length`. Received frame_step={frame_step}, "
                             f"frame_length={frame_length}")
        if fft_length is not None and fft_length < frame_length:
            raise ValueError("`fft_length` should be not less than `frame_length`. Received "
                             f"fft_length={fft_length}, frame_length={frame_length}")
        if mode not in ("log", "magnitude", "psd", "real", "imag", "angle", "stft"):
            raise ValueError(f"Output mode is invalid, it must be one of 'log', 'magnitude', "
                             f"'psd', 'real', 'imag', 'angle', 'stft'. Received: mode={mode}")
        if scaling is not None and scaling not in ("density", "spectrum"):
            raise ValueError(f"Scaling is invalid, it must be `None`, 'density' or 'spectrum'. "
                             f"Received scaling={scaling}")
        if padding not in ("valid", "same"):
            raise ValueError(f"Padding is invalid, it should be 'valid', 'same'. Received: "
                             f"padding={padding}")
        super().__init__(**kwargs)
        self.mode, self.frame_length = mode, int(frame_length)
        self.frame_step, self.fft_length = frame_step, fft_length
        self._frame_step = int(frame_step or self.frame_length // 2)
        self._fft_length = int(fft_length or 2 ** int(pymath.ceil(pymath.log2(frame_length))))
        self.window, self.periodic, self.scaling = window, periodic, scaling
        self.padding, self.expand_dims = padding, expand_dims
        self.data_format = data_format or "channels_last"
        _window_values(window, self.frame_length, periodic)  # fail early on a bad window
        from kilnflow.keras.layers.layer_utils import InputSpec
        self.input_spec = InputSpec(ndim=3)

    def _kernel_init(self, side: str) -> Any:
        import numpy as np
        win = _window_values(self.window, self.frame_length, self.periodic)

        def init(shape: Any, dtype: Any = None) -> Any:
            frames, _, bins = shape
            freq = np.arange(bins).reshape(1, 1, bins) / ((bins - 1) * 2)
            time = np.arange(frames).reshape(frames, 1, 1)
            args = -2.0 * time * freq * np.pi
            kernel = np.cos(args) if side == "real" else np.sin(args)
            if win is not None:
                scale = 1.0
                if self.scaling == "density":
                    scale = np.sqrt(np.sum(win ** 2))
                elif self.scaling == "spectrum":
                    scale = np.sum(np.abs(win))
                kernel = kernel * win.reshape(frames, 1, 1) / scale
            return convert_to_tensor(kernel, dtype=dtype)
        return init

    def build(self, input_shape: Any) -> None:
        shape = (self.frame_length, 1, self._fft_length // 2 + 1)
        if self.mode != "imag":
            self.real_kernel = self.add_weight("real_kernel", shape,
                                               initializer=self._kernel_init("real"))
        if self.mode != "real":
            self.imag_kernel = self.add_weight("imag_kernel", shape,
                                               initializer=self._kernel_init("imag"))
        self.built = True

    def _conv(self, inputs: Any, kernel: Any) -> Any:
        """[batch, channels, freq, frames] from per-channel 1-D convolutions."""
        from kilnflow.ops.conv_extra import conv
        x = inputs if self.data_format == "channels_first" else \
            reshaping.transpose(inputs, [0, 2, 1])
        channels = x.shape[1]
        flat = reshaping.reshape(x, [-1, x.shape[2] if x.shape[2] is not None else -1, 1]) \
            if x.shape[2] is not None else reshaping.expand_dims(
                reshaping.reshape(x, [-1, array.shape(x)[2]]), -1)
        out = conv(flat, kmath.cast(kernel, flat.dtype), [1, self._frame_step, 1],
                   self.padding.upper())  # [batch * channels, frames, freq]
        out = reshaping.transpose(out, [0, 2, 1])
        return reshaping.reshape(out, [-1, channels, out.shape[1], out.shape[2]
                                       if out.shape[2] is not None else -1])

    def _adjust(self, out: Any) -> Any:
        if self.expand_dims:
            perm = [0, 3, 2, 1] if self.data_format == "channels_last" else [0, 1, 3, 2]
            return reshaping.transpose(out, perm)
        dims = out.shape.as_list()
        merged = reshaping.reshape(out, [-1, dims[1] * dims[2], dims[3] if dims[3] is not None
                                         else -1])
        return reshaping.transpose(merged, [0, 2, 1]) if self.data_format == "channels_last" \
            else merged

    def call(self, inputs: Any) -> Any:
        real = None if self.mode == "imag" else self._conv(inputs, self.real_kernel)
        imag = None if self.mode == "real" else self._conv(inputs, self.imag_kernel)
        if self.mode == "real":
            return self._adjust(real)
        if self.mode == "imag":
            return self._adjust(imag)
        if self.mode == "angle":
            from kilnflow.ops.elementwise import atan2
            return self._adjust(atan2(imag, real))
        if self.mode == "stft":
            from kilnflow.ops import joining
            return self._adjust(joining.concat([real, imag], 2))
        power = kmath.square(real) + kmath.square(imag)
        if self.mode == "psd":
            inner = reshaping.pad(power[:, :, 1:-1, :], [[0, 0], [0, 0], [1, 1], [0, 0]])
            return self._adjust(power + inner)
        magnitude = self._adjust(kmath.sqrt(kmath.maximum(power, 1e-7)))
        if self.mode == "magnitude":
            return magnitude
        return kmath.log(kmath.maximum(magnitude, 1e-7))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        shape = TensorShape(input_shape).as_list()
        cl = self.data_format == "channels_last"
        channels, steps = (shape[2], shape[1]) if cl else (shape[1], shape[2])
        freq = (self._fft_length // 2 + 1) * (2 if self.mode == "stft" else 1)
        if steps is not None:
            steps = -(-steps // self._frame_step) if self.padding == "same" else \
                (steps - self.frame_length) // self._frame_step + 1
        if self.expand_dims:
            return TensorShape([shape[0], steps, freq, channels] if cl
                               else [shape[0], channels, steps, freq])
        merged = None if channels is None else freq * channels
        return TensorShape([shape[0], steps, merged] if cl else [shape[0], merged, steps])

    def get_config(self) -> dict:
        return {**super().get_config(), "mode": self.mode, "frame_length": self.frame_length,
                "frame_step": self.frame_step, "fft_length": self.fft_length,
                "window": self.window, "periodic": self.periodic, "scaling": self.scaling,
                "padding": self.padding, "expand_dims": self.expand_dims,
                "data_format": self.data_format}
