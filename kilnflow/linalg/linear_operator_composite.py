"""The LinearOperators made of other operators: Adjoint (A^H), Inversion (A^-1) and
Composition (A1 A2 ... An), none of which forms a dense matrix unless asked to. The base
class reaches them through function-level imports (they subclass it).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from kilnflow.linalg.linear_operator import LinearOperator, adjoint_of
from kilnflow.ops import array, math
from kilnflow.shapes import TensorShape, broadcast_shapes
from kilnflow.tensor import Tensor


# ---------------------------------------------------------------- operators of operators

class LinearOperatorAdjoint(LinearOperator):
    """A^H for an operator A, without forming it."""

    def __init__(self, operator: LinearOperator, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: Optional[str] = None):
        self.operator = operator
        super().__init__(operator.dtype, None, _hint(is_non_singular, operator.is_non_singular),
                         _hint(is_self_adjoint, operator.is_self_adjoint),
                         _hint(is_positive_definite, operator.is_positive_definite),
                         is_square, name or operator.name + "_adjoint",
                         {"operator": operator})

    def _shape(self) -> TensorShape:
        s = self.operator.shape
        return s[:-2].concatenate([s[-1], s[-2]])

    def _to_dense(self) -> Tensor:
        return adjoint_of(self.operator.to_dense())

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self.operator.matmul(x, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self.operator.solve(rhs, adjoint=not adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        d = self.operator.determinant()
        return math.conj(d) if self.dtype.is_complex else d

    def _log_abs_determinant(self) -> Tensor:
        return self.operator.log_abs_determinant()

    def _adjoint(self) -> LinearOperator:
        return self.operator


class LinearOperatorInversion(LinearOperator):
    """A^-1 for a square, non-singular operator A: matmul solves, solve multiplies."""

    def __init__(self, operator: LinearOperator, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: Optional[str] = None):
        if operator.is_non_singular is False or is_non_singular is False:
            raise ValueError("operator and its inverse must be non-singular")
        self.operator = operator
        super().__init__(operator.dtype, None, True,
                         _hint(is_self_adjoint, operator.is_self_adjoint),
                         _hint(is_positive_definite, operator.is_positive_definite),
                         is_square, name or operator.name + "_inv", {"operator": operator})

    def _shape(self) -> TensorShape:
        return self.operator.shape

    def _to_dense(self) -> Tensor:
        eye = array.eye(self.operator.shape[-1], dtype=self.dtype)
        return self.operator.solve(eye)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self.operator.solve(x, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self.operator.matmul(rhs, adjoint=adjoint, adjoint_arg=adjoint_arg)

    def _determinant(self) -> Tensor:
        return 1 / self.operator.determinant()

    def _log_abs_determinant(self) -> Tensor:
        return -self.operator.log_abs_determinant()

    def _inverse(self) -> LinearOperator:
        return self.operator


def _hint(given: Any, inherited: Any) -> Any:
    return inherited if given is None else given


class LinearOperatorComposition(LinearOperator):
    """The product A1 A2 ... An of operators (applied right to left)."""

    def __init__(self, operators: Sequence, is_non_singular: Any = None,
                 is_self_adjoint: Any = None, is_positive_definite: Any = None,
                 is_square: Any = None, name: Optional[str] = None):
        operators = list(operators)
        if not operators:
            raise ValueError("Expected a non-empty list of operators.")
        for left, right in zip(operators, operators[1:]):
            if left.dtype != right.dtype:
                raise TypeError(f"Expected all operators to have the same dtype, got "
                                f"{left.dtype.name} and {right.dtype.name}")
            if left.domain_dimension is not None and right.range_dimension is not None and \
                    left.domain_dimension != right.range_dimension:
                raise ValueError(f"Operators of shapes {left.shape} and {right.shape} cannot "
                                 "be composed")
        self.operators = operators
        if is_non_singular is None and all(o.is_non_singular for o in operators):
            is_non_singular = True
        super().__init__(operators[0].dtype, None, is_non_singular, is_self_adjoint,
                         is_positive_definite, is_square,
                         name or "_o_".join(o.name for o in operators),
                         {"operators": operators})

    def _shape(self) -> TensorShape:
        batch = TensorShape([])
        for o in self.operators:
            batch = broadcast_shapes(batch, o.batch_shape)
        return batch.concatenate([self.operators[0].range_dimension,
                                  self.operators[-1].domain_dimension])

    def _to_dense(self) -> Tensor:
        out = self.operators[-1].to_dense()
        for o in reversed(self.operators[:-1]):
            out = o.matmul(out)
        return out

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        order = self.operators if adjoint else self.operators[::-1]
        out = adjoint_of(x) if adjoint_arg else x
        for o in order:
            out = o.matmul(out, adjoint=adjoint)
        return out

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        if not all(o.is_square is not False for o in self.operators):
            return super()._solve(rhs, adjoint, adjoint_arg)
        order = self.operators[::-1] if adjoint else self.operators
        out = adjoint_of(rhs) if adjoint_arg else rhs
        for o in order:
            out = o.solve(out, adjoint=adjoint)
        return out

    def _determinant(self) -> Tensor:
        if all(o.is_square for o in self.operators):
            out = self.operators[0].determinant()
            for o in self.operators[1:]:
                out = out * o.determinant()
            return out
        return super()._determinant()

    def _log_abs_determinant(self) -> Tensor:
        if all(o.is_square for o in self.operators):
            return math.add_n([o.log_abs_determinant() for o in self.operators]) \
                if len(self.operators) > 1 else self.operators[0].log_abs_determinant()
        return super()._log_abs_determinant()
