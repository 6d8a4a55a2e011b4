"""Special functions of tf.math in NumPy (no SciPy needed): lgamma, digamma, polygamma, zeta,
erfinv, erfcinv, ndtri, igamma, igammac, betainc, lbeta. Series, recurrences and Newton
steps on the standard library's erf/erfc/lgamma give float64 accuracy; each op's gradient
is TF's (none with respect to the shape parameters of igamma and betainc, which TF
computes with ops of their own). Imports ops.math, ops.array, ops.convert, core.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop, np_errors_ignored
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.ops.math import FLOATS, exp, log, square
from kilnflow.tensor import Tensor

_SQRT_PI = math.sqrt(math.pi)


def _per_element(fn: Any, *arrays: Any) -> np.ndarray:
    """A scalar Python function over broadcast float64 arrays."""
    out = np.frompyfunc(fn, len(arrays), 1)(*[np.asarray(a, np.float64) for a in arrays])
    return np.asarray(out, np.float64)


def _lgamma_scalar(x: float) -> float:
    if x <= 0 and x == math.floor(x):
        return math.inf  # the poles (math.lgamma raises there)
    if math.isinf(x):
        return math.inf
    return math.lgamma(x) if not math.isnan(x) else math.nan


def _digamma64(x: np.ndarray) -> np.ndarray:
    """psi(x): reflection for x < 0.5, recurrence up to 10, then the asymptotic series."""
    x = np.asarray(x, np.float64)
    reflect = x < 0.5
    z = np.where(reflect, 1.0 - x, x)
    acc = np.zeros_like(z)
    for _ in range(10):
        small = z < 10
        acc = acc - np.where(small, 1.0 / z, 0.0)
        z = np.where(small, z + 1.0, z)
    inv2 = 1.0 / (z * z)
    series = np.log(z) - 0.5 / z - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (
        1 / 252 - inv2 * (1 / 240 - inv2 * (1 / 132)))))
    result = series + acc
    with np.errstate(all="ignore"):
        reflected = result - np.pi / np.tan(np.pi * x)
    out = np.where(reflect, reflected, result)
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, out)


_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)  # B2, B4, ... B14


def _zeta_scalar(s: float, q: float) -> float:
    """Hurwitz zeta sum_k (q + k) ** -s for s > 1, q > 0, by Euler-Maclaurin with N = 12."""
    if s == 1:
        return math.inf
    if s < 1 or q <= 0 or math.isnan(s) or math.isnan(q):
        return math.nan
    n = 12
    total = sum((q + k) ** -s for k in range(n))
    a = q + n
    total += a ** (1 - s) / (s - 1) + 0.5 * a ** -s
    factor = s * a ** (-s - 1)  # s (s+1) ... (s+2j-2) a^(-s-2j+1), j = 1
    fact = 2.0
    for j, b in enumerate(_BERNOULLI, start=1):
        total += b / fact * factor
        factor *= (s + 2 * j - 1) * (s + 2 * j) / (a * a)
        fact *= (2 * j + 1) * (2 * j + 2)
    return total


def _polygamma64(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1 (x > 0), digamma for n = 0."""
    n, x = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(x, np.float64))
    higher = _per_element(
        lambda k, v: (-1) ** (k + 1) * math.gamma(k + 1) * _zeta_scalar(k + 1, v)
        if k >= 1 and k == math.floor(k) else math.nan, n, x)
    return np.where(n == 0, _digamma64(x), higher)


def _newton_erfc_inverse(t: np.ndarray) -> np.ndarray:
    """x > 0 with erfc(x) = t for t in (0, 1], by Newton steps on log(erfc(x))."""
    x = np.sqrt(np.maximum(-np.log(t), 0.0)) * 0.9
    for _ in range(40):
        value = _per_element(math.erfc, x)
        step = (np.log(value) - np.log(t)) * value / (-2 / _SQRT_PI * np.exp(-x * x))
        x = np.maximum(x - step, 0.0)
    return x


