"""kf.linalg.LinearOperator (tf.linalg.LinearOperator): a matrix known by its structure, so
matmul, solve and determinants can skip the dense matrix. The base class gives every method
a dense fallback; each subclass overrides the ones its structure makes cheap. This file
holds the base and the simple operators (FullMatrix, Diag, Identity, ScaledIdentity, Zeros,
LowerTriangular); linear_operator_composite.py has Adjoint, Inversion and Composition,
linear_operator_structured.py the rest. Built from public ops only, so every method
works eagerly, inside kf.function and under GradientTape.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.module import Module
from kilnflow.ops import array, math, reduction, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.decompositions import eigvalsh, svd
from kilnflow.ops.linalg import (band_part, cholesky, det, diag, diag_part, matmul,
                                 matrix_solve, matrix_transpose, slogdet, triangular_solve)
from kilnflow.shapes import TensorShape, broadcast_shapes
from kilnflow.tensor import Tensor


def adjoint_of(t: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims."""
    return matrix_transpose(t, conjugate=True)


class LinearOperator(Module):
    """Base class of operators acting like [batch] matrices A of shape
    batch_shape + [M, N]. Subclasses implement `_shape` and `_to_dense`, and override
    `_matmul`, `_solve`, `_determinant`, `_log_abs_determinant` or `_diag_part` where their
    structure helps. Hints (is_non_singular, ...) are promises the caller makes, as in TF.

    >>> import kilnflow as kf
    >>> op = kf.linalg.LinearOperatorDiag([1.0, 2.0])
    >>> op.matvec([3.0, 4.0]).numpy().tolist(), float(op.determinant())
    ([3.0, 8.0], 2.0)
    """

    def __init__(self, dtype: Any, graph_parents: Any = None, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: Optional[str] = None,
                 parameters: Optional[dict] = None):
        super().__init__(name=name or type(self).__name__)
        if is_positive_definite and is_non_singular is False:
            raise ValueError("A positive definite matrix is always non-singular.")
        if is_positive_definite:
            is_non_singular = True
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._is_non_singular = is_non_singular
        self._is_self_adjoint = is_self_adjoint
        self._is_positive_definite = is_positive_definite
        self._is_square_hint = is_square
        self._parameters = dict(parameters or {})

    # ------------------------------------------------------------ facts
    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def parameters(self) -> dict:
        return dict(self._parameters)

    @property
    def is_non_singular(self) -> Any:
        return self._is_non_singular

    @property
    def is_self_adjoint(self) -> Any:
        return self._is_self_adjoint

    @property
    def is_positive_definite(self) -> Any:
        return self._is_positive_definite

    @property
    def is_square(self) -> Any:
        rows, cols = self.shape[-2], self.shape[-1]
        if rows is not None and cols is not None:
            return rows == cols
        return self._is_square_hint

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._shape())

    @property
    def batch_shape(self) -> TensorShape:
        return self.shape[:-2]

    @property
    def domain_dimension(self) -> Optional[int]:
        return self.shape[-1]

    @property
    def range_dimension(self) -> Optional[int]:
        return self.shape[-2]

    @property
    def tensor_rank(self) -> Optional[int]:
        return self.shape.rank

    def shape_tensor(self, name: str = "shape_tensor") -> Tensor:
        if self.shape.is_fully_defined():
            return convert_to_tensor(np.array(self.shape.as_list(), np.int32))
        return array.shape(self.to_dense())

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        return self.shape_tensor()[:-2]

    def domain_dimension_tensor(self, name: str = "domain_dimension_tensor") -> Tensor:
        return self.shape_tensor()[-1]

    def range_dimension_tensor(self, name: str = "range_dimension_tensor") -> Tensor:
        return self.shape_tensor()[-2]

    def tensor_rank_tensor(self, name: str = "tensor_rank_tensor") -> Tensor:
        return convert_to_tensor(self.shape.rank, _dtypes.int32)

    # ------------------------------------------------------------ the public methods
    def to_dense(self, name: str = "to_dense") -> Tensor:
        """The dense [batch] matrix this operator stands for."""
        return self._to_dense()

    def matmul(self, x: Any, adjoint: bool = False, adjoint_arg: bool = False,
               name: str = "matmul") -> Any:
        """A @ x (A^H @ x with adjoint, x^H with adjoint_arg); an operator x gives the
        composition."""
        if isinstance(x, LinearOperator):
            left = self.adjoint() if adjoint else self
            right = x.adjoint() if adjoint_arg else x
            from kilnflow.linalg.linear_operator_composite import LinearOperatorComposition
            return LinearOperatorComposition([left, right])
        x = convert_to_tensor(x, self.dtype)
        self._check_arg(x, adjoint, adjoint_arg, "matmul")
        return self._matmul(x, adjoint, adjoint_arg)

    def __matmul__(self, other: Any) -> Any:
        return self.matmul(other)

    def matvec(self, x: Any, adjoint: bool = False, name: str = "matvec") -> Tensor:
        """A @ x for vectors x (the last dim)."""
        column = reshaping.expand_dims(convert_to_tensor(x, self.dtype), -1)
        return reshaping.squeeze(self.matmul(column, adjoint=adjoint), [-1])

    def solve(self, rhs: Any, adjoint: bool = False, adjoint_arg: bool = False,
              name: str = "solve") -> Any:
        """X with A X = rhs (A^H X = rhs with adjoint)."""
        self._require_invertible("solve")
        if isinstance(rhs, LinearOperator):
            left = self.inverse()
            from kilnflow.linalg.linear_operator_composite import LinearOperatorComposition
            return LinearOperatorComposition([left.adjoint() if adjoint else left,
                                              rhs.adjoint() if adjoint_arg else rhs])
        rhs = convert_to_tensor(rhs, self.dtype)
        self._check_arg(rhs, not adjoint, adjoint_arg, "solve")
        return self._solve(rhs, adjoint, adjoint_arg)

    def solvevec(self, rhs: Any, adjoint: bool = False, name: str = "solve") -> Tensor:
        column = reshaping.expand_dims(convert_to_tensor(rhs, self.dtype), -1)
        return reshaping.squeeze(self.solve(column, adjoint=adjoint), [-1])

    def determinant(self, name: str = "det") -> Tensor:
        self._require_square("determinant")
        return self._determinant()

    def log_abs_determinant(self, name: str = "log_abs_det") -> Tensor:
        self._require_square("log_abs_determinant")
        return self._log_abs_determinant()

    def inverse(self, name: str = "inverse") -> "LinearOperator":
        """The inverse as an operator (LinearOperatorInversion unless the structure has a
        cheaper one)."""
        self._require_invertible("inverse")
        return self._inverse()

    def adjoint(self, name: str = "adjoint") -> "LinearOperator":
        if self.is_self_adjoint is True:
            return self
        return self._adjoint()

    H = property(adjoint)

    def diag_part(self, name: str = "diag_part") -> Tensor:
        return self._diag_part()

    def trace(self, name: str = "trace") -> Tensor:
        return reduction.reduce_sum(self.diag_part(), axis=-1)

    def add_to_tensor(self, x: Any, name: str = "add_to_tensor") -> Tensor:
        return self.to_dense() + convert_to_tensor(x, self.dtype)

    def cholesky(self, name: str = "cholesky") -> "LinearOperator":
        if self.is_self_adjoint is not True or self.is_positive_definite is not True:
            raise ValueError("Cholesky decomposition is only defined for an operator that "
                             "is self-adjoint and positive definite.")
        return LinearOperatorLowerTriangular(cholesky(self.to_dense()), is_non_singular=True)

    def eigvals(self, name: str = "eigvals") -> Tensor:
        if self.is_self_adjoint is not True:
            raise NotImplementedError("Only self-adjoint matrices are supported.")
        return eigvalsh(self.to_dense())

    def cond(self, name: str = "cond") -> Tensor:
        """The condition number: the ratio of the largest to the smallest singular value."""
        s = svd(self.to_dense(), compute_uv=False)
        return reduction.reduce_max(s, -1) / reduction.reduce_min(s, -1)

    # ------------------------------------------------------------ checks
    def _check_arg(self, x: Tensor, adjoint: bool, adjoint_arg: bool, what: str) -> None:
        if x.shape.rank is not None and x.shape.rank < 2:
            raise ValueError(f"{self.name}.{what}: the argument must have rank >= 2, got "
                             f"shape {x.shape}")
        own = self.range_dimension if adjoint else self.domain_dimension
        arg = x.shape[-1] if adjoint_arg else x.shape[-2] if x.shape.rank else None
        if own is not None and arg is not None and own != arg:
            raise ValueError(f"{self.name}.{what}: the operator has shape {self.shape}, which "
                             f"does not fit an argument of shape {x.shape}")

    def _require_square(self, what: str) -> None:
        if self.is_square is False:
            raise NotImplementedError(f"{what} is not defined for a non-square operator "
                                      f"{self.name} of shape {self.shape}")

    def _require_invertible(self, what: str) -> None:
        self._require_square(what)
        if self.is_non_singular is False:
            raise NotImplementedError(f"Exact {what} not implemented for an operator that is "
                                      "expected to be singular.")

    # ------------------------------------------------------------ dense fallbacks
    def _shape(self) -> TensorShape:
        raise NotImplementedError

    def _to_dense(self) -> Tensor:
        raise NotImplementedError

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        a = self.to_dense()
        return matmul(adjoint_of(a) if adjoint else a, adjoint_of(x) if adjoint_arg else x)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        rhs = adjoint_of(rhs) if adjoint_arg else rhs
        dense = self.to_dense()
        return matrix_solve(dense, _broadcast_batch(rhs, dense), adjoint=adjoint)

    def _determinant(self) -> Tensor:
        return det(self.to_dense())

    def _log_abs_determinant(self) -> Tensor:
        if self.dtype.is_complex:
            return math.log(math.abs(self._determinant()))
        return slogdet(self.to_dense())[1]

    def _diag_part(self) -> Tensor:
        return diag_part(self.to_dense())

    def _inverse(self) -> "LinearOperator":
        from kilnflow.linalg.linear_operator_composite import LinearOperatorInversion
        return LinearOperatorInversion(self)

    def _adjoint(self) -> "LinearOperator":
        from kilnflow.linalg.linear_operator_composite import LinearOperatorAdjoint
        return LinearOperatorAdjoint(self)


