"""tf.math.special's Bessel functions J0, J1, Y0, Y1, K0, K1 (and exp-scaled K0e, K1e),
Dawson's integral, the exponential integral Ei, the Fresnel integrals and Spence's function,
in NumPy without SciPy: integral representations summed by quadrature rules that converge
exponentially for these integrands (the periodic trapezoid rule, Gauss-Legendre), power
series where they lose no digits, and the asymptotic expansions past where the quadrature
stays cheap. Each has TF's gradient. Imports ops.math, ops.array, ops.convert, core.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop, np_errors_ignored
from kilnflow.ops import array
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import FLOATS, cos, equal, exp, log, sin, square
from kilnflow.tensor import Tensor

_EULER = 0.5772156649015329
_GL_X, _GL_W = np.polynomial.legendre.leggauss(128)  # nodes and weights on [-1, 1]
_UNIT_S, _UNIT_W = (_GL_X + 1) / 2, _GL_W / 2          # ... moved to [0, 1]


def _f64(x: Any) -> np.ndarray:
    return np.asarray(x, np.float64)


def _on_unit(fn: Any, x: np.ndarray) -> np.ndarray:
    """sum_k w_k fn(x, s_k) over Gauss-Legendre nodes s_k of [0, 1]: int_0^1 fn(x, s) ds."""
    return fn(x[..., None], _UNIT_S) @ _UNIT_W


# ---------------------------------------------------------------- Bessel J and Y

def _hankel(order: int, x: np.ndarray) -> tuple:
    """(J, Y) for large x from Hankel's expansions; the error is about exp(-2x)."""
    mu = 4.0 * order * order
    p, q = np.ones_like(x), np.zeros_like(x)
    term = np.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if k % 2:
            q = q + (term if k % 4 == 1 else -term)
        else:
            p = p + (term if k % 4 == 0 else -term)
    chi = x - (order / 2 + 0.25) * np.pi
    scale = np.sqrt(2 / (np.pi * x))
    return scale * (p * np.cos(chi) - q * np.sin(chi)), scale * (p * np.sin(chi) + q * np.cos(chi))


_TAU = 2 * np.pi * np.arange(96) / 96


def _bessel_j(order: int, x: np.ndarray) -> np.ndarray:
    """J_n(x) = mean over a period of cos(n t - x sin t): the trapezoid rule on a periodic
    integrand, exact to rounding while 96 points outnumber |x| + 40; Hankel beyond 25."""
    x = _f64(x)
    ax = np.abs(x)
    near = np.minimum(ax, 25.0)
    mean = np.cos(order * _TAU - near[..., None] * np.sin(_TAU)).mean(axis=-1)
    far = _hankel(order, np.maximum(ax, 25.0))[0]
    out = np.where(ax <= 25, mean, far)
    return out * np.sign(x) if order == 1 else out


def _psi_int(k: int) -> float:
    """digamma(k) for a positive integer k."""
    return -_EULER + sum(1.0 / j for j in range(1, k))


def _y_series(order: int, x: np.ndarray) -> np.ndarray:
    """Y_n(x) by its power series (A&S 9.1.11): accurate for 0 < x < 8."""
    quarter = x * x / 4
    total, power, fact_k, fact_nk = np.zeros_like(x), np.ones_like(x), 1.0, math.factorial(order)
    for k in range(60):
        total = total + (_psi_int(k + 1) + _psi_int(order + k + 1)) * power / (fact_k * fact_nk)
        power = -power * quarter
        fact_k *= k + 1
        fact_nk *= order + k + 1
    out = 2 / np.pi * np.log(x / 2) * _bessel_j(order, x) - (x / 2) ** order / np.pi * total
    if order == 1:
        out = out - 2 / (np.pi * x)
    return out