def _erfinv64(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, np.float64)
    magnitude = np.abs(y)
    x = _newton_erfc_inverse(np.clip(1.0 - magnitude, 1e-300, 1.0))
    # near 0, Newton on erf itself keeps the relative accuracy that 1 - |y| loses
    small = magnitude < 0.5
    z = y * _SQRT_PI / 2
    for _ in range(6):
        z = z - (_per_element(math.erf, z) - y) / (2 / _SQRT_PI * np.exp(-z * z))
    out = np.where(small, z, np.sign(y) * x)
    out = np.where(magnitude == 1, np.sign(y) * np.inf, out)
    return np.where(magnitude > 1, np.nan, out)


def _erfcinv64(y: np.ndarray) -> np.ndarray:
    y = np.asarray(y, np.float64)
    low = _newton_erfc_inverse(np.clip(y, 1e-300, 1.0))         # y in (0, 1]: x >= 0
    high = -_newton_erfc_inverse(np.clip(2.0 - y, 1e-300, 1.0))  # y in (1, 2): x < 0
    out = np.where(y <= 1, low, high)
    out = np.where(y == 0, np.inf, np.where(y == 2, -np.inf, out))
    return np.where((y < 0) | (y > 2), np.nan, out)


def _igamma_scalar(a: float, x: float) -> float:
    """The regularized lower incomplete gamma P(a, x): series below a + 1, else 1 - Q."""
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    if x == 0:
        return 0.0
    if math.isinf(x):
        return 1.0
    if x < a + 1:
        term = total = 1.0 / a
        k = a
        for _ in range(1000):
            k += 1
            term *= x / k
            total += term
            if abs(term) < abs(total) * 1e-16:
                break
        return total * math.exp(-x + a * math.log(x) - math.lgamma(a))
    return 1.0 - _igammac_fraction(a, x)


def _igammac_fraction(a: float, x: float) -> float:
    """Q(a, x) by Lentz's continued fraction (x >= a + 1)."""
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def _igammac_scalar(a: float, x: float) -> float:
    if math.isnan(a) or math.isnan(x) or a <= 0 or x < 0:
        return math.nan
    if x < a + 1:
        return 1.0 - _igamma_scalar(a, x)
    return _igammac_fraction(a, x) if not math.isinf(x) else 0.0


