"""tf.linalg's structured-matrix helpers, built from existing ops (so every one is
differentiable wherever its parts are, in every mode): cross and matvec, set_diag and
tensor_diag, Cholesky solves, tridiagonal systems, the pseudo-inverse and rank.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import errors
from kilnflow.ops import array, joining, math, reduction, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.decompositions import svd
from kilnflow.ops.linalg import diag, diag_part, matmul, matrix_transpose, norm, triangular_solve
from kilnflow.ops.linalg import matrix_solve
from kilnflow.tensor import Tensor


def cholesky_solve(chol: Any, rhs: Any, name: Optional[str] = None) -> Tensor:
    """Solves A X = rhs given chol = cholesky(A): two triangular solves."""
    chol = convert_to_tensor(chol)
    y = triangular_solve(chol, rhs, lower=True)
    return triangular_solve(matrix_transpose(chol, conjugate=True), y, lower=False, name=name)


def cross(a: Any, b: Any, name: Optional[str] = None) -> Tensor:
    """The cross product of 3-vectors along the last dim."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    for what, t in (("a", a), ("b", b)):
        if t.shape.rank is not None and t.shape[-1] not in (None, 3):
            raise errors.InvalidArgumentError(errors.with_location(
                f"cross: `{what}` must have 3 elements in its last dim, got shape {t.shape} "
                "[Op:Cross]"))
    a0, a1, a2 = joining.unstack(a, axis=-1)
    b0, b1, b2 = joining.unstack(b, axis=-1)
    return joining.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1,
                         name=name)


def matvec(a: Any, b: Any, transpose_a: bool = False, adjoint_a: bool = False,
           name: Optional[str] = None) -> Tensor:
    """a @ b for matrices a and vectors b (batched)."""
    a = convert_to_tensor(a)
    if adjoint_a:
        a = matrix_transpose(a, conjugate=True)
    column = reshaping.expand_dims(convert_to_tensor(b), -1)
    return reshaping.squeeze(matmul(a, column, transpose_a=transpose_a), [-1], name=name)


def set_diag(input: Any, diagonal: Any, k: int = 0,  # noqa: A002
             name: Optional[str] = None) -> Tensor:
    """`input` with its main diagonal replaced by `diagonal` (k = 0 only)."""
    if k != 0:
        raise NotImplementedError("set_diag: only the main diagonal (k=0) is supported")
    x = convert_to_tensor(input)
    kept = x - diag(diag_part(x))
    return math.add(kept, diag(convert_to_tensor(diagonal, x.dtype)), name=name)


def tensor_diag(diagonal: Any, name: Optional[str] = None) -> Tensor:
    """A tensor of shape s + s holding `diagonal` (shape s) on its diagonal."""
    d = convert_to_tensor(diagonal)
    if not d.shape.is_fully_defined():
        raise ValueError(errors.with_location("tensor_diag: `diagonal` needs a known shape"))
    shape = d.shape.as_list()
    return reshaping.reshape(diag(reshaping.reshape(d, [-1])), shape + shape, name=name)


