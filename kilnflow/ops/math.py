"""Math ops: elementwise arithmetic and functions, comparisons, logic, reductions, matmul,
einsum, cumsum, cast. Each op is one defop() beside its public function.

Gradient rules use only public kf functions, so they serve eager tapes, graphs and
higher orders alike. Broadcast inputs get reduced gradients from the reverse walk
(autodiff.accumulate.unbroadcast), so rules return full-shaped gradients.
"""
from __future__ import annotations

import math as _pymath
from typing import Any, Callable, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.core import rules
from kilnflow import errors
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.core.opdef import _NO_ATTRS, bind, defop, np_errors_ignored
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import EagerTensor, Tensor
from kilnflow.ops import reshaping

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

ADD = _binary("AddV2", np.add, lambda op, dy: [dy, dy], fusable="({0} + {1})",
              commutative=True)
SUB = _binary("Sub", np.subtract, lambda op, dy: [dy, -dy], fusable="({0} - {1})")
MUL = _binary("Mul", np.multiply,
              lambda op, dy: [dy * op.inputs[1], dy * op.inputs[0]],
              fusable="({0} * {1})", commutative=True)
REAL_DIV = _binary(
    "RealDiv", np_errors_ignored(np.true_divide),
    lambda op, dy: [dy / op.inputs[1], -dy * op.inputs[0] / square(op.inputs[1])],
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
    safe_log = log(where(x > 0, x, ones_like(x)))
    dy_ = dy * z * where(x > 0, safe_log, zeros_like(x))
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
    zeros = zeros_like(dy)
    return [where(mask, dy, zeros), where(mask, zeros, dy)]


def add(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x + y elementwise, with NumPy broadcasting.

    >>> import kilnflow as kf
    >>> kf.add(kf.constant([[1, 2], [3, 4]]), 1).numpy().tolist()
    [[2, 3], [4, 5]]
    """
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        x, y = binary(x, y)
    return bind(ADD, (x, y), _NO_ATTRS, name)


def subtract(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x - y elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        x, y = binary(x, y)
    return bind(SUB, (x, y), _NO_ATTRS, name)


def multiply(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x * y elementwise."""
    if type(x) is not EagerTensor or type(y) is not EagerTensor:  # fast path
        x, y = binary(x, y)
    return bind(MUL, (x, y), _NO_ATTRS, name)


def divide(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x / y elementwise (true division; integers divide as float64, like TF)."""
    return truediv(x, y, name)


def truediv(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    x, y = binary(x, y)
    if x.dtype.is_integer and y.dtype is x.dtype:
        target = _dtypes.float32 if x.dtype.size <= 2 else _dtypes.float64
        x, y = cast(x, target), cast(y, target)
    return bind(REAL_DIV, (x, y), _NO_ATTRS, name)


def floordiv(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns floor(x / y) elementwise."""
    x, y = binary(x, y)
    return bind(FLOOR_DIV, (x, y), _NO_ATTRS, name)


def floormod(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x - floor(x / y) * y elementwise (the sign of y, like Python's %)."""
    x, y = binary(x, y)
    return bind(FLOOR_MOD, (x, y), _NO_ATTRS, name)


def pow(x: Any, y: Any, name: Optional[str] = None) -> Tensor:  # noqa: A001 - TF's name
    """Returns x ** y elementwise."""
    x, y = binary(x, y)
    return bind(POW, (x, y), _NO_ATTRS, name)


def maximum(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns max(x, y) elementwise."""
    x, y = binary(x, y)
    return bind(MAXIMUM, (x, y), _NO_ATTRS, name)


def minimum(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns min(x, y) elementwise."""
    x, y = binary(x, y)
    return bind(MINIMUM, (x, y), _NO_ATTRS, name)


def squared_difference(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns (x - y) ** 2 elementwise."""
    x, y = binary(x, y)
    return bind(SQUARED_DIFFERENCE, (x, y), _NO_ATTRS, name)


# ---------------------------------------------------------------- unary functions

try:  # SciPy, when installed, has a vectorized erf; otherwise math.erf per element
    from scipy.special import erf as _vector_erf
except ImportError:  # pragma: no cover - depends on the environment
    _vector_erf = np.frompyfunc(_pymath.erf, 1, 1)


def _erf(x: Any) -> Any:
    return np.asarray(_vector_erf(x.astype(np.float64)), dtype=np.float64).astype(x.dtype)


NEG = _unary("Neg", np.negative, lambda op, dy: [-dy], SIGNED, "(-{0})")
ABS = _unary("Abs", np.abs, lambda op, dy: [dy * sign(op.inputs[0])], SIGNED, "abs({0})")
SIGN = _unary("Sign", np.sign, lambda op, dy: [zeros_like(op.inputs[0])], SIGNED,
              "sign({0})")
SQUARE = _unary("Square", np.square, lambda op, dy: [dy * 2 * op.inputs[0]], NUMERIC,
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

def _comparison(name: str, kernel: Any, fusable: str):
    return _binary(name, kernel, None, NUMERIC | BOOL, fusable, out_dtype=_dtypes.bool)


LESS = _comparison("Less", np.less, "({0} < {1})")
LESS_EQUAL = _comparison("LessEqual", np.less_equal, "({0} <= {1})")
GREATER = _comparison("Greater", np.greater, "({0} > {1})")
GREATER_EQUAL = _comparison("GreaterEqual", np.greater_equal, "({0} >= {1})")
EQUAL = _comparison("Equal", np.equal, "({0} == {1})")
NOT_EQUAL = _comparison("NotEqual", np.not_equal, "({0} != {1})")
LOGICAL_AND = _binary("LogicalAnd", np.logical_and, None, BOOL, "({0} & {1})")
LOGICAL_OR = _binary("LogicalOr", np.logical_or, None, BOOL, "({0} | {1})")
LOGICAL_NOT = _unary("LogicalNot", np.logical_not, None, BOOL, "(~{0})")


def _compare(opdef: Any, doc: str):
    def apply(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
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


def logical_not(x: Any, name: Optional[str] = None) -> Tensor:
    """Returns NOT x elementwise (bool tensors)."""
    return bind(LOGICAL_NOT, (convert_to_tensor(x),), name=name)


def logical_xor(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """Returns x XOR y elementwise (bool tensors)."""
    return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=name)


def tensor_equals(x: Any, y: Any) -> Any:
    """`==` on tensors: elementwise, but False for None or shapes that cannot broadcast."""
    if y is None:
        return False
    try:
        x, y = binary(x, y)
        if x.dtype is not y.dtype:
            return False
        return bind(EQUAL, (x, y), name="Equal")
    except (TypeError, ValueError):
        return False


def tensor_not_equals(x: Any, y: Any) -> Any:
    if y is None:
        return True
    try:
        x, y = binary(x, y)
        if x.dtype is not y.dtype:
            return True
        return bind(NOT_EQUAL, (x, y), name="NotEqual")
    except (TypeError, ValueError):
        return True


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
    tensors = [convert_to_tensor(t) for t in inputs]
    if len(tensors) == 1:
        return tensors[0]
    for t in tensors[1:]:
        if t.shape.is_fully_defined() and tensors[0].shape.is_fully_defined() and \
                t.shape != tensors[0].shape:
            raise ValueError(f"add_n: all inputs must have the same shape, got "
                             f"{tensors[0].shape} and {t.shape}")
    return bind(ADD_N, tensors, name=name)


# ---------------------------------------------------------------- reductions

def _reduce_kernel(fn: Any, keep_dtype: bool = True):
    def kernel(x: Any, *, axis: Any = None, keepdims: bool = False) -> Any:
        out = fn(x, axis=axis, keepdims=keepdims)
        if keep_dtype and out.dtype != x.dtype:
            out = out.astype(x.dtype)
        return np.asarray(out) if not isinstance(out, (np.ndarray, np.generic)) else out
    return kernel


def _broadcast_back(dy: Tensor, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    """Reshape a reduction's gradient to keepdims form and broadcast it over x."""
    from kilnflow.ops import array
    if not keepdims and x.shape.rank is not None:
        axes = rules.normalize_axes(axis, x.shape.rank)
        axes = range(x.shape.rank) if axes is None else axes
        for a in sorted(axes):
            dy = reshaping.expand_dims(dy, a)
    target = x.shape.as_list() if x.shape.is_fully_defined() else array.shape(x)
    return reshaping.broadcast_to(dy, target)


def _sum_grad(op: Any, dy: Any) -> list:
    return [_broadcast_back(dy, op.inputs[0], **op.attrs)]


def _mean_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():  # a number, not two ops
        count: Any = x.shape.num_elements() // max(y.shape.num_elements(), 1)
    else:
        count = cast(array_size(x), dy.dtype) / cast(array_size(y), dy.dtype)
    return [_broadcast_back(dy, x, **op.attrs) / count]


def _extremum_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs[0], op.outputs[0]
    y_full = _broadcast_back(y, x, **op.attrs)
    mask = cast(equal(x, y_full), dy.dtype)
    count = _broadcast_back(reduce_sum(mask, op.attrs["axis"], op.attrs["keepdims"]), x,
                            **op.attrs)
    return [_broadcast_back(dy, x, **op.attrs) * mask / count]


def _prod_grad(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    y_full = _broadcast_back(op.outputs[0], x, **op.attrs)
    return [_broadcast_back(dy, x, **op.attrs) * y_full / x]


def array_size(x: Tensor) -> Tensor:
    from kilnflow.ops import array
    return array.size(x)


def _ufunc_reduce(ufunc: np.ufunc, accumulate_in_dtype: bool) -> Callable:
    """ufunc.reduce, which skips np.sum/np.max's Python wrappers (about 2 us a call)."""
    def reduce(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        dtype = x.dtype if accumulate_in_dtype else None
        return ufunc.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return reduce


def _mean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """np.mean without its Python-level overhead (a sum and one division by a scalar of the
    sum's own dtype); float16 sums in float32, integers in float64 (cast back after)."""
    kind = x.dtype.kind
    accumulate = np.float32 if x.dtype == np.float16 else x.dtype if kind in "fc" \
        else np.float64
    total = np.add.reduce(x, axis=axis, keepdims=keepdims, dtype=accumulate)
    count = x.size // total.size if total.size else 0
    if count == 0:  # an empty reduction: NaN like TF, without NumPy's warning
        with np.errstate(all="ignore"):
            return total / total.dtype.type(0)
    return total / total.dtype.type(count)


def _reduce_op(name: str, kernel: Callable, dtypes: Any, grad: Optional[Callable] = None):
    return defop(name.capitalize(), shape=rules.reduce(), props={"reduction": name},
                 kernel=_reduce_kernel(kernel), grad=grad, dtypes=dtypes)


SUM = _reduce_op("sum", _ufunc_reduce(np.add, True), NUMERIC, _sum_grad)
MEAN = _reduce_op("mean", _mean, NUMERIC, _mean_grad)
MAX = _reduce_op("max", _ufunc_reduce(np.maximum, False), REAL, _extremum_grad)
MIN = _reduce_op("min", _ufunc_reduce(np.minimum, False), REAL, _extremum_grad)
PROD = _reduce_op("prod", _ufunc_reduce(np.multiply, True), NUMERIC, _prod_grad)
ANY = _reduce_op("any", np.any, BOOL)
ALL = _reduce_op("all", np.all, BOOL)


def _reduction(opdef: Any, doc: str):
    def apply(input_tensor: Any, axis: Any = None, keepdims: bool = False,
              name: Optional[str] = None) -> Tensor:
        x = convert_to_tensor(input_tensor)
        if isinstance(axis, Tensor):
            axis = rules.constant_value(axis)
            if axis is None:
                raise NotImplementedError("reduction axis must be known when the graph is built")
            axis = axis.tolist()
        try:
            axes = rules.normalize_axes(axis, x.shape.rank)
        except ValueError as exc:
            raise errors.InvalidArgumentError(errors.with_location(
                f"{exc} [Op:{opdef.name}]")) from None
        return bind(opdef, (x,), {"axis": axes, "keepdims": bool(keepdims)}, name=name)
    apply.__doc__ = doc
    return apply


reduce_sum = _reduction(SUM, """Sum of elements across `axis` (all when None).

    >>> import kilnflow as kf
    >>> kf.reduce_sum(kf.constant([[1, 2], [3, 4]]), axis=0).numpy().tolist()
    [4, 6]
    """)
reduce_mean = _reduction(MEAN, "Mean of elements across `axis` (integer mean for integers).")
reduce_max = _reduction(MAX, "Maximum of elements across `axis`.")
reduce_min = _reduction(MIN, "Minimum of elements across `axis`.")
reduce_prod = _reduction(PROD, "Product of elements across `axis`.")
reduce_any = _reduction(ANY, "Logical OR of bool elements across `axis`.")
reduce_all = _reduction(ALL, "Logical AND of bool elements across `axis`.")


def _arg_rule(x: Any, *, axis: int, output_type: _dtypes.DType) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec(None, output_type)
    axis = rules.normalize_axis(axis, x.shape.rank)
    dims = x.shape.as_list()
    return TensorSpec(dims[:axis] + dims[axis + 1:], output_type)


ARG_MAX = defop("ArgMax", shape=_arg_rule, dtypes=REAL,
                kernel=lambda x, *, axis, output_type: np.argmax(x, axis).astype(
                    output_type.as_numpy_dtype))
ARG_MIN = defop("ArgMin", shape=_arg_rule, dtypes=REAL,
                kernel=lambda x, *, axis, output_type: np.argmin(x, axis).astype(
                    output_type.as_numpy_dtype))


def argmax(input: Any, axis: Any = None, output_type: Any = _dtypes.int64,  # noqa: A002
           name: Optional[str] = None) -> Tensor:
    """Index of the largest value across `axis` (default 0)."""
    x = convert_to_tensor(input)
    return bind(ARG_MAX, (x,), {"axis": int(axis or 0),
                                "output_type": _dtypes.as_dtype(output_type)}, name=name)


def argmin(input: Any, axis: Any = None, output_type: Any = _dtypes.int64,  # noqa: A002
           name: Optional[str] = None) -> Tensor:
    """Index of the smallest value across `axis` (default 0)."""
    x = convert_to_tensor(input)
    return bind(ARG_MIN, (x,), {"axis": int(axis or 0),
                                "output_type": _dtypes.as_dtype(output_type)}, name=name)


def _cumsum_kernel(x: Any, *, axis: int, exclusive: bool, reverse: bool) -> Any:
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        out = np.roll(out, 1, axis=axis)
        index = [slice(None)] * x.ndim
        index[axis] = 0
        out[tuple(index)] = 0
    return np.flip(out, axis) if reverse else out


def _cumsum_rule(x: Any, *, axis: int, exclusive: bool, reverse: bool) -> TensorSpec:
    rules.normalize_axis(axis, x.shape.rank)
    return TensorSpec(x.shape, x.dtype)


CUMSUM = defop("Cumsum", shape=_cumsum_rule, kernel=_cumsum_kernel, dtypes=NUMERIC,
               grad=lambda op, dy: [cumsum(dy, op.attrs["axis"], op.attrs["exclusive"],
                                           not op.attrs["reverse"])])


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
           name: Optional[str] = None) -> Tensor:
    """Cumulative sum along `axis`."""
    x = convert_to_tensor(x)
    axis = int(axis)
    if x.shape.rank:
        axis = axis % x.shape.rank
    return bind(CUMSUM, (x,), {"axis": axis, "exclusive": bool(exclusive),
                               "reverse": bool(reverse)}, name=name)


# ---------------------------------------------------------------- matmul and einsum

def _matmul_rule(a: Any, b: Any, *, transpose_a: bool, transpose_b: bool) -> TensorSpec:
    if a.shape.rank is None or b.shape.rank is None:
        return TensorSpec(None, a.dtype)
    if a.shape.rank < 2 or b.shape.rank < 2:
        raise ValueError(f"In[0] and In[1] must have rank >= 2, got shapes {a.shape} and "
                         f"{b.shape}")
    m, k = a.shape[-2:].as_list()[::-1] if transpose_a else a.shape[-2:].as_list()
    k2, n = b.shape[-2:].as_list()[::-1] if transpose_b else b.shape[-2:].as_list()
    if k is not None and k2 is not None and k != k2:
        raise ValueError(f"Matrix size-incompatible: In[0]: {a.shape.as_list()}, In[1]: "
                         f"{b.shape.as_list()}")
    from kilnflow.shapes import broadcast_shapes
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return TensorSpec(batch.concatenate([m, n]), a.dtype)


def _matmul_kernel(a: Any, b: Any, *, transpose_a: bool, transpose_b: bool) -> Any:
    if a.ndim < 2 or b.ndim < 2:  # np.matmul would accept vectors; TF does not
        raise ValueError("matmul needs inputs of rank >= 2")
    return (a.mT if transpose_a else a) @ (b.mT if transpose_b else b)


def _matmul_inline(op: Any) -> Optional[str]:
    """`a @ b.mT` in generated code once both ranks are known to be >= 2."""
    if any(t.shape.rank is None or t.shape.rank < 2 for t in op.inputs):
        return None
    a = "{0}.mT" if op.attrs["transpose_a"] else "{0}"
    b = "{1}.mT" if op.attrs["transpose_b"] else "{1}"
    return f"{a} @ {b}"


def _matmul_grad(op: Any, dy: Any) -> list:
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [matmul(dy, b, transpose_b=True), matmul(a, dy, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, dy, transpose_b=True), matmul(a, dy)]
    if not ta and tb:
        return [matmul(dy, b), matmul(dy, a, transpose_a=True)]
    return [matmul(b, dy, transpose_a=True, transpose_b=True),
            matmul(dy, a, transpose_a=True, transpose_b=True)]


MATMUL = defop("MatMul", shape=_matmul_rule, kernel=_matmul_kernel, grad=_matmul_grad,
               dtypes=NUMERIC, props={"transpose_flags": ("transpose_a", "transpose_b"),
                                      "inline": _matmul_inline, "fresh_output": True})


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           name: Optional[str] = None) -> Tensor:
    """Matrix product of the last two dims of a and b (batched over leading dims).

    >>> import kilnflow as kf
    >>> kf.matmul(kf.constant([[1., 2.]]), kf.constant([[3.], [4.]])).numpy().tolist()
    [[11.0]]
    """
    a, b = binary(a, b)
    return bind(MATMUL, (a, b), {"transpose_a": bool(transpose_a),
                                 "transpose_b": bool(transpose_b)}, name=name)


def _einsum_parse(equation: str, count: int) -> tuple:
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, out = equation.split("->")
    else:
        lhs = equation
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    if len(terms) != count:
        raise ValueError(f"einsum: equation {equation!r} names {len(terms)} operands, "
                         f"got {count}")
    if "." in equation:
        raise ValueError("einsum: ellipsis ('...') is not supported")
    return terms, out


def _einsum_rule(*xs: Any, equation: str) -> TensorSpec:
    terms, out = _einsum_parse(equation, len(xs))
    sizes: dict = {}
    for term, x in zip(terms, xs):
        if x.shape.rank is not None and x.shape.rank != len(term):
            raise ValueError(f"einsum: operand with subscripts {term!r} has rank "
                             f"{x.shape.rank}")
        dims = x.shape.as_list() if x.shape.rank is not None else [None] * len(term)
        for c, d in zip(term, dims):
            if d is not None and sizes.get(c) not in (None, d) and d != 1 and sizes[c] != 1:
                raise ValueError(f"einsum: dimension {c!r} is {sizes[c]} in one operand and "
                                 f"{d} in another")
            if d is not None and (sizes.get(c) in (None, 1)):
                sizes[c] = d
    return TensorSpec([sizes.get(c) for c in out], xs[0].dtype)


def _einsum_grad(op: Any, dy: Any) -> list:
    terms, out = _einsum_parse(op.attrs["equation"], len(op.inputs))
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        others = [(t, v) for j, (t, v) in enumerate(zip(terms, op.inputs)) if j != i]
        available = set(out).union(*[set(t) for t, _ in others])
        kept = "".join(c for c in term if c in available)
        if len(set(term)) != len(term):
            raise NotImplementedError("einsum gradient with a repeated index in one operand")
        equation = ",".join([out] + [t for t, _ in others]) + "->" + kept
        g = einsum(equation, dy, *[v for _, v in others])
        if kept != term:  # indices summed out of x alone: broadcast back over them
            from kilnflow.ops import array
            for position, c in enumerate(term):
                if c not in kept:
                    g = reshaping.expand_dims(g, position)
            target = x.shape.as_list() if x.shape.is_fully_defined() else array.shape(x)
            g = reshaping.broadcast_to(g, target)
        grads.append(g)
    return grads


EINSUM = defop("Einsum", shape=_einsum_rule, kernel=lambda *xs, equation: np.einsum(
    equation, *xs), grad=_einsum_grad, dtypes=NUMERIC)


def einsum(equation: str, *inputs: Any, name: Optional[str] = None) -> Tensor:
    """Tensor contraction in Einstein notation, e.g. einsum('ij,jk->ik', a, b)."""
    tensors = [convert_to_tensor(x) for x in inputs]
    return bind(EINSUM, tensors, {"equation": equation.replace(" ", "")}, name=name)


def tensordot(a: Any, b: Any, axes: Any, name: Optional[str] = None) -> Tensor:
    """Contracts `axes` of a with `axes` of b (an int N means the last N of a, first N of b).

    With known shapes it is a transpose + reshape + one matmul (BLAS); otherwise an einsum.
    """
    from kilnflow.ops import array
    a, b = binary(a, b)
    ra, rb = a.shape.rank, b.shape.rank
    if ra is None or rb is None:
        raise ValueError("tensordot needs inputs of known rank")
    if isinstance(axes, int):
        axes_a, axes_b = list(range(ra - axes, ra)), list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    axes_a = [x % ra for x in axes_a] if ra else axes_a
    axes_b = [x % rb for x in axes_b] if rb else axes_b
    free_a = [i for i in range(ra) if i not in axes_a]
    free_b = [j for j in range(rb) if j not in axes_b]
    if a.shape.is_fully_defined() and b.shape.is_fully_defined():
        da, db = a.shape.as_list(), b.shape.as_list()
        size = 1
        for i in axes_a:
            size *= da[i]
        left = reshaping.reshape(reshaping.transpose(a, free_a + axes_a) if free_a + axes_a !=
                             list(range(ra)) else a, [-1, size])
        right = reshaping.reshape(reshaping.transpose(b, axes_b + free_b) if axes_b + free_b !=
                              list(range(rb)) else b, [size, -1])
        out = matmul(left, right)
        return reshaping.reshape(out, [da[i] for i in free_a] + [db[j] for j in free_b],
                             name=name)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    sa = list(letters[:ra])
    sb = list(letters[ra:ra + rb])
    for i, j in zip(axes_a, axes_b):
        sb[j] = sa[i]
    out = [sa[i] for i in free_a] + [sb[j] for j in free_b]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b, name=name)


# ---------------------------------------------------------------- helpers used by grads

def zeros_like(x: Any, dtype: Any = None, name: Optional[str] = None) -> Tensor:
    from kilnflow.ops import array
    return array.zeros_like(x, dtype, name)


def ones_like(x: Any, dtype: Any = None, name: Optional[str] = None) -> Tensor:
    from kilnflow.ops import array
    return array.ones_like(x, dtype, name)


def where(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> Tensor:
    from kilnflow.ops import array
    return array.where(condition, x, y, name)