def _y_integral(order: int, x: np.ndarray) -> np.ndarray:
    """Y_n(x) = 1/pi int_0^pi sin(x sin t - n t) dt
               - 1/pi int_0^inf (e^(n t) + (-1)^n e^(-n t)) e^(-x sinh t) dt, for x >= 8."""
    first = _on_unit(lambda v, s: np.sin(v * np.sin(np.pi * s) - order * np.pi * s), x)
    top = np.arcsinh(40 / x)  # e^(-x sinh t) < e^-40 past here
    second = _on_unit(lambda v, s: (np.exp(order * s * top[..., None]) + (-1) ** order *
                                    np.exp(-order * s * top[..., None])) *
                      np.exp(-v * np.sinh(s * top[..., None])), x) * top
    return first - second / np.pi


def _bessel_y(order: int, x: np.ndarray) -> np.ndarray:
    x = _f64(x)
    small, middle = np.clip(x, 1e-300, 8.0), np.clip(x, 8.0, 25.0)
    out = np.where(x < 8, _y_series(order, small), _y_integral(order, middle))
    out = np.where(x > 25, _hankel(order, np.maximum(x, 25.0))[1], out)
    out = np.where(x == 0, -np.inf, out)
    return np.where((x < 0) | np.isnan(x), np.nan, out)


# ---------------------------------------------------------------- Bessel K

_K_STEPS = np.arange(401)


def _bessel_k_scaled(order: int, x: np.ndarray) -> np.ndarray:
    """e^x K_n(x) = int_0^inf e^(-x (cosh t - 1)) cosh(n t) dt by the trapezoid rule (an even
    integrand analytic in a strip: the error falls like exp(-pi^2 / step))."""
    x = _f64(x)
    safe = np.where(x > 0, x, 1.0)
    top = np.arccosh(1 + 50 / safe)  # the integrand is below e^-50 past here
    step = top / 400
    t = step[..., None] * _K_STEPS
    f = np.exp(-safe[..., None] * (np.cosh(t) - 1)) * np.cosh(order * t)
    out = step * (f.sum(axis=-1) - f[..., 0] / 2)
    out = np.where(x == 0, np.inf, out)
    return np.where((x < 0) | np.isnan(x), np.nan, out)


def _bessel_k(order: int, x: np.ndarray) -> np.ndarray:
    x = _f64(x)
    return _bessel_k_scaled(order, x) * np.exp(-np.where(x > 0, x, 0.0))


# ---------------------------------------------------------------- Dawson, Ei, Fresnel, Spence

def _dawsn(x: np.ndarray) -> np.ndarray:
    """D(x) = x int_0^1 exp(-x^2 (1 - s^2)) ds for |x| <= 6; 1/(2x) + 1/(4x^3) + ... beyond."""
    x = _f64(x)
    near = np.clip(x, -6.0, 6.0)
    quad = near * _on_unit(lambda v, s: np.exp(-v * v * (1 - s * s)), near)
    far = np.where(np.abs(x) > 6, x, 6.0)
    inv2 = 1 / (2 * far * far)
    term, total = 1 / (2 * far), np.zeros_like(far)
    for k in range(25):
        total = total + term
        term = term * (2 * k + 1) * inv2
    return np.where(np.abs(x) <= 6, quad, total)


def _expint(x: np.ndarray) -> np.ndarray:
    """Ei(x) for x > 0 (TF gives NaN below 0, -inf at 0): the series gamma + ln x +
    sum x^k / (k k!) up to 40 (all terms positive), e^x / x sum k! / x^k beyond."""
    x = _f64(x)
    near = np.clip(x, 1e-300, 40.0)
    term, total = np.ones_like(near), np.zeros_like(near)
    for k in range(1, 200):
        term = term * near / k
        total = total + term / k
    series = _EULER + np.log(near) + total
    far = np.maximum(x, 40.0)
    term, total = np.ones_like(far), np.zeros_like(far)
    for k in range(1, 40):
        total = total + term
        term = term * k / far
    with np.errstate(over="ignore"):
        asymptotic = np.exp(far) / far * total
    out = np.where(x <= 40, series, asymptotic)
    out = np.where(x == 0, -np.inf, out)
    return np.where((x < 0) | np.isnan(x), np.nan, out)


