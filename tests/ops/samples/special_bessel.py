"""Samples of the ops in kilnflow/ops/special_bessel.py (see tests/ops/samples/__init__.py).
References are the defining integrals summed by a fine midpoint rule, independent of the
kernels' quadratures and series; TF's own values at 12 points each are replayed by
tests/ops/test_tf_reference_arrays.py."""
import numpy as np

from kilnflow import errors
from kilnflow.ops import special_bessel as B
from tests.ops.samples import ERRORS, ErrorSample, add, ints, rng


def _midpoint(f, lo, hi, n=20000):
    """int_lo^hi f(t) dt for each row of lo/hi-shaped x, by the midpoint rule."""
    s = (np.arange(n) + 0.5) / n
    return lambda x: (f(x[..., None], lo + (hi - lo) * s) * (hi - lo) / n).sum(-1)


def _j(order):
    return _midpoint(lambda x, t: np.cos(order * t - x * np.sin(t)) / np.pi, 0.0, np.pi)


def _k_scaled(order):
    return _midpoint(lambda x, t: np.exp(-x * (np.cosh(t) - 1)) * np.cosh(order * t), 0, 12.0,
                     200000)


_X = rng.uniform(0.6, 6.0, 4)
_WIDE = np.array([0.3, 9.0, 17.0, 30.0])
add("BesselJ0", B.bessel_j0, (np.concatenate([_X, -_X[:1]]),), _j(0), differentiable=True)
add("BesselJ1", B.bessel_j1, (np.concatenate([_X, -_X[:1]]),), _j(1), differentiable=True)
add("BesselJ0", B.bessel_j0, (_WIDE,), _j(0), name="wide", differentiable=True)


def _y(order):
    first = _midpoint(lambda x, t: np.sin(x * np.sin(t) - order * t) / np.pi, 0.0, np.pi)
    second = _midpoint(lambda x, t: (np.exp(order * t) + (-1) ** order * np.exp(-order * t)) *
                       np.exp(-x * np.sinh(t)) / np.pi, 0.0, 12.0, 400000)
    return lambda x: first(x) - second(x)


_YX = np.array([0.3, 1.0, 8.0, 30.0])
add("BesselY0", B.bessel_y0, (_YX,), _y(0), differentiable=True, rtol=1e-6)
add("BesselY1", B.bessel_y1, (_YX,), _y(1), differentiable=True, rtol=1e-6)
_KX = np.array([0.4, 1.3, 3.0, 7.5])
add("BesselK0e", B.bessel_k0e, (_KX,), _k_scaled(0), differentiable=True, rtol=1e-7)
add("BesselK1e", B.bessel_k1e, (_KX,), _k_scaled(1), differentiable=True, rtol=1e-7)
add("BesselK0", B.bessel_k0, (_KX,), lambda x: _k_scaled(0)(x) * np.exp(-x),
    differentiable=True, rtol=1e-7)
add("BesselK1", B.bessel_k1, (_KX,), lambda x: _k_scaled(1)(x) * np.exp(-x),
    differentiable=True, rtol=1e-7)
_D = np.array([-2.5, 0.4, 1.7, 4.0, 7.0])
add("Dawsn", B.dawsn, (_D,), lambda x: x * _midpoint(
    lambda v, s: np.exp(-v * v * (1 - s * s)), 0.0, 1.0, 400000)(x), differentiable=True,
    rtol=1e-7)
_EULER = 0.5772156649015329
add("Expint", B.expint, (np.array([0.2, 1.0, 3.5, 9.0]),),
    lambda x: _EULER + np.log(x) + x * _midpoint(lambda v, s: np.expm1(v * s) / (v * s), 0.0,
                                                 1.0, 200000)(x),
    differentiable=True, rtol=1e-7)
_F = np.array([-1.3, 0.5, 2.2, 5.5, 7.0])
add("FresnelSin", B.fresnel_sin, (_F,), lambda x: x * _midpoint(
    lambda v, s: np.sin(np.pi / 2 * (v * s) ** 2), 0.0, 1.0, 200000)(x),
    differentiable=True, rtol=1e-7)
add("FresnelCos", B.fresnel_cos, (_F,), lambda x: x * _midpoint(
    lambda v, s: np.cos(np.pi / 2 * (v * s) ** 2), 0.0, 1.0, 200000)(x),
    differentiable=True, rtol=1e-7)
add("Spence", B.spence, (np.array([0.5, 2.0]),),
    lambda x: np.array([np.pi ** 2 / 12 - np.log(2) ** 2 / 2, -np.pi ** 2 / 12]),
    differentiable=True, rtol=1e-12)
add("Spence", B.spence, (np.array([0.4, 1.3, 2.0, 9.0]),),
    lambda x: np.array([_midpoint(lambda v, t: np.log(t) / (1 - t + (t == 1)), 1.0,
                                  float(v), 200000)(np.zeros(()))[()] for v in x]),
    differentiable=True, rtol=1e-7, name="gradient")

ERRORS.extend([
    ErrorSample("BesselJ0", B.bessel_j0, (ints(3),), errors.InvalidArgumentError,
                ("BesselJ0", "int32")),
    ErrorSample("Spence", B.spence, (ints(3),), errors.InvalidArgumentError, ("Spence",)),
])
