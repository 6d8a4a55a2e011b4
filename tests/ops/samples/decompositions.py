"""Samples of the ops in kilnflow/ops/decompositions.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from tests.ops.samples import add, rand


def _symmetric(a):
    return (a + kf.linalg.matrix_transpose(a)) / 2


def _spread_symmetric(a):
    """Symmetric with well separated eigenvalues: eigenvector gradients stay finite."""
    return _symmetric(a) + kf.constant(np.diag([0.0, 3.0, 6.0]))


add("Qr", lambda a: kf.linalg.qr(a)[1], (rand(4, 3),), lambda a: np.linalg.qr(a)[1])
add("Svd", lambda a: kf.linalg.svd(a, compute_uv=False), (rand(2, 4, 3),),
    lambda a: np.linalg.svd(a, compute_uv=False))
add("SelfAdjointEigV2", lambda a: kf.linalg.eigh(_symmetric(a))[0], (rand(3, 3),),
    lambda a: np.linalg.eigh((a + a.T) / 2)[0], differentiable=True)
add("SelfAdjointEigV2", lambda a: kf.linalg.eigh(_spread_symmetric(a))[1] ** 2,
    (rand(3, 3),),
    lambda a: np.linalg.eigh((a + a.T) / 2 + np.diag([0.0, 3.0, 6.0]))[1] ** 2,
    differentiable=True, name="eigenvectors")
add("SelfAdjointEigV2", lambda a: kf.linalg.eigh(a)[0], (rand(2, 3, 3),),
    lambda a: np.linalg.eigh(a)[0], differentiable=True, name="lower_triangle_only")
add("Eig", lambda a: kf.linalg.eigvals(a), (np.diag([1.0, 2.0, 5.0]) + np.triu(rand(3, 3), 1),),
    lambda a: np.linalg.eigvals(a).astype(np.complex128))
add("Lu", lambda a: kf.linalg.lu_reconstruct(*kf.linalg.lu(a)), (rand(2, 4, 4),),
    lambda a: a)
add("Lu", lambda a: kf.linalg.lu(a)[0], (rand(4, 4),),
    lambda a: _numpy_lu(a), name="packed")


def _numpy_lu(a):
    """Reference Doolittle LU with partial pivoting, packed."""
    lu = a.copy()
    n = len(lu)
    for k in range(n):
        p = k + np.argmax(np.abs(lu[k:, k]))
        lu[[k, p]] = lu[[p, k]]
        lu[k + 1:, k] /= lu[k, k]
        lu[k + 1:, k + 1:] -= np.outer(lu[k + 1:, k], lu[k, k + 1:])
    return lu
