"""keras.ops.math: segment reductions, top_k / in_top_k, FFTs on (real, imag) pairs, STFT and
its inverse, extract_sequences, and pairwise distances."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

import kilnflow as kf
from kilnflow.keras.ops.convert import promote, to_float, to_tensor
from kilnflow.keras.ops.numpy_math import erf, erfinv, rsqrt  # noqa: F401
from kilnflow.keras.ops.numpy_reduce import logsumexp  # noqa: F401


def _segment(name: str, data: Any, segment_ids: Any, num_segments: Any) -> Any:
    """Keras's rule: with no num_segments, as many segments as max id + 1. A graph needs
    that count when it is built, so symbolic ids without num_segments use the sorted
    segment op (whose output length follows the largest id at run time)."""
    data = to_tensor(data)
    ids = to_tensor(segment_ids, "int32")
    if num_segments is None:
        static = kf.get_static_value(ids)
        if static is None:
            return getattr(kf.math, name)(data, ids)
        num_segments = int(static.max()) + 1 if static.size else 0
    return getattr(kf.math, "unsorted_" + name)(data, ids, num_segments)


def segment_sum(data: Any, segment_ids: Any, num_segments: Any = None,
                sorted: bool = False) -> Any:
    """Sums of data's rows per segment id (num_segments defaults to max id + 1)."""
    return _segment("segment_sum", data, segment_ids, num_segments)


def segment_max(data: Any, segment_ids: Any, num_segments: Any = None,
                sorted: bool = False) -> Any:
    """Maxima per segment (empty segments hold the dtype's lowest value)."""
    return _segment("segment_max", data, segment_ids, num_segments)


def segment_min(data: Any, segment_ids: Any, num_segments: Any = None,
                sorted: bool = False) -> Any:
    """Minima per segment (empty segments hold the dtype's highest value)."""
    return _segment("segment_min", data, segment_ids, num_segments)


def segment_prod(data: Any, segment_ids: Any, num_segments: Any = None,
                 sorted: bool = False) -> Any:
    """Products per segment (empty segments hold 1)."""
    return _segment("segment_prod", data, segment_ids, num_segments)


def top_k(x: Any, k: int, sorted: bool = True) -> Tuple[Any, Any]:
    """(values, int32 indices) of the k largest entries along the last axis."""
    return tuple(kf.math.top_k(to_tensor(x), k, sorted=sorted))


def in_top_k(targets: Any, predictions: Any, k: int) -> Any:
    """Whether each target class is among the k highest predictions of its row."""
    return kf.math.in_top_k(to_tensor(targets, "int32"), to_float(predictions), k)


def extract_sequences(x: Any, sequence_length: int, sequence_stride: int) -> Any:
    """Frames of `sequence_length` taken every `sequence_stride` along the last axis."""
    return kf.signal.frame(to_tensor(x), sequence_length, sequence_stride)


def _complex(x: Any) -> Any:
    if not isinstance(x, (tuple, list)) or len(x) != 2:
        raise ValueError("expected x as a tuple (real, imag) of two tensors")
    real, imag = promote(*x)
    if not real.dtype.is_floating:
        real, imag = kf.cast(real, "float32"), kf.cast(imag, "float32")
    return kf.complex(real, imag)


def _parts(c: Any) -> Tuple[Any, Any]:
    return kf.math.real(c), kf.math.imag(c)


def fft(x: Any) -> Tuple[Any, Any]:
    """FFT over the last axis of (real, imag); returns (real, imag)."""
    return _parts(kf.signal.fft(_complex(x)))


def fft2(x: Any) -> Tuple[Any, Any]:
    """2-D FFT over the last two axes of (real, imag)."""
    return _parts(kf.signal.fft2d(_complex(x)))


def ifft2(x: Any) -> Tuple[Any, Any]:
    """Inverse 2-D FFT over the last two axes of (real, imag)."""
    return _parts(kf.signal.ifft2d(_complex(x)))


def rfft(x: Any, fft_length: Any = None) -> Tuple[Any, Any]:
    """Real FFT over the last axis; returns (real, imag) of the fft_length // 2 + 1 bins."""
    x = to_float(x)
    n = fft_length if fft_length is not None else x.shape.as_list()[-1]
    return _parts(kf.signal.rfft(x, [n]))


