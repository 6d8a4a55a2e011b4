"""Complex numbers (tf.complex, tf.math.real/imag/conj/angle), with TF's gradient rules for
complex values (the gradient of a real function of z is its conjugate-linear partner, as TF
defines it). Imports ops.math, ops.convert, core.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.ops.math import reciprocal
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

COMPLEX_DTYPES = frozenset((_dtypes.complex64, _dtypes.complex128))
_PART_OF = {_dtypes.complex64: _dtypes.float32, _dtypes.complex128: _dtypes.float64}
_WHOLE_OF = {v: k for k, v in _PART_OF.items()}


def _complex_rule(real: Any, imag: Any) -> TensorSpec:
    if real.dtype not in _WHOLE_OF:
        raise ValueError(f"complex: real and imag must be float32 or float64, got "
                         f"{real.dtype.name}")
    return TensorSpec(rules.broadcast()(real, imag).shape, _WHOLE_OF[real.dtype])


def _part_rule(x: Any) -> TensorSpec:
    return TensorSpec(x.shape, _PART_OF.get(x.dtype, x.dtype))


COMPLEX = defop("Complex", shape=_complex_rule,
                kernel=lambda re, im: (re + 1j * im).astype(np.result_type(re, np.complex64)),
                grad=lambda op, dy: [real(dy), imag(dy)], dtypes=_dtypes.FLOATS,
                check_eager=True)
REAL = defop("Real", shape=_part_rule, kernel=lambda x: np.real(x).copy(),
             grad=lambda op, dy: [complex(dy, array.zeros_like(dy))], dtypes=COMPLEX_DTYPES)
IMAG = defop("Imag", shape=_part_rule, kernel=lambda x: np.imag(x).copy(),
             grad=lambda op, dy: [complex(array.zeros_like(dy), dy)], dtypes=COMPLEX_DTYPES)
CONJ = defop("Conj", shape=rules.same_as(0), kernel=np.conj,
             grad=lambda op, dy: [conj(dy)], dtypes=COMPLEX_DTYPES, fusable="conj({0})")


def _angle_grad(op: Any, dy: Any) -> list:
    """TF's rule: -complex(dy, 0) / complex(imag(z), real(z))."""
    z = op.inputs[0]
    inverse = reciprocal(complex(imag(z), real(z)))
    return [-complex(dy, array.zeros_like(dy)) * inverse]


ANGLE = defop("Angle", shape=_part_rule, kernel=lambda x: np.angle(x).astype(
    np.real(x).dtype), grad=_angle_grad, dtypes=COMPLEX_DTYPES)


def complex(real: Any, imag: Any, name: Optional[str] = None) -> Tensor:  # noqa: A001
    """real + imag * 1j elementwise: float32 parts give complex64, float64 complex128.

    >>> import kilnflow as kf
    >>> kf.complex(1.0, 2.0).numpy()
    np.complex64(1+2j)
    """
    real, imag = binary(real, imag)
    return bind(COMPLEX, (real, imag), name=name)


def _part(opdef: Any, x: Any, name: Optional[str], real_value: Any) -> Tensor:
    x = convert_to_tensor(x)
    if x.dtype not in COMPLEX_DTYPES:
        if x.dtype.is_bool or x.dtype.kind == "s":  # TF: only numbers have parts
            raise TypeError(errors.with_location(
                f"{opdef.name}: input must be a numeric tensor, got dtype {x.dtype.name}"))
        return real_value(x)
    return bind(opdef, (x,), name=name)


def real(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The real part (a real input is returned as is, as in TF)."""
    return _part(REAL, input, name, lambda x: x)


def imag(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The imaginary part (zeros for a real input, as in TF)."""
    return _part(IMAG, input, name, array.zeros_like)


def conj(x: Any, name: Optional[str] = None) -> Tensor:
    """The complex conjugate (a real input is returned as is)."""
    return _part(CONJ, x, name, lambda v: v)


def angle(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The argument of each complex value (0 or pi for real inputs, as in TF)."""
    def real_angle(x: Tensor) -> Tensor:
        if not x.dtype.is_floating:
            raise TypeError(f"angle: expected a float or complex tensor, got {x.dtype.name}")
        pi = convert_to_tensor(np.pi, x.dtype)
        return array.where(x < 0, pi + array.zeros_like(x), array.zeros_like(x))
    return _part(ANGLE, input, name, real_angle)
