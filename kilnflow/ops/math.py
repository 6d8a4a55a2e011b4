"""Math ops: elementwise arithmetic and functions, comparisons, logic, cast and add_n (all but
cast and add_n have `fusable` forms). Reductions are in reduction.py, matmul and einsum in
linalg.py. Each op is one defop() beside its public function.

Gradient rules use only public kf functions, so they serve eager tapes, graphs and
higher orders alike. Broadcast inputs get reduced gradients from the reverse walk
(autodiff.accumulate.unbroadcast), so rules return full-shaped gradients.
"""
from __future__ import annotations

import math as _pymath
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import NO_ATTRS, bind, defop, np_errors_ignored
from kilnflow.ops import array, ragged_hooks
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import EagerTensor, Tensor

FLOATS = _dtypes.FLOATS
INEXACT = _dtypes.INEXACT
NUMERIC = _dtypes.NUMERIC
REAL = _dtypes.REAL
SIGNED = NUMERIC - {_dtypes.uint8, _dtypes.uint16, _dtypes.uint32, _dtypes.uint64}
BOOL = frozenset((_dtypes.bool,))


def _unary(name: str, kernel: Any, grad: Any = None, dtypes: Any = NUMERIC,
           fusable: Optional[str] = None, out_dtype: Any = None):
    return defop(name, shape=rules.same_as(0, out_dtype), kernel=kernel, grad=grad,
                 dtypes=dtypes, fusable=fusable)


def _binary(name: str, kernel: Any, grad: Any = None, dtypes: Any = NUMERIC,
            fusable: Optional[str] = None, out_dtype: Any = None, commutative: bool = False):
    return defop(name, shape=rules.broadcast(out_dtype), kernel=kernel, grad=grad,
                 dtypes=dtypes, fusable=fusable, commutative=commutative)


# ---------------------------------------------------------------- binary arithmetic

def conj_if_complex(t: Any) -> Any:
    """conj(t) for complex tensors, t otherwise: TF's gradients of products use the
    conjugate (so |z|^2 = z * conj(z) has gradient 2z)."""
    if not t.dtype.is_complex:
        return t
    from kilnflow.ops.complex import conj  # builds on this module: a late import
    return conj(t)


# TF's AddV2 also concatenates strings (element-wise, broadcasting)
ADD = _binary("AddV2", np.add, lambda op, dy: [dy, dy], fusable="({0} + {1})",
              commutative=True, dtypes=NUMERIC | frozenset((_dtypes.string,)))
SUB = _binary("Sub", np.subtract, lambda op, dy: [dy, -dy], fusable="({0} - {1})")
MUL = _binary("Mul", np.multiply,
              lambda op, dy: [dy * conj_if_complex(op.inputs[1]),
                              dy * conj_if_complex(op.inputs[0])],
              fusable="({0} * {1})", commutative=True)
REAL_DIV = _binary(
    "RealDiv", np_errors_ignored(np.true_divide),
    lambda op, dy: [dy / conj_if_complex(op.inputs[1]),
                    -dy * conj_if_complex(op.inputs[0] / square(op.inputs[1]))],
    dtypes=INEXACT, fusable="({0} / {1})")


def _floordiv_kernel(x: Any, y: Any) -> Any:
    if x.dtype.kind in "iu" and not np.all(y):
        raise ZeroDivisionError("Integer division by zero")
    return np.floor_divide(x, y)


def _floormod_kernel(x: Any, y: Any) -> Any:
    if x.dtype.kind in "iu" and not np.all(y):
        raise ZeroDivisionError("Integer division by zero")
    return np.mod(x, y)


FLOOR_DIV = _binary("FloorDiv", np_errors_ignored(_floordiv_kernel), dtypes=REAL)
FLOOR_MOD = _binary(
    "FloorMod", np_errors_ignored(_floormod_kernel),
    lambda op, dy: [dy, -dy * floordiv(op.inputs[0], op.inputs[1])], dtypes=REAL)


def _pow_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs
    z = op.outputs[0]
    dx = dy * y * pow(x, y - 1)
    if not y.dtype.is_floating:
        return [dx, None]
    safe_log = log(array.where(x > 0, x, array.ones_like(x)))
    dy_ = dy * z * array.where(x > 0, safe_log, array.zeros_like(x))
    return [dx, dy_]


