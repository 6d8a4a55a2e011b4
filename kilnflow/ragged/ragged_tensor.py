"""RaggedTensor and RaggedTensorSpec (tf.RaggedTensor): rows of different lengths, stored
as `values` (a tensor, or a RaggedTensor for more ragged dims) cut into rows by `row_splits`.

A composite tensor (kilnflow/type_spec.py) whose components are its flat values and its
row splits, outermost first; kf.function keys it by its spec (nrows, dtype, ragged rank),
so a new total number of values reuses the trace. Everything is built from public kf ops,
so rows, conversions and elementwise math run eagerly, in graphs and under GradientTape.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops.array import fill, range as _range, shape as _shape
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat as _concat, stack
from kilnflow.ops import math as _math
from kilnflow.ops.math import cast, less, logical_and
from kilnflow.ops.reduction import cumsum, reduce_max
from kilnflow.ops.scatter import scatter_nd, tensor_scatter_nd_update
from kilnflow.ops.slicing import boolean_mask, gather
from kilnflow.shapes import TensorShape, TensorSpec, as_shape
from kilnflow.tensor import EagerTensor, Tensor
from kilnflow.type_spec import CompositeTensor, TypeSpec

_SPLIT_DTYPES = (_dtypes.int32, _dtypes.int64)


def _splits_tensor(splits: Any, dtype: Any = None) -> Tensor:
    t = convert_to_tensor(splits, dtype or _dtypes.int64) if not isinstance(splits, Tensor) \
        else splits
    if t.dtype not in _SPLIT_DTYPES:
        raise TypeError(f"row partition tensors must be int32 or int64, got {t.dtype.name}")
    return t


def _check_splits(splits: Tensor, values: Any) -> None:
    """Validation of known splits, as TF's validate=True assertions: starts at 0, never
    decreases, ends at the number of values (when that is known statically)."""
    if not isinstance(splits, EagerTensor):
        return
    s = splits.numpy()
    nvals = values.shape.as_list()[0] if values.shape.rank else None
    if s.ndim != 1 or s.size == 0 or s[0] != 0 or np.any(np.diff(s) < 0) or \
            nvals is not None and s[-1] != nvals:
        raise errors.InvalidArgumentError(
            f"Arguments to from_row_splits do not form a valid RaggedTensor: row_splits "
            f"{s.tolist()} must start at 0, be sorted and end at nvals={nvals}")


def _nvals(values: Any) -> Tensor:
    if isinstance(values, RaggedTensor):
        return values.nrows()
    return _shape(values, out_type=_dtypes.int64)[0]


class RaggedTensor(CompositeTensor):
    """A tensor whose rows may have different lengths.

    >>> import kilnflow as kf
    >>> rt = kf.RaggedTensor.from_row_splits([1, 2, 3, 4], row_splits=[0, 3, 3, 4])
    >>> rt
    <tf.RaggedTensor [[1, 2, 3], [], [4]]>
    >>> rt.shape
    TensorShape([3, None])
    """

    def __init__(self, values: Any, row_splits: Tensor, internal: bool = False):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the "
                             "factory methods instead (e.g., RaggedTensor.from_row_lengths())")
        self._values = values
        self._row_splits = row_splits
        self._uniform: Optional[int] = None  # a static uniform row length (TF's uniform dim)

    # ---------------------------------------------------------------- factories

    @classmethod
    def _make(cls, values: Any, row_splits: Any, validate: bool = True) -> "RaggedTensor":
        if not isinstance(values, RaggedTensor):
            values = convert_to_tensor(values)
            if values.shape.rank == 0:
                raise ValueError("values must have rank >= 1 (a scalar cannot be split into "
                                 "rows)")
        splits = _splits_tensor(row_splits, values.row_splits.dtype
                                if isinstance(values, RaggedTensor) else None)
        if splits.shape.rank not in (None, 1):
            raise ValueError(f"row_splits must be a vector, got shape {splits.shape}")
        if validate:
            _check_splits(splits, values)
        return cls(values, splits, internal=True)

    @classmethod
    def from_row_splits(cls, values: Any, row_splits: Any, name: Optional[str] = None,
                        validate: bool = True) -> "RaggedTensor":
        """Row i is values[row_splits[i]:row_splits[i + 1]]."""
        return cls._make(values, row_splits, validate)

    @classmethod
    def from_row_lengths(cls, values: Any, row_lengths: Any, name: Optional[str] = None,
                         validate: bool = True) -> "RaggedTensor":
        """Row i holds the next row_lengths[i] values."""
        lengths = _splits_tensor(row_lengths)
        splits = _concat([convert_to_tensor([0], lengths.dtype), cumsum(lengths)], 0)
        return cls._make(values, splits, validate)

    @classmethod
    def from_row_starts(cls, values: Any, row_starts: Any, name: Optional[str] = None,
                        validate: bool = True) -> "RaggedTensor":
        """Row i starts at row_starts[i] and ends where the next row starts."""
        values = values if isinstance(values, RaggedTensor) else convert_to_tensor(values)
        starts = _splits_tensor(row_starts)
        end = cast(_nvals(values), starts.dtype)
        return cls._make(values, _concat([starts, end[None]], 0), validate)

    @classmethod
    def from_row_limits(cls, values: Any, row_limits: Any, name: Optional[str] = None,
                        validate: bool = True) -> "RaggedTensor":
        """Row i ends at row_limits[i] and starts where the previous row ends."""
        limits = _splits_tensor(row_limits)
        return cls._make(values, _concat([convert_to_tensor([0], limits.dtype), limits], 0),
                         validate)

    @classmethod
    def from_value_rowids(cls, values: Any, value_rowids: Any, nrows: Any = None,
                          name: Optional[str] = None, validate: bool = True) -> "RaggedTensor":
        """values[j] belongs to row value_rowids[j] (sorted); `nrows` rows (default: the
        last row id + 1)."""
        ids = _splits_tensor(value_rowids)
        if nrows is None:
            nrows = reduce_max(_concat([ids, convert_to_tensor([-1], ids.dtype)], 0)) + 1
        nrows = cast(convert_to_tensor(nrows), ids.dtype)
        ones = fill(_shape(ids)[:1], convert_to_tensor(1, ids.dtype))
        lengths = scatter_nd(cast(ids, _dtypes.int64)[:, None], ones,
                             cast(nrows, _dtypes.int64)[None])
        return cls.from_row_lengths(values, lengths, validate=validate)

    @classmethod
    def from_uniform_row_length(cls, values: Any, uniform_row_length: Any, nrows: Any = None,
                                validate: bool = True,
                                name: Optional[str] = None) -> "RaggedTensor":
        """Rows of `uniform_row_length` values each (a uniform, statically known dim when
        the length is a Python int or an eager tensor)."""
        values = values if isinstance(values, RaggedTensor) else convert_to_tensor(values)
        length = convert_to_tensor(uniform_row_length, _dtypes.int64)
        if nrows is None:
            nrows = _nvals(values) // length if length.shape.rank == 0 else None
        count = cast(convert_to_tensor(nrows), _dtypes.int64)
        out = cls._make(values, _range(count + 1) * length, validate)
        if isinstance(length, EagerTensor):
            out._uniform = int(length.numpy())
        return out

    @property
    def uniform_row_length(self) -> Optional[Tensor]:
        """The row length when every row has the same static length, else None."""
        if self._uniform is None:
            return None
        return convert_to_tensor(self._uniform, self._row_splits.dtype)

    @classmethod
    def from_nested_row_splits(cls, flat_values: Any, nested_row_splits: Any,
                               name: Optional[str] = None,
                               validate: bool = True) -> "RaggedTensor":
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits, validate=validate)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values: Any, nested_row_lengths: Any,
                                name: Optional[str] = None,
                                validate: bool = True) -> "RaggedTensor":
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths, validate=validate)
        return result

    @classmethod
    def from_nested_value_rowids(cls, flat_values: Any, nested_value_rowids: Any,
                                 nested_nrows: Any = None, name: Optional[str] = None,
                                 validate: bool = True) -> "RaggedTensor":
        ids = list(nested_value_rowids)
        nrows = [None] * len(ids) if nested_nrows is None else list(nested_nrows)
        result = flat_values
        for rowids, n in reversed(list(zip(ids, nrows))):
            result = cls.from_value_rowids(result, rowids, n, validate=validate)
        return result

    @classmethod
    def from_tensor(cls, tensor: Any, lengths: Any = None, padding: Any = None,
                    ragged_rank: int = 1, name: Optional[str] = None,
                    row_splits_dtype: Any = _dtypes.int64) -> "RaggedTensor":
        """Rows of a dense tensor, cut at `lengths` or before trailing `padding`."""
        from kilnflow.ragged.conversion import from_tensor
        return from_tensor(tensor, lengths, padding, ragged_rank, row_splits_dtype)

    # ---------------------------------------------------------------- properties

    values = property(lambda self: self._values, doc="The values, concatenated row by row.")
    row_splits = property(lambda self: self._row_splits, doc="Where each row starts and ends.")

    @property
    def flat_values(self) -> Tensor:
        """The innermost values tensor (all ragged dims removed)."""
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values._values
        return values

    @property
    def nested_row_splits(self) -> tuple:
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt._row_splits)
            rt = rt._values
        return tuple(out)

    @property
    def ragged_rank(self) -> int:
        return len(self.nested_row_splits)

    dtype = property(lambda self: self.flat_values.dtype)

    @property
    def shape(self) -> TensorShape:
        """Static shape: [nrows, None, ...uniform inner dims]."""
        n = self._row_splits.shape.as_list()[0] if self._row_splits.shape.rank == 1 else None
        inner = self._values.shape
        rest = inner.as_list()[1:] if inner.rank is not None else None
        return TensorShape(None if rest is None else
                           [None if n is None else n - 1, self._uniform] + rest)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def _type_spec(self) -> "RaggedTensorSpec":
        return RaggedTensorSpec(self.shape, self.dtype, self.ragged_rank,
                                self._row_splits.dtype)

    # ---------------------------------------------------------------- row partition

    def nrows(self, out_type: Any = None, name: Optional[str] = None) -> Tensor:
        n = _shape(self._row_splits, out_type=out_type or self._row_splits.dtype)[0] - 1
        return n

    def row_starts(self, name: Optional[str] = None) -> Tensor:
        return self._row_splits[:-1]

    def row_limits(self, name: Optional[str] = None) -> Tensor:
        return self._row_splits[1:]

    def row_lengths(self, axis: int = 1, name: Optional[str] = None) -> Tensor:
        if axis != 1:
            if isinstance(self._values, RaggedTensor) and axis > 1:
                return self.with_values(self._values.row_lengths(axis - 1))
            raise ValueError(f"row_lengths: axis {axis} is not a ragged dimension")
        return self._row_splits[1:] - self._row_splits[:-1]

    def nested_row_lengths(self, name: Optional[str] = None) -> tuple:
        return tuple(s[1:] - s[:-1] for s in self.nested_row_splits)

    def value_rowids(self, name: Optional[str] = None) -> Tensor:
        """The row index of each value."""
        from kilnflow.ragged.ops import row_splits_to_segment_ids
        return row_splits_to_segment_ids(self._row_splits)

    def bounding_shape(self, axis: Any = None, name: Optional[str] = None,
                       out_type: Any = None) -> Tensor:
        """The shape of the smallest dense tensor holding every row."""
        dtype = out_type or self._row_splits.dtype
        lengths = self.row_lengths()
        widest = reduce_max(_concat([lengths, convert_to_tensor([0], lengths.dtype)], 0))
        if isinstance(self._values, RaggedTensor):
            inner = self._values.bounding_shape(out_type=dtype)[1:]
        else:
            inner = _shape(self._values, out_type=dtype)[1:]
        dims = _concat([cast(stack([self.nrows(), widest]), dtype), inner], 0)
        return dims if axis is None else gather(dims, axis)

    # ---------------------------------------------------------------- rebuilding

    def with_values(self, new_values: Any) -> "RaggedTensor":
        out = RaggedTensor._make(new_values, self._row_splits, validate=False)
        out._uniform = self._uniform
        return out

    def with_flat_values(self, new_values: Any) -> "RaggedTensor":
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype: Any) -> "RaggedTensor":
        dtype = _dtypes.as_dtype(dtype)
        values = self._values.with_row_splits_dtype(dtype) if \
            isinstance(self._values, RaggedTensor) else self._values
        out = RaggedTensor(values, cast(self._row_splits, dtype), internal=True)
        out._uniform = self._uniform
        return out

    # ---------------------------------------------------------------- conversion

    def to_tensor(self, default_value: Any = None, name: Optional[str] = None,
                  shape: Any = None) -> Tensor:
        """The dense tensor, rows padded with `default_value` (zero) to the longest."""
        inner = self._values.to_tensor(default_value) if \
            isinstance(self._values, RaggedTensor) else self._values
        splits = cast(self._row_splits, _dtypes.int64)
        rowids = cast(self.value_rowids(), _dtypes.int64)
        position = _range(_nvals(inner)) - gather(splits, rowids)
        wanted = [None, None] if shape is None else as_shape(shape).as_list() + [None]
        if wanted[0] is not None:
            nrows = convert_to_tensor(wanted[0], _dtypes.int64)
        else:
            nrows = cast(self.nrows(), _dtypes.int64)
        if wanted[1] is not None:
            width = convert_to_tensor(wanted[1], _dtypes.int64)
        else:
            lengths = splits[1:] - splits[:-1]
            width = reduce_max(_concat([lengths, convert_to_tensor([0], _dtypes.int64)], 0))
        values = inner
        if shape is not None:
            keep = logical_and(less(position, width), less(rowids, nrows))
            values, rowids = boolean_mask(values, keep), boolean_mask(rowids, keep)
            position = boolean_mask(position, keep)
        indices = stack([rowids, position], 1)
        out_shape = _concat([stack([nrows, width]),
                             _shape(inner, out_type=_dtypes.int64)[1:]], 0)
        if default_value is None and self.dtype is _dtypes.string:
            default_value = b""  # scatter_nd cannot sum strings: pad with the empty string
        if default_value is None:
            return scatter_nd(indices, values, out_shape)
        base = fill(out_shape, convert_to_tensor(default_value, self.dtype))
        return tensor_scatter_nd_update(base, indices, values)

    def to_list(self) -> list:
        """The rows as nested Python lists (eager only)."""
        flat = self.flat_values
        if not isinstance(flat, EagerTensor):
            raise ValueError("RaggedTensor.to_list() is only available in eager mode")
        rows = flat.numpy().tolist()
        for splits in reversed(self.nested_row_splits):
            s = splits.numpy().tolist()
            rows = [rows[s[i]:s[i + 1]] for i in range(len(s) - 1)]
        return rows

    def numpy(self) -> np.ndarray:
        """As TF: uniform rows stack into an array; ragged rows give an object array of
        row arrays."""
        values = self._values.numpy() if isinstance(self._values, RaggedTensor) else \
            self._values.numpy()
        s = self._row_splits.numpy()
        rows = [values[s[i]:s[i + 1]] for i in range(len(s) - 1)]
        if not rows:
            return np.zeros((0, 0) + values.shape[1:], values.dtype)
        if any(len(r) != len(rows[0]) for r in rows):
            out = np.empty(len(rows), object)
            out[:] = rows
            return out
        return np.array(rows)

    def __repr__(self) -> str:
        if isinstance(self.flat_values, EagerTensor) and \
                all(isinstance(s, EagerTensor) for s in self.nested_row_splits):
            with np.printoptions(formatter={"all": _format_item}):
                text = _format_item(self.numpy())
            return f"<tf.RaggedTensor {text}>"
        return f"tf.RaggedTensor(values={self._values}, row_splits={self._row_splits})"

    __str__ = __repr__

    def __bool__(self) -> bool:
        raise TypeError("Using a RaggedTensor as a Python bool is not allowed")

    def __getitem__(self, key: Any) -> Any:
        from kilnflow.ragged.indexing import getitem
        return getitem(self, key)

    # ---------------------------------------------------------------- elementwise math

    def _binary(self, other: Any, fn: Any, reverse: bool = False) -> "RaggedTensor":
        """`fn` (a public kf op, which dispatches on RaggedTensors: see
        kilnflow/ragged/dispatch.py) with `other` on either side."""
        return fn(other, self) if reverse else fn(self, other)

    __add__ = lambda self, o: self._binary(o, _math.add)  # noqa: E731
    __radd__ = lambda self, o: self._binary(o, _math.add, True)  # noqa: E731
    __sub__ = lambda self, o: self._binary(o, _math.subtract)  # noqa: E731
    __rsub__ = lambda self, o: self._binary(o, _math.subtract, True)  # noqa: E731
    __mul__ = lambda self, o: self._binary(o, _math.multiply)  # noqa: E731
    __rmul__ = lambda self, o: self._binary(o, _math.multiply, True)  # noqa: E731
    __truediv__ = lambda self, o: self._binary(o, _math.truediv)  # noqa: E731
    __rtruediv__ = lambda self, o: self._binary(o, _math.truediv, True)  # noqa: E731
    __floordiv__ = lambda self, o: self._binary(o, _math.floordiv)  # noqa: E731
    __rfloordiv__ = lambda self, o: self._binary(o, _math.floordiv, True)  # noqa: E731
    __mod__ = lambda self, o: self._binary(o, _math.floormod)  # noqa: E731
    __rmod__ = lambda self, o: self._binary(o, _math.floormod, True)  # noqa: E731
    __pow__ = lambda self, o: self._binary(o, _math.pow)  # noqa: E731
    __rpow__ = lambda self, o: self._binary(o, _math.pow, True)  # noqa: E731
    __lt__ = lambda self, o: self._binary(o, _math.less)  # noqa: E731
    __le__ = lambda self, o: self._binary(o, _math.less_equal)  # noqa: E731
    __gt__ = lambda self, o: self._binary(o, _math.greater)  # noqa: E731
    __ge__ = lambda self, o: self._binary(o, _math.greater_equal)  # noqa: E731
    __and__ = lambda self, o: self._binary(o, _math.logical_and)  # noqa: E731
    __rand__ = lambda self, o: self._binary(o, _math.logical_and, True)  # noqa: E731
    __or__ = lambda self, o: self._binary(o, _math.logical_or)  # noqa: E731
    __ror__ = lambda self, o: self._binary(o, _math.logical_or, True)  # noqa: E731
    __xor__ = lambda self, o: self._binary(o, _math.logical_xor)  # noqa: E731

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        """Elementwise, as TF's tensor equality; False for None or what cannot compare."""
        return self._compare(other, _math.equal, False)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return self._compare(other, _math.not_equal, True)

    def _compare(self, other: Any, fn: Any, incomparable: bool) -> Any:
        if other is None:
            return incomparable
        try:
            return fn(self, other)
        except (TypeError, ValueError, errors.InvalidArgumentError):
            return incomparable

    def __neg__(self) -> "RaggedTensor":
        return self.with_flat_values(_math.negative(self.flat_values))

    def __abs__(self) -> "RaggedTensor":
        return self.with_flat_values(_math.abs(self.flat_values))

    def __invert__(self) -> "RaggedTensor":
        return self.with_flat_values(_math.logical_not(self.flat_values))

    __hash__ = object.__hash__


