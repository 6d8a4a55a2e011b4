"""tf.signal beyond the FFT: windows, frame/overlap_and_add, stft/inverse_stft, dct/idct,
mdct/inverse_mdct, the mel filterbank and MFCCs.

All are compositions of public ops (gather, unsorted_segment_sum, tensordot, the FFTs), so
they run in every mode and differentiate through their pieces. Window lengths, frame
lengths and steps are Python ints (or constant tensors), as TF's static-shape path needs;
windows are computed in float64 NumPy and cast, so they match TF's float32 ones to ~1e-7.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops import joining, linalg, math, reduction, reshaping, segment, slicing
from kilnflow.ops.args import python_int
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.signal import irfft, rfft
from kilnflow.tensor import Tensor


def _window(values: np.ndarray, dtype: Any, op: str) -> Tensor:
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{op}: dtype must be floating point, got {dtype.name}")
    return convert_to_tensor(values, dtype)


def _length(window_length: Any, op: str) -> int:
    n = python_int(window_length, op, "window_length")
    if n < 0:
        raise errors.InvalidArgumentError(f"{op}: window_length must be >= 0, got {n}")
    return n


def _raised_cosine(window_length: Any, periodic: Any, dtype: Any, a: float, b: float,
                   op: str) -> Tensor:
    n = _length(window_length, op)
    if n == 1:
        return _window(np.ones(1), dtype, op)
    # TF's quirk: `periodic` lengthens only even windows
    denominator = n + int(bool(periodic)) * (1 - n % 2) - 1
    values = a - b * np.cos(2 * np.pi * np.arange(n) / max(denominator, 1))
    return _window(values, dtype, op)


def hann_window(window_length: Any, periodic: Any = True, dtype: Any = _dtypes.float32,
                name: Optional[str] = None) -> Tensor:
    """0.5 - 0.5 cos(2 pi n / N), N = window_length (periodic, even) or window_length - 1."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, "hann_window")