def _broadcast_batch(rhs: Tensor, matrix: Tensor) -> Tensor:
    """rhs with the batch dims of `matrix` (matrix_solve wants equal batch shapes)."""
    if rhs.shape.rank is None or matrix.shape.rank is None or \
            rhs.shape[:-2] == matrix.shape[:-2]:
        return rhs
    batch = broadcast_shapes(rhs.shape[:-2], matrix.shape[:-2])
    return reshaping.broadcast_to(rhs, batch.concatenate(rhs.shape[-2:]).as_list())


# ---------------------------------------------------------------- simple operators

class LinearOperatorFullMatrix(LinearOperator):
    """An operator given by its dense [batch] matrix."""

    def __init__(self, matrix: Any, is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = None,
                 name: str = "LinearOperatorFullMatrix"):
        self._matrix = convert_to_tensor(matrix)
        if self._matrix.shape.rank is not None and self._matrix.shape.rank < 2:
            raise ValueError(f"matrix must have rank >= 2, got shape {self._matrix.shape}")
        super().__init__(self._matrix.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name, {"matrix": matrix})

    def _shape(self) -> TensorShape:
        return self._matrix.shape

    def _to_dense(self) -> Tensor:
        return self._matrix


class LinearOperatorDiag(LinearOperator):
    """A [batch] diagonal matrix given by its diagonal [..., N]."""

    def __init__(self, diag: Any, is_non_singular: Any = None,  # noqa: A002 - TF's name
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str = "LinearOperatorDiag"):
        self._diag = convert_to_tensor(diag)
        if self._diag.shape.rank is not None and self._diag.shape.rank < 1:
            raise ValueError(f"diag must have rank >= 1, got shape {self._diag.shape}")
        if is_square is False:
            raise ValueError("Only square diagonal operators are supported.")
        if is_self_adjoint is None and not self._diag.dtype.is_complex:
            is_self_adjoint = True
        super().__init__(self._diag.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, {"diag": diag})

    @property
    def diag(self) -> Tensor:
        return self._diag

    def _shape(self) -> TensorShape:
        return self._diag.shape.concatenate(self._diag.shape[-1:])

    def _to_dense(self) -> Tensor:
        return diag(self._diag)

    def _entries(self, adjoint: bool) -> Tensor:
        d = math.conj(self._diag) if adjoint and self.dtype.is_complex else self._diag
        return reshaping.expand_dims(d, -1)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._entries(adjoint) * (adjoint_of(x) if adjoint_arg else x)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return (adjoint_of(rhs) if adjoint_arg else rhs) / self._entries(adjoint)

    def _determinant(self) -> Tensor:
        return reduction.reduce_prod(self._diag, axis=-1)

    def _log_abs_determinant(self) -> Tensor:
        return reduction.reduce_sum(math.log(math.abs(self._diag)), axis=-1)

    def _diag_part(self) -> Tensor:
        return self._diag

    def _inverse(self) -> LinearOperator:
        return LinearOperatorDiag(1 / self._diag, is_non_singular=True,
                                  is_self_adjoint=self.is_self_adjoint,
                                  is_positive_definite=self.is_positive_definite)