def _pow_kernel(x: Any, y: Any) -> Any:
    if x.dtype.kind in "iu" and np.any(y < 0):
        raise ValueError("Integers to negative integer powers are not allowed")
    return np.power(x, y)


POW = _binary("Pow", np_errors_ignored(_pow_kernel), _pow_grad, fusable="({0} ** {1})")
MAXIMUM = _binary(
    "Maximum", np.maximum,
    lambda op, dy: _select_grad(op.inputs[0] >= op.inputs[1], dy), dtypes=REAL,
    fusable="maximum({0}, {1})", commutative=True)
MINIMUM = _binary(
    "Minimum", np.minimum,
    lambda op, dy: _select_grad(op.inputs[0] <= op.inputs[1], dy), dtypes=REAL,
    fusable="minimum({0}, {1})", commutative=True)
SQUARED_DIFFERENCE = _binary(
    "SquaredDifference", lambda x, y: np.square(x - y),
    lambda op, dy: [2 * dy * (op.inputs[0] - op.inputs[1]),
                    -2 * dy * (op.inputs[0] - op.inputs[1])],
    fusable="(({0} - {1}) ** 2)")


def _select_grad(mask: Tensor, dy: Tensor) -> list:
    zeros = array.zeros_like(dy)
    return [array.where(mask, dy, zeros), array.where(mask, zeros, dy)]


