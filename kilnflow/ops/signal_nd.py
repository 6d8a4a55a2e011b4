"""Multi-dimensional FFTs (tf.signal fft2d/3d, rfft2d/3d, fftnd and inverses) and fftshift.

One kernel per kind (fft, ifft, rfft, irfft) over attr `axes`, with attr `fft_length` (None:
the input's dims) cropping or zero-padding the input as TF does. Gradients are the adjoint
maps written with public ops; cropping/padding is undone by `fit`, which needs static dims.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, complex as _complex, joining, math, reduction, reshaping, slicing
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_COMPLEX = (_dtypes.complex64, _dtypes.complex128)
_REAL = (_dtypes.float32, _dtypes.float64)
_TO_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}
_TO_REAL = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _rule(kind: str) -> Any:
    def rule(x: Any, *, axes: tuple, fft_length: Optional[tuple]) -> TensorSpec:
        rank = x.shape.rank
        if rank is not None and rank < len(axes):
            raise ValueError(f"{kind}: input must have rank of at least {len(axes)}, got "
                             f"shape {x.shape}")
        if kind in ("fft", "ifft"):
            dtype = x.dtype
        elif kind == "rfft":
            dtype = _dtypes.complex64 if x.dtype == _dtypes.float32 else _dtypes.complex128
        else:
            dtype = _dtypes.float32 if x.dtype == _dtypes.complex64 else _dtypes.float64
        if rank is None:
            return TensorSpec(None, dtype)
        dims = x.shape.as_list()
        if fft_length is not None:
            for ax, n in zip(axes, fft_length):
                dims[ax] = n
            if kind == "rfft":
                dims[axes[-1]] = fft_length[-1] // 2 + 1
        return TensorSpec(dims, dtype)
    return rule


def _kernel(kind: str) -> Any:
    def kernel(x: np.ndarray, *, axes: tuple, fft_length: Optional[tuple]) -> np.ndarray:
        s = None if fft_length is None else list(fft_length)
        if kind == "fft":
            return np.fft.fftn(x, s, axes).astype(x.dtype)
        if kind == "ifft":
            return np.fft.ifftn(x, s, axes).astype(x.dtype)
        if kind == "rfft":
            return np.fft.rfftn(x, s, axes).astype(_TO_COMPLEX[x.dtype])
        return np.fft.irfftn(x, s, axes).astype(_TO_REAL[x.dtype])
    return kernel


def _size(t: Tensor, axes: Sequence, dtype: Any) -> Tensor:
    """The product of t's dims along `axes`, as a scalar of `dtype`."""
    dims = [t.shape[a] if t.shape.rank is not None else None for a in axes]
    if all(d is not None for d in dims):
        return convert_to_tensor(float(np.prod(dims)), dtype)
    sizes = array.shape(t)
    return math.cast(reduction.reduce_prod(joining.stack([sizes[a] for a in axes])), dtype)


def fit(t: Tensor, axes: Sequence, dims: Sequence) -> Tensor:
    """Crop or zero-pad `t` along `axes` to `dims` (static), undoing a transform's fit."""
    rank = t.shape.rank
    for ax, want in zip(axes, dims):
        have = t.shape[ax] if rank is not None else None
        if have is None or want is None or have == want:
            continue
        ax = ax % rank
        if have > want:
            t = slicing.slice(t, [0] * rank, [-1] * ax + [want] + [-1] * (rank - ax - 1))
        else:
            paddings = [[0, 0]] * rank
            paddings[ax] = [0, want - have]
            t = reshaping.pad(t, paddings)
    return t


def _dims(t: Tensor, axes: Sequence) -> list:
    return [t.shape[a] if t.shape.rank is not None else None for a in axes]


def _complex_grad(kind: str) -> Any:
    def grad(op: Any, dy: Any) -> list:
        x, axes = op.inputs[0], op.attrs["axes"]
        if kind == "fft":
            dx = bind(IFFTND, (dy,), {"axes": axes, "fft_length": None}) * _size(dy, axes,
                                                                                  dy.dtype)
        else:
            dx = bind(FFTND, (dy,), {"axes": axes, "fft_length": None}) / _size(dy, axes,
                                                                                 dy.dtype)
        return [fit(dx, axes, _dims(x, axes))]
    return grad


