"""IndexedSlices and IndexedSlicesSpec (tf.IndexedSlices): some rows (`indices`) of a
tensor of shape `dense_shape`, as TF's gather gradient returns them. kilnflow's gradients
stay dense, but user code and optimizers may build these: they convert to the dense tensor
(rows at repeated indices are summed), so every op and apply_gradients accepts them.
"""
from __future__ import annotations

from typing import Any, List

from kilnflow import dtypes as _dtypes
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.segment import unsorted_segment_sum
from kilnflow.shapes import TensorShape, TensorSpec, as_shape
from kilnflow.tensor import EagerTensor, Tensor
from kilnflow.type_spec import CompositeTensor, TypeSpec


class IndexedSlices(CompositeTensor):
    """Rows `indices` of a tensor of shape `dense_shape`, holding `values`.

    >>> import kilnflow as kf
    >>> s = kf.IndexedSlices(kf.constant([[1.0, 2.0]]), kf.constant([1]), kf.constant([3, 2]))
    >>> kf.convert_to_tensor(s).numpy().tolist()
    [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]
    """

    def __init__(self, values: Any, indices: Any, dense_shape: Any = None):
        self._values = convert_to_tensor(values)
        self._indices = convert_to_tensor(indices)
        self._dense_shape = None if dense_shape is None else convert_to_tensor(dense_shape)

    values = property(lambda self: self._values)
    indices = property(lambda self: self._indices)
    dense_shape = property(lambda self: self._dense_shape)
    dtype = property(lambda self: self._values.dtype)
    name = property(lambda self: getattr(self._values, "name", None))

    @property
    def shape(self) -> TensorShape:
        if isinstance(self._dense_shape, EagerTensor):
            return TensorShape([int(d) for d in self._dense_shape.numpy()])
        dims = self._values.shape.as_list() if self._values.shape.rank else None
        return TensorShape(None if dims is None else [None] + dims[1:])

    def _as_tensor(self) -> Tensor:
        """The dense tensor (rows at repeated indices summed), as convert_to_tensor gives."""
        if self._dense_shape is None:
            raise ValueError("Cannot convert an IndexedSlices without dense_shape to a Tensor")
        rows = self._dense_shape[0]
        return unsorted_segment_sum(self._values, self._indices, rows)

    @property
    def _type_spec(self) -> "IndexedSlicesSpec":
        return IndexedSlicesSpec(self.shape, self.dtype, self._indices.dtype,
                                 None if self._dense_shape is None else self._dense_shape.dtype,
                                 self._indices.shape)

    def __neg__(self) -> "IndexedSlices":
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __str__(self) -> str:
        shape = "" if self._dense_shape is None else f", dense_shape={self._dense_shape}"
        return f"IndexedSlices(indices={self._indices}, values={self._values}{shape})"


class IndexedSlicesSpec(TypeSpec):
    """The TypeSpec of an IndexedSlices.

    >>> import kilnflow as kf
    >>> kf.IndexedSlicesSpec([3, 2], kf.float32)
    IndexedSlicesSpec(TensorShape([3, 2]), tf.float32, tf.int64, None, TensorShape([None]))
    """

    __slots__ = ("_shape", "_dtype", "_indices_dtype", "_dense_shape_dtype", "_indices_shape")

    def __init__(self, shape: Any = None, dtype: Any = _dtypes.float32,
                 indices_dtype: Any = _dtypes.int64, dense_shape_dtype: Any = None,
                 indices_shape: Any = None):
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._indices_dtype = _dtypes.as_dtype(indices_dtype)
        self._dense_shape_dtype = None if dense_shape_dtype is None else \
            _dtypes.as_dtype(dense_shape_dtype)
        self._indices_shape = as_shape([None] if indices_shape is None else indices_shape)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    value_type = property(lambda self: IndexedSlices)

    @property
    def _component_specs(self) -> List[TensorSpec]:
        dims = self._shape.as_list() if self._shape.rank else None
        values = TensorSpec(None if dims is None else [None] + dims[1:], self._dtype)
        specs = [values, TensorSpec([None], self._indices_dtype)]
        if self._dense_shape_dtype is not None:
            specs.append(TensorSpec([self._shape.rank], self._dense_shape_dtype))
        return specs

    def _to_components(self, value: IndexedSlices) -> List[Any]:
        parts = [value.values, value.indices]
        return parts + ([] if value.dense_shape is None else [value.dense_shape])

    def _from_components(self, components: List[Any]) -> IndexedSlices:
        return IndexedSlices(*components)

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype, self._indices_dtype, self._dense_shape_dtype,
                self._indices_shape)

    def __repr__(self) -> str:
        dense = "None" if self._dense_shape_dtype is None else repr(self._dense_shape_dtype)
        return (f"IndexedSlicesSpec({self._shape!r}, {self._dtype!r}, "
                f"{self._indices_dtype!r}, {dense}, {self._indices_shape!r})")