def _betainc_scalar(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta I_x(a, b) by its continued fraction."""
    if math.isnan(a) or math.isnan(b) or math.isnan(x) or a <= 0 or b <= 0 or \
            not 0 <= x <= 1:
        return math.nan
    if x in (0.0, 1.0):
        return x
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast on this side only
        return 1.0 - _betainc_scalar(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) +
                     a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (tiny if abs(d) < tiny else d)
    h = d
    for m in range(1, 1000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (tiny if abs(d) < tiny else d)
            c = 1 + numerator / c
            c = tiny if abs(c) < tiny else c
            h *= d * c
        if abs(d * c - 1) < 1e-16:
            break
    return front * h


def _bessel_scaled_scalar(order: int, x: float) -> float:
    """exp(-|x|) I_order(|x|) for order 0 or 1 (|x|: callers restore I1's sign): the power
    series up to 30, Hankel's asymptotic series beyond (no overflow for any x)."""
    if math.isnan(x):
        return math.nan
    if x <= 30:
        half, term = x / 2, (1.0 if order == 0 else x / 2)
        total, k = term, 0
        while term > total * 1e-17:
            k += 1
            term *= half * half / (k * (k + order))
            total += term
        return total * math.exp(-x)
    if math.isinf(x):
        return 0.0
    mu, term, total = 4.0 * order * order, 1.0, 1.0
    for k in range(1, 40):
        term *= -(mu - (2 * k - 1) ** 2) / (k * 8 * x)
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
    return total / math.sqrt(2 * math.pi * x)


def _bessel(order: int, scaled: bool, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    magnitude = np.abs(x)
    values = _per_element(lambda v: _bessel_scaled_scalar(order, v), magnitude)
    if not scaled:
        with np.errstate(over="ignore"):
            values = values * np.exp(magnitude)
    return values * np.sign(x) if order == 1 else values


def _as(dtype_of: Any, values: np.ndarray) -> np.ndarray:
    return np.asarray(values).astype(dtype_of.dtype, copy=False)


# ---------------------------------------------------------------- ops

def _unary(name: str, kernel64: Any, grad: Any) -> Any:
    return defop(name, shape=rules.same_as(0), dtypes=FLOATS, grad=grad,
                 kernel=np_errors_ignored(lambda x: _as(x, kernel64(x))))


def _binary(name: str, kernel64: Any, grad: Any) -> Any:
    return defop(name, shape=rules.broadcast(), dtypes=FLOATS, grad=grad,
                 kernel=np_errors_ignored(lambda a, x: _as(x, kernel64(a, x))))


LGAMMA = _unary("Lgamma", lambda x: _per_element(_lgamma_scalar, x),
                lambda op, dy: [dy * digamma(op.inputs[0])])
DIGAMMA = _unary("Digamma", _digamma64,
                 lambda op, dy: [dy * polygamma(convert_to_tensor(1, op.inputs[0].dtype),
                                                op.inputs[0])])
ERFINV = _unary("Erfinv", _erfinv64,
                lambda op, dy: [dy * (_SQRT_PI / 2) * exp(square(op.outputs[0]))])
ERFCINV = _unary("Erfcinv", _erfcinv64,
                 lambda op, dy: [-dy * (_SQRT_PI / 2) * exp(square(op.outputs[0]))])
NDTRI = _unary("Ndtri", lambda p: -math.sqrt(2) * _erfcinv64(2 * np.asarray(p, np.float64)),
               lambda op, dy: [dy * math.sqrt(2 * math.pi) * exp(square(op.outputs[0]) / 2)])
def _i1_over_x(op: Any) -> Tensor:
    """I1(x) / x (scaled alike), with its limit 1/2 at x = 0."""
    from kilnflow.ops import array
    from kilnflow.ops.math import equal
    x, y = op.inputs[0], op.outputs[0]
    at_zero = equal(x, array.zeros_like(x))
    safe = array.where(at_zero, array.ones_like(x), x)
    return array.where(at_zero, 0.5 + array.zeros_like(x), y / safe)


BESSEL_I0 = _unary("BesselI0", lambda x: _bessel(0, False, x),
                   lambda op, dy: [dy * bessel_i1(op.inputs[0])])
BESSEL_I0E = _unary("BesselI0e", lambda x: _bessel(0, True, x),
                    lambda op, dy: [dy * (bessel_i1e(op.inputs[0]) -
                                          _sign(op.inputs[0]) * op.outputs[0])])
BESSEL_I1 = _unary("BesselI1", lambda x: _bessel(1, False, x),
                   lambda op, dy: [dy * (bessel_i0(op.inputs[0]) - _i1_over_x(op))])
BESSEL_I1E = _unary("BesselI1e", lambda x: _bessel(1, True, x),
                    lambda op, dy: [dy * (bessel_i0e(op.inputs[0]) - _i1_over_x(op) -
                                          _sign(op.inputs[0]) * op.outputs[0])])


def _sign(x: Tensor) -> Tensor:
    from kilnflow.ops.math import sign
    return sign(x)


POLYGAMMA = _binary("Polygamma", _polygamma64,
                    lambda op, dy: [None, dy * polygamma(op.inputs[0] + 1, op.inputs[1])])
ZETA = _binary("Zeta", lambda s, q: _per_element(_zeta_scalar, s, q),
               lambda op, dy: [None, -dy * op.inputs[0] * zeta(op.inputs[0] + 1,
                                                               op.inputs[1])])


def _igamma_grad_x(a: Tensor, x: Tensor) -> Tensor:
    return exp(-x + (a - 1) * log(x) - lgamma(a))


IGAMMA = _binary("Igamma", lambda a, x: _per_element(_igamma_scalar, a, x),
                 lambda op, dy: [None, dy * _igamma_grad_x(*op.inputs)])
IGAMMAC = _binary("Igammac", lambda a, x: _per_element(_igammac_scalar, a, x),
                  lambda op, dy: [None, -dy * _igamma_grad_x(*op.inputs)])


def _betainc_grad(op: Any, dy: Any) -> list:
    a, b, x = op.inputs
    log_beta = lgamma(a) + lgamma(b) - lgamma(a + b)
    from kilnflow.ops.math import log1p
    return [None, None, dy * exp((a - 1) * log(x) + (b - 1) * log1p(-x) - log_beta)]


def _same_or_scalar(a: Any, b: Any, x: Any) -> None:
    """TF's Betainc does not broadcast: every non-scalar input has one shape."""
    shapes = [(n, s) for n, s in (("a", a), ("b", b), ("x", x)) if s != ()]
    for n, s in shapes[1:]:
        if s != shapes[0][1]:
            raise ValueError(f"Shapes of `{shapes[0][0]}` and `{n}` are inconsistent: "
                             f"{list(shapes[0][1])} vs. {list(s)}")


def _betainc_rule(a: Any, b: Any, x: Any) -> Any:
    known = [t.shape for t in (a, b, x)]
    if all(s.is_fully_defined() for s in known):
        _same_or_scalar(*(tuple(s.as_list()) for s in known))
    return rules.broadcast()(a, b, x)


def _betainc_kernel(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    _same_or_scalar(np.shape(a), np.shape(b), np.shape(x))
    return _as(x, _per_element(_betainc_scalar, a, b, x))


BETAINC = defop("Betainc", shape=_betainc_rule, dtypes=FLOATS, grad=_betainc_grad,
                kernel=np_errors_ignored(_betainc_kernel))


# ---------------------------------------------------------------- public functions

def _unary_function(opdef: Any, doc: str):
    def apply(x: Any, name: Optional[str] = None) -> Tensor:
        return bind(opdef, (convert_to_tensor(x),), name=name)
    apply.__doc__ = doc
    return apply


def _binary_function(opdef: Any, doc: str):
    def apply(a: Any, x: Any, name: Optional[str] = None) -> Tensor:
        a, x = binary(a, x)
        return bind(opdef, (a, x), name=name)
    apply.__doc__ = doc
    return apply


lgamma = _unary_function(LGAMMA, """log|Gamma(x)| elementwise (inf at the poles).

    >>> import kilnflow as kf
    >>> round(float(kf.math.lgamma(5.0)), 5)   # log(4!)
    3.17805
    """)
bessel_i0 = _unary_function(BESSEL_I0, "The modified Bessel function I0(x).")
bessel_i0e = _unary_function(BESSEL_I0E, "exp(-|x|) I0(x), which never overflows.")
bessel_i1 = _unary_function(BESSEL_I1, "The modified Bessel function I1(x).")
bessel_i1e = _unary_function(BESSEL_I1E, "exp(-|x|) I1(x), which never overflows.")
digamma = _unary_function(DIGAMMA, "psi(x), the derivative of lgamma(x).")
erfinv = _unary_function(ERFINV, "The inverse of erf on (-1, 1) (+-inf at +-1, NaN outside).")
erfcinv = _unary_function(ERFCINV, "The inverse of erfc on (0, 2).")
ndtri = _unary_function(NDTRI, "The inverse of the standard normal CDF (the probit).")
polygamma = _binary_function(POLYGAMMA, "psi^(a)(x), the a-th derivative of digamma (a a "
                                        "non-negative integer).")
igamma = _binary_function(IGAMMA, "The regularized lower incomplete gamma P(a, x).")
igammac = _binary_function(IGAMMAC, "The regularized upper incomplete gamma Q(a, x).")


def zeta(x: Any, q: Any, name: Optional[str] = None) -> Tensor:
    """The Hurwitz zeta function sum_k (q + k) ** -x (x > 1, q > 0)."""
    x, q = binary(x, q)
    return bind(ZETA, (x, q), name=name)


def betainc(a: Any, b: Any, x: Any, name: Optional[str] = None) -> Tensor:
    """The regularized incomplete beta function I_x(a, b)."""
    x = convert_to_tensor(x)
    return bind(BETAINC, (convert_to_tensor(a, x.dtype), convert_to_tensor(b, x.dtype), x),
                name=name)


def lbeta(x: Any, name: Optional[str] = None) -> Tensor:
    """log|Beta(x)| over the last dimension: sum(lgamma(x)) - lgamma(sum(x))."""
    from kilnflow.ops.reduction import reduce_sum
    x = convert_to_tensor(x)
    return reduce_sum(lgamma(x), -1) - lgamma(reduce_sum(x, -1))