def irfft(x: Any, fft_length: Any = None) -> Any:
    """Inverse real FFT of (real, imag) over the last axis."""
    c = _complex(x)
    n = fft_length if fft_length is not None else 2 * (c.shape.as_list()[-1] - 1)
    return kf.signal.irfft(c, [n])


def _window(window: Any, sequence_length: int, fft_length: int, dtype: str) -> Any:
    if window is None:
        win = np.ones(sequence_length)
    elif isinstance(window, str):
        n = np.arange(sequence_length)
        cosine = np.cos(2.0 * np.pi * n / sequence_length)
        if window == "hann":
            win = 0.5 - 0.5 * cosine
        elif window == "hamming":
            win = 0.54 - 0.46 * cosine
        else:
            raise ValueError(f"window must be 'hann', 'hamming', None or a tensor, got {window!r}")
    else:
        w = to_tensor(window, dtype)
        left = (fft_length - sequence_length) // 2
        return kf.pad(w, [[left, fft_length - sequence_length - left]])
    left = (fft_length - sequence_length) // 2
    win = np.pad(win, (left, fft_length - sequence_length - left))
    return kf.constant(win.astype(kf.as_dtype(dtype).as_numpy_dtype))


def stft(x: Any, sequence_length: int, sequence_stride: int, fft_length: int,
         window: Any = "hann", center: bool = True) -> Tuple[Any, Any]:
    """Short-time Fourier transform over the last axis; returns (real, imag) with frames on
    the second-to-last axis (the signal reflect-padded by fft_length // 2 when `center`)."""
    x = to_float(x)
    if center:
        pad = [[0, 0]] * (x.shape.rank - 1) + [[fft_length // 2, fft_length // 2]]
        x = kf.pad(x, pad, mode="REFLECT")
    frames = kf.signal.frame(x, fft_length, sequence_stride)
    frames = frames * _window(window, sequence_length, fft_length, x.dtype.name)
    return _parts(kf.signal.rfft(frames, [fft_length]))


def istft(x: Any, sequence_length: int, sequence_stride: int, fft_length: int,
          length: Any = None, window: Any = "hann", center: bool = True) -> Any:
    """The inverse of stft: overlap-added frames, normalised by the summed squared window."""
    c = _complex(x)
    dtype = kf.math.real(c).dtype.name
    frames = kf.signal.irfft(c, [fft_length])
    win = _window(window, sequence_length, fft_length, dtype)
    overlaps = -(-fft_length // sequence_stride)
    denom = kf.pad(kf.square(win), [[0, overlaps * sequence_stride - fft_length]])
    denom = kf.reduce_sum(kf.reshape(denom, [overlaps, sequence_stride]), 0, keepdims=True)
    denom = kf.reshape(kf.tile(denom, [overlaps, 1]), [-1])[:fft_length]
    win = kf.math.divide_no_nan(win, denom)
    out = kf.signal.overlap_and_add(frames * win, sequence_stride)
    start = fft_length // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = -(fft_length // 2)
    else:
        end = fft_length + sequence_stride * (c.shape.as_list()[-2] - 1)
    out = out[..., start:end]
    frames_n = c.shape.as_list()[-2]
    if frames_n is not None:
        total = fft_length + sequence_stride * (frames_n - 1)
        stop = start + length if length is not None else (total - fft_length // 2 if center
                                                          else total)
        out.set_shape(c.shape[:-2].concatenate([stop - start]))
    return out


def cdist(x: Any, y: Any) -> Any:
    """Euclidean distances between the rows of x (..., P, M) and y (..., R, M)."""
    a, b = promote(x, y)
    a, b = to_float(a), to_float(b)
    diff = kf.expand_dims(a, -2) - kf.expand_dims(b, -3)
    return kf.sqrt(kf.reduce_sum(kf.square(diff), axis=-1))


__all__ = [
    "cdist", "erf", "erfinv", "extract_sequences", "fft", "fft2", "ifft2", "in_top_k",
    "irfft", "istft", "logsumexp", "rfft", "rsqrt", "segment_max", "segment_min",
    "segment_prod", "segment_sum", "stft", "top_k",
]