def hamming_window(window_length: Any, periodic: Any = True, dtype: Any = _dtypes.float32,
                   name: Optional[str] = None) -> Tensor:
    """0.54 - 0.46 cos(2 pi n / N), with N as in hann_window."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, "hamming_window")


def _kaiser(n: int, beta: float) -> np.ndarray:
    if n == 1:
        return np.ones(1)
    half = (n - 1) / 2.0
    arg = np.sqrt(np.maximum(1.0 - np.square((np.arange(n) - half) / half), 0.0))
    return np.i0(beta * arg) / np.i0(beta)


def kaiser_window(window_length: Any, beta: float = 12.0, dtype: Any = _dtypes.float32,
                  name: Optional[str] = None) -> Tensor:
    """I0(beta sqrt(1 - (2n/(N-1) - 1)^2)) / I0(beta)."""
    return _window(_kaiser(_length(window_length, "kaiser_window"), float(beta)), dtype,
                   "kaiser_window")


def kaiser_bessel_derived_window(window_length: Any, beta: float = 12.0,
                                 dtype: Any = _dtypes.float32,
                                 name: Optional[str] = None) -> Tensor:
    """The KBD window: square roots of the Kaiser window's normalised running sums."""
    n = _length(window_length, "kaiser_bessel_derived_window")
    csum = np.cumsum(_kaiser(n // 2 + 1, float(beta)))
    half = np.sqrt(csum[:-1] / csum[-1])
    return _window(np.concatenate([half, half[::-1]]), dtype, "kaiser_bessel_derived_window")


def vorbis_window(window_length: Any, dtype: Any = _dtypes.float32,
                  name: Optional[str] = None) -> Tensor:
    """sin(pi/2 sin^2(pi (n + 0.5) / N)), the Vorbis power-complementary window."""
    n = _length(window_length, "vorbis_window")
    values = np.sin(np.pi / 2 * np.square(np.sin(np.pi / max(n, 1) * (np.arange(n) + 0.5))))
    return _window(values, dtype, "vorbis_window")


def frame(signal: Any, frame_length: Any, frame_step: Any, pad_end: bool = False,
          pad_value: Any = 0, axis: int = -1, name: Optional[str] = None) -> Tensor:
    """Split `axis` into overlapping frames: [..., num_frames, frame_length, ...]."""
    signal = convert_to_tensor(signal)
    length = python_int(frame_length, "frame", "frame_length")
    step = python_int(frame_step, "frame", "frame_step")
    if length <= 0 or step <= 0:
        raise errors.InvalidArgumentError("frame: frame_length and frame_step must be > 0")
    rank = signal.shape.rank
    if rank is None or rank == 0:
        raise ValueError(f"frame: signal must have rank at least 1, got {signal.shape}")
    axis = int(axis) % rank
    n = signal.shape[axis]
    if n is None:
        raise ValueError("frame: the framed dim must be known when the graph is built")
    if pad_end:
        frames = -(-n // step)
        extra = max(0, (frames - 1) * step + length - n)
        if extra:
            paddings = [[0, 0]] * rank
            paddings[axis] = [0, extra]
            signal = reshaping.pad(signal, paddings,
                                   constant_values=math.cast(convert_to_tensor(pad_value),
                                                             signal.dtype))
    else:
        frames = max(0, 1 + (n - length) // step)
    index = np.arange(frames)[:, None] * step + np.arange(length)[None, :]
    return slicing.gather(signal, convert_to_tensor(index.astype(np.int32)), axis=axis,
                          name=name)


def overlap_and_add(signal: Any, frame_step: Any, name: Optional[str] = None) -> Tensor:
    """Sum frames [..., frames, frame_length] placed frame_step apart: [..., length]."""
    signal = convert_to_tensor(signal)
    step = python_int(frame_step, "overlap_and_add", "frame_step")
    rank = signal.shape.rank
    if rank is None or rank < 2:
        raise ValueError(f"overlap_and_add: signal must have at least 2 dims, got "
                         f"{signal.shape}")
    frames, length = signal.shape[-2], signal.shape[-1]
    if frames is None or length is None:
        raise ValueError("overlap_and_add: frames and frame_length must be known")
    if step <= 0 or step > length:
        raise ValueError(f"overlap_and_add: frame_step must be in [1, frame_length], got "
                         f"{step}")
    out_len = (frames - 1) * step + length
    ids = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).reshape(-1)
    flat = reshaping.reshape(signal, [-1, frames * length])
    summed = segment.unsorted_segment_sum(reshaping.transpose(flat, [1, 0]),
                                          convert_to_tensor(ids.astype(np.int32)), out_len)
    outer = reshaping.transpose(summed, [1, 0])
    lead = joining.concat([slicing.slice(_shape_of(signal), [0], [rank - 2]),
                           convert_to_tensor([out_len], _dtypes.int32)], 0)
    return reshaping.reshape(outer, lead, name=name)


def _shape_of(t: Tensor) -> Tensor:
    from kilnflow.ops.array import shape
    return shape(t)


def _fft_length(frame_length: int, fft_length: Any) -> int:
    if fft_length is None:
        return int(2 ** int(np.ceil(np.log2(frame_length))))
    return python_int(fft_length, "stft", "fft_length")


def stft(signals: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
         window_fn: Optional[Callable] = hann_window, pad_end: bool = False,
         name: Optional[str] = None) -> Tensor:
    """Short-time Fourier transform: rfft of windowed frames, [..., frames, fft_length//2+1]."""
    signals = convert_to_tensor(signals)
    length = python_int(frame_length, "stft", "frame_length")
    n = _fft_length(length, fft_length)
    framed = frame(signals, length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(length, dtype=signals.dtype)
    return rfft(framed, [n], name=name)


def inverse_stft(stfts: Any, frame_length: Any, frame_step: Any, fft_length: Any = None,
                 window_fn: Optional[Callable] = hann_window,
                 name: Optional[str] = None) -> Tensor:
    """irfft each frame, window it and overlap-add (pair with inverse_stft_window_fn for a
    perfect reconstruction)."""
    stfts = convert_to_tensor(stfts)
    length = python_int(frame_length, "inverse_stft", "frame_length")
    n = _fft_length(length, fft_length)
    frames = irfft(stfts, [n])
    real_dtype = frames.dtype
    if n > length:
        frames = frames[..., :length]
    elif n < length:
        rank = frames.shape.rank
        frames = reshaping.pad(frames, [[0, 0]] * (rank - 1) + [[0, length - n]])
    if window_fn is not None:
        frames = frames * window_fn(length, dtype=real_dtype)
    return overlap_and_add(frames, frame_step, name=name)


def inverse_stft_window_fn(frame_step: Any,
                           forward_window_fn: Callable = hann_window,
                           name: Optional[str] = None) -> Callable:
    """A window_fn for inverse_stft that undoes `forward_window_fn`'s overlapping squares."""
    step = python_int(frame_step, "inverse_stft_window_fn", "frame_step")

    def window_fn(frame_length: Any, dtype: Any = _dtypes.float32) -> Tensor:
        forward = forward_window_fn(frame_length, dtype=dtype)
        length = python_int(frame_length, "inverse_stft_window_fn", "frame_length")
        overlaps = -(-length // step)
        squares = reshaping.pad(math.square(forward), [[0, overlaps * step - length]])
        summed = reduction.reduce_sum(reshaping.reshape(squares, [overlaps, step]), 0,
                                      keepdims=True)
        denominator = reshaping.reshape(reshaping.tile(summed, [overlaps, 1]), [-1])
        return forward / denominator[:length]
    return window_fn


def _dct_matrix(kind: int, n: int, norm: Optional[str]) -> np.ndarray:
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    if kind == 1:
        m = np.cos(np.pi * k * i / (n - 1)) * np.where((i == 0) | (i == n - 1), 1.0, 2.0)
    elif kind == 2:
        m = 2 * np.cos(np.pi * k * (2 * i + 1) / (2 * n))
        if norm == "ortho":
            m = m * np.where(k == 0, np.sqrt(1 / (4 * n)), np.sqrt(1 / (2 * n)))
    elif kind == 3:
        if norm == "ortho":
            return _dct_matrix(2, n, "ortho").T
        m = np.cos(np.pi * i * (2 * k + 1) / (2 * n)) * np.where(i == 0, 1.0, 2.0)
    else:
        m = 2 * np.cos(np.pi * (2 * i + 1) * (2 * k + 1) / (4 * n))
        if norm == "ortho":
            m = m * np.sqrt(1 / (2 * n))
    return m


def dct(input: Any, type: int = 2, n: Any = None, axis: int = -1,  # noqa: A002
        norm: Optional[str] = None, name: Optional[str] = None) -> Tensor:
    """Discrete cosine transform of types 1-4 over the innermost dim (SciPy's scaling)."""
    x = convert_to_tensor(input)
    if type not in (1, 2, 3, 4):
        raise ValueError(f"dct: only types 1, 2, 3 and 4 are supported, got type {type}")
    if axis != -1:
        raise NotImplementedError("dct: axis must be -1")
    if norm not in (None, "ortho"):
        raise ValueError(f"dct: unknown normalization {norm!r}, use None or 'ortho'")
    if type == 1 and norm == "ortho":
        raise ValueError("Normalization not supported for type-I DCT.")
    if not x.dtype.is_floating:
        raise errors.InvalidArgumentError(f"dct: input must be float, got {x.dtype.name}")
    length = x.shape[-1] if x.shape.rank else None
    if n is not None:
        n = python_int(n, "dct", "n")
        if n < 1:
            raise ValueError(f"dct: n should be a positive integer, got {n}")
        if length is not None and n != length:
            rank = x.shape.rank
            x = x[..., :n] if n < length else reshaping.pad(
                x, [[0, 0]] * (rank - 1) + [[0, n - length]])
        length = n
    if length is None:
        raise ValueError("dct: the innermost dim must be known")
    if type == 1 and length < 2:
        raise ValueError("dct: type-I DCT needs at least 2 points")
    matrix = convert_to_tensor(_dct_matrix(type, length, norm).T, x.dtype)
    return linalg.tensordot(x, matrix, [[-1], [0]], name=name)


def idct(input: Any, type: int = 2, n: Any = None, axis: int = -1,  # noqa: A002
         norm: Optional[str] = None, name: Optional[str] = None) -> Tensor:
    """Inverse DCT: the DCT of the inverse type (unnormalised: scaled by 2N, as SciPy)."""
    if type not in (1, 2, 3, 4):
        raise ValueError(f"idct: only types 1, 2, 3 and 4 are supported, got type {type}")
    return dct(input, type={1: 1, 2: 3, 3: 2, 4: 4}[type], n=n, axis=axis, norm=norm,
               name=name)


def mdct(signals: Any, frame_length: Any,
         window_fn: Optional[Callable] = vorbis_window,
         pad_end: bool = False, norm: Optional[str] = None,
         name: Optional[str] = None) -> Tensor:
    """Modified DCT of half-overlapping frames: [..., frames, frame_length // 2]."""
    signals = convert_to_tensor(signals)
    length = python_int(frame_length, "mdct", "frame_length")
    if length % 4:
        raise ValueError(f"mdct: frame_length must be a multiple of 4, got {length}")
    framed = frame(signals, length, length // 2, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(length, dtype=framed.dtype)
    else:
        framed = framed * (1.0 / np.sqrt(2))
    a, b, c, d = joining.split(framed, 4, axis=-1)
    first = -reshaping.reverse(c, [-1]) - d
    second = a - reshaping.reverse(b, [-1])
    return dct(joining.concat([first, second], -1), type=4, norm=norm, name=name)


def inverse_mdct(mdcts: Any, window_fn: Optional[Callable] = vorbis_window,
                 norm: Optional[str] = None, name: Optional[str] = None) -> Tensor:
    """Inverse MDCT with overlap-add: perfect reconstruction with a Princen-Bradley window."""
    mdcts = convert_to_tensor(mdcts)
    half = mdcts.shape[-1] if mdcts.shape.rank else None
    if half is None:
        raise ValueError("inverse_mdct: the innermost dim must be known")
    if norm is None:
        result = dct(mdcts, type=4) * (0.5 / half)
    elif norm == "ortho":
        result = dct(mdcts, type=4, norm="ortho")
    else:
        raise ValueError(f"inverse_mdct: unknown normalization {norm!r}")
    first, second = joining.split(result, 2, axis=-1)
    frames = joining.concat([second, -reshaping.reverse(second, [-1]),
                             -reshaping.reverse(first, [-1]), -first], -1)
    if window_fn is not None:
        frames = frames * window_fn(2 * half, dtype=mdcts.dtype)
    else:
        frames = frames * np.sqrt(2)
    return overlap_and_add(frames, half, name=name)


def _hertz_to_mel(f: Any) -> Any:
    return 1127.0 * np.log(1.0 + np.asarray(f, np.float64) / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins: int = 20, num_spectrogram_bins: int = 129,
                                sample_rate: Any = 8000, lower_edge_hertz: float = 125.0,
                                upper_edge_hertz: float = 3800.0,
                                dtype: Any = _dtypes.float32,
                                name: Optional[str] = None) -> Tensor:
    """[num_spectrogram_bins, num_mel_bins] triangular filters, equally spaced in mel."""
    bins = python_int(num_mel_bins, "linear_to_mel_weight_matrix", "num_mel_bins")
    spectrum = python_int(num_spectrogram_bins, "linear_to_mel_weight_matrix",
                          "num_spectrogram_bins")
    rate = float(np.asarray(getattr(sample_rate, "_value", sample_rate)))
    low, high = float(lower_edge_hertz), float(upper_edge_hertz)
    if bins <= 0 or spectrum <= 0 or rate <= 0:
        raise ValueError("linear_to_mel_weight_matrix: num_mel_bins, num_spectrogram_bins "
                         "and sample_rate must be positive")
    if low < 0 or low >= high or high > rate / 2:
        raise ValueError(f"linear_to_mel_weight_matrix: need 0 <= lower_edge_hertz < "
                         f"upper_edge_hertz <= sample_rate / 2, got {low}, {high}, {rate}")
    mel = _hertz_to_mel(np.linspace(0.0, rate / 2.0, spectrum)[1:])[:, None]
    edges = np.linspace(_hertz_to_mel(low), _hertz_to_mel(high), bins + 2)
    lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    weights = np.maximum(0.0, np.minimum((mel - lower) / (center - lower),
                                         (upper - mel) / (upper - center)))
    return convert_to_tensor(np.pad(weights, [[1, 0], [0, 0]]), _dtypes.as_dtype(dtype))


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms: Any,
                                    name: Optional[str] = None) -> Tensor:
    """MFCCs: the orthonormal-scaled type-II DCT of log-mel spectrograms over mel bins."""
    x = convert_to_tensor(log_mel_spectrograms)
    bins = x.shape[-1] if x.shape.rank else None
    if bins is None:
        raise ValueError("mfccs_from_log_mel_spectrograms: the mel dim must be known")
    return dct(x, type=2) * convert_to_tensor(1.0 / np.sqrt(2.0 * bins), x.dtype)
