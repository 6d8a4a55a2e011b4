"""SparseTensor and SparseTensorSpec (tf.sparse.SparseTensor): a tensor stored as the
coordinates and values of its non-zero entries, plus its dense shape.

A composite tensor (kilnflow/type_spec.py): its components are `indices` (int64, [nnz, rank]),
`values` ([nnz]) and `dense_shape` (int64, [rank]); kf.function keys it by its spec, so a
new number of entries reuses the trace. The ops on it live in sparse/ops.py, built from
public kf ops, so they run eagerly, in graphs and under GradientTape alike.
"""
from __future__ import annotations

import collections

from typing import Any, List, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.ops.reshaping import broadcast_to
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.scatter import gather_nd
from kilnflow.shapes import TensorShape, TensorSpec, as_shape
from kilnflow.tensor import EagerTensor, Tensor
from kilnflow.type_spec import CompositeTensor, TypeSpec


def _static_shape(dense_shape: Tensor) -> TensorShape:
    """The shape known while building: the values of an eager dense_shape, else its rank."""
    if isinstance(dense_shape, EagerTensor):
        return TensorShape([int(d) for d in dense_shape.numpy()])
    rank = dense_shape.shape.as_list()[0] if dense_shape.shape.rank == 1 else None
    return TensorShape(None if rank is None else [None] * rank)


class SparseTensor(CompositeTensor):
    """A sparse tensor: `values[i]` sits at `indices[i]` of a tensor of shape `dense_shape`;
    every other entry is zero.

    >>> import kilnflow as kf
    >>> st = kf.sparse.SparseTensor(indices=[[0, 0], [1, 2]], values=[1, 2], dense_shape=[3, 4])
    >>> kf.sparse.to_dense(st).numpy().tolist()
    [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]]
    """

    def __init__(self, indices: Any, values: Any, dense_shape: Any):
        self._indices = convert_to_tensor(indices, _dtypes.int64, name="indices")
        self._values = convert_to_tensor(values, name="values")
        self._dense_shape = convert_to_tensor(dense_shape, _dtypes.int64, name="dense_shape")
        i_shape, v_shape = self._indices.shape, self._values.shape
        s_shape = self._dense_shape.shape
        if i_shape.rank not in (None, 2):
            raise ValueError(f"Shape {i_shape} must have rank 2 (`indices` of a SparseTensor)")
        if v_shape.rank not in (None, 1):
            raise ValueError(f"Shape {v_shape} must have rank 1 (`values` of a SparseTensor)")
        if s_shape.rank not in (None, 1):
            raise ValueError(f"Shape {s_shape} must have rank 1 (`dense_shape` of a SparseTensor)")
        nnz, rank = (i_shape.as_list() if i_shape.rank == 2 else [None, None])
        if None not in (nnz, v_shape.rank) and v_shape.as_list()[0] not in (None, nnz):
            raise ValueError(f"Dimensions {nnz} and {v_shape.as_list()[0]} are not compatible: "
                             f"`indices` has {nnz} rows but `values` has {v_shape.as_list()[0]}")
        if s_shape.rank == 1 and None not in (rank, s_shape.as_list()[0]) and \
                rank != s_shape.as_list()[0]:
            raise ValueError(f"Dimensions {rank} and {s_shape.as_list()[0]} are not "
                             f"compatible: `indices` has {rank} columns but `dense_shape` has "
                             f"{s_shape.as_list()[0]} dims")
        try:
            self._shape = _static_shape(self._dense_shape)
        except ValueError as exc:  # a negative dim
            raise ValueError(f"SparseTensor `dense_shape`: {exc}") from exc

    @classmethod
    def from_value(cls, value: Any) -> "SparseTensor":
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    indices = property(lambda self: self._indices, doc="int64 [nnz, rank]: coordinates.")
    values = property(lambda self: self._values, doc="[nnz]: the values at `indices`.")
    dense_shape = property(lambda self: self._dense_shape, doc="int64 [rank]: the shape.")
    dtype = property(lambda self: self._values.dtype, doc="The dtype of the values.")
    shape = property(lambda self: self._shape, doc="The static TensorShape (dims may be None).")

    @property
    def graph(self) -> Any:
        return getattr(self._values, "graph", None)

    def get_shape(self) -> TensorShape:
        return self._shape

    def with_values(self, new_values: Any) -> "SparseTensor":
        """The same indices and dense_shape with other values (same number of entries)."""
        out = SparseTensor(self._indices, new_values, self._dense_shape)
        out._shape = self._shape
        return out

    @property
    def _type_spec(self) -> "SparseTensorSpec":
        return SparseTensorSpec(self._shape, self.dtype)

    def _elementwise(self, other: Any, fn: Any) -> "SparseTensor":
        # TF's sparse-dense cwise ops: the dense side is broadcast to the dense shape and
        # read at the stored coordinates only
        other = convert_to_tensor(other, self.dtype)
        if other.shape.rank == 0:
            return self.with_values(fn(self._values, other))
        dense = broadcast_to(other, self._dense_shape)
        return self.with_values(fn(self._values, gather_nd(dense, self._indices)))

    def __mul__(self, other: Any) -> "SparseTensor":
        return self._elementwise(other, lambda a, b: a * b)

    def __truediv__(self, other: Any) -> "SparseTensor":
        return self._elementwise(other, lambda a, b: a / b)

    __div__ = __truediv__

    def __neg__(self) -> "SparseTensor":
        return self.with_values(-self._values)

    def __repr__(self) -> str:
        return (f"SparseTensor(indices={self._indices}, values={self._values}, "
                f"dense_shape={self._dense_shape})")

    def __bool__(self) -> bool:
        raise TypeError("Using a SparseTensor as a Python bool is not allowed")