def _fresnel(x: np.ndarray) -> tuple:
    """(S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt: Gauss-Legendre for |x| <= 6, the
    auxiliary functions f and g (A&S 7.3.9-10, 7.3.27-28) beyond."""
    x = _f64(x)
    near = np.clip(x, -6.0, 6.0)
    s_near = near * _on_unit(lambda v, s: np.sin(np.pi / 2 * (v * s) ** 2), near)
    c_near = near * _on_unit(lambda v, s: np.cos(np.pi / 2 * (v * s) ** 2), near)
    big = np.where(np.abs(x) > 6, np.abs(x), 6.0)
    with np.errstate(over="ignore"):
        u = np.pi * big * big
    f, g = np.zeros_like(big), np.zeros_like(big)
    term_f, term_g = np.ones_like(big), 1 / u
    for k in range(20):
        sign = -1.0 if k % 2 else 1.0
        f, g = f + sign * term_f, g + sign * term_g
        term_f = term_f * (4 * k + 1) * (4 * k + 3) / (u * u)
        term_g = term_g * (4 * k + 3) * (4 * k + 5) / (u * u)
    f, g = f / (np.pi * big), g / (np.pi * big)
    phase = np.pi / 2 * big * big
    s_far = np.sign(x) * (0.5 - f * np.cos(phase) - g * np.sin(phase))
    c_far = np.sign(x) * (0.5 + f * np.sin(phase) - g * np.cos(phase))
    inside = np.abs(x) <= 6
    return np.where(inside, s_near, s_far), np.where(inside, c_near, c_far)


def _dilog(u: np.ndarray) -> np.ndarray:
    """Li2(u) for u in [0, 1]: the series below 1/2, Euler's reflection above."""
    def series(v: np.ndarray) -> np.ndarray:
        total, power = np.zeros_like(v), np.ones_like(v)
        for k in range(1, 64):
            power = power * v
            total = total + power / (k * k)
        return total
    low = np.minimum(u, 0.5)
    high = np.clip(u, 0.5, 1 - 1e-300)
    reflected = np.pi ** 2 / 6 - np.log(high) * np.log1p(-high) - series(1 - high)
    out = np.where(u <= 0.5, series(low), reflected)
    return np.where(u == 1, np.pi ** 2 / 6, out)


def _spence(x: np.ndarray) -> np.ndarray:
    """spence(x) = int_1^x ln t / (1 - t) dt = Li2(1 - x); for x > 1 Landen's identity gives
    -Li2(1 - 1/x) - ln(x)^2 / 2, with arguments in [0, 1] only."""
    x = _f64(x)
    inside = np.clip(x, 0.0, 1.0)
    outside = np.maximum(x, 1.0)
    out = np.where(x <= 1, _dilog(1 - inside),
                   -_dilog(1 - 1 / outside) - np.log(outside) ** 2 / 2)
    return np.where((x < 0) | np.isnan(x), np.nan, out)


# ---------------------------------------------------------------- ops

def _unary(name: str, kernel64: Any, grad: Any) -> Any:
    return defop(name, shape=rules.same_as(0), dtypes=FLOATS, grad=grad,
                 kernel=np_errors_ignored(
                     lambda x: np.asarray(kernel64(x)).astype(x.dtype, copy=False)))


def _over_x(y: Tensor, x: Tensor, limit: float) -> Tensor:
    """y / x with its limit at x = 0."""
    at_zero = equal(x, array.zeros_like(x))
    safe = array.where(at_zero, array.ones_like(x), x)
    return array.where(at_zero, limit + array.zeros_like(x), y / safe)


BESSEL_J0 = _unary("BesselJ0", lambda x: _bessel_j(0, x),
                   lambda op, dy: [-dy * bessel_j1(op.inputs[0])])
BESSEL_J1 = _unary("BesselJ1", lambda x: _bessel_j(1, x),
                   lambda op, dy: [dy * (bessel_j0(op.inputs[0]) -
                                         _over_x(op.outputs[0], op.inputs[0], 0.5))])
