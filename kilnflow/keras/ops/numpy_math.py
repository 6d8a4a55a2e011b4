"""keras.ops' elementwise NumPy-like functions: unary math (integer inputs of float-valued
functions become floatx, as in Keras 3), binary arithmetic and comparisons (arguments meet at
Keras's result dtype), bitwise ops."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import kilnflow as kf
from kilnflow.keras.ops.convert import floating, promote, result_type, to_float, to_tensor


def _float_unary(fn: Callable[[Any], Any], name: str, doc: str) -> Callable[[Any], Any]:
    def op(x: Any) -> Any:
        return fn(to_float(x))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _same_unary(fn: Callable[[Any], Any], name: str, doc: str) -> Callable[[Any], Any]:
    def op(x: Any) -> Any:
        return fn(to_tensor(x))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _binary(fn: Callable[[Any, Any], Any], name: str, doc: str) -> Callable[[Any, Any], Any]:
    def op(x1: Any, x2: Any) -> Any:
        return fn(*promote(x1, x2))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _float_binary(fn: Callable[[Any, Any], Any], name: str, doc: str) -> Callable:
    def op(x1: Any, x2: Any) -> Any:
        return fn(*promote(x1, x2, dtype=floating(result_type(x1, x2))))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


def _log_base(base: float) -> Callable[[Any], Any]:
    return lambda x: kf.math.log(x) / kf.cast(np.log(base), x.dtype)


sin = _float_unary(kf.sin, "sin", "Elementwise sine.")
cos = _float_unary(kf.cos, "cos", "Elementwise cosine.")
tan = _float_unary(kf.tan, "tan", "Elementwise tangent.")
arcsin = _float_unary(kf.asin, "arcsin", "Elementwise inverse sine.")
arccos = _float_unary(kf.acos, "arccos", "Elementwise inverse cosine.")
arctan = _float_unary(kf.atan, "arctan", "Elementwise inverse tangent.")
sinh = _float_unary(kf.sinh, "sinh", "Elementwise hyperbolic sine.")
cosh = _float_unary(kf.cosh, "cosh", "Elementwise hyperbolic cosine.")
tanh = _float_unary(kf.tanh, "tanh", "Elementwise hyperbolic tangent.")
arcsinh = _float_unary(kf.asinh, "arcsinh", "Elementwise inverse hyperbolic sine.")
arccosh = _float_unary(kf.acosh, "arccosh", "Elementwise inverse hyperbolic cosine.")
arctanh = _float_unary(kf.atanh, "arctanh", "Elementwise inverse hyperbolic tangent.")
exp = _float_unary(kf.exp, "exp", "Elementwise e**x.")
exp2 = _float_unary(lambda x: kf.pow(kf.cast(2.0, x.dtype), x), "exp2", "Elementwise 2**x.")
expm1 = _float_unary(kf.expm1, "expm1", "Elementwise e**x - 1.")
log = _float_unary(kf.math.log, "log", "Elementwise natural logarithm.")
log10 = _float_unary(_log_base(10.0), "log10", "Elementwise base-10 logarithm.")
log2 = _float_unary(_log_base(2.0), "log2", "Elementwise base-2 logarithm.")
log1p = _float_unary(kf.math.log1p, "log1p", "Elementwise log(1 + x).")
sqrt = _float_unary(kf.sqrt, "sqrt", "Elementwise square root.")
rsqrt = _float_unary(kf.math.rsqrt, "rsqrt", "Elementwise 1 / sqrt(x).")
cbrt = _float_unary(lambda x: kf.sign(x) * kf.pow(kf.abs(x), kf.cast(1.0 / 3.0, x.dtype)),
                    "cbrt", "Elementwise cube root (real, sign kept).")
erf = _float_unary(kf.math.erf, "erf", "The error function.")
erfc = _float_unary(kf.math.erfc, "erfc", "The complementary error function.")
erfinv = _float_unary(kf.math.erfinv, "erfinv", "The inverse error function.")
i0 = _float_unary(kf.math.bessel_i0, "i0", "The modified Bessel function of order 0.")
deg2rad = _float_unary(lambda x: x * kf.cast(np.pi / 180.0, x.dtype), "deg2rad",
                       "Degrees to radians.")
rad2deg = _float_unary(lambda x: x * kf.cast(180.0 / np.pi, x.dtype), "rad2deg",
                       "Radians to degrees.")
reciprocal = _float_unary(kf.math.reciprocal, "reciprocal", "Elementwise 1 / x.")
ceil = _float_unary(kf.math.ceil, "ceil", "Elementwise ceiling (floatx for integers).")
floor = _float_unary(kf.math.floor, "floor", "Elementwise floor (floatx for integers).")


def sinc(x: Any) -> Any:
    """sin(pi x) / (pi x), 1 at 0."""
    x = to_float(x)
    px = x * kf.cast(np.pi, x.dtype)
    safe = kf.where(kf.equal(x, 0), kf.ones_like(px), px)
    return kf.where(kf.equal(x, 0), kf.ones_like(px), kf.sin(safe) / safe)


def _keep_int(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda x: x if not (x.dtype.is_floating or x.dtype.is_complex) else fn(x)


abs = _same_unary(lambda x: kf.abs(x) if x.dtype.name != "bool" else x, "abs",
                  "Elementwise absolute value.")
absolute = abs
fabs = _float_unary(kf.abs, "fabs", "Elementwise absolute value as floats.")
negative = _same_unary(kf.negative, "negative", "Elementwise -x.")
square = _same_unary(lambda x: kf.square(x if x.dtype.name != "bool" else kf.cast(x, "int32")),
                     "square", "Elementwise x * x.")
sign = _same_unary(lambda x: kf.cast(kf.greater(x, 0), x.dtype) if x.dtype.is_unsigned or (
    x.dtype.name == "bool") else kf.sign(x), "sign", "Elementwise sign: -1, 0 or 1.")
trunc = _same_unary(_keep_int(lambda x: kf.sign(x) * kf.floor(kf.abs(x))), "trunc",
                    "Round towards zero.")
conj = _same_unary(kf.math.conj, "conj", "Complex conjugate.")
conjugate = conj
real = _same_unary(kf.math.real, "real", "Real part.")
imag = _same_unary(kf.math.imag, "imag", "Imaginary part.")
angle = _float_unary(kf.math.angle, "angle", "Complex argument (0 or pi for reals).")
isfinite = _same_unary(lambda x: kf.math.is_finite(x) if x.dtype.is_floating
                       else kf.ones_like(x, dtype="bool"), "isfinite", "Finite entries.")
isinf = _same_unary(lambda x: kf.math.is_inf(x) if x.dtype.is_floating
                    else kf.zeros_like(x, dtype="bool"), "isinf", "Infinite entries.")
isnan = _same_unary(lambda x: kf.math.is_nan(x) if x.dtype.is_floating
                    else kf.zeros_like(x, dtype="bool"), "isnan", "NaN entries.")
isposinf = _same_unary(lambda x: kf.logical_and(isinf(x), kf.greater(x, kf.zeros_like(x))),
                       "isposinf", "Entries equal to +inf.")
isneginf = _same_unary(lambda x: kf.logical_and(isinf(x), kf.less(x, kf.zeros_like(x))),
                       "isneginf", "Entries equal to -inf.")
isreal = _same_unary(lambda x: kf.equal(kf.math.imag(x), 0) if x.dtype.is_complex
                     else kf.ones_like(x, dtype="bool"), "isreal", "Entries with no imaginary part.")
signbit = _same_unary(lambda x: kf.less(x, kf.zeros_like(x)) if not x.dtype.is_floating else
                      kf.less(kf.bitwise.bitwise_and(kf.bitcast(x, _bits(x)), kf.cast(
                          _sign_mask(x), _bits(x))), 0), "signbit", "Sign bit set (also -0.0).")
logical_not = _same_unary(lambda x: kf.logical_not(kf.cast(x, "bool")), "logical_not",
                          "Elementwise not.")
bitwise_invert = _same_unary(kf.bitwise.invert, "bitwise_invert", "Bitwise not.")
bitwise_not = bitwise_invert


def _bits(x: Any) -> str:
    return {2: "int16", 4: "int32", 8: "int64"}[x.dtype.size]


def _sign_mask(x: Any) -> int:
    return -(1 << (8 * x.dtype.size - 1))


def round(x: Any, decimals: int = 0) -> Any:
    """Round half to even, to `decimals` places (integers only with decimals < 0)."""
    x = to_tensor(x)
    if not x.dtype.is_floating:
        if decimals >= 0:
            return x
        f = 10 ** (-decimals)
        return kf.cast(kf.round(kf.cast(x, "float32") / f) * f, x.dtype)
    f = kf.cast(10.0 ** decimals, x.dtype)
    return kf.round(x * f) / f


add = _binary(kf.add, "add", "x1 + x2 with Keras dtype promotion.")
subtract = _binary(kf.subtract, "subtract", "x1 - x2.")
multiply = _binary(kf.multiply, "multiply", "x1 * x2.")
maximum = _binary(kf.maximum, "maximum", "Elementwise maximum.")
minimum = _binary(kf.minimum, "minimum", "Elementwise minimum.")
fmax = maximum
fmin = minimum
mod = _binary(kf.math.floormod, "mod", "x1 mod x2 with the sign of x2.")
floor_divide = _binary(kf.math.floordiv, "floor_divide", "x1 // x2.")
fmod = _binary(kf.truncatemod, "fmod", "Remainder with the sign of x1 (C fmod).")
divide = _float_binary(kf.divide, "divide", "True division x1 / x2 (floats).")
true_divide = divide
divide_no_nan = _float_binary(kf.math.divide_no_nan, "divide_no_nan", "x1 / x2, 0 where x2 == 0.")
arctan2 = _float_binary(kf.atan2, "arctan2", "atan(x1 / x2) in the right quadrant.")
hypot = _float_binary(lambda a, b: kf.sqrt(a * a + b * b), "hypot", "sqrt(x1**2 + x2**2).")
logaddexp = _float_binary(lambda a, b: kf.maximum(a, b) + kf.math.log1p(
    kf.exp(-kf.abs(a - b))), "logaddexp", "log(exp(x1) + exp(x2)), computed stably.")
logaddexp2 = _float_binary(lambda a, b: kf.maximum(a, b) + kf.math.log1p(kf.pow(
    kf.cast(2.0, a.dtype), -kf.abs(a - b))) / kf.cast(np.log(2.0), a.dtype),
    "logaddexp2", "log2(2**x1 + 2**x2), computed stably.")
nextafter = _float_binary(kf.math.nextafter, "nextafter", "Next float after x1 towards x2.")
heaviside = _binary(lambda a, b: kf.where(kf.less(a, 0), kf.zeros_like(a), kf.where(
    kf.greater(a, 0), kf.ones_like(a), b)), "heaviside", "Step function, x2 at 0.")
equal = _binary(kf.equal, "equal", "x1 == x2.")
not_equal = _binary(kf.not_equal, "not_equal", "x1 != x2.")
greater = _binary(kf.greater, "greater", "x1 > x2.")
greater_equal = _binary(kf.greater_equal, "greater_equal", "x1 >= x2.")
less = _binary(kf.less, "less", "x1 < x2.")
less_equal = _binary(kf.less_equal, "less_equal", "x1 <= x2.")
bitwise_and = _binary(kf.bitwise.bitwise_and, "bitwise_and", "Bitwise and.")
bitwise_or = _binary(kf.bitwise.bitwise_or, "bitwise_or", "Bitwise or.")
bitwise_xor = _binary(kf.bitwise.bitwise_xor, "bitwise_xor", "Bitwise xor.")


def _bool_binary(fn: Callable, name: str) -> Callable:
    def op(x1: Any, x2: Any) -> Any:
        return fn(to_tensor(x1, "bool"), to_tensor(x2, "bool"))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"Elementwise {name.split('_')[1]} of the truth values."
    return op


logical_and = _bool_binary(kf.logical_and, "logical_and")
logical_or = _bool_binary(kf.logical_or, "logical_or")
logical_xor = _bool_binary(kf.math.logical_xor, "logical_xor")


def _shift(fn: Callable, name: str) -> Callable:
    def op(x: Any, y: Any) -> Any:
        x = to_tensor(x)
        return fn(x, to_tensor(y, x.dtype.name))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = "Shift the bits of x by y."
    return op


left_shift = bitwise_left_shift = _shift(kf.bitwise.left_shift, "left_shift")
right_shift = bitwise_right_shift = _shift(kf.bitwise.right_shift, "right_shift")


def power(x1: Any, x2: Any) -> Any:
    """x1 ** x2."""
    return kf.pow(*promote(x1, x2))


def ldexp(x1: Any, x2: Any) -> Any:
    """x1 * 2**x2."""
    x1 = to_float(x1)
    return x1 * kf.pow(kf.cast(2.0, x1.dtype), kf.cast(to_tensor(x2), x1.dtype))


def gcd(x1: Any, x2: Any) -> Any:
    """Greatest common divisor (Euclid's algorithm as a tensor while loop)."""
    a, b = promote(x1, x2)
    a, b = kf.abs(a), kf.abs(b)
    a, b = a + kf.zeros_like(b), b + kf.zeros_like(a)

    def body(a: Any, b: Any) -> Any:
        nz = kf.not_equal(b, 0)
        safe = kf.where(nz, b, kf.ones_like(b))
        return kf.where(nz, b, a), kf.where(nz, kf.math.floormod(a, safe), b)
    return kf.while_loop(lambda a, b: kf.reduce_any(kf.not_equal(b, 0)), body, (a, b))[0]


def lcm(x1: Any, x2: Any) -> Any:
    """Least common multiple."""
    a, b = promote(x1, x2)
    g = gcd(a, b)
    return kf.where(kf.equal(g, 0), kf.zeros_like(g),
                    kf.abs(a * b) // kf.where(kf.equal(g, 0), kf.ones_like(g), g))


def clip(x: Any, x_min: Any, x_max: Any) -> Any:
    """Limit values to [x_min, x_max] (booleans clip as int32)."""
    x = to_tensor(x)
    if x.dtype.name == "bool":
        x = kf.cast(x, "int32")
    return kf.clip_by_value(x, kf.cast(x_min, x.dtype), kf.cast(x_max, x.dtype))


def nan_to_num(x: Any, nan: float = 0.0, posinf: Any = None, neginf: Any = None) -> Any:
    """NaN -> nan, +inf -> posinf (default: dtype max), -inf -> neginf (default: min)."""
    x = to_tensor(x)
    if not x.dtype.is_floating:
        return x
    info = np.finfo(x.dtype.as_numpy_dtype)
    pos = info.max if posinf is None else posinf
    neg = info.min if neginf is None else neginf
    x = kf.where(kf.math.is_nan(x), kf.fill(kf.shape(x), kf.cast(nan, x.dtype)), x)
    x = kf.where(isposinf(x), kf.fill(kf.shape(x), kf.cast(pos, x.dtype)), x)
    return kf.where(isneginf(x), kf.fill(kf.shape(x), kf.cast(neg, x.dtype)), x)


def isclose(x1: Any, x2: Any, rtol: float = 1e-5, atol: float = 1e-8,
            equal_nan: bool = False) -> Any:
    """|x1 - x2| <= atol + rtol * |x2|."""
    a, b = promote(x1, x2)
    if not a.dtype.is_floating:
        return kf.equal(a, b)
    close = kf.less_equal(kf.abs(a - b), kf.cast(atol, a.dtype) + kf.cast(rtol, a.dtype) * kf.abs(b))
    close = kf.logical_or(close, kf.equal(a, b))
    if equal_nan:
        close = kf.logical_or(close, kf.logical_and(kf.math.is_nan(a), kf.math.is_nan(b)))
    return close


def allclose(x1: Any, x2: Any, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> Any:
    """Whether every entry is close."""
    return kf.reduce_all(isclose(x1, x2, rtol, atol, equal_nan))


def copy(x: Any) -> Any:
    """A copy of x (tensors are immutable: the same values)."""
    return kf.identity(to_tensor(x))


__all__ = [
    "abs", "absolute", "add", "allclose", "angle", "arccos", "arccosh", "arcsin", "arcsinh",
    "arctan", "arctan2", "arctanh", "bitwise_and", "bitwise_invert", "bitwise_left_shift",
    "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "cbrt", "ceil", "clip",
    "conj", "conjugate", "copy", "cos", "cosh", "deg2rad", "divide", "divide_no_nan", "equal",
    "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "fabs", "floor", "floor_divide", "fmax",
    "fmin", "fmod", "gcd", "greater", "greater_equal", "heaviside", "hypot", "i0", "imag",
    "isclose", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "lcm", "ldexp",
    "left_shift", "less", "less_equal", "log", "log10", "log1p", "log2", "logaddexp",
    "logaddexp2", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
    "minimum", "mod", "multiply", "nan_to_num", "negative", "nextafter", "not_equal", "power",
    "rad2deg", "real", "reciprocal", "right_shift", "round", "rsqrt", "sign", "signbit",
    "sin", "sinc", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "true_divide",
    "trunc",
]