def add(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x + y elementwise, with NumPy broadcasting.

    >>> import kilnflow as kf
    >>> kf.add(kf.constant([[1, 2], [3, 4]]), 1).numpy().tolist()
    [[2, 3], [4, 5]]
    """
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(add, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(ADD, (x, y), NO_ATTRS, name)


def subtract(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x - y elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(subtract, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(SUB, (x, y), NO_ATTRS, name)


def multiply(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x * y elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(multiply, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(MUL, (x, y), NO_ATTRS, name)


def divide(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x / y elementwise (true division; integers divide as float64, like TF)."""
    return truediv(x, y, name)


def truediv(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(truediv, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    if x.dtype.is_integer and y.dtype is x.dtype:
        target = _dtypes.float32 if x.dtype.size <= 2 else _dtypes.float64
        x, y = cast(x, target), cast(y, target)
    return bind(REAL_DIV, (x, y), NO_ATTRS, name)


def floordiv(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns floor(x / y) elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(floordiv, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(FLOOR_DIV, (x, y), NO_ATTRS, name)


def floormod(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x - floor(x / y) * y elementwise (the sign of y, like Python's %)."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(floormod, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(FLOOR_MOD, (x, y), NO_ATTRS, name)


def pow(x: Any, y: Any, name: Optional[str] = None) -> Tensor:  # noqa: A001 - TF's name
    """Returns x ** y elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(pow, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(POW, (x, y), NO_ATTRS, name)


def maximum(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns max(x, y) elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(maximum, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(MAXIMUM, (x, y), NO_ATTRS, name)


def minimum(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns min(x, y) elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(minimum, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(MINIMUM, (x, y), NO_ATTRS, name)


def squared_difference(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns (x - y) ** 2 elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
            return ragged_hooks.binary(squared_difference, x, y, name)  # TF's ragged dispatch
        x, y = binary(x, y)
    return bind(SQUARED_DIFFERENCE, (x, y), NO_ATTRS, name)


# ---------------------------------------------------------------- unary functions

try:  # SciPy, when installed, has a vectorized erf; otherwise math.erf per element
    from scipy.special import erf as _vector_erf
except ImportError:  # pragma: no cover - depends on the environment
    _vector_erf = np.frompyfunc(_pymath.erf, 1, 1)


def _erf(x: Any) -> Any:
    return np.asarray(_vector_erf(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


NEG = _unary("Neg", np.negative, lambda op, dy: [-dy], SIGNED, "(-{0})")
ABS = _unary("Abs", np.abs, lambda op, dy: [dy * sign(op.inputs[0])], SIGNED, "abs({0})")
SIGN = _unary("Sign", np.sign, lambda op, dy: [array.zeros_like(op.inputs[0])], SIGNED,
              "sign({0})")
SQUARE = _unary("Square", np.square,
                lambda op, dy: [dy * 2 * conj_if_complex(op.inputs[0])], NUMERIC,
                "({0} * {0})")
SQRT = _unary("Sqrt", np_errors_ignored(np.sqrt),
              lambda op, dy: [dy * 0.5 / op.outputs[0]], INEXACT, "sqrt({0})")
RSQRT = _unary("Rsqrt", np_errors_ignored(lambda x: 1 / np.sqrt(x)),
               lambda op, dy: [dy * -0.5 * op.outputs[0] ** 3], INEXACT, "(1 / sqrt({0}))")
EXP = _unary("Exp", np_errors_ignored(np.exp), lambda op, dy: [dy * op.outputs[0]], INEXACT,
             "exp({0})")
LOG = _unary("Log", np_errors_ignored(np.log), lambda op, dy: [dy / op.inputs[0]], INEXACT,
             "log({0})")
LOG1P = _unary("Log1p", np_errors_ignored(np.log1p), lambda op, dy: [dy / (1 + op.inputs[0])],
               INEXACT, "log1p({0})")
EXPM1 = _unary("Expm1", np_errors_ignored(np.expm1),
               lambda op, dy: [dy * (op.outputs[0] + 1)], INEXACT, "expm1({0})")
SIN = _unary("Sin", np.sin, lambda op, dy: [dy * cos(op.inputs[0])], INEXACT, "sin({0})")
COS = _unary("Cos", np.cos, lambda op, dy: [-dy * sin(op.inputs[0])], INEXACT, "cos({0})")
TANH = _unary("Tanh", np.tanh, lambda op, dy: [dy * (1 - square(op.outputs[0]))], INEXACT,
              "tanh({0})")
SIGMOID = _unary(
    "Sigmoid", np_errors_ignored(lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)),
    lambda op, dy: [dy * op.outputs[0] * (1 - op.outputs[0])], INEXACT,
    "(1 / (1 + exp(-{0})))")
ERF = _unary("Erf", _erf,
             lambda op, dy: [dy * (2 / np.sqrt(np.pi)) * exp(-square(op.inputs[0]))], FLOATS)
RECIPROCAL = _unary("Reciprocal", np_errors_ignored(lambda x: 1 / x),
                    lambda op, dy: [-dy * square(op.outputs[0])], INEXACT, "(1 / {0})")
ROUND = _unary("Round", np.round, None, NUMERIC)
FLOOR = _unary("Floor", np.floor, None, FLOATS)
CEIL = _unary("Ceil", np.ceil, None, FLOATS)


def _unary_function(opdef: Any, doc: str):
    def apply(x: Any, name: Optional[str] = None) -> Tensor:
        if hasattr(x, "with_flat_values"):  # a RaggedTensor: the op maps its values, as TF's
            return x.with_flat_values(apply(x.flat_values, name))
        return bind(opdef, (convert_to_tensor(x),), name=name)
    apply.__doc__ = doc
    return apply


negative = _unary_function(NEG, "Returns -x elementwise.")
abs = _unary_function(ABS, "Returns |x| elementwise.")  # noqa: A001 - TF's name
sign = _unary_function(SIGN, "Returns -1, 0 or 1 elementwise by the sign of x.")
square = _unary_function(SQUARE, "Returns x * x elementwise.")
sqrt = _unary_function(SQRT, "Returns the square root of x elementwise.")
rsqrt = _unary_function(RSQRT, "Returns 1 / sqrt(x) elementwise.")
exp = _unary_function(EXP, "Returns e ** x elementwise.")
log = _unary_function(LOG, "Returns the natural logarithm of x elementwise.")
log1p = _unary_function(LOG1P, "Returns log(1 + x) elementwise, accurate for small x.")
expm1 = _unary_function(EXPM1, "Returns exp(x) - 1 elementwise, accurate for small x.")
sin = _unary_function(SIN, "Returns sin(x) elementwise.")
cos = _unary_function(COS, "Returns cos(x) elementwise.")
tanh = _unary_function(TANH, "Returns tanh(x) elementwise.")
sigmoid = _unary_function(SIGMOID, "Returns 1 / (1 + exp(-x)) elementwise.")
erf = _unary_function(ERF, "Returns the Gauss error function of x elementwise.")
reciprocal = _unary_function(RECIPROCAL, "Returns 1 / x elementwise.")
round = _unary_function(ROUND, "Rounds half to even elementwise, like TF.")  # noqa: A001
floor = _unary_function(FLOOR, "Returns the largest integer not greater than x.")
ceil = _unary_function(CEIL, "Returns the smallest integer not less than x.")


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any,
                  name: Optional[str] = None) -> Tensor:
    """Clips t to [clip_value_min, clip_value_max] elementwise."""
    t = convert_to_tensor(t)
    return minimum(maximum(t, clip_value_min), clip_value_max, name=name)


# ---------------------------------------------------------------- comparisons and logic

def _comparison(name: str, kernel: Any, fusable: str, extra: frozenset = BOOL):
    return _binary(name, kernel, None, NUMERIC | extra, fusable, out_dtype=_dtypes.bool)


# TF orders numbers only: Less and friends have no bool kernel (Equal does)
LESS = _comparison("Less", np.less, "({0} < {1})", frozenset())
LESS_EQUAL = _comparison("LessEqual", np.less_equal, "({0} <= {1})", frozenset())
GREATER = _comparison("Greater", np.greater, "({0} > {1})", frozenset())
GREATER_EQUAL = _comparison("GreaterEqual", np.greater_equal, "({0} >= {1})", frozenset())
EQUAL = _comparison("Equal", np.equal, "({0} == {1})", BOOL | {_dtypes.string})
NOT_EQUAL = _comparison("NotEqual", np.not_equal, "({0} != {1})", BOOL | {_dtypes.string})
LOGICAL_AND = _binary("LogicalAnd", np.logical_and, None, BOOL, "({0} & {1})")
LOGICAL_OR = _binary("LogicalOr", np.logical_or, None, BOOL, "({0} | {1})")
LOGICAL_NOT = _unary("LogicalNot", np.logical_not, None, BOOL, "(~{0})")
IS_NAN = _unary("IsNan", np.isnan, None, FLOATS, "isnan({0})", _dtypes.bool)
IS_INF = _unary("IsInf", np.isinf, None, FLOATS, "isinf({0})", _dtypes.bool)
IS_FINITE = _unary("IsFinite", np.isfinite, None, FLOATS, "isfinite({0})", _dtypes.bool)


def _compare(opdef: Any, doc: str):
    def apply(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
        if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
            if type(x) is ragged_hooks.RAGGED or type(y) is ragged_hooks.RAGGED:
                return ragged_hooks.binary(apply, x, y, name)  # TF's ragged dispatch
            x, y = binary(x, y)
        return bind(opdef, (x, y), name=name)
    apply.__doc__ = doc
    return apply


less = _compare(LESS, "Returns the truth value of x < y elementwise.")
less_equal = _compare(LESS_EQUAL, "Returns the truth value of x <= y elementwise.")
greater = _compare(GREATER, "Returns the truth value of x > y elementwise.")
greater_equal = _compare(GREATER_EQUAL, "Returns the truth value of x >= y elementwise.")
equal = _compare(EQUAL, "Returns the truth value of x == y elementwise.")
not_equal = _compare(NOT_EQUAL, "Returns the truth value of x != y elementwise.")
logical_and = _compare(LOGICAL_AND, "Returns x AND y elementwise (bool tensors).")
logical_or = _compare(LOGICAL_OR, "Returns x OR y elementwise (bool tensors).")


is_nan = _unary_function(IS_NAN, "True where x is NaN (floating x).")
is_inf = _unary_function(IS_INF, "True where x is +inf or -inf (floating x).")
is_finite = _unary_function(IS_FINITE, "True where x is neither NaN nor infinite.")


def logical_not(x: Any, name: Optional[str] = None) -> Tensor:
    """Returns NOT x elementwise (bool tensors)."""
    if hasattr(x, "with_flat_values"):  # a RaggedTensor, as in _unary_function
        return x.with_flat_values(logical_not(x.flat_values, name))
    return bind(LOGICAL_NOT, (convert_to_tensor(x),), name=name)


def logical_xor(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x XOR y elementwise (bool tensors)."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def _tensor_comparison(x: Any, y: Any, opdef: Any, name: str, incomparable: bool) -> Any:
    """`==` / `!=` on tensors: elementwise, but a plain bool for None, other dtypes or shapes
    that cannot broadcast (TF's tensor equality)."""
    if y is None:
        return incomparable
    try:
        x, y = binary(x, y)
        if x.dtype is not y.dtype:
            return incomparable
        return bind(opdef, (x, y), name=name)
    except (TypeError, ValueError):
        return incomparable


def tensor_equals(x: Any, y: Any) -> Any:
    return _tensor_comparison(x, y, EQUAL, "Equal", False)


def tensor_not_equals(x: Any, y: Any) -> Any:
    return _tensor_comparison(x, y, NOT_EQUAL, "NotEqual", True)


# `&`, `|`, `^`, `~` are logical on bools and bitwise on integers, as in TF.

def and_(x: Any, y: Any) -> Tensor:
    x, y = binary(x, y)
    if x.dtype.is_bool:
        return logical_and(x, y, name="and")
    from kilnflow.ops import bitwise
    return bitwise.bitwise_and(x, y, name="and")


def or_(x: Any, y: Any) -> Tensor:
    x, y = binary(x, y)
    if x.dtype.is_bool:
        return logical_or(x, y, name="or")
    from kilnflow.ops import bitwise
    return bitwise.bitwise_or(x, y, name="or")


def xor_(x: Any, y: Any) -> Tensor:
    x, y = binary(x, y)
    if x.dtype.is_bool:
        return logical_xor(x, y, name="xor")
    from kilnflow.ops import bitwise
    return bitwise.bitwise_xor(x, y, name="xor")


def invert_(x: Any) -> Tensor:
    x = convert_to_tensor(x)
    if x.dtype.is_bool:
        return logical_not(x, name="invert")
    from kilnflow.ops import bitwise
    return bitwise.invert(x, name="invert")


# ---------------------------------------------------------------- cast

def _cast_grad(op: Any, dy: Any) -> list:
    source = op.inputs[0].dtype
    if source.is_floating and dy.dtype.is_floating:
        return [cast(dy, source)]
    return [None]


def _cast_kernel(x: Any, *, dtype: _dtypes.DType) -> Any:
    if x.dtype.kind in "fc" and dtype.kind in "iub":  # nan/inf -> int: TF stays quiet
        with np.errstate(all="ignore"):
            return x.astype(dtype.as_numpy_dtype)
    return x.astype(dtype.as_numpy_dtype)


CAST = defop("Cast", shape=lambda x, *, dtype: TensorSpec(x.shape, dtype), kernel=_cast_kernel,
             grad=_cast_grad, fusable="{0}.astype({dtype})")


def cast(x: Any, dtype: Any, name: Optional[str] = None) -> Tensor:
    """Casts x to `dtype` (floats truncate toward zero when cast to integers).

    >>> import kilnflow as kf
    >>> kf.cast(kf.constant([1.7, -1.7]), kf.int32).numpy().tolist()
    [1, -1]
    """
    x = convert_to_tensor(x)
    dtype = _dtypes.as_dtype(dtype)
    if x.dtype is dtype:
        return x
    if _dtypes.string in (x.dtype, dtype):  # TF: kf.strings.to_number / as_string instead
        raise errors.UnimplementedError(errors.with_location(
            f"Cast {x.dtype.name} to {dtype.name} is not supported (use kf.strings.to_number "
            f"or kf.strings.as_string) [Op:Cast]"))
    return bind(CAST, (x,), {"dtype": dtype}, name=name)


# ---------------------------------------------------------------- add_n

def _add_n_kernel(*xs: Any) -> Any:
    total = xs[0] + xs[1]
    for x in xs[2:]:  # in place into our own sum: no stacked copy of every input
        if isinstance(total, np.ndarray) and x.shape == total.shape:
            np.add(total, x, out=total)
        else:
            total = total + x
    return total


ADD_N = defop("AddN", shape=rules.broadcast(), kernel=_add_n_kernel,
              grad=lambda op, dy: [dy] * len(op.inputs), dtypes=NUMERIC)


def add_n(inputs: Sequence, name: Optional[str] = None) -> Tensor:
    """Adds all input tensors elementwise (they must have the same shape and dtype)."""
    if not inputs:
        raise ValueError("add_n: inputs must be a non-empty list of tensors")
    if any(isinstance(t, ragged_hooks.RAGGED) for t in inputs):  # TF's ragged dispatch
        total = inputs[0]
        for t in inputs[1:]:
            total = add(total, t)
        return total
    tensors = [convert_to_tensor(t) for t in inputs]
    if len(tensors) == 1:
        return tensors[0]
    for t in tensors[1:]:
        if t.shape.is_fully_defined() and tensors[0].shape.is_fully_defined() and \
                t.shape != tensors[0].shape:
            raise ValueError(f"add_n: all inputs must have the same shape, got "
                             f"{tensors[0].shape} and {t.shape}")
    return bind(ADD_N, tensors, name=name)
