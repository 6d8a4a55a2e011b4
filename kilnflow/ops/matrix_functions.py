"""Matrix functions of tf.linalg: expm (Pade with scaling and squaring), sqrtm (the
Denman-Beavers iteration), logm (complex, through the eigendecomposition), and the solvers
built from existing ops: banded_triangular_solve, eigh_tridiagonal and conjugate_gradient.
expm's gradient is the exponential of a block matrix, sqrtm's solves a Sylvester equation
with public ops (as TF's do); logm has none in TF. Imports ops.linalg, ops.decompositions,
ops.array, ops.math, ops.joining, ops.reshaping, core.
"""
from __future__ import annotations

import collections
import math as _pymath
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop, np_errors_ignored
from kilnflow.ops import array, joining, math, reduction, reshaping
from kilnflow.ops.complex import real
from kilnflow.ops.args import invalid_argument
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.decompositions import eigh
from kilnflow.ops.linalg import (diag, matmul, matrix_solve, matrix_transpose,
                                 require_square, triangular_solve)
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


def _square_rule(x: Any) -> TensorSpec:
    require_square(x, "matrix function")
    return TensorSpec(x.shape, x.dtype)


def _pade_coefficients(q: int) -> list:
    return [_pymath.factorial(2 * q - k) * _pymath.factorial(q) /
            (_pymath.factorial(2 * q) * _pymath.factorial(k) * _pymath.factorial(q - k))
            for k in range(q + 1)]


_PADE = _pade_coefficients(8)