BESSEL_Y0 = _unary("BesselY0", lambda x: _bessel_y(0, x),
                   lambda op, dy: [-dy * bessel_y1(op.inputs[0])])
BESSEL_Y1 = _unary("BesselY1", lambda x: _bessel_y(1, x),
                   lambda op, dy: [dy * (bessel_y0(op.inputs[0]) -
                                         op.outputs[0] / op.inputs[0])])
BESSEL_K0 = _unary("BesselK0", lambda x: _bessel_k(0, x),
                   lambda op, dy: [-dy * bessel_k1(op.inputs[0])])
BESSEL_K0E = _unary("BesselK0e", lambda x: _bessel_k_scaled(0, x),
                    lambda op, dy: [dy * (op.outputs[0] - bessel_k1e(op.inputs[0]))])
BESSEL_K1 = _unary("BesselK1", lambda x: _bessel_k(1, x),
                   lambda op, dy: [-dy * (bessel_k0(op.inputs[0]) +
                                          op.outputs[0] / op.inputs[0])])
BESSEL_K1E = _unary("BesselK1e", lambda x: _bessel_k_scaled(1, x),
                    lambda op, dy: [dy * (op.outputs[0] - bessel_k0e(op.inputs[0]) -
                                          op.outputs[0] / op.inputs[0])])
DAWSN = _unary("Dawsn", _dawsn, lambda op, dy: [dy * (1 - 2 * op.inputs[0] * op.outputs[0])])
EXPINT = _unary("Expint", _expint,
                lambda op, dy: [dy * exp(op.inputs[0]) / op.inputs[0]])
FRESNEL_COS = _unary("FresnelCos", lambda x: _fresnel(x)[1],
                     lambda op, dy: [dy * cos(np.pi / 2 * square(op.inputs[0]))])
FRESNEL_SIN = _unary("FresnelSin", lambda x: _fresnel(x)[0],
                     lambda op, dy: [dy * sin(np.pi / 2 * square(op.inputs[0]))])


def _spence_grad(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    at_one = equal(x, array.ones_like(x))
    safe = array.where(at_one, 2 * array.ones_like(x), x)
    return [dy * array.where(at_one, -array.ones_like(x), log(safe) / (1 - safe))]


SPENCE = _unary("Spence", _spence, _spence_grad)


def _function(opdef: Any, doc: str):
    def apply(x: Any, name: Optional[str] = None) -> Tensor:
        return bind(opdef, (convert_to_tensor(x),), name=name)
    apply.__doc__ = doc
    return apply


bessel_j0 = _function(BESSEL_J0, """The Bessel function of the first kind J0(x).

    >>> import kilnflow as kf
    >>> round(float(kf.math.special.bessel_j0(1.0)), 6)
    0.765198
    """)
bessel_j1 = _function(BESSEL_J1, "The Bessel function of the first kind J1(x).")
bessel_y0 = _function(BESSEL_Y0, "The Bessel function of the second kind Y0(x) (x > 0).")
bessel_y1 = _function(BESSEL_Y1, "The Bessel function of the second kind Y1(x) (x > 0).")
bessel_k0 = _function(BESSEL_K0, "The modified Bessel function of the second kind K0(x).")
bessel_k0e = _function(BESSEL_K0E, "exp(x) K0(x), which never underflows.")
bessel_k1 = _function(BESSEL_K1, "The modified Bessel function of the second kind K1(x).")
bessel_k1e = _function(BESSEL_K1E, "exp(x) K1(x), which never underflows.")
dawsn = _function(DAWSN, "Dawson's integral exp(-x^2) int_0^x exp(t^2) dt.")
expint = _function(EXPINT, "The exponential integral Ei(x) (NaN for x < 0, as in TF).")
fresnel_cos = _function(FRESNEL_COS, "The Fresnel integral int_0^x cos(pi t^2 / 2) dt.")
fresnel_sin = _function(FRESNEL_SIN, "The Fresnel integral int_0^x sin(pi t^2 / 2) dt.")
spence = _function(SPENCE, "Spence's function int_1^x ln(t) / (1 - t) dt (x >= 0).")