class LinearOperatorScaledIdentity(LinearOperator):
    """multiplier * I_N (the multiplier may carry batch dims)."""

    def __init__(self, num_rows: Any, multiplier: Any, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = True, assert_proper_shapes: bool = False,
                 name: str = "LinearOperatorScaledIdentity"):
        self._multiplier = convert_to_tensor(multiplier)
        self._num_rows = _static_count(num_rows, "num_rows")
        if is_self_adjoint is None and not self._multiplier.dtype.is_complex:
            is_self_adjoint = True
        super().__init__(self._multiplier.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name,
                         {"num_rows": num_rows, "multiplier": multiplier})

    @property
    def multiplier(self) -> Tensor:
        return self._multiplier

    def _shape(self) -> TensorShape:
        return self._multiplier.shape.concatenate([self._num_rows, self._num_rows])

    def _scale(self, adjoint: bool) -> Tensor:
        m = math.conj(self._multiplier) if adjoint and self.dtype.is_complex else \
            self._multiplier
        return reshaping.expand_dims(reshaping.expand_dims(m, -1), -1)

    def _to_dense(self) -> Tensor:
        return self._scale(False) * array.eye(self._num_rows, dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._scale(adjoint) * (adjoint_of(x) if adjoint_arg else x)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return (adjoint_of(rhs) if adjoint_arg else rhs) / self._scale(adjoint)

    def _determinant(self) -> Tensor:
        return self._multiplier ** self._num_rows

    def _log_abs_determinant(self) -> Tensor:
        return self._num_rows * math.log(math.abs(self._multiplier))

    def _diag_part(self) -> Tensor:
        return reshaping.expand_dims(self._multiplier, -1) * \
            array.ones([self._num_rows], self.dtype)


class LinearOperatorIdentity(LinearOperatorScaledIdentity):
    """The identity I_N, optionally batched by batch_shape."""

    def __init__(self, num_rows: Any, batch_shape: Any = None, dtype: Any = None,
                 is_non_singular: Any = True, is_self_adjoint: Any = True,
                 is_positive_definite: Any = True, is_square: Any = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorIdentity"):
        dtype = _dtypes.as_dtype(dtype or _dtypes.float32)
        batch = [] if batch_shape is None else [int(d) for d in batch_shape]
        super().__init__(num_rows, array.ones(batch, dtype), is_non_singular,
                         is_self_adjoint, is_positive_definite, is_square,
                         assert_proper_shapes, name)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_of(x) if adjoint_arg else x
        return x if not self.batch_shape.rank else x * self._scale(False)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._matmul(rhs, adjoint, adjoint_arg)


class LinearOperatorZeros(LinearOperator):
    """The all-zeros [batch] M x N matrix (singular: no solve or inverse)."""

    def __init__(self, num_rows: Any, num_columns: Any = None, batch_shape: Any = None,
                 dtype: Any = None, is_non_singular: Any = False, is_self_adjoint: Any = True,
                 is_positive_definite: Any = False, is_square: Any = True,
                 assert_proper_shapes: bool = False, name: str = "LinearOperatorZeros"):
        if is_non_singular or is_positive_definite:
            raise ValueError("A zeros operator is always singular (and never positive "
                             "definite).")
        self._rows = _static_count(num_rows, "num_rows")
        self._cols = self._rows if num_columns is None else \
            _static_count(num_columns, "num_columns")
        self._batch = [] if batch_shape is None else [int(d) for d in batch_shape]
        square = self._rows == self._cols
        super().__init__(dtype or _dtypes.float32, None, False, is_self_adjoint and square,
                         False, square, name)

    def _shape(self) -> TensorShape:
        return TensorShape(self._batch + [self._rows, self._cols])

    def _to_dense(self) -> Tensor:
        return array.zeros(self._batch + [self._rows, self._cols], self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return matmul(self._to_dense() if not adjoint else adjoint_of(self._to_dense()),
                      adjoint_of(x) if adjoint_arg else x)

    def _determinant(self) -> Tensor:
        return array.zeros(self._batch, self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return array.zeros(self._batch, self.dtype) - np.inf

    def _adjoint(self) -> LinearOperator:
        return LinearOperatorZeros(self._cols, self._rows, self._batch, self.dtype)


class LinearOperatorLowerTriangular(LinearOperator):
    """A [batch] lower-triangular matrix (the upper triangle of `tril` is ignored)."""

    def __init__(self, tril: Any, is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = None,
                 name: str = "LinearOperatorLowerTriangular"):
        self._tril = band_part(convert_to_tensor(tril), -1, 0)
        if is_square is False:
            raise ValueError("Only square lower triangular operators supported.")
        super().__init__(self._tril.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, {"tril": tril})

    def _shape(self) -> TensorShape:
        return self._tril.shape

    def _to_dense(self) -> Tensor:
        return self._tril

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        rhs = _broadcast_batch(adjoint_of(rhs) if adjoint_arg else rhs, self._tril)
        return triangular_solve(self._tril, rhs, lower=True, adjoint=adjoint)

    def _determinant(self) -> Tensor:
        return reduction.reduce_prod(diag_part(self._tril), axis=-1)

    def _log_abs_determinant(self) -> Tensor:
        return reduction.reduce_sum(math.log(math.abs(diag_part(self._tril))), axis=-1)


def _static_count(value: Any, what: str) -> int:
    known = value if isinstance(value, (int, np.integer)) else \
        getattr(convert_to_tensor(value), "_value", None)
    if known is None or np.ndim(known) != 0 or int(known) < 0:
        raise ValueError(f"`{what}` must be a non-negative int known when the operator is "
                         f"built, got {value!r}")
    return int(known)