def _expm_kernel(a: Any) -> Any:
    """Pade [8/8] of exp(A / 2^s), squared s times, with ||A / 2^s||_1 <= 1/2 (error below
    float64 rounding)."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"expm needs square matrices, got shape {list(a.shape)}")
    work = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    norm = np.abs(work).sum(axis=-2).max() if work.size else 0.0
    squarings = max(0, int(np.ceil(np.log2(norm / 0.5)))) if norm > 0.5 else 0
    scaled = work / 2.0 ** squarings
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=work.dtype), work.shape)
    numerator, denominator, power = eye * _PADE[0], eye * _PADE[0], eye
    for k, c in enumerate(_PADE[1:], start=1):
        power = power @ scaled
        numerator = numerator + c * power
        denominator = denominator + (-1) ** k * c * power
    out = np.linalg.solve(denominator, numerator)
    for _ in range(squarings):
        out = out @ out
    return out.astype(a.dtype)


def _expm_grad(op: Any, dy: Any) -> list:
    """d/dA <dy, expm(A)> is the upper-right block of expm([[A^H, dy], [0, A^H]])."""
    a_h = matrix_transpose(op.inputs[0], conjugate=True)
    top = joining.concat([a_h, dy], axis=-1)
    bottom = joining.concat([array.zeros_like(a_h), a_h], axis=-1)
    n = array.shape(a_h)[-1]
    block = expm(joining.concat([top, bottom], axis=-2))
    return [block[..., :n, n:]]


MATRIX_EXPONENTIAL = defop("MatrixExponential", shape=_square_rule, kernel=_expm_kernel,
                           grad=_expm_grad, dtypes=_dtypes.INEXACT)


def expm(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The matrix exponential of each square matrix in `input`.

    >>> import kilnflow as kf
    >>> kf.linalg.expm([[0.0, 1.0], [0.0, 0.0]]).numpy().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    return bind(MATRIX_EXPONENTIAL, (convert_to_tensor(input),), name=name)


def _sqrtm_kernel(a: Any) -> Any:
    """Denman-Beavers: Y -> (Y + Z^-1) / 2, Z -> (Z + Y^-1) / 2 from Y = A, Z = I converges
    quadratically to (sqrt(A), sqrt(A)^-1) when A has no eigenvalues on (-inf, 0]."""
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"sqrtm needs square matrices, got shape {list(a.shape)}")
    y = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    if y.shape[-1] == 0:
        return a.copy()
    z = np.broadcast_to(np.eye(a.shape[-1], dtype=y.dtype), y.shape)
    for _ in range(100):
        y_next = (y + np.linalg.inv(z)) / 2
        z = (z + np.linalg.inv(y)) / 2
        converged = np.max(np.abs(y_next - y)) <= 1e-15 * max(np.max(np.abs(y_next)), 1e-300)
        y = y_next
        if converged:
            break
    return y.astype(a.dtype)


def _kron(a: Tensor, b: Tensor) -> Tensor:
    """[..., i, k, j, l] = a[..., i, j] b[..., k, l] (reshaped by the caller to kron(a, b))."""
    return reshaping.expand_dims(reshaping.expand_dims(a, -2), -1) * \
        reshaping.expand_dims(reshaping.expand_dims(b, -3), -2)


def _sqrtm_grad(op: Any, dy: Any) -> list:
    """A = X X gives dA = X dX + dX X; the gradient G solves X^H G + G X^H = dy, solved
    as one linear system on vec(G) (row-major: kron(X^H, I) + kron(I, X^*))."""
    x = op.outputs[0]
    n = x.shape[-1]
    if n is None:
        raise ValueError("sqrtm's gradient needs a known matrix size")
    x_h = matrix_transpose(x, conjugate=True)
    eye = convert_to_tensor(np.eye(n), x.dtype)
    system = _kron(x_h, eye) + _kron(eye, matrix_transpose(x_h))
    batch = array.shape(x)[:-2]
    flat = reshaping.reshape(system, joining.concat([batch, [n * n, n * n]], 0))
    rhs = reshaping.reshape(dy, joining.concat([batch, [n * n, 1]], 0))
    return [reshaping.reshape(matrix_solve(flat, rhs), array.shape(x))]


MATRIX_SQUARE_ROOT = defop("MatrixSquareRoot", shape=_square_rule,
                           kernel=np_errors_ignored(_sqrtm_kernel), grad=_sqrtm_grad,
                           dtypes=_dtypes.INEXACT)


def sqrtm(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The principal square root of each square matrix (no eigenvalues on (-inf, 0]).
    Exported as kf.linalg.sqrtm and kf.matrix_square_root.

    >>> import kilnflow as kf
    >>> kf.linalg.sqrtm([[4.0, 0.0], [0.0, 9.0]]).numpy().tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    return bind(MATRIX_SQUARE_ROOT, (convert_to_tensor(input),), name=name)


def _logm_kernel(a: Any) -> Any:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"logm needs square matrices, got shape {list(a.shape)}")
    values, vectors = np.linalg.eig(a.astype(np.complex128))
    out = (vectors * np.log(values)[..., None, :]) @ np.linalg.inv(vectors)
    return out.astype(a.dtype)


MATRIX_LOGARITHM = defop("MatrixLogarithm", shape=_square_rule,
                         kernel=np_errors_ignored(_logm_kernel),
                         dtypes=(_dtypes.complex64, _dtypes.complex128))


def logm(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's name
    """The principal logarithm of each square complex matrix (TF takes complex only), from
    its eigendecomposition (diagonalizable matrices). No gradient, as in TF."""
    return bind(MATRIX_LOGARITHM, (convert_to_tensor(input),), name=name)


# ---------------------------------------------------------------- solvers from other ops

def _shifted(n: int, k: int, dtype: Any) -> Tensor:
    return convert_to_tensor(np.eye(n, k=k), dtype)


def banded_triangular_solve(bands: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                            name: Optional[str] = None) -> Tensor:
    """Solves A X = rhs for a triangular A given by its K bands [..., K, N]: with lower,
    row k is the k-th subdiagonal (padded on the left), else row K-1-k is the k-th
    superdiagonal (padded on the right), as TF's LEFT_RIGHT alignment."""
    b = convert_to_tensor(bands)
    r = convert_to_tensor(rhs, b.dtype)
    if b.shape.rank is None or b.shape.rank < 2 or b.shape[-2] is None or b.shape[-1] is None:
        raise invalid_argument(f"banded_triangular_solve: `bands` must be [..., K, N] with K "
                               f"and N known, got {b.shape}", "BandedTriangularSolve")
    k_count, n = b.shape[-2], b.shape[-1]
    if not 1 <= k_count <= n:
        raise invalid_argument(f"banded_triangular_solve: {k_count} bands for {n} columns",
                               "BandedTriangularSolve")
    rows = joining.unstack(b, axis=-2)
    terms = []
    for k in range(k_count):
        band, offset = (rows[k], -k) if lower else (rows[k_count - 1 - k], k)
        terms.append(matmul(diag(band), _shifted(n, offset, b.dtype)))
    dense = math.add_n(terms) if len(terms) > 1 else terms[0]
    return triangular_solve(dense, r, lower=lower, adjoint=adjoint, name=name)