class SparseTensorSpec(TypeSpec):
    """The TypeSpec of a SparseTensor: its (static) dense shape and its dtype.

    >>> import kilnflow as kf
    >>> kf.SparseTensorSpec([None, 3], kf.int64)
    SparseTensorSpec(TensorShape([None, 3]), tf.int64)
    """

    __slots__ = ("_shape", "_dtype")

    def __init__(self, shape: Any = None, dtype: Any = _dtypes.float32):
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    value_type = property(lambda self: SparseTensor)

    @classmethod
    def from_value(cls, value: SparseTensor) -> "SparseTensorSpec":
        return value._type_spec

    @property
    def _component_specs(self) -> List[TensorSpec]:
        rank = self._shape.rank
        return [TensorSpec([None, rank], _dtypes.int64), TensorSpec([None], self._dtype),
                TensorSpec([rank], _dtypes.int64)]

    def _to_components(self, value: SparseTensor) -> List[Tensor]:
        return [value.indices, value.values, value.dense_shape]

    def _from_components(self, components: List[Any]) -> SparseTensor:
        out = SparseTensor(*components)
        if self._shape.rank is not None and out.shape.rank == self._shape.rank:
            # what the trace saw is known inside it even though dense_shape is a placeholder
            out._shape = TensorShape([a if b is None else b for a, b in
                                      zip(self._shape.as_list(), out.shape.as_list())])
        return out

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype)

    def __repr__(self) -> str:
        return f"SparseTensorSpec({self._shape!r}, {self._dtype!r})"


class SparseTensorValue(collections.namedtuple("SparseTensorValue",
                                               ["indices", "values", "dense_shape"])):
    """A SparseTensor's value as NumPy arrays: what Session.run returns for a SparseTensor
    fetch (tf.compat.v1.SparseTensorValue)."""

    __slots__ = ()


def is_sparse(value: Any) -> bool:
    return isinstance(value, SparseTensor)


def sparse_or_none(value: Optional[Any]) -> Optional[SparseTensor]:
    return value if isinstance(value, SparseTensor) else None
