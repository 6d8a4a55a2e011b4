"""More elementwise math (tf.math): inverse and hyperbolic trigonometry, tan, atan2, rint,
erfc, softsign, nextafter and the zero-safe forms TF has (divide_no_nan, xlogy, ...).
Each op is one defop() with its gradient (public ops only) and a `fusable` form where NumPy
has one. Imports ops.math, ops.array, ops.convert, core.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, check_dtypes, defop, np_errors_ignored
from kilnflow.ops import array, ragged_hooks
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.ops.math import FLOATS, INEXACT, REAL, cast, exp, not_equal, sqrt, square
from kilnflow.ops.math import abs as absolute
from kilnflow.tensor import EagerTensor, Tensor

_PI_SQRT = float(np.sqrt(np.pi))


def _unary(name: str, kernel: Any, grad: Any, dtypes: Any = INEXACT,
           fusable: Optional[str] = None):
    return defop(name, shape=rules.same_as(0), kernel=np_errors_ignored(kernel), grad=grad,
                 dtypes=dtypes, fusable=fusable)


def _binary(name: str, kernel: Any, grad: Any, dtypes: Any = INEXACT,
            fusable: Optional[str] = None):
    return defop(name, shape=rules.broadcast(), kernel=np_errors_ignored(kernel), grad=grad,
                 dtypes=dtypes, fusable=fusable)


# ---------------------------------------------------------------- trigonometry

TAN = _unary("Tan", np.tan, lambda op, dy: [dy * (1 + square(op.outputs[0]))], fusable="tan({0})")
ASIN = _unary("Asin", np.arcsin, lambda op, dy: [dy / sqrt(1 - square(op.inputs[0]))],
              fusable="arcsin({0})")
ACOS = _unary("Acos", np.arccos, lambda op, dy: [-dy / sqrt(1 - square(op.inputs[0]))],
              fusable="arccos({0})")
ATAN = _unary("Atan", np.arctan, lambda op, dy: [dy / (1 + square(op.inputs[0]))],
              fusable="arctan({0})")
SINH = _unary("Sinh", np.sinh, lambda op, dy: [dy * cosh(op.inputs[0])], fusable="sinh({0})")
COSH = _unary("Cosh", np.cosh, lambda op, dy: [dy * sinh(op.inputs[0])], fusable="cosh({0})")
ASINH = _unary("Asinh", np.arcsinh, lambda op, dy: [dy / cosh(op.outputs[0])],
               fusable="arcsinh({0})")
ACOSH = _unary("Acosh", np.arccosh, lambda op, dy: [dy / sinh(op.outputs[0])],
               fusable="arccosh({0})")
ATANH = _unary("Atanh", np.arctanh, lambda op, dy: [dy / (1 - square(op.inputs[0]))],
               fusable="arctanh({0})")


def _atan2_grad(op: Any, dy: Any) -> list:
    y, x = op.inputs
    scale = dy / (square(x) + square(y))
    return [scale * x, -scale * y]


ATAN2 = _binary("Atan2", np.arctan2, _atan2_grad, FLOATS, "arctan2({0}, {1})")

# ---------------------------------------------------------------- rounding, erfc, softsign


def _erfc(x: Any) -> Any:
    try:
        from scipy.special import erfc as vector_erfc
    except ImportError:  # pragma: no cover - without SciPy: math.erfc per element
        import math
        vector_erfc = np.frompyfunc(math.erfc, 1, 1)
    return np.asarray(vector_erfc(x.astype(np.float64)), np.float64).astype(x.dtype)


RINT = _unary("Rint", np.rint, None, FLOATS, "rint({0})")
ERFC = _unary("Erfc", _erfc, lambda op, dy: [dy * (-2 / _PI_SQRT) * exp(-square(op.inputs[0]))],
              FLOATS)
SOFTSIGN = _unary("Softsign", lambda x: x / (1 + np.abs(x)),
                  lambda op, dy: [dy / square(1 + absolute(op.inputs[0]))], FLOATS,
                  "({0} / (1 + abs({0})))")
NEXTAFTER = _binary("NextAfter", np.nextafter, None, FLOATS, "nextafter({0}, {1})")

# ---------------------------------------------------------------- zero-safe forms


# TF's rules: written with the zero-safe ops themselves, so higher orders stay NaN-free too

def _nonzero(x: Tensor) -> Tensor:
    return cast(not_equal(x, array.zeros_like(x)), x.dtype)


def _xlogy_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs
    return [dy * xlogy(_nonzero(x), y), dy * xdivy(x, y)]


def _xlog1py_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs
    return [dy * xlog1py(_nonzero(x), y), dy * xdivy(x, y + 1)]


def _xdivy_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs
    return [dy * xdivy(_nonzero(x), y), dy * xdivy(-x, square(y))]


def _div_no_nan_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs
    return [divide_no_nan(dy, y), divide_no_nan(-dy * x, square(y))]


def _mul_no_nan_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs
    return [multiply_no_nan(dy, y), multiply_no_nan(x, dy)]


XLOGY = _binary("Xlogy", lambda x, y: np.where(x == 0, 0, x * np.log(y)).astype(x.dtype),
                _xlogy_grad, fusable="where({0} == 0, 0, {0} * log({1}))")
XLOG1PY = _binary("Xlog1py", lambda x, y: np.where(x == 0, 0, x * np.log1p(y)).astype(x.dtype),
                  _xlog1py_grad, fusable="where({0} == 0, 0, {0} * log1p({1}))")
XDIVY = _binary("Xdivy", lambda x, y: np.where(x == 0, 0, x / y).astype(x.dtype), _xdivy_grad,
                fusable="where({0} == 0, 0, {0} / {1})")
DIV_NO_NAN = _binary("DivNoNan", lambda x, y: np.where(y == 0, 0, x / np.where(y == 0, 1, y))
                     .astype(x.dtype), _div_no_nan_grad)
MUL_NO_NAN = _binary("MulNoNan", lambda x, y: np.where(y == 0, 0, x * y).astype(x.dtype),
                     _mul_no_nan_grad, fusable="where({1} == 0, 0, {0} * {1})")


# ---------------------------------------------------------------- truncating division (C's / and %)


def _truncate_div_kernel(x: Any, y: Any) -> Any:
    if x.dtype.kind in "iu":
        if not np.all(y):
            raise ZeroDivisionError("Integer division by zero")
        quotient = np.abs(x) // np.abs(y)
        return (np.sign(x) * np.sign(y) * quotient).astype(x.dtype)
    return np.trunc(x / y).astype(x.dtype)


def _truncate_mod_kernel(x: Any, y: Any) -> Any:
    if x.dtype.kind in "iu" and not np.all(y):
        raise ZeroDivisionError("Integer division by zero")
    return np.fmod(x, y).astype(x.dtype)


TRUNCATE_DIV = defop("TruncateDiv", shape=rules.broadcast(), dtypes=REAL,
                     kernel=np_errors_ignored(_truncate_div_kernel))
TRUNCATE_MOD = defop("TruncateMod", shape=rules.broadcast(), dtypes=REAL,
                     kernel=np_errors_ignored(_truncate_mod_kernel),
                     grad=lambda op, dy: [dy, -dy * truncatediv(op.inputs[0], op.inputs[1])])


# ---------------------------------------------------------------- public functions

def _unary_function(opdef: Any, doc: str):
    def apply(x: Any, name: Optional[str] = None) -> Tensor:
        if hasattr(x, "with_flat_values"):  # a RaggedTensor: the op maps its values, as TF's
            return x.with_flat_values(apply(x.flat_values, name))
        return bind(opdef, (convert_to_tensor(x),), name=name)
    apply.__doc__ = doc
    return apply


def _binary_function(opdef: Any, doc: str):
    def apply(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
        if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
            if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
                return ragged_hooks.binary(apply, x, y, name)  # TF's ragged dispatch
            x, y = binary(x, y)
        return bind(opdef, (x, y), name=name)
    apply.__doc__ = doc
    return apply


tan = _unary_function(TAN, "Returns tan(x) elementwise.")
asin = _unary_function(ASIN, "Returns arcsin(x) elementwise (NaN outside [-1, 1]).")
acos = _unary_function(ACOS, "Returns arccos(x) elementwise (NaN outside [-1, 1]).")
atan = _unary_function(ATAN, "Returns arctan(x) elementwise.")
sinh = _unary_function(SINH, "Returns sinh(x) elementwise.")
cosh = _unary_function(COSH, "Returns cosh(x) elementwise.")
asinh = _unary_function(ASINH, "Returns arcsinh(x) elementwise.")
acosh = _unary_function(ACOSH, "Returns arccosh(x) elementwise (NaN below 1).")
atanh = _unary_function(ATANH, "Returns arctanh(x) elementwise.")
rint = _unary_function(RINT, "Rounds to the nearest integer, halves to even.")
erfc = _unary_function(ERFC, "Returns 1 - erf(x) elementwise, accurate for large x.")
softsign = _unary_function(SOFTSIGN, "Returns x / (1 + |x|) elementwise.")
atan2 = _binary_function(ATAN2, """Returns arctan(y / x) elementwise, in the quadrant of (x, y).

    >>> import kilnflow as kf
    >>> round(float(kf.math.atan2(1.0, -1.0)), 4)
    2.3562
    """)
nextafter = _binary_function(NEXTAFTER, "The next representable value after x1 toward x2.")
xlogy = _binary_function(XLOGY, "Returns 0 where x == 0, else x * log(y).")
xlog1py = _binary_function(XLOG1PY, "Returns 0 where x == 0, else x * log1p(y).")
xdivy = _binary_function(XDIVY, "Returns 0 where x == 0, else x / y.")
truncatediv = _binary_function(TRUNCATE_DIV, "x / y rounded toward zero (C's integer "
                                            "division).")
truncatemod = _binary_function(TRUNCATE_MOD, "The remainder of truncatediv: the sign of x "
                                             "(C's %), unlike floormod.")
multiply_no_nan = _binary_function(MUL_NO_NAN, "Returns 0 where y == 0 (even if x is inf or "
                                               "NaN), else x * y.")


def divide_no_nan(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns 0 where y == 0, else x / y (integers divide as in kf.divide).

    >>> import kilnflow as kf
    >>> kf.math.divide_no_nan(kf.constant([1.0, 2.0]), kf.constant([0.0, 4.0])).numpy().tolist()
    [0.0, 0.5]
    """
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(divide_no_nan, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    if x.dtype.is_integer:
        if y.dtype is not x.dtype:  # before the casts below hide the mismatch
            check_dtypes(DIV_NO_NAN, (x, y))
        target = _dtypes.float32 if x.dtype.size <= 2 else _dtypes.float64
        x, y = cast(x, target), cast(y, target)
    return bind(DIV_NO_NAN, (x, y), name=name)


def realdiv(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """x / y for floating or complex tensors (TF's RealDiv op, no integer conversion)."""
    from kilnflow.ops.math import REAL_DIV
    x, y = binary(x, y)
    return bind(REAL_DIV, (x, y), name=name)


def reciprocal_no_nan(x: Any, name: Optional[str] = None) -> Tensor:
    """Returns 0 where x == 0, else 1 / x."""
    x = convert_to_tensor(x)
    if not (x.dtype.is_floating or x.dtype.is_complex):  # TF binds DivNoNan: no int kernel
        raise errors.InvalidArgumentError(errors.with_location(
            f"reciprocal_no_nan: `x` of dtype {x.dtype.name} is not in the list of allowed "
            f"values: half, float, bfloat16, double, complex64, complex128 [Op:DivNoNan]"))
    return divide_no_nan(array.ones_like(x), x, name=name)
