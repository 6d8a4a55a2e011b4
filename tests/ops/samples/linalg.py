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