def rfft_grad(x: Tensor, dy: Tensor, axes: Sequence, fft_length: Sequence) -> Tensor:
    """Adjoint of rfft: zero-extend the bins to fft_length, N * real(ifft), undo the fit."""
    axes = tuple(axes)
    full = fit(dy, axes[-1:], [fft_length[-1]])
    inverse = bind(IFFTND, (full,), {"axes": axes, "fft_length": None})
    dx = _complex.real(inverse) * _size(full, axes, x.dtype)
    return fit(dx, axes, _dims(x, axes))


def irfft_grad(x: Tensor, dy: Tensor, axes: Sequence, fft_length: Sequence) -> Tensor:
    """TF's rule: rfft of the gradient, halved bins doubled (they stand for two), over N."""
    axes = tuple(axes)
    n = int(fft_length[-1])
    bins = n // 2 + 1
    mask = np.full(bins, 2.0)
    mask[0] = 1.0
    if n % 2 == 0:
        mask[-1] = 1.0
    spectrum = bind(RFFTND, (dy,), {"axes": axes, "fft_length": tuple(fft_length)})
    scale = convert_to_tensor(mask / float(np.prod(fft_length)), x.dtype)
    return fit(spectrum * scale, axes, _dims(x, axes))


def _rfft_grad_rule(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    lengths = op.attrs["fft_length"] or tuple(_dims(x, op.attrs["axes"]))
    return [rfft_grad(x, dy, op.attrs["axes"], lengths)]


def _irfft_grad_rule(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    lengths = op.attrs["fft_length"]
    if lengths is None:
        dims = _dims(x, op.attrs["axes"])
        lengths = tuple(dims[:-1]) + (2 * (dims[-1] - 1),)
    return [irfft_grad(x, dy, op.attrs["axes"], lengths)]


def _declare(name: str, kind: str) -> Any:
    grad = {"fft": _complex_grad("fft"), "ifft": _complex_grad("ifft"),
            "rfft": _rfft_grad_rule, "irfft": _irfft_grad_rule}[kind]
    return defop(name, shape=_rule(kind), kernel=_kernel(kind), grad=grad,
                 dtypes=_REAL if kind == "rfft" else _COMPLEX)


FFTND, IFFTND = _declare("FFTND", "fft"), _declare("IFFTND", "ifft")
RFFTND, IRFFTND = _declare("RFFTND", "rfft"), _declare("IRFFTND", "irfft")
FIXED = {name: (_declare(name, kind), k) for name, kind, k in [
    ("FFT2D", "fft", 2), ("IFFT2D", "ifft", 2), ("FFT3D", "fft", 3), ("IFFT3D", "ifft", 3),
    ("RFFT2D", "rfft", 2), ("IRFFT2D", "irfft", 2), ("RFFT3D", "rfft", 3),
    ("IRFFT3D", "irfft", 3)]}


def _lengths(x: Tensor, fft_length: Any, k: int, kind: str, op: str) -> Optional[tuple]:
    if fft_length is None:
        if kind in ("fft", "ifft"):
            return None
        dims = [x.shape[a] if x.shape.rank else None for a in range(-k, 0)]
        if any(d is None for d in dims):
            raise ValueError(errors.with_location(
                f"{op}: `fft_length` is needed when the transformed dims are unknown "
                f"(shape {x.shape})"))
        if kind == "irfft":
            dims[-1] = 2 * (dims[-1] - 1)
        return tuple(int(d) for d in dims)
    value = fft_length
    if hasattr(fft_length, "dtype") and not isinstance(fft_length, np.ndarray):
        value = rules.constant_value(convert_to_tensor(fft_length))
        if value is None:
            raise ValueError(errors.with_location(f"{op}: `fft_length` must be known when "
                                                  f"the graph is built"))
    value = np.asarray(value).reshape(-1)
    if value.size != k or np.any(value < 1):
        raise errors.InvalidArgumentError(
            f"{op}: fft_length must hold {k} positive lengths, got {value.tolist()}")
    return tuple(int(v) for v in value)


def _fixed(op_name: str, kind: str, k: int) -> Any:
    def transform(input_tensor: Any, fft_length: Any = None,
                  name: Optional[str] = None) -> Tensor:
        x = convert_to_tensor(input_tensor)
        lengths = _lengths(x, fft_length, k, kind, op_name.lower())
        axes = tuple(range(-k, 0))
        return bind(FIXED[op_name][0], (x,), {"axes": axes, "fft_length": lengths}, name=name)
    transform.__name__ = op_name.lower()
    transform.__doc__ = (f"The {kind} over the innermost {k} dims"
                         + ("" if kind in ("fft", "ifft") else
                            " (`fft_length`: the transformed lengths)") + ".")
    return transform


def _complex_fixed(name: str, k: int) -> Any:
    inner = _fixed(name, name[0].lower() == "i" and "ifft" or "fft", k)

    def transform(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
        return inner(input, None, name)
    transform.__name__ = name.lower()
    transform.__doc__ = inner.__doc__
    return transform


fft2d, ifft2d = _complex_fixed("FFT2D", 2), _complex_fixed("IFFT2D", 2)
fft3d, ifft3d = _complex_fixed("FFT3D", 3), _complex_fixed("IFFT3D", 3)
rfft2d, irfft2d = _fixed("RFFT2D", "rfft", 2), _fixed("IRFFT2D", "irfft", 2)
rfft3d, irfft3d = _fixed("RFFT3D", "rfft", 3), _fixed("IRFFT3D", "irfft", 3)


def _nd(opdef: Any, kind: str) -> Any:
    def transform(input_tensor: Any, fft_length: Any = None, axes: Any = None,
                  norm: Any = None, name: Optional[str] = None) -> Tensor:
        x = convert_to_tensor(input_tensor)
        if norm not in (None, "backward"):
            raise errors.UnimplementedError(f"{kind}nd: only norm='backward' is supported")
        rank = x.shape.rank
        if axes is None:
            k = rank if fft_length is None else int(np.size(np.asarray(fft_length)))
            if k is None:
                raise ValueError(f"{kind}nd: `axes` or `fft_length` is needed for unknown rank")
            axes = tuple(range(-k, 0))
        axes = tuple(int(a) - (rank if rank is not None and int(a) >= 0 else 0)
                     for a in np.asarray(axes).reshape(-1))
        lengths = None
        if fft_length is not None:
            lengths = tuple(int(v) for v in np.asarray(fft_length).reshape(-1))
            if len(lengths) != len(axes) or min(lengths) < 1:
                raise errors.InvalidArgumentError(
                    f"{kind}nd: fft_length must hold one positive length per axis")
        elif kind in ("rfft", "irfft"):
            dims = [x.shape[a] if rank is not None else None for a in axes]
            if any(d is None for d in dims):
                raise ValueError(f"{kind}nd: `fft_length` is needed for unknown dims")
            if kind == "irfft":
                dims[-1] = 2 * (dims[-1] - 1)
            lengths = tuple(dims)
        return bind(opdef, (x,), {"axes": axes, "fft_length": lengths}, name=name)
    transform.__name__ = f"{kind}nd"
    transform.__doc__ = f"The {kind} over `axes` (default: the innermost len(fft_length))."
    return transform


fftnd, ifftnd = _nd(FFTND, "fft"), _nd(IFFTND, "ifft")
rfftnd, irfftnd = _nd(RFFTND, "rfft"), _nd(IRFFTND, "irfft")


def _shift(x: Any, axes: Any, sign: int) -> Tensor:
    x = convert_to_tensor(x)
    rank = x.shape.rank
    if rank is None:
        raise ValueError("fftshift: the input's rank must be known")
    axes = range(rank) if axes is None else np.asarray(axes).reshape(-1).tolist()
    for ax in axes:
        n = x.shape[ax]
        if n is None:
            raise ValueError("fftshift: the shifted dims must be known")
        k = (n // 2) if sign > 0 else n - n // 2
        if k % max(n, 1):
            ax = int(ax) % rank
            head = slicing.slice(x, [0] * rank, [-1] * ax + [n - k] + [-1] * (rank - ax - 1))
            tail = slicing.slice(x, [0] * ax + [n - k] + [0] * (rank - ax - 1), [-1] * rank)
            x = joining.concat([tail, head], ax)
    return x


def fftshift(x: Any, axes: Any = None, name: Optional[str] = None) -> Tensor:
    """Move the zero-frequency term to the centre (NumPy's fftshift)."""
    return array.identity(_shift(x, axes, 1), name=name)


def ifftshift(x: Any, axes: Any = None, name: Optional[str] = None) -> Tensor:
    """The inverse of fftshift."""
    return array.identity(_shift(x, axes, -1), name=name)
