"""TensorShape (dims may be None, rank may be unknown), TensorSpec, and broadcast helpers.

Shape rules in core/rules.py build on these. Imports only dtypes.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes


class TensorShape:
    """The static shape of a tensor: a list of dims, each an int or None (unknown).

    >>> TensorShape([None, 400]).is_compatible_with([64, 400])
    True
    """

    __slots__ = ("_dims",)

    def __init__(self, dims: Any):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, int):
            self._dims = (dims,)
        else:
            self._dims = tuple(_dim(d) for d in dims)

    @property
    def rank(self) -> Optional[int]:
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list:
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self) -> bool:
        return self._dims is not None and None not in self._dims

    def num_elements(self) -> Optional[int]:
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d
        return n

    def is_compatible_with(self, other: Any) -> bool:
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a is None or b is None or a == b for a, b in zip(self._dims, other._dims))

    def merge_with(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a if a is not None else b for a, b in zip(self._dims, other._dims)])

    def most_specific_common_supertype(self, other: "TensorShape") -> "TensorShape":
        """The shape that keeps the dims both agree on (used by reduce_retracing)."""
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return TensorShape(None)
        return TensorShape([a if a == b else None for a, b in zip(self._dims, other._dims)])

    def concatenate(self, other: Any) -> "TensorShape":
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __add__(self, other: Any) -> "TensorShape":
        """`shape + [3]` concatenates, as TF's TensorShape does."""
        return self.concatenate(other)

    def __radd__(self, other: Any) -> "TensorShape":
        return as_shape(other).concatenate(self)

    def with_rank(self, rank: int) -> "TensorShape":
        if self._dims is None:
            return TensorShape([None] * rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def __len__(self) -> int:
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    def __getitem__(self, key):
        if self._dims is None:
            if isinstance(key, slice):
                return TensorShape(None)
            return None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other: Any) -> bool:
        try:
            other = as_shape(other)
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other._dims

    def __hash__(self) -> int:
        return hash(self._dims)

    def __bool__(self) -> bool:
        return self._dims is not None

    def __repr__(self) -> str:
        return f"TensorShape({self.dims})"

    def __str__(self) -> str:
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]},)"
        return "(" + ", ".join(str(d) for d in self._dims) + ")"


def _dim(d: Any) -> Optional[int]:
    if d is None:
        return None
    if hasattr(d, "value") and not isinstance(d, int):  # Dimension-like objects
        d = d.value
        if d is None:
            return None
    try:
        i = int(d)
    except (TypeError, ValueError):
        raise TypeError(f"Dimension value must be an integer or None, got {d!r}") from None
    if i != d or i < -1:
        raise ValueError(f"Dimension {d!r} must be a non-negative integer or None")
    return None if i == -1 else i


def as_shape(shape: Any) -> TensorShape:
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def broadcast_shapes(a: TensorShape, b: TensorShape) -> TensorShape:
    """NumPy broadcasting on static shapes; raises ValueError on a definite mismatch."""
    if a._dims is None or b._dims is None:
        return TensorShape(None)
    x, y = a._dims, b._dims
    n = max(len(x), len(y))
    x = (1,) * (n - len(x)) + x
    y = (1,) * (n - len(y)) + y
    out = []
    for p, q in zip(x, y):
        if p == 1:
            out.append(q)
        elif q == 1:
            out.append(p)
        elif p is None:
            out.append(q)
        elif q is None or p == q:
            out.append(p)
        else:
            raise ValueError(f"Incompatible shapes: {list(a._dims)} vs. {list(b._dims)}")
    return TensorShape(out)


class TensorSpec:
    """Describes a tensor: shape (dims may be None), dtype and an optional name.

    >>> TensorSpec([None, 400], "uint8")
    TensorSpec(shape=(None, 400), dtype=tf.uint8, name=None)
    """

    __slots__ = ("shape", "dtype", "name")

    def __init__(self, shape: Any, dtype: Any = _dtypes.float32, name: Optional[str] = None):
        self.shape = as_shape(shape)
        self.dtype = _dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor: Any, name: Optional[str] = None) -> "TensorSpec":
        return cls(tensor.shape, tensor.dtype, name)

    def is_compatible_with(self, other: Any) -> bool:
        return self.dtype is _dtypes.as_dtype(other.dtype) and self.shape.is_compatible_with(
            other.shape)

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, TensorSpec) and self.shape == other.shape
                and self.dtype is other.dtype and self.name == other.name)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self) -> str:
        name = repr(self.name) if self.name is not None else "None"
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={name})"
