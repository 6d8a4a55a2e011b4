"""Samples of the ops in kilnflow/ops/matrix_functions.py (see tests/ops/samples/__init__.py):
references from series and eigendecompositions, independent of the kernels' Pade and
Denman-Beavers; TF's values are replayed by tests/ops/test_tf_reference_arrays.py."""
import numpy as np

from kilnflow import errors
from kilnflow.ops import matrix_functions as F
from tests.ops.samples import ERRORS, ErrorSample, add, rand, rng


def _expm_series(a):
    out, term = np.eye(a.shape[-1]), np.eye(a.shape[-1])
    for k in range(1, 40):
        term = term @ a / k
        out = out + term
    return out


def _spd(n):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def _sqrt_spd(a):
    w, v = np.linalg.eigh(a)
    return (v * np.sqrt(w)) @ v.T


_A = rand(3, 3) * 0.6
add("MatrixExponential", F.expm, (_A,), _expm_series, differentiable=True)
add("MatrixExponential", F.expm, (np.stack([_A * 4, -_A]),),
    lambda a: np.stack([np.linalg.matrix_power(_expm_series(a[0] / 8), 8),
                        _expm_series(a[1])]), differentiable=True, name="batch_scaled")
_S = _spd(3)
add("MatrixSquareRoot", F.sqrtm, (_S,), _sqrt_spd, differentiable=True, rtol=1e-8)
add("MatrixSquareRoot", F.sqrtm, (np.array([[4.0, 1.0], [0.0, 9.0]]),),
    lambda a: np.array([[2.0, 0.2], [0.0, 3.0]]), differentiable=True, name="triangular")
_C = (_S / 4).astype(np.complex128)
add("MatrixLogarithm", F.logm, (_C,),
    lambda a: ((lambda w, v: (v * np.log(w)) @ v.T)(*np.linalg.eigh(a.real))).astype(
        np.complex128), rtol=1e-8)

# compositions: banded_triangular_solve, eigh_tridiagonal, conjugate_gradient
_BANDS = rand(2, 4) + np.array([[3.0], [0.0]])


def _lower_from_bands(b):
    return np.diag(b[0]) + np.diag(b[1][1:], -1)


add("MatrixSolve", lambda b, r: F.banded_triangular_solve(b, r),
    (_BANDS, rand(4, 2)), lambda b, r: np.linalg.solve(_lower_from_bands(b), r),
    differentiable=True, name="banded")
add("MatrixSolve", lambda b, r: F.banded_triangular_solve(b, r, lower=False),
    (_BANDS[::-1], rand(4, 2)),
    lambda b, r: np.linalg.solve(np.diag(b[1]) + np.diag(b[0][:-1], 1), r),
    differentiable=True, name="banded_upper")
_ALPHA, _BETA = rand(5), rand(4)
_TRI = np.diag(_ALPHA) + np.diag(_BETA, 1) + np.diag(_BETA, -1)
add("SelfAdjointEigV2", F.eigh_tridiagonal, (_ALPHA, _BETA),
    lambda a, b: np.linalg.eigvalsh(_TRI), differentiable=True, name="tridiagonal")
add("SelfAdjointEigV2", lambda a, b: F.eigh_tridiagonal(a, b, select="i", select_range=[1, 2]),
    (_ALPHA, _BETA), lambda a, b: np.linalg.eigvalsh(_TRI)[1:3], differentiable=True,
    name="tridiagonal_index")
_SPD4 = _spd(4)
add("MatMul", lambda a, b: F.conjugate_gradient(a, b, tol=1e-12, max_iter=10).x,
    (_SPD4, rand(4)), lambda a, b: np.linalg.solve(a, b), rtol=1e-8, differentiable=True,
    wrt=(1,), name="conjugate_gradient")

ERRORS.extend([
    ErrorSample("MatrixExponential", F.expm, (rand(2, 3),), errors.InvalidArgumentError,
                ("square",)),
    ErrorSample("MatrixLogarithm", F.logm, (rand(2, 2),), errors.InvalidArgumentError,
                ("MatrixLogarithm", "float64")),
    ErrorSample("MatrixSquareRoot", F.sqrtm, (np.ones((2, 2), np.int32),),
                errors.InvalidArgumentError, ("MatrixSquareRoot",)),
])
