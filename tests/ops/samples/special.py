"""Samples of the ops in kilnflow/ops/special.py and complex.py (see
tests/ops/samples/__init__.py). References use closed forms, direct sums and bisection on
the standard library's erf/erfc/lgamma, so they need no SciPy."""
import math

import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, ints, pos, rand, rng

M = kf.math
_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)
_lgamma = np.vectorize(math.lgamma)


def _bisect(f, target, lo, hi):
    lo, hi = np.full_like(target, lo), np.full_like(target, hi)
    for _ in range(200):
        mid = (lo + hi) / 2
        below = f(mid) < target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def _hurwitz(s, q, n=2000):
    k = np.arange(n)[:, None]
    tail = (q + n) ** (1 - s) / (s - 1) + 0.5 * (q + n) ** -s + s * (q + n) ** (-s - 1) / 12
    return np.sum((q + k) ** -s, axis=0) + tail


_X = pos(5) * 2
add("Lgamma", M.lgamma, (_X,), _lgamma, differentiable=True)
add("Digamma", M.digamma, (_X,), lambda x: (_lgamma(x + 1e-6) - _lgamma(x - 1e-6)) / 2e-6,
    differentiable=True, rtol=1e-7, atol=1e-7)
add("Polygamma", lambda x: M.polygamma(np.array([1.0, 2.0, 1.0, 3.0, 1.0]), x), (_X,),
    lambda x: np.array([1, -2, 1, 6, 1]) * _hurwitz(np.array([2.0, 3, 2, 4, 2]), x),
    differentiable=True, rtol=1e-8)
add("Zeta", M.zeta, (np.array([2.0, 3.5]), pos(2)), lambda s, q: _hurwitz(s, q),
    differentiable=True, wrt=(1,), rtol=1e-8)
_Y = rng.uniform(-0.9, 0.9, 5)
add("Erfinv", M.erfinv, (_Y,), lambda y: _bisect(_erf, y, -5, 5), differentiable=True)
add("Erfcinv", M.erfcinv, (rng.uniform(0.1, 1.9, 4),),
    lambda y: _bisect(lambda x: -_erfc(x), -y, -10, 10), differentiable=True)
add("Ndtri", M.ndtri, (rng.uniform(0.05, 0.95, 5),),
    lambda p: _bisect(lambda x: 0.5 * _erfc(-x / math.sqrt(2)), p, -10, 10),
    differentiable=True)
_A = np.array([0.5, 1.0, 2.0])
_igamma_ref = lambda a, x: np.stack([_erf(np.sqrt(x[0])), 1 - np.exp(-x[1]),  # noqa: E731
                                     1 - np.exp(-x[2]) * (1 + x[2])])
add("Igamma", M.igamma, (_A, pos(3) * 2), _igamma_ref, differentiable=True, wrt=(1,))
add("Igamma", M.igamma, (_A, np.array([3.0, 4.0, 9.0])), _igamma_ref, differentiable=True,
    wrt=(1,), name="continued_fraction")
add("Igammac", M.igammac, (_A, pos(3) * 2), lambda a, x: 1 - _igamma_ref(a, x),
    differentiable=True, wrt=(1,))
add("Betainc", M.betainc, (np.array([1.0, 2.0, 2.0]), np.array([3.0, 1.0, 2.0]),
                           rng.uniform(0.1, 0.9, 3)),
    lambda a, b, x: np.stack([1 - (1 - x[0]) ** 3, x[1] ** 2, 3 * x[2] ** 2 - 2 * x[2] ** 3]),
    differentiable=True, wrt=(2,))
add("Lgamma", M.lbeta, (pos(2, 3),),
    lambda x: _lgamma(x).sum(-1) - _lgamma(x.sum(-1)), differentiable=True, name="lbeta")

# complex parts
_Z = rand(2, 3) + 1j * rand(2, 3)
add("Complex", lambda a, b: M.real(kf.complex(a, b)) + 2 * M.imag(kf.complex(a, b)),
    (rand(2, 3), rand(3)), lambda a, b: a + 2 * b, differentiable=True)
add("Complex", lambda a, b: M.angle(kf.complex(a, b)),
    (rand(2).astype(np.float32), rand(2).astype(np.float32)),
    lambda a, b: np.arctan2(b, a).astype(np.float32), differentiable=True, rtol=1e-6,
    name="complex64")
add("Real", M.real, (_Z,), np.real, differentiable=True)
add("Imag", M.imag, (_Z,), np.imag, differentiable=True)
add("Conj", M.conj, (_Z,), np.conj, differentiable=True)
add("Angle", M.angle, (_Z,), np.angle, differentiable=True)

ERRORS.extend([
    ErrorSample("Lgamma", M.lgamma, (ints(3),), errors.InvalidArgumentError,
                ("Lgamma", "int32")),
    ErrorSample("Complex", kf.complex, (ints(2), ints(2)), errors.InvalidArgumentError,
                ("Complex", "int32")),
])
