"""The kf.linalg namespace (tf.linalg): re-exports of the matrix ops, and the LinearOperator
classes (linear_operator*.py)."""
from kilnflow.ops.array import eye as eye
from kilnflow.ops.linalg import adjoint as adjoint
from kilnflow.ops.linalg import band_part as band_part
from kilnflow.ops.linalg import cholesky as cholesky
from kilnflow.ops.linalg import det as det
from kilnflow.ops.linalg import diag as diag
from kilnflow.ops.linalg import diag_part as diag_part
from kilnflow.ops.linalg import einsum as einsum
from kilnflow.ops.linalg import inv as inv
from kilnflow.ops.linalg import logdet as logdet
from kilnflow.ops.linalg import lstsq as lstsq
from kilnflow.ops.linalg import matmul as matmul
from kilnflow.ops.linalg import matrix_transpose as matrix_transpose
from kilnflow.ops.linalg import norm as norm
from kilnflow.ops.linalg import slogdet as slogdet
from kilnflow.ops.linalg import matrix_solve as solve
from kilnflow.ops.linalg import tensordot as tensordot
from kilnflow.ops.linalg import trace as trace
from kilnflow.ops.linalg import triangular_solve as triangular_solve
from kilnflow.ops.decompositions import eig as eig
from kilnflow.ops.decompositions import eigh as eigh
from kilnflow.ops.decompositions import eigvals as eigvals
from kilnflow.ops.decompositions import eigvalsh as eigvalsh
from kilnflow.ops.decompositions import lu as lu
from kilnflow.ops.decompositions import lu_matrix_inverse as lu_matrix_inverse
from kilnflow.ops.decompositions import lu_reconstruct as lu_reconstruct
from kilnflow.ops.decompositions import lu_solve as lu_solve
from kilnflow.ops.decompositions import qr as qr
from kilnflow.ops.decompositions import svd as svd
from kilnflow.ops.matrices import cholesky_solve as cholesky_solve
from kilnflow.ops.matrices import cross as cross
from kilnflow.ops.matrices import matrix_rank as matrix_rank
from kilnflow.ops.matrices import matvec as matvec
from kilnflow.ops.matrices import normalize as normalize
from kilnflow.ops.matrices import pinv as pinv
from kilnflow.ops.matrices import set_diag as set_diag
from kilnflow.ops.matrices import tensor_diag as tensor_diag
from kilnflow.ops.matrices import tensor_diag_part as tensor_diag_part
from kilnflow.ops.matrices import tridiagonal_matmul as tridiagonal_matmul
from kilnflow.ops.matrices import tridiagonal_solve as tridiagonal_solve
from kilnflow.ops.nn import l2_normalize as l2_normalize
from kilnflow.ops.reduction import global_norm as global_norm
from kilnflow.ops.matrix_functions import banded_triangular_solve as banded_triangular_solve
from kilnflow.ops.matrix_functions import eigh_tridiagonal as eigh_tridiagonal
from kilnflow.ops.matrix_functions import expm as expm
from kilnflow.ops.matrix_functions import logm as logm
from kilnflow.ops.matrix_functions import sqrtm as sqrtm
from kilnflow.linalg import experimental as experimental
from kilnflow.linalg.linear_operator import LinearOperator as LinearOperator
from kilnflow.linalg.linear_operator_composite import LinearOperatorAdjoint as \
    LinearOperatorAdjoint
from kilnflow.linalg.linear_operator_composite import LinearOperatorComposition as \
    LinearOperatorComposition
from kilnflow.linalg.linear_operator import LinearOperatorDiag as LinearOperatorDiag
from kilnflow.linalg.linear_operator import LinearOperatorFullMatrix as \
    LinearOperatorFullMatrix
from kilnflow.linalg.linear_operator import LinearOperatorIdentity as LinearOperatorIdentity
from kilnflow.linalg.linear_operator_composite import LinearOperatorInversion as \
    LinearOperatorInversion
from kilnflow.linalg.linear_operator import LinearOperatorLowerTriangular as \
    LinearOperatorLowerTriangular
from kilnflow.linalg.linear_operator import LinearOperatorScaledIdentity as \
    LinearOperatorScaledIdentity
from kilnflow.linalg.linear_operator import LinearOperatorZeros as LinearOperatorZeros
from kilnflow.linalg.linear_operator_structured import LinearOperatorBlockDiag as \
    LinearOperatorBlockDiag
from kilnflow.linalg.linear_operator_structured import LinearOperatorBlockLowerTriangular as \
    LinearOperatorBlockLowerTriangular
from kilnflow.linalg.linear_operator_structured import LinearOperatorCirculant as \
    LinearOperatorCirculant
from kilnflow.linalg.linear_operator_structured import LinearOperatorHouseholder as \
    LinearOperatorHouseholder
from kilnflow.linalg.linear_operator_structured import LinearOperatorKronecker as \
    LinearOperatorKronecker
from kilnflow.linalg.linear_operator_structured import LinearOperatorLowRankUpdate as \
    LinearOperatorLowRankUpdate
from kilnflow.linalg.linear_operator_structured import LinearOperatorPermutation as \
    LinearOperatorPermutation
from kilnflow.linalg.linear_operator_structured import LinearOperatorToeplitz as \
    LinearOperatorToeplitz
from kilnflow.linalg.linear_operator_structured import LinearOperatorTridiag as \
    LinearOperatorTridiag
from kilnflow.linalg.linear_operator_structured import LinearOperatorCirculant2D as \
    LinearOperatorCirculant2D
from kilnflow.linalg.linear_operator_structured import LinearOperatorCirculant3D as \
    LinearOperatorCirculant3D
