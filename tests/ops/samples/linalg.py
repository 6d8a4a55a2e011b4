"""Samples of the ops in kilnflow/ops/linalg.py (see tests/ops/samples/__init__.py)."""


import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, ints, rand


add("MatMul", kf.matmul, (rand(2, 3), rand(3, 4)), np.matmul, differentiable=True)


add("MatMul", lambda a, b: a @ b, (rand(2, 2, 3), rand(3, 2)), np.matmul,
     differentiable=True, name="batched_broadcast")


add("MatMul", lambda a, b: kf.matmul(a, b, transpose_a=True), (rand(3, 2), rand(3, 4)),
     lambda a, b: a.T @ b, differentiable=True, name="transpose_a")


add("MatMul", lambda a, b: kf.matmul(a, b, transpose_b=True), (rand(2, 3), rand(4, 3)),
     lambda a, b: a @ b.T, differentiable=True, name="transpose_b")


add("MatMul", lambda a, b: kf.matmul(a, b, transpose_a=True, transpose_b=True),
     (rand(3, 2), rand(4, 3)), lambda a, b: a.T @ b.T, differentiable=True,
     name="transpose_both")


add("MatMul", kf.matmul, (ints(2, 3), ints(3, 2)), np.matmul, name="int32")


add("Einsum", lambda a, b: kf.einsum("ij,jk->ik", a, b), (rand(2, 3), rand(3, 4)),
     lambda a, b: np.einsum("ij,jk->ik", a, b), differentiable=True)


add("Einsum", lambda a, b: kf.einsum("bij,bjk->bik", a, b), (rand(2, 2, 3), rand(2, 3, 2)),
     lambda a, b: np.einsum("bij,bjk->bik", a, b), differentiable=True, name="batched")


add("Einsum", lambda a: kf.einsum("ij->j", a), (rand(3, 4),), lambda a: a.sum(0),
     differentiable=True, name="sum")


add("Einsum", lambda a, b: kf.einsum("ij,kj", a, b), (rand(2, 3), rand(4, 3)),
     lambda a, b: np.einsum("ij,kj", a, b), differentiable=True, name="implicit_output")


add("Einsum", lambda a, b: kf.einsum("i,j->ij", a, b), (rand(3), rand(2)), np.outer,
     differentiable=True, name="outer")


add("MatMul", lambda a, b: kf.tensordot(a, b, 1), (rand(2, 3), rand(3, 2)),
     lambda a, b: np.tensordot(a, b, 1), differentiable=True, name="tensordot")


ERRORS.extend([
    ErrorSample("MatMul", kf.matmul, (rand(2, 3), rand(2, 3)), errors.InvalidArgumentError,
                ("MatMul",), name="inner_dims_differ"),
    ErrorSample("MatMul", kf.matmul, (rand(3), rand(3, 2)), errors.InvalidArgumentError,
                ("MatMul",), name="rank_1"),
])


# ---------------------------------------------------------------- matrix functions

def _well_conditioned(*batch):
    return rand(*batch, 3, 3) + 3.0 * np.eye(3)


def _positive_definite(a):  # A A^T + 3 I, so finite differences stay positive definite
    return kf.matmul(a, a, transpose_b=True) + 3.0 * kf.eye(a.shape[-1], dtype=a.dtype)


add("MatrixInverse", kf.linalg.inv, (_well_conditioned(),), np.linalg.inv,
    differentiable=True, rtol=1e-5)
add("MatrixInverse", kf.linalg.inv, (_well_conditioned(2),), np.linalg.inv,
    differentiable=True, rtol=1e-5, name="batched")
add("MatrixDeterminant", kf.linalg.det, (_well_conditioned(),), np.linalg.det,
    differentiable=True, rtol=1e-5)
add("LogMatrixDeterminant", lambda a: kf.linalg.slogdet(a)[1], (_well_conditioned(2),),
    lambda a: np.linalg.slogdet(a)[1], differentiable=True, rtol=1e-5)
add("LogMatrixDeterminant", lambda a: kf.linalg.slogdet(a)[0], (-_well_conditioned(),),
    lambda a: np.linalg.slogdet(a)[0], name="sign")
add("MatrixSolve", kf.linalg.solve, (_well_conditioned(), rand(3, 2)), np.linalg.solve,
    differentiable=True, rtol=1e-5)
add("MatrixSolve", lambda a, b: kf.linalg.solve(a, b, adjoint=True),
    (_well_conditioned(), rand(3, 2)), lambda a, b: np.linalg.solve(a.T, b),
    differentiable=True, rtol=1e-5, name="adjoint")
add("Cholesky", lambda a: kf.linalg.cholesky(_positive_definite(a)), (rand(3, 3),),
    lambda a: np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3)), differentiable=True, rtol=1e-5)
add("MatrixDiag", kf.linalg.diag, (rand(2, 3),),
    lambda d: np.stack([np.diag(row) for row in d]), differentiable=True)
add("MatrixDiagPart", kf.linalg.diag_part, (rand(2, 3, 3),),
    lambda a: np.diagonal(a, axis1=-2, axis2=-1), differentiable=True)
add("MatrixDiagPart", kf.linalg.diag_part, (rand(2, 4),),
    lambda a: np.diagonal(a), differentiable=True, name="wide")
add("MatrixDiagPart", kf.linalg.diag_part, (rand(4, 2),),
    lambda a: np.diagonal(a), differentiable=True, name="tall")
add("MatrixBandPart", lambda a: kf.linalg.band_part(a, 1, 0), (rand(2, 4, 4),),
    lambda a: a * (np.tril(np.ones((4, 4))) - np.tril(np.ones((4, 4)), -2)),
    differentiable=True)
add("MatrixBandPart", lambda a: kf.linalg.band_part(a, -1, 0), (rand(3, 3),), np.tril,
    differentiable=True, name="lower")


ERRORS.extend([
    ErrorSample("MatrixInverse", kf.linalg.inv, (np.zeros((2, 2)),),
                errors.InvalidArgumentError, ("not invertible", "MatrixInverse"),
                name="singular"),
    ErrorSample("Cholesky", kf.linalg.cholesky, (-np.eye(2),), errors.InvalidArgumentError,
                ("Cholesky",), name="not_positive_definite"),
])
