"""Discrete Fourier transforms (tf.signal): fft/ifft on complex tensors and rfft/irfft
between real and complex, over the innermost 1, 2 or 3 dims or any axes (fftnd), and
fftshift. Every transform has a gradient: the adjoint of the linear map (a complex
gradient follows TF's convention, d/dRe + i d/dIm), so FFT's is N * IFFT of the gradient,
RFFT's zero-extends the bins before an inverse FFT, and IRFFT's is TF's masked RFFT.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array
from kilnflow.ops.signal_nd import irfft_grad, rfft_grad
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import cast
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_COMPLEX = frozenset((_dtypes.complex64, _dtypes.complex128))
_REAL = frozenset((_dtypes.float32, _dtypes.float64))
_COMPLEX_OF = {_dtypes.float32: _dtypes.complex64, _dtypes.float64: _dtypes.complex128}


def _same_shape(x: Any) -> TensorSpec:
    if x.shape.rank == 0:
        raise ValueError("fft: input must be at least 1-D")
    return TensorSpec(x.shape, x.dtype)


def _length(x: Any) -> Any:
    """The innermost dim as a complex scalar of x's dtype (known or read at run time)."""
    n = x.shape[-1] if x.shape.rank is not None else None
    if n is not None:
        return convert_to_tensor(n, x.dtype)
    return cast(array.shape(x)[-1], x.dtype)


FFT = defop("FFT", shape=_same_shape, dtypes=_COMPLEX,
            kernel=lambda x: np.fft.fft(x).astype(x.dtype),
            grad=lambda op, dy: [ifft(dy) * _length(dy)])
IFFT = defop("IFFT", shape=_same_shape, dtypes=_COMPLEX,
             kernel=lambda x: np.fft.ifft(x).astype(x.dtype),
             grad=lambda op, dy: [fft(dy) / _length(dy)])


def _rfft_rule(x: Any, *, fft_length: int) -> TensorSpec:
    if x.shape.rank == 0:
        raise ValueError("rfft: input must be at least 1-D")
    dims = None if x.shape.rank is None else x.shape.as_list()[:-1] + [fft_length // 2 + 1]
    return TensorSpec(dims, _COMPLEX_OF[x.dtype])


def _irfft_rule(x: Any, *, fft_length: int) -> TensorSpec:
    dims = None if x.shape.rank is None else x.shape.as_list()[:-1] + [fft_length]
    real = _dtypes.float32 if x.dtype == _dtypes.complex64 else _dtypes.float64
    return TensorSpec(dims, real)


RFFT = defop("RFFT", shape=_rfft_rule, dtypes=_REAL,
             kernel=lambda x, *, fft_length: np.fft.rfft(x, fft_length).astype(
                 np.complex64 if x.dtype == np.float32 else np.complex128),
             grad=lambda op, dy: [rfft_grad(op.inputs[0], dy, (-1,), (op.attrs["fft_length"],))])
IRFFT = defop("IRFFT", shape=_irfft_rule, dtypes=_COMPLEX,
              kernel=lambda x, *, fft_length: np.fft.irfft(x, fft_length).astype(
                  np.float32 if x.dtype == np.complex64 else np.float64),
              grad=lambda op, dy: [irfft_grad(op.inputs[0], dy, (-1,),
                                              (op.attrs["fft_length"],))])


def fft(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The discrete Fourier transform over the innermost dim of a complex tensor."""
    return bind(FFT, (convert_to_tensor(input),), name=name)


def ifft(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse discrete Fourier transform over the innermost dim."""
    return bind(IFFT, (convert_to_tensor(input),), name=name)


def _fft_length(x: Tensor, fft_length: Any, default: Any) -> int:
    if fft_length is None:
        if default is None:
            raise ValueError(errors.with_location(
                "`fft_length` is needed when the innermost dim of the input is unknown, or "
                f"the input has no dims (shape {x.shape})"))
        return int(default)
    values = np.asarray(fft_length).reshape(-1)
    return int(values[0])


def rfft(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> Tensor:
    """The FFT of a real signal: fft_length // 2 + 1 complex bins (no gradient yet)."""
    x = convert_to_tensor(input_tensor)
    n = _fft_length(x, fft_length, x.shape[-1] if x.shape.rank else None)
    return bind(RFFT, (x,), {"fft_length": n}, name=name)


def irfft(input_tensor: Any, fft_length: Any = None, name: Optional[str] = None) -> Tensor:
    """The inverse of rfft: a real signal of fft_length samples (no gradient yet)."""
    x = convert_to_tensor(input_tensor)
    inner = x.shape[-1] if x.shape.rank else None
    n = _fft_length(x, fft_length, None if inner is None else 2 * (inner - 1))
    return bind(IRFFT, (x,), {"fft_length": n}, name=name)
