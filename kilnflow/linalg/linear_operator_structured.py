"""The structured LinearOperators of tf.linalg: Kronecker products, block-diagonal and
block-lower-triangular operators, low-rank updates, permutations, Toeplitz and circulant
matrices, Householder reflections and tridiagonal matrices. Each gives its dense matrix and
overrides the methods its structure makes cheap (the base class densifies the rest).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.linalg.linear_operator import LinearOperator, adjoint_of
from kilnflow.ops import array, joining, math, reduction, reshaping, slicing
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.linalg import matmul
from kilnflow.ops.matrices import tridiagonal_matmul
from kilnflow.shapes import TensorShape, broadcast_shapes
from kilnflow.tensor import Tensor


def _same_dtype(operators: Sequence) -> Any:
    operators = list(operators)
    if not operators:
        raise ValueError("Expected a non-empty list of operators.")
    for o in operators[1:]:
        if o.dtype != operators[0].dtype:
            raise TypeError(f"Expected all operators to have the same dtype, got "
                            f"{operators[0].dtype.name} and {o.dtype.name}")
    return operators[0].dtype


def _batch_of(operators: Sequence) -> TensorShape:
    batch = TensorShape([])
    for o in operators:
        batch = broadcast_shapes(batch, o.batch_shape)
    return batch


def _known(dim: Any, what: str) -> int:
    if dim is None:
        raise ValueError(f"{what} must be known when the operator is built")
    return int(dim)


class LinearOperatorKronecker(LinearOperator):
    """The Kronecker product A1 (x) A2 (x) ... of operators."""

    def __init__(self, operators: Sequence, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: Optional[str] = None):
        self.operators = list(operators)
        dtype = _same_dtype(self.operators)
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name or "_x_".join(o.name for o in self.operators),
                         {"operators": self.operators})

    def _shape(self) -> TensorShape:
        rows = cols = 1
        for o in self.operators:
            rows = None if rows is None or o.range_dimension is None else \
                rows * o.range_dimension
            cols = None if cols is None or o.domain_dimension is None else \
                cols * o.domain_dimension
        return _batch_of(self.operators).concatenate([rows, cols])

    def _to_dense(self) -> Tensor:
        out = self.operators[0].to_dense()
        for o in self.operators[1:]:
            b = o.to_dense()
            m = _known(out.shape[-2], "the rows") * _known(b.shape[-2], "the rows")
            n = _known(out.shape[-1], "the columns") * _known(b.shape[-1], "the columns")
            # [..., i, k, j, l] = a[..., i, j] b[..., k, l], then (i, k) and (j, l) merged
            prod = reshaping.expand_dims(reshaping.expand_dims(out, -2), -1) * \
                reshaping.expand_dims(reshaping.expand_dims(b, -3), -2)
            batch = array.shape(prod)[:-4]
            out = reshaping.reshape(prod, joining.concat([batch, [m, n]], 0))
        return out

    def _determinant(self) -> Tensor:
        # det(A (x) B) = det(A)^m det(B)^n for A n x n and B m x m
        total = _known(self.shape[-1], "the size")
        out = None
        for o in self.operators:
            part = o.determinant() ** (total // _known(o.shape[-1], "the size"))
            out = part if out is None else out * part
        return out

    def _log_abs_determinant(self) -> Tensor:
        total = _known(self.shape[-1], "the size")
        parts = [o.log_abs_determinant() * (total // _known(o.shape[-1], "the size"))
                 for o in self.operators]
        return math.add_n(parts) if len(parts) > 1 else parts[0]


class LinearOperatorBlockDiag(LinearOperator):
    """The block-diagonal operator diag(A1, A2, ...) of square operators."""

    def __init__(self, operators: Sequence, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = True, name: Optional[str] = None):
        self.operators = list(operators)
        dtype = _same_dtype(self.operators)
        if any(o.is_square is False for o in self.operators):
            raise ValueError("For a non-square operator, the blocks must be square.")
        if is_non_singular is None and all(o.is_non_singular for o in self.operators):
            is_non_singular = True
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name or "_ds_".join(o.name for o in self.operators),
                         {"operators": self.operators})

    def _sizes(self) -> list:
        return [_known(o.domain_dimension, "block sizes") for o in self.operators]

    def _shape(self) -> TensorShape:
        n = sum(self._sizes())
        return _batch_of(self.operators).concatenate([n, n])

    def _to_dense(self) -> Tensor:
        sizes, rows = self._sizes(), []
        total = sum(sizes)
        start = 0
        for o, n in zip(self.operators, sizes):
            rows.append(reshaping.pad(o.to_dense(), [[0, 0]] * o.batch_shape.rank +
                                      [[0, 0], [start, total - start - n]]))
            start += n
        batch = self.batch_shape.as_list()
        rows = [reshaping.broadcast_to(r, batch + r.shape.as_list()[-2:]) for r in rows]
        return joining.concat(rows, axis=-2)

    def _blockwise(self, x: Tensor, apply: Any) -> Tensor:
        parts = joining.split(x, self._sizes(), axis=-2)
        outs = [apply(o, p) for o, p in zip(self.operators, parts)]
        batch = broadcast_shapes(self.batch_shape, x.shape[:-2]).as_list()
        outs = [reshaping.broadcast_to(o, batch + o.shape.as_list()[-2:]) for o in outs]
        return joining.concat(outs, axis=-2)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_of(x) if adjoint_arg else x
        return self._blockwise(x, lambda o, p: o.matmul(p, adjoint=adjoint))

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        rhs = adjoint_of(rhs) if adjoint_arg else rhs
        return self._blockwise(rhs, lambda o, p: o.solve(p, adjoint=adjoint))

    def _determinant(self) -> Tensor:
        out = self.operators[0].determinant()
        for o in self.operators[1:]:
            out = out * o.determinant()
        return out

    def _log_abs_determinant(self) -> Tensor:
        parts = [o.log_abs_determinant() for o in self.operators]
        return math.add_n(parts) if len(parts) > 1 else parts[0]

    def _diag_part(self) -> Tensor:
        parts = [o.diag_part() for o in self.operators]
        batch = self.batch_shape.as_list()
        parts = [reshaping.broadcast_to(p, batch + p.shape.as_list()[-1:]) for p in parts]
        return joining.concat(parts, axis=-1)


class LinearOperatorBlockLowerTriangular(LinearOperator):
    """A block lower-triangular operator from rows of operators: operators[i] holds the
    blocks (i, 0) .. (i, i), the last of them square (the diagonal)."""

    def __init__(self, operators: Sequence, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str = "LinearOperatorBlockLowerTriangular"):
        self.operators = [list(row) for row in operators]
        if any(len(row) != i + 1 for i, row in enumerate(self.operators)):
            raise ValueError("Row i of `operators` must hold i + 1 operators.")
        dtype = _same_dtype([o for row in self.operators for o in row])
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name, {"operators": self.operators})

    def _sizes(self) -> list:
        return [_known(row[-1].domain_dimension, "block sizes") for row in self.operators]

    def _shape(self) -> TensorShape:
        n = sum(self._sizes())
        return _batch_of([o for row in self.operators for o in row]).concatenate([n, n])

    def _to_dense(self) -> Tensor:
        sizes, total = self._sizes(), sum(self._sizes())
        batch = self.batch_shape.as_list()
        rows = []
        for row in self.operators:
            blocks = [o.to_dense() for o in row]
            blocks = [reshaping.broadcast_to(b, batch + b.shape.as_list()[-2:]) for b in blocks]
            dense = joining.concat(blocks, axis=-1)
            used = sum(sizes[:len(row)])
            rows.append(reshaping.pad(dense, [[0, 0]] * len(batch) + [[0, 0],
                                                                      [0, total - used]]))
        return joining.concat(rows, axis=-2)

    def _determinant(self) -> Tensor:
        out = self.operators[0][-1].determinant()
        for row in self.operators[1:]:
            out = out * row[-1].determinant()
        return out

    def _log_abs_determinant(self) -> Tensor:
        parts = [row[-1].log_abs_determinant() for row in self.operators]
        return math.add_n(parts) if len(parts) > 1 else parts[0]


class LinearOperatorLowRankUpdate(LinearOperator):
    """A = L + U D V^H for a base operator L [.., M, N], U [.., M, K], an optional diagonal
    D [.., K] (default I) and V [.., N, K] (default U). Matmul never forms A."""

    def __init__(self, base_operator: LinearOperator, u: Any, diag_update: Any = None,
                 v: Any = None, is_diag_update_positive: Any = None,
                 is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = None,
                 name: str = "LinearOperatorLowRankUpdate"):
        self.base_operator = base_operator
        self.u = convert_to_tensor(u, base_operator.dtype)
        self.v = self.u if v is None else convert_to_tensor(v, base_operator.dtype)
        self.diag_update = None if diag_update is None else \
            convert_to_tensor(diag_update, base_operator.dtype)
        if is_self_adjoint is None and v is None and base_operator.is_self_adjoint and \
                not base_operator.dtype.is_complex:
            is_self_adjoint = True
        super().__init__(base_operator.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square, name,
                         {"base_operator": base_operator, "u": u, "diag_update": diag_update,
                          "v": v})

    def _shape(self) -> TensorShape:
        batch = broadcast_shapes(self.base_operator.batch_shape, self.u.shape[:-2])
        return batch.concatenate(self.base_operator.shape[-2:])

    def _scaled_u(self) -> Tensor:
        if self.diag_update is None:
            return self.u
        return self.u * reshaping.expand_dims(self.diag_update, -2)

    def _to_dense(self) -> Tensor:
        return self.base_operator.to_dense() + matmul(self._scaled_u(), adjoint_of(self.v))

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_of(x) if adjoint_arg else x
        base = self.base_operator.matmul(x, adjoint=adjoint)
        if adjoint:  # (U D V^H)^H x = V D^H U^H x
            d_u = self._scaled_u()
            return base + matmul(self.v, matmul(adjoint_of(d_u), x))
        return base + matmul(self._scaled_u(), matmul(adjoint_of(self.v), x))


class LinearOperatorPermutation(LinearOperator):
    """The permutation matrix P with P[i, perm[i]] = 1, so P x = x[perm]."""

    def __init__(self, perm: Any, dtype: Any = _dtypes.float32, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str = "LinearOperatorPermutation"):
        self.perm = convert_to_tensor(perm)
        if self.perm.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError(f"perm must be an int32 or int64 tensor, got "
                            f"{self.perm.dtype.name}")
        if is_non_singular is False:
            raise ValueError("A Permutation operator is always non-singular.")
        super().__init__(dtype, None, True, is_self_adjoint, is_positive_definite, True, name,
                         {"perm": perm, "dtype": dtype})

    def _shape(self) -> TensorShape:
        return self.perm.shape.concatenate(self.perm.shape[-1:])

    def _to_dense(self) -> Tensor:
        return array.one_hot(self.perm, _known(self.perm.shape[-1], "the size"),
                             dtype=self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_of(x) if adjoint_arg else x
        if self.perm.shape.rank != 1:
            return super()._matmul(x, adjoint, False)
        if adjoint:  # P^T x = x[inverse perm]
            return slicing.gather(x, sorting_inverse(self.perm), axis=-2 % x.shape.rank)
        return slicing.gather(x, self.perm, axis=-2 % x.shape.rank)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._matmul(rhs, not adjoint, adjoint_arg)  # P^-1 = P^T


def sorting_inverse(perm: Tensor) -> Tensor:
    """The inverse permutation of a 1-D perm."""
    from kilnflow.ops.sorting import argsort
    return math.cast(argsort(perm), perm.dtype)


class LinearOperatorToeplitz(LinearOperator):
    """The Toeplitz matrix T[i, j] = col[i - j] (i >= j) or row[j - i] (j > i); row[0] is
    ignored in favour of col[0]."""

    def __init__(self, col: Any, row: Any, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str = "LinearOperatorToeplitz"):
        self.col = convert_to_tensor(col)
        self.row = convert_to_tensor(row, self.col.dtype)
        super().__init__(self.col.dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name, {"col": col, "row": row})

    def _shape(self) -> TensorShape:
        batch = broadcast_shapes(self.col.shape[:-1], self.row.shape[:-1])
        return batch.concatenate([self.col.shape[-1], self.col.shape[-1]])

    def _to_dense(self) -> Tensor:
        n = _known(self.col.shape[-1], "the size")
        # values[n - 1 + i - j] is T[i, j]: the reversed row (without row[0]) then col
        values = joining.concat([reshaping.reverse(self.row[..., 1:], [-1]), self.col], -1)
        index = n - 1 + np.arange(n)[:, None] - np.arange(n)[None, :]
        return slicing.gather(values, convert_to_tensor(index.astype(np.int32)),
                              axis=values.shape.rank - 1)


class LinearOperatorCirculant(LinearOperator):
    """The circulant matrix whose eigenvalues are `spectrum` (the DFT of its first column):
    C = DFT^-1 diag(spectrum) DFT, so C[i, j] = c[(i - j) mod n] with c = ifft(spectrum).
    The 2-D and 3-D variants take the last 2 or 3 dims of spectrum as one multi-dimensional
    DFT (block circulant with circulant blocks). Values are input_output_dtype."""

    _block_depth = 1

    def __init__(self, spectrum: Any, input_output_dtype: Any = _dtypes.complex64,
                 is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = True,
                 name: Optional[str] = None):
        self.spectrum = convert_to_tensor(spectrum)
        depth = self._block_depth
        if self.spectrum.shape.rank is not None and self.spectrum.shape.rank < depth:
            raise ValueError(f"spectrum must have rank >= {depth}, got {self.spectrum.shape}")
        self._sizes = [_known(d, "the spectrum's dims") for d in
                       self.spectrum.shape.as_list()[-depth:]]
        super().__init__(input_output_dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, True, name or type(self).__name__,
                         {"spectrum": spectrum, "input_output_dtype": input_output_dtype})

    def _shape(self) -> TensorShape:
        n = int(np.prod(self._sizes))
        return self.spectrum.shape[:-self._block_depth].concatenate([n, n])

    def _complex_type(self) -> Any:
        return _dtypes.complex128 if self.spectrum.dtype in (
            _dtypes.float64, _dtypes.complex128) else _dtypes.complex64

    def _flat_spectrum(self) -> Tensor:
        s = math.cast(self.spectrum, self._complex_type())
        n = int(np.prod(self._sizes))
        return reshaping.reshape(s, self.spectrum.shape[:-self._block_depth].as_list() + [n])

    def _to_dense(self) -> Tensor:
        dft = np.ones((1, 1))
        for n in self._sizes:  # the multi-dimensional DFT of a row-major flattening
            k = np.arange(n)
            dft = np.kron(dft, np.exp(-2j * np.pi * np.outer(k, k) / n))
        inverse = np.conj(dft).T / dft.shape[0]
        ctype = self._complex_type()
        scaled = convert_to_tensor(inverse, ctype) * \
            reshaping.expand_dims(self._flat_spectrum(), -2)
        dense = matmul(scaled, convert_to_tensor(dft, ctype))
        if self.dtype.is_complex:
            return math.cast(dense, self.dtype)
        from kilnflow.ops.complex import real
        return math.cast(real(dense), self.dtype)

    def _determinant(self) -> Tensor:
        d = reduction.reduce_prod(math.cast(self._flat_spectrum(), _dtypes.complex128), axis=-1)
        if self.dtype.is_complex:
            return math.cast(d, self.dtype)
        from kilnflow.ops.complex import real
        return math.cast(real(d), self.dtype)


class LinearOperatorCirculant2D(LinearOperatorCirculant):
    """A block circulant operator with circulant blocks: spectrum [..., N0, N1]."""

    _block_depth = 2


class LinearOperatorCirculant3D(LinearOperatorCirculant):
    """Circulant in three nested levels: spectrum [..., N0, N1, N2]."""

    _block_depth = 3


class LinearOperatorHouseholder(LinearOperator):
    """The reflection H = I - 2 v v^H / (v^H v) about the hyperplane orthogonal to v."""

    def __init__(self, reflection_axis: Any, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: str = "LinearOperatorHouseholder"):
        self.reflection_axis = convert_to_tensor(reflection_axis)
        if is_positive_definite:
            raise ValueError("A Householder operator is always non-positive definite.")
        super().__init__(self.reflection_axis.dtype, None, True, True, False, True, name,
                         {"reflection_axis": reflection_axis})

    def _shape(self) -> TensorShape:
        v = self.reflection_axis.shape
        return v.concatenate(v[-1:])

    def _unit(self) -> Tensor:
        v = self.reflection_axis
        size = math.sqrt(reduction.reduce_sum(math.abs(v) ** 2, axis=-1, keepdims=True))
        return reshaping.expand_dims(v / math.cast(size, v.dtype), -1)

    def _to_dense(self) -> Tensor:
        u = self._unit()
        n = _known(self.shape[-1], "the size")
        return array.eye(n, dtype=self.dtype) - 2 * matmul(u, adjoint_of(u))

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_of(x) if adjoint_arg else x
        u = self._unit()
        return x - 2 * matmul(u, matmul(adjoint_of(u), x))

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._matmul(rhs, adjoint, adjoint_arg)  # H^-1 = H

    def _determinant(self) -> Tensor:
        return -array.ones(self.batch_shape.as_list(), self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        return array.zeros(self.batch_shape.as_list(), self.dtype)


class LinearOperatorTridiag(LinearOperator):
    """A tridiagonal matrix in TF's formats: 'compact' [..., 3, N] (super, main, sub),
    'sequence' (three [..., N] tensors) or 'matrix' (dense)."""

    def __init__(self, diagonals: Any, diagonals_format: str = "compact",
                 is_non_singular: Any = None, is_self_adjoint: Any = None,
                 is_positive_definite: Any = None, is_square: Any = None,
                 name: str = "LinearOperatorTridiag"):
        if diagonals_format not in ("compact", "sequence", "matrix"):
            raise ValueError(f"Unknown diagonals_format {diagonals_format!r}: expected "
                             "'compact', 'sequence' or 'matrix'")
        self.diagonals_format = diagonals_format
        if diagonals_format == "sequence":
            self.diagonals = [convert_to_tensor(d) for d in diagonals]
            dtype, n = self.diagonals[1].dtype, self.diagonals[1].shape[-1]
            batch = self.diagonals[1].shape[:-1]
        else:
            self.diagonals = convert_to_tensor(diagonals)
            dtype, n = self.diagonals.dtype, self.diagonals.shape[-1]
            batch = self.diagonals.shape[:-2]
        self._static = batch.concatenate([n, n])
        super().__init__(dtype, None, is_non_singular, is_self_adjoint, is_positive_definite,
                         True, name,
                         {"diagonals": diagonals, "diagonals_format": diagonals_format})

    def _shape(self) -> TensorShape:
        return self._static

    def _to_dense(self) -> Tensor:
        if self.diagonals_format == "matrix":
            return self.diagonals
        n = _known(self._static[-1], "the size")
        return self._matmul(array.eye(n, dtype=self.dtype), False, False)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        x = adjoint_of(x) if adjoint_arg else x
        if self.diagonals_format == "matrix" or adjoint:
            dense = self.diagonals if self.diagonals_format == "matrix" else self._to_dense()
            return matmul(adjoint_of(dense) if adjoint else dense, x)
        return tridiagonal_matmul(self.diagonals, x, diagonals_format=self.diagonals_format)

    def _diag_part(self) -> Tensor:
        if self.diagonals_format == "sequence":
            return self.diagonals[1]
        if self.diagonals_format == "compact":
            return self.diagonals[..., 1, :]
        return super()._diag_part()