def eigh_tridiagonal(alpha: Any, beta: Any, eigvals_only: bool = True, select: str = "a",
                     select_range: Any = None, tol: Any = None,
                     name: Optional[str] = None) -> Any:
    """The eigenvalues (ascending; with eigenvectors unless eigvals_only) of the Hermitian
    tridiagonal matrix with diagonal `alpha` and off-diagonal `beta`. select 'a' keeps all,
    'v' those in the half-open range (lo, hi], 'i' the indices lo..hi."""
    a = convert_to_tensor(alpha)
    if a.shape.rank != 1 or a.shape[0] is None:
        raise invalid_argument(f"eigh_tridiagonal: `alpha` must be a vector of known length, "
                               f"got {a.shape}", "EighTridiagonal")
    n = a.shape[0]
    b = convert_to_tensor(beta)
    if b.shape.rank != 1 or b.shape[0] not in (None, n - 1):
        raise invalid_argument(f"eigh_tridiagonal: `beta` must have {n - 1} entries, got "
                               f"shape {b.shape}", "EighTridiagonal")
    if not b.dtype.is_complex and b.dtype != a.dtype:  # TF casts neither: a mixed Op fails
        raise invalid_argument(f"eigh_tridiagonal: `beta` of dtype {b.dtype.name} does not "
                               f"match `alpha` of dtype {a.dtype.name}", "EighTridiagonal")
    dtype = b.dtype if b.dtype.is_complex else a.dtype
    a_c, b_c = math.cast(a, dtype), math.cast(b, dtype)
    matrix = diag(a_c)
    if n > 1:  # beta on the first subdiagonal, conj(beta) on the superdiagonal
        lower_part = reshaping.pad(diag(b_c), [[1, 0], [0, 1]])
        matrix = matrix + lower_part + matrix_transpose(lower_part, conjugate=True)
    values, vectors = eigh(matrix)
    if select not in ("a", "v", "i"):
        raise ValueError(errors.with_location(
            f"eigh_tridiagonal: select must be 'a', 'v' or 'i', got {select!r}"))
    if select == "i":
        lo, hi = (int(v) for v in select_range)
        values, vectors = values[lo:hi + 1], vectors[:, lo:hi + 1]
    elif select == "v":
        lo, hi = select_range
        keep = math.logical_and(math.greater(values, lo), math.less_equal(values, hi))
        from kilnflow.ops.slicing import boolean_mask
        values = boolean_mask(values, keep)
        vectors = matrix_transpose(boolean_mask(matrix_transpose(vectors), keep))
    return values if eigvals_only else (values, vectors)


CGState = collections.namedtuple("CGState", ["i", "x", "r", "p", "gamma"])


def conjugate_gradient(operator: Any, rhs: Any, preconditioner: Any = None, x: Any = None,
                       tol: float = 1e-5, max_iter: int = 20,
                       name: str = "conjugate_gradient") -> CGState:
    """Solves operator x = rhs (a self-adjoint positive definite LinearOperator) by up to
    `max_iter` conjugate-gradient steps, stopping where ||r|| <= tol (each step is masked
    where converged, so the same ops serve eager and graphs). Returns CGState."""
    b = convert_to_tensor(rhs)

    def apply(op: Any, v: Tensor) -> Tensor:
        return op.matvec(v) if hasattr(op, "matvec") else \
            reshaping.squeeze(matmul(op, reshaping.expand_dims(v, -1)), [-1])

    def dot(u: Tensor, v: Tensor) -> Tensor:
        return reduction.reduce_sum(math.conj_if_complex(u) * v, axis=-1, keepdims=True)

    x = array.zeros_like(b) if x is None else convert_to_tensor(x, b.dtype)
    r = b - apply(operator, x)
    z = r if preconditioner is None else apply(preconditioner, r)
    p, gamma = z, dot(r, z)
    steps = array.zeros(array.shape(b)[:-1], _dtypes.int32)
    for _ in range(int(max_iter)):
        active = math.greater(math.sqrt(real(dot(r, r))), tol)
        ap = apply(operator, p)
        safe = array.where(active, dot(p, ap), array.ones_like(gamma))
        alpha = gamma / safe
        x = array.where(active, x + alpha * p, x)
        r_next = array.where(active, r - alpha * ap, r)
        z = r_next if preconditioner is None else apply(preconditioner, r_next)
        gamma_next = dot(r_next, z)
        beta = gamma_next / array.where(active, gamma, array.ones_like(gamma))
        p = array.where(active, z + beta * p, p)
        r, gamma = r_next, array.where(active, gamma_next, gamma)
        steps = steps + math.cast(reshaping.squeeze(active, [-1]), _dtypes.int32)
    return CGState(i=reduction.reduce_max(steps), x=x, r=r, p=p,
                   gamma=reshaping.squeeze(gamma, [-1]))
