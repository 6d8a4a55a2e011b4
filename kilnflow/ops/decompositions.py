"""Matrix decompositions: QR, SVD, the self-adjoint eigen decomposition (with its
gradient), the general eigen decomposition, and LU with partial pivoting.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, math, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.linalg import band_part, diag, diag_part, matmul, matrix_transpose
from kilnflow.ops.linalg import require_square, triangular_solve
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


def _qr_rule(x: Any, *, full_matrices: bool) -> list:
    if x.shape.rank is None:
        return [TensorSpec(None, x.dtype), TensorSpec(None, x.dtype)]
    *batch, m, n = x.shape.as_list()
    k = None if m is None or n is None else (m if full_matrices else min(m, n))
    return [TensorSpec(batch + [m, k], x.dtype), TensorSpec(batch + [k, n], x.dtype)]


QR = defop("Qr", shape=_qr_rule, multi_output=True, dtypes=_dtypes.INEXACT,
           kernel=lambda x, *, full_matrices: tuple(np.linalg.qr(
               x, mode="complete" if full_matrices else "reduced")))


def _svd_rule(x: Any, *, full_matrices: bool) -> list:
    if x.shape.rank is None:
        return [TensorSpec(None, x.dtype)] * 3
    *batch, m, n = x.shape.as_list()
    k = None if m is None or n is None else min(m, n)
    um = m if full_matrices else k
    vn = n if full_matrices else k
    real = x.dtype.real_dtype
    return [TensorSpec(batch + [k], real), TensorSpec(batch + [m, um], x.dtype),
            TensorSpec(batch + [n, vn], x.dtype)]


def _svd_kernel(x: Any, *, full_matrices: bool) -> tuple:
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return s, u, np.conj(vh.mT)  # TF returns v, not v^H


SVD = defop("Svd", shape=_svd_rule, kernel=_svd_kernel, multi_output=True,
            dtypes=_dtypes.INEXACT)


def _eigh_rule(x: Any) -> list:
    require_square(x, "SelfAdjointEigV2")
    batch = None if x.shape.rank is None else x.shape[:-1]
    return [TensorSpec(batch, x.dtype), TensorSpec(x.shape, x.dtype)]


def _eigh_grad(op: Any, de: Any, dv: Any) -> list:
    """For A = V diag(e) V^T: G = V (diag(de) + F * (V^T dV)) V^T with F_ij = 1/(e_j - e_i)
    off the diagonal. The kernel reads only the lower triangle of its input, so the
    gradient is tril(G + G^T) with the diagonal counted once (TF's convention)."""
    e, v = op.outputs
    de = array.zeros_like(e) if de is None else de
    dv = array.zeros_like(v) if dv is None else dv
    gaps = reshaping.expand_dims(e, -2) - reshaping.expand_dims(e, -1)
    on_diagonal = math.equal(diag(array.ones_like(e)), array.ones_like(gaps))
    safe = array.where(on_diagonal, array.ones_like(gaps), gaps)
    f = array.where(on_diagonal, array.zeros_like(gaps), math.reciprocal(safe))
    v_h = matrix_transpose(v, conjugate=True)
    inner = diag(de) + f * matmul(v_h, dv)
    g = matmul(v, matmul(inner, v_h))
    both = band_part(g + matrix_transpose(g, conjugate=True), -1, 0)
    return [both - diag(diag_part(g))]


SELF_ADJOINT_EIG = defop("SelfAdjointEigV2", shape=_eigh_rule, multi_output=True,
                         dtypes=_dtypes.INEXACT, kernel=lambda x: tuple(np.linalg.eigh(x)),
                         grad=_eigh_grad)


def _eig_rule(x: Any) -> list:
    require_square(x, "Eig")
    complex_dtype = _dtypes.complex128 if x.dtype in (_dtypes.float64, _dtypes.complex128) \
        else _dtypes.complex64
    batch = None if x.shape.rank is None else x.shape[:-1]
    return [TensorSpec(batch, complex_dtype), TensorSpec(x.shape, complex_dtype)]


def _eig_kernel(x: Any) -> tuple:
    target = np.complex128 if x.dtype in (np.float64, np.complex128) else np.complex64
    e, v = np.linalg.eig(x)
    return e.astype(target), v.astype(target)


EIG = defop("Eig", shape=_eig_rule, kernel=_eig_kernel, multi_output=True,
            dtypes=_dtypes.INEXACT)


def _lu_rule(x: Any) -> list:
    require_square(x, "Lu")
    batch = None if x.shape.rank is None else x.shape[:-1]
    return [TensorSpec(x.shape, x.dtype), TensorSpec(batch, _dtypes.int32)]


def _lu_kernel(x: Any) -> tuple:
    """Doolittle LU with partial pivoting, vectorised over the batch: P A = L U, returned
    packed (L's unit diagonal implied) with `perm` such that A[perm] = L U (TF's form)."""
    lu = np.array(x, copy=True)
    n = lu.shape[-1]
    batch = lu.shape[:-2]
    perm = np.broadcast_to(np.arange(n, dtype=np.int32), batch + (n,)).copy()
    index = np.indices(batch)
    for k in range(n):
        pivot = k + np.argmax(np.abs(lu[..., k:, k]), axis=-1)
        rows_k = lu[(*index, np.full(batch, k))].copy() if batch else lu[k].copy()
        if batch:
            lu[(*index, np.full(batch, k))] = lu[(*index, pivot)]
            lu[(*index, pivot)] = rows_k
            pk = perm[(*index, np.full(batch, k))].copy()
            perm[(*index, np.full(batch, k))] = perm[(*index, pivot)]
            perm[(*index, pivot)] = pk
        else:
            lu[k], lu[pivot] = lu[pivot].copy(), rows_k
            perm[k], perm[pivot] = perm[pivot], perm[k]
        diagonal = lu[..., k, k]
        with np.errstate(divide="ignore", invalid="ignore"):
            factors = lu[..., k + 1:, k] / diagonal[..., None]
        lu[..., k + 1:, k] = factors
        lu[..., k + 1:, k + 1:] -= factors[..., :, None] * lu[..., k, None, k + 1:]
    with np.errstate(invalid="ignore"):
        pivots_ok = (np.abs(np.diagonal(lu, axis1=-2, axis2=-1)) > 0).all()
    if not pivots_ok:  # TF's LU: a zero or NaN pivot (NumPy would go on with inf/NaN)
        raise errors.InvalidArgumentError(errors.with_location(
            "Input is not invertible: `input` has a zero or NaN pivot [Op:Lu]"))
    return lu, perm


LU = defop("Lu", shape=_lu_rule, kernel=_lu_kernel, multi_output=True,
           dtypes=_dtypes.INEXACT)


# ---------------------------------------------------------------- public functions

def qr(input: Any, full_matrices: bool = False, name: Optional[str] = None) -> tuple:  # noqa: A002
    """(q, r) with input = q @ r (no gradient yet)."""
    x = convert_to_tensor(input)
    return bind(QR, (x,), {"full_matrices": bool(full_matrices)}, name=name)


def svd(tensor: Any, full_matrices: bool = False, compute_uv: bool = True,
        name: Optional[str] = None) -> Any:
    """(s, u, v) with tensor = u @ diag(s) @ v^H, or s alone (no gradient yet)."""
    x = convert_to_tensor(tensor)
    s, u, v = bind(SVD, (x,), {"full_matrices": bool(full_matrices)}, name=name)
    return (s, u, v) if compute_uv else s


def eigh(tensor: Any, name: Optional[str] = None) -> tuple:
    """(eigenvalues ascending, eigenvectors) of self-adjoint matrices; only the lower
    triangle is read. Differentiable (distinct eigenvalues)."""
    x = convert_to_tensor(tensor)
    require_square(x, "SelfAdjointEigV2")
    return bind(SELF_ADJOINT_EIG, (x,), name=name)


def eigvalsh(tensor: Any, name: Optional[str] = None) -> Tensor:
    """The eigenvalues of self-adjoint matrices, ascending."""
    return eigh(tensor, name=name)[0]


def eig(tensor: Any, name: Optional[str] = None) -> tuple:
    """(eigenvalues, eigenvectors) of general square matrices, complex (no gradient yet)."""
    x = convert_to_tensor(tensor)
    require_square(x, "Eig")
    return bind(EIG, (x,), name=name)


def eigvals(tensor: Any, name: Optional[str] = None) -> Tensor:
    """The eigenvalues of general square matrices, complex."""
    return eig(tensor, name=name)[0]


def lu(input: Any, output_idx_type: Any = _dtypes.int32,  # noqa: A002
       name: Optional[str] = None) -> tuple:
    """(lu, p): L (unit lower, implied diagonal) and U packed in one matrix, and the row
    permutation p with input[..., p, :] = L @ U (no gradient yet)."""
    x = convert_to_tensor(input)
    require_square(x, "Lu")
    packed, perm = bind(LU, (x,), name=name)
    return packed, math.cast(perm, output_idx_type)


def _permutation_matrix(perm: Any, dtype: Any) -> Tensor:
    """P with P @ A == A[..., perm, :]."""
    perm = convert_to_tensor(perm)
    return array.one_hot(perm, perm.shape[-1], dtype=dtype)


def _identity_like(packed: Tensor) -> Tensor:
    """The identity of packed's matrix size (it broadcasts over batch dims)."""
    n = packed.shape[-1]
    if n is None:
        return diag(array.ones_like(diag_part(packed)))
    return array.eye(n, dtype=packed.dtype)


def _unpack(packed: Tensor) -> tuple:
    lower = band_part(packed, -1, 0) - diag(diag_part(packed)) + _identity_like(packed)
    return lower, band_part(packed, 0, -1)


def lu_reconstruct(lower_upper: Any, perm: Any, validate_args: bool = False,
                   name: Optional[str] = None) -> Tensor:
    """The matrix whose `lu` is (lower_upper, perm): P^T L U."""
    packed = convert_to_tensor(lower_upper)
    lower, upper = _unpack(packed)
    p = _permutation_matrix(perm, packed.dtype)
    return matmul(matrix_transpose(p), matmul(lower, upper), name=name)


def lu_solve(lower_upper: Any, perm: Any, rhs: Any, validate_args: bool = False,
             name: Optional[str] = None) -> Tensor:
    """Solves A X = rhs given A's `lu` factors (lower_upper, perm)."""
    packed = convert_to_tensor(lower_upper)
    lower, upper = _unpack(packed)
    permuted = matmul(_permutation_matrix(perm, packed.dtype), convert_to_tensor(rhs))
    y = triangular_solve(lower, permuted, lower=True)
    return triangular_solve(upper, y, lower=False, name=name)


def lu_matrix_inverse(lower_upper: Any, perm: Any, validate_args: bool = False,
                      name: Optional[str] = None) -> Tensor:
    """The inverse of A given its `lu` factors."""
    packed = convert_to_tensor(lower_upper)
    eye = _identity_like(packed)
    if packed.shape.rank is not None and packed.shape.rank > 2:
        eye = eye + array.zeros_like(packed)  # one right-hand side per batch member
    return lu_solve(packed, perm, eye, name=name)