def tensor_diag_part(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The diagonal of a tensor of shape s + s, of shape s."""
    x = convert_to_tensor(input)
    if not x.shape.is_fully_defined() or x.shape.rank % 2:
        raise ValueError(errors.with_location(
            f"tensor_diag_part: `input` needs a known shape s + s, got {x.shape}"))
    shape = x.shape.as_list()[: x.shape.rank // 2]
    size = int(np.prod(shape, dtype=np.int64))
    return reshaping.reshape(diag_part(reshaping.reshape(x, [size, size])), shape, name=name)


def pinv(a: Any, rcond: Any = None, validate_args: bool = False,
         name: Optional[str] = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse, from the SVD; singular values at most
    rcond * max(s) count as zero (default rcond: 10 * max(m, n) * eps)."""
    x = convert_to_tensor(a)
    m, n = x.shape.as_list()[-2:]
    if rcond is None:
        rcond = 10.0 * max(m, n) * np.finfo(x.dtype.as_numpy_dtype).eps
    s, u, v = svd(x)
    cutoff = rcond * reduction.reduce_max(s, axis=-1, keepdims=True)
    kept = math.greater(s, cutoff)
    safe = array.where(kept, s, array.ones_like(s))
    inverse_s = array.where(kept, math.reciprocal(safe), array.zeros_like(s))
    return matmul(v * reshaping.expand_dims(inverse_s, -2),
                  matrix_transpose(u, conjugate=True), name=name)


def matrix_rank(a: Any, tol: Any = None, validate_args: bool = False,
                name: Optional[str] = None) -> Tensor:
    """The number of singular values above `tol` (default: max(s) * max(m, n) * eps)."""
    x = convert_to_tensor(a)
    s = svd(x, compute_uv=False)
    if tol is None:
        m, n = x.shape.as_list()[-2:]
        tol = reduction.reduce_max(s, axis=-1, keepdims=True) * max(m, n) * \
            np.finfo(x.dtype.as_numpy_dtype).eps
    return reduction.reduce_sum(math.cast(math.greater(s, tol), "int32"), axis=-1, name=name)


def _tridiagonal_dense(diagonals: Any, diagonals_format: str) -> Tensor:
    """The dense [..., n, n] matrix of TF's 'compact' ([..., 3, n]: super, main, sub, with
    super's last and sub's first entries unused) or 'sequence' (a 3-tuple) format."""
    if diagonals_format == "sequence":
        upper, main, lower = (convert_to_tensor(d) for d in diagonals)
    elif diagonals_format == "compact":
        upper, main, lower = joining.unstack(convert_to_tensor(diagonals), axis=-2)
    else:
        raise ValueError(errors.with_location(
            f"tridiagonal: diagonals_format must be 'compact' or 'sequence' ('matrix' is a "
            f"plain matrix), got {diagonals_format!r}"))
    n = main.shape[-1]
    superdiag = matmul(diag(upper), _shift(n, 1, main.dtype))
    subdiag = matmul(diag(lower), _shift(n, -1, main.dtype))
    return diag(main) + superdiag + subdiag


def _shift(n: int, k: int, dtype: Any) -> Tensor:
    """The n x n matrix with ones on diagonal k: diag(d) @ it puts d[i] at (i, i + k)."""
    return convert_to_tensor(np.eye(n, k=k), dtype)


def tridiagonal_matmul(diagonals: Any, rhs: Any, diagonals_format: str = "compact",
                       name: Optional[str] = None) -> Tensor:
    """The product of a tridiagonal matrix (TF's diagonal formats) and rhs."""
    if diagonals_format == "matrix":
        return matmul(diagonals, rhs, name=name)
    return matmul(_tridiagonal_dense(diagonals, diagonals_format), rhs, name=name)


def tridiagonal_solve(diagonals: Any, rhs: Any, diagonals_format: str = "compact",
                      transpose_rhs: bool = False, conjugate_rhs: bool = False,
                      name: Optional[str] = None, partial_pivoting: bool = True,
                      perturb_singular: bool = False) -> Tensor:
    """Solves a tridiagonal system (as a dense solve: fine for the sizes NumPy suits)."""
    matrix = convert_to_tensor(diagonals) if diagonals_format == "matrix" else \
        _tridiagonal_dense(diagonals, diagonals_format)
    rhs = convert_to_tensor(rhs)
    if transpose_rhs:
        rhs = matrix_transpose(rhs, conjugate=conjugate_rhs)
    elif conjugate_rhs:  # the conjugate: two transposes, one conjugating
        rhs = matrix_transpose(matrix_transpose(rhs, conjugate=True))
    vector = rhs.shape.rank == matrix.shape.rank - 1
    if vector:
        rhs = reshaping.expand_dims(rhs, -1)
    out = matrix_solve(matrix, rhs)
    return reshaping.squeeze(out, [-1], name=name) if vector else out


def normalize(tensor: Any, ord: Any = "euclidean", axis: Any = None,  # noqa: A002
              name: Optional[str] = None) -> tuple:
    """(tensor / norm, norm), with the norm kept over `axis` for broadcasting."""
    x = convert_to_tensor(tensor)
    size = norm(x, ord=ord, axis=axis, keepdims=True)
    return math.divide(x, size, name=name), size