def _check_same_rows(a: "RaggedTensor", b: "RaggedTensor") -> None:
    """Elementwise math needs equal row partitions (checked when the splits are known)."""
    sa, sb = a.nested_row_splits, b.nested_row_splits
    same = len(sa) == len(sb)
    if same and all(isinstance(x, EagerTensor) and isinstance(y, EagerTensor)
                    for x, y in zip(sa, sb)):
        same = all(x.shape == y.shape and np.array_equal(x.numpy(), y.numpy())
                   for x, y in zip(sa, sb))
    if not same:
        raise errors.InvalidArgumentError(
            "Inputs must have identical ragged splits (elementwise math on RaggedTensors "
            "with different row partitions)")


def _format_item(x: Any) -> str:
    """One value of TF's RaggedTensor repr: arrays joined with ', ' (an empty array prints
    its nested list, so an empty row is `[]`)."""
    if isinstance(x, np.ndarray):
        if x.size == 0:
            return repr(x.tolist())
        return np.array2string(x, separator=", ")
    return str(x)


class RaggedTensorSpec(TypeSpec):
    """The TypeSpec of a RaggedTensor: shape, dtype, ragged rank, row splits dtype.

    >>> import kilnflow as kf
    >>> kf.RaggedTensorSpec([2, None], kf.int32, 1)
    RaggedTensorSpec(TensorShape([2, None]), tf.int32, 1, tf.int64)
    """

    __slots__ = ("_shape", "_dtype", "_ragged_rank", "_row_splits_dtype")

    def __init__(self, shape: Any = None, dtype: Any = _dtypes.float32,
                 ragged_rank: Optional[int] = None, row_splits_dtype: Any = _dtypes.int64,
                 flat_values_spec: Any = None):
        self._shape = as_shape(shape)
        self._dtype = _dtypes.as_dtype(dtype if flat_values_spec is None
                                       else flat_values_spec.dtype)
        rank = self._shape.rank
        if ragged_rank is None:
            if rank is None:
                raise ValueError("Must specify ragged_rank or a shape with a known rank")
            ragged_rank = rank - 1
        if rank is not None and not 0 < ragged_rank < rank:
            raise ValueError(f"ragged_rank must be at least 1 and less than the rank "
                             f"({rank}), got {ragged_rank}")
        self._ragged_rank = int(ragged_rank)
        self._row_splits_dtype = _dtypes.as_dtype(row_splits_dtype)

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    ragged_rank = property(lambda self: self._ragged_rank)
    row_splits_dtype = property(lambda self: self._row_splits_dtype)
    value_type = property(lambda self: RaggedTensor)

    @classmethod
    def from_value(cls, value: RaggedTensor) -> "RaggedTensorSpec":
        return value._type_spec

    @property
    def _component_specs(self) -> List[TensorSpec]:
        dims = self._shape.as_list() if self._shape.rank is not None else None
        inner = None if dims is None else [None] + dims[self._ragged_rank + 1:]
        nrows = None if dims is None or dims[0] is None else dims[0] + 1
        splits = [TensorSpec([nrows], self._row_splits_dtype)] + \
            [TensorSpec([None], self._row_splits_dtype)] * (self._ragged_rank - 1)
        return [TensorSpec(inner, self._dtype)] + splits

    def _to_components(self, value: RaggedTensor) -> List[Tensor]:
        return [value.flat_values] + list(value.nested_row_splits)

    def _from_components(self, components: List[Any]) -> RaggedTensor:
        result = components[0]
        dims = self._shape.as_list() if self._shape.rank is not None else None
        for level, splits in reversed(list(enumerate(components[1:]))):
            result = RaggedTensor(result, splits, internal=True)
            result._uniform = None if dims is None else dims[level + 1]
        return result

    def _serialize(self) -> tuple:
        return (self._shape, self._dtype, self._ragged_rank, self._row_splits_dtype)

    def __repr__(self) -> str:
        return (f"RaggedTensorSpec({self._shape!r}, {self._dtype!r}, {self._ragged_rank}, "
                f"{self._row_splits_dtype!r})")

