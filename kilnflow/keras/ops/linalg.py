"""keras.ops.linalg: decompositions, solves, determinants and norms over (..., M, N) batches,
with Keras 3's return conventions (svd returns (u, s, vh); qr takes mode='reduced'/'complete';
lu_factor returns (lu, pivots))."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

import kilnflow as kf
from kilnflow.keras.ops.convert import promote, to_float
from kilnflow.keras.ops.core import jvp  # noqa: F401


def cholesky(x: Any, upper: bool = False) -> Any:
    """The lower (or, with upper=True, upper) Cholesky factor."""
    lower = kf.linalg.cholesky(to_float(x))
    return kf.linalg.adjoint(lower) if upper else lower


def cholesky_inverse(x: Any, upper: bool = False) -> Any:
    """inv(A) from A's Cholesky factor x."""
    f = to_float(x)
    lower = kf.linalg.adjoint(f) if upper else f
    return kf.linalg.inv(kf.matmul(lower, lower, transpose_b=True))


def det(x: Any) -> Any:
    return kf.linalg.det(to_float(x))


def slogdet(x: Any) -> Tuple[Any, Any]:
    """(sign, log|det|)."""
    return tuple(kf.linalg.slogdet(to_float(x)))


def logdet(x: Any) -> Any:
    """log(det(x)) of a positive-definite x."""
    return kf.linalg.logdet(to_float(x))


def eig(x: Any) -> Tuple[Any, Any]:
    """(eigenvalues, eigenvectors), complex."""
    return tuple(kf.linalg.eig(to_float(x)))


def eigh(x: Any) -> Tuple[Any, Any]:
    """(ascending eigenvalues, eigenvectors) of a symmetric x."""
    return tuple(kf.linalg.eigh(to_float(x)))


def inv(x: Any) -> Any:
    return kf.linalg.inv(to_float(x))


def pinv(x: Any, rcond: Any = None) -> Any:
    """Moore-Penrose pseudo-inverse (singular values below rcond * max cut)."""
    x = to_float(x)
    return kf.linalg.pinv(x) if rcond is None else kf.linalg.pinv(x, rcond=rcond)


def solve(a: Any, b: Any) -> Any:
    """x with a @ x = b (b a vector or a matrix)."""
    a, b = promote(to_float(a), to_float(b))
    if b.shape.rank == a.shape.rank - 1:
        return kf.squeeze(kf.linalg.solve(a, kf.expand_dims(b, -1)), [-1])
    return kf.linalg.solve(a, b)


def solve_triangular(a: Any, b: Any, lower: bool = False) -> Any:
    """solve for a triangular a (upper unless lower=True)."""
    a, b = promote(to_float(a), to_float(b))
    if b.shape.rank == a.shape.rank - 1:
        return kf.squeeze(kf.linalg.triangular_solve(a, kf.expand_dims(b, -1), lower=lower),
                          [-1])
    return kf.linalg.triangular_solve(a, b, lower=lower)


def lstsq(a: Any, b: Any, rcond: Any = None) -> Any:
    """The least-squares solution of a @ x = b (through the pseudo-inverse)."""
    a, b = promote(to_float(a), to_float(b))
    p = pinv(a, rcond)
    if b.shape.rank == 1:
        return kf.linalg.matvec(p, b)
    return kf.matmul(p, b)


def qr(x: Any, mode: str = "reduced") -> Tuple[Any, Any]:
    """(q, r); mode 'complete' gives the square q."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return tuple(kf.linalg.qr(to_float(x), full_matrices=mode == "complete"))


def svd(x: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """(u, s, vh) with x = u @ diag(s) @ vh; only s when compute_uv=False."""
    x = to_float(x)
    if not compute_uv:
        return kf.linalg.svd(x, compute_uv=False)
    s, u, v = kf.linalg.svd(x, full_matrices=full_matrices)
    return u, s, kf.linalg.adjoint(v)


def lu_factor(x: Any) -> Tuple[Any, Any]:
    """(lu, pivots) as Keras's TF backend gives them: L below the diagonal (unit diagonal
    implied), U on and above it, and the inverse of tf.linalg.lu's row permutation."""
    lu, perm = kf.linalg.lu(to_float(x))
    return lu, kf.math.invert_permutation(perm)


def matrix_rank(x: Any, tol: Any = None) -> Any:
    """Count of singular values above tol (default: max(M, N) * eps * max singular value)."""
    x = to_float(x)
    s = kf.linalg.svd(x, compute_uv=False)
    if tol is None:
        m, n = x.shape.as_list()[-2:]
        tol = kf.reduce_max(s, axis=-1, keepdims=True) * float(
            max(m, n) * np.finfo(x.dtype.as_numpy_dtype).eps)
    return kf.reduce_sum(kf.cast(kf.greater(s, tol), "int32"), axis=-1)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector or matrix norms, NumPy's `ord` values."""
    x = to_float(x)
    nd = x.shape.rank
    if axis is None:
        if ord is None or nd > 2:
            return kf.sqrt(kf.reduce_sum(kf.square(kf.abs(x)), keepdims=keepdims,
                                         axis=list(range(nd))))
        axis = tuple(range(nd))
    if isinstance(axis, int) or len(axis) == 1:
        ax = axis if isinstance(axis, int) else axis[0]
        return _vector_norm(x, ord, ax, keepdims)
    return _matrix_norm(x, ord, tuple(a % nd for a in axis), keepdims)


def _vector_norm(x: Any, ord: Any, ax: int, keepdims: bool) -> Any:
    a = kf.abs(x)
    if ord is None or ord == 2:
        return kf.sqrt(kf.reduce_sum(a * a, axis=ax, keepdims=keepdims))
    if ord == np.inf:
        return kf.reduce_max(a, axis=ax, keepdims=keepdims)
    if ord == -np.inf:
        return kf.reduce_min(a, axis=ax, keepdims=keepdims)
    if ord == 0:
        return kf.reduce_sum(kf.cast(kf.not_equal(a, 0), x.dtype), axis=ax, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid ord {ord!r} for a vector norm")
    p = float(ord)
    return kf.pow(kf.reduce_sum(kf.pow(a, p), axis=ax, keepdims=keepdims), 1.0 / p)


def _matrix_norm(x: Any, ord: Any, axis: Tuple[int, int], keepdims: bool) -> Any:
    r, c = axis
    a = kf.abs(x)
    if ord is None or ord == "fro":
        return kf.sqrt(kf.reduce_sum(a * a, axis=list(axis), keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        over, then = (r, c) if ord in (1, -1) else (c, r)
        pick = kf.reduce_max if ord in (1, np.inf) else kf.reduce_min
        out = pick(kf.reduce_sum(a, axis=over, keepdims=True), axis=then, keepdims=True)
    elif ord in ("nuc", 2, -2):
        from kilnflow.keras.ops.numpy_array import moveaxis
        s = kf.linalg.svd(moveaxis(x, [r, c], [-2, -1]), compute_uv=False)
        out = {"nuc": kf.reduce_sum, 2: kf.reduce_max, -2: kf.reduce_min}[ord](s, axis=-1)
        for a_ in sorted(axis):
            out = kf.expand_dims(out, a_)
    else:
        raise ValueError(f"norm: invalid ord {ord!r} for a matrix norm")
    return out if keepdims else kf.squeeze(out, list(axis))


__all__ = [
    "cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "jvp", "logdet", "lstsq",
    "lu_factor", "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular",
    "svd",
]
