"""Tensors: the operator mixin, EagerTensor (wraps an ndarray) and SymbolicTensor (an op output).

Operators dispatch to the public op functions through `ops`, a namespace the ops
package installs at import time (tensor.py sits below ops/ and must not import it).
"""
from __future__ import annotations

import operator
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.shapes import TensorShape

# Set by kilnflow/ops/__init__.py: the module namespace holding add, multiply, ...
ops: Any = None


class Reference:
    """A hashable wrapper returned by `tensor.ref()`, for using tensors as dict keys."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Any):
        self._obj = obj

    def deref(self) -> Any:
        return self._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Reference) and other._obj is self._obj

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._obj!r}>"


class TensorOps:
    """Python operators shared by tensors and variables; each calls one public op."""

    __slots__ = ()
    __array_priority__ = 100  # so `ndarray + tensor` defers to the tensor

    def __add__(self, y): return ops.add(self, y, "add")
    def __radd__(self, x): return ops.add(x, self, "add")
    def __sub__(self, y): return ops.subtract(self, y, "sub")
    def __rsub__(self, x): return ops.subtract(x, self, "sub")
    def __mul__(self, y): return ops.multiply(self, y, "mul")
    def __rmul__(self, x): return ops.multiply(x, self, "mul")
    def __truediv__(self, y): return ops.truediv(self, y, "truediv")
    def __rtruediv__(self, x): return ops.truediv(x, self, "truediv")
    def __floordiv__(self, y): return ops.floordiv(self, y, "floordiv")
    def __rfloordiv__(self, x): return ops.floordiv(x, self, "floordiv")
    def __mod__(self, y): return ops.floormod(self, y, "mod")
    def __rmod__(self, x): return ops.floormod(x, self, "mod")
    def __pow__(self, y): return ops.pow(self, y, "pow")
    def __rpow__(self, x): return ops.pow(x, self, "pow")
    def __matmul__(self, y): return ops.matmul(self, y, name="matmul")
    def __rmatmul__(self, x): return ops.matmul(x, self, name="matmul")
    def __neg__(self): return ops.negative(self, "Neg")
    def __pos__(self): return self
    def __abs__(self): return ops.abs(self, "Abs")
    def __invert__(self): return ops.invert_(self)
    def __and__(self, y): return ops.and_(self, y)
    def __rand__(self, x): return ops.and_(x, self)
    def __or__(self, y): return ops.or_(self, y)
    def __ror__(self, x): return ops.or_(x, self)
    def __xor__(self, y): return ops.xor_(self, y)
    def __rxor__(self, x): return ops.xor_(x, self)
    def __lt__(self, y): return ops.less(self, y, "Less")
    def __le__(self, y): return ops.less_equal(self, y, "LessEqual")
    def __gt__(self, y): return ops.greater(self, y, "Greater")
    def __ge__(self, y): return ops.greater_equal(self, y, "GreaterEqual")
    def __eq__(self, y): return ops.tensor_equals(self, y)
    def __ne__(self, y): return ops.tensor_not_equals(self, y)
    def __getitem__(self, key): return ops.getitem(self, key)

    def __hash__(self):
        raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")

    def ref(self) -> Reference:
        return Reference(self)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def ndim(self) -> Optional[int]:
        return self.shape.rank


class Tensor(TensorOps):
    """Base of EagerTensor and SymbolicTensor: `isinstance(x, kf.Tensor)`."""

    __slots__ = ()


class EagerTensor(Tensor):
    """An immutable tensor holding a NumPy value; what eager ops return."""

    # `_slice_assign` is set only on a slice read from a variable (`v[0, 1]`): TF lets such a
    # slice be assigned to (`v[0, 1].assign(7.0)` writes into the variable).
    __slots__ = ("_value", "_slice_assign", "__weakref__")

    def __init__(self, value: Any):
        self._value = np.asarray(value)

    @property
    def assign(self) -> Any:
        """Only on a slice of a variable: `v[key].assign(value)` writes into `v`."""
        setter = getattr(self, "_slice_assign", None)
        if setter is None:
            raise AttributeError("'EagerTensor' object has no attribute 'assign'")
        return setter

    @property
    def shape(self) -> TensorShape:
        return TensorShape(self._value.shape)

    @property
    def dtype(self) -> _dtypes.DType:
        return _dtypes._by_numpy[self._value.dtype]

    @property
    def device(self) -> str:
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def graph(self):
        raise AttributeError("Tensor.graph is undefined when eager execution is enabled.")

    @property
    def name(self):
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")

    @property
    def op(self):
        raise AttributeError("Tensor.op is undefined when eager execution is enabled.")

    def numpy(self) -> Any:
        """The value as a NumPy array (a NumPy scalar for rank 0), like TF.

        A copy: writing to it never changes the (immutable) tensor."""
        value = self._value
        return value[()] if value.ndim == 0 else value.copy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = np.asarray(self._value)
        if dtype is not None and value.dtype != dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        view = value.view()  # zero-copy, but a tensor is immutable: writing must fail
        view.flags.writeable = False
        return view

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None,
                   dl_device: Any = None, copy: Any = None) -> Any:
        """DLPack export (np.from_dlpack(t), torch.from_dlpack(t)): zero-copy and read-only
        for DLPack >= 1.0 consumers; a consumer too old to honour "read-only" gets a copy."""
        if self._value.dtype.kind == "O":
            raise BufferError("tf.string tensors cannot be exported through DLPack")
        legacy = max_version is None or tuple(max_version) < (1, 0)
        if legacy and copy is False:
            raise BufferError("a tensor is read-only; this DLPack consumer needs a copy")
        if legacy:
            return self._value.copy().__dlpack__(stream=stream)
        return self.__array__().__dlpack__(stream=stream, max_version=max_version,
                                           dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple:
        return (1, 0)  # (kDLCPU, device 0)

    def set_shape(self, shape: Any) -> None:
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied "
                             f"shape {TensorShape(shape)}.")

    # Python conversions go through NumPy as TF's do, so they accept and refuse the same
    # values with the same errors (bool of a size-1 tensor works, float of shape (1,) does not).

    def __bool__(self) -> bool:
        return bool(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __index__(self) -> int:
        if not self.dtype.is_integer:
            raise TypeError(f"Only integer tensors can be used as an index, got {self.dtype.name}")
        return operator.index(self._value)

    def __len__(self) -> int:
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._value.shape[0]))

    def __format__(self, spec: str) -> str:
        if self._value.ndim == 0:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    def __repr__(self) -> str:
        return (f"<tf.Tensor: shape={shape_text(self._value.shape)}, dtype={self.dtype.name}, "
                f"numpy={numpy_text(self._value, True)}>")

    def __str__(self) -> str:
        return (f"tf.Tensor({numpy_text(self._value, False)}, "
                f"shape={shape_text(self._value.shape)}, dtype={self.dtype.name})")

    def __reduce__(self):
        return (EagerTensor, (np.asarray(self._value),))

    def __copy__(self) -> "EagerTensor":
        return self

    def __deepcopy__(self, memo: Any) -> "EagerTensor":
        return self


def shape_text(shape: tuple) -> str:
    return str(TensorShape(shape))


def numpy_text(value: Any, as_repr: bool) -> str:
    # As TF: NumPy's str (repr; a Python scalar's repr for 0-d values), moved onto its own
    # line when it spans several lines so that the rows stay aligned.
    value = np.asarray(value)
    if value.ndim == 0:
        item = value.item()
        if as_repr and not isinstance(item, (bool, np.bool_)):
            return repr(item)
        return str(value)
    text = repr(value) if as_repr else str(value)
    return "\n" + text if "\n" in text else text


class SymbolicTensor(Tensor):
    """A graph tensor: output `value_index` of operation `op`, with a static shape and dtype.

    Prints as `Tensor("add:0", shape=(2, 2), dtype=float32)`.
    """

    __slots__ = ("op", "value_index", "_shape", "dtype", "__weakref__")

    def __init__(self, op: Any, value_index: int, shape: TensorShape, dtype: _dtypes.DType):
        self.op = op
        self.value_index = value_index
        self._shape = shape
        self.dtype = dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def name(self) -> str:
        return f"{self.op.name}:{self.value_index}"

    @property
    def graph(self):
        return self.op.graph

    @property
    def device(self) -> str:
        return self.op.device

    def set_shape(self, shape: Any) -> None:
        self._shape = self._shape.merge_with(shape)

    def consumers(self) -> list:
        return [op for op in self.op.graph.get_operations() if any(t is self for t in op.inputs)]

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        from kilnflow.context import ctx
        sess = session or getattr(ctx, "default_session", None)
        if sess is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                             "registered. Use `with sess.as_default()` or pass a session.")
        return sess.run(self, feed_dict)

    def __bool__(self) -> bool:
        from kilnflow.errors import OperatorNotAllowedInGraphError, with_location
        raise OperatorNotAllowedInGraphError(with_location(
            f"Using a symbolic tf.Tensor ({self.name}) as a Python `bool` is not allowed: its "
            "value is only known when the graph runs. Inside @kf.function, AutoGraph converts "
            "`if`/`while` on tensors for you; elsewhere use kf.cond / kf.while_loop."))

    def __len__(self) -> int:
        d = self._shape[0] if self._shape.rank else None
        if d is None:
            raise TypeError(f"len is not well defined for a symbolic Tensor ({self.name}) "
                            "whose first dimension is unknown; use kf.shape(x)[0].")
        return d

    def __iter__(self):
        d = self._shape[0] if self._shape.rank else None
        if d is None:
            from kilnflow.errors import OperatorNotAllowedInGraphError
            raise OperatorNotAllowedInGraphError(
                f"Iterating over a symbolic tf.Tensor ({self.name}) of unknown "
                "length is not allowed; use kf.range / a tensor loop in AutoGraph.")
        return (self[i] for i in range(d))

    def __index__(self) -> int:
        raise TypeError(f"A symbolic tf.Tensor ({self.name}) cannot be used as a Python index.")

    def __array__(self, dtype: Any = None, copy: Any = None):
        raise NotImplementedError(
            f"Cannot convert a symbolic tf.Tensor ({self.name}) to a numpy array: it has no "
            "value until the graph runs.")

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        return f'<tf.Tensor \'{self.name}\' shape={self._shape} dtype={self.dtype.name}>'

    def __str__(self) -> str:
        return f'Tensor("{self.name}", shape={self._shape}, dtype={self.dtype.name})'


def is_tensor(x: Any) -> bool:
    """True for eager and symbolic tensors."""
    return isinstance(x, (EagerTensor, SymbolicTensor))


def is_tensor_like(x: Any) -> bool:
    """`kf.is_tensor`: true for tensors and for the values TF also counts as tensors
    (variables, whose class sets `is_tensor_like`)."""
    return is_tensor(x) or getattr(type(x), "is_tensor_like", False) is True


def is_symbolic(x: Any) -> bool:
    return isinstance(x, SymbolicTensor)


def wrap(value: Any) -> EagerTensor:
    """An EagerTensor around a kernel result (ndarray or NumPy scalar), without copying."""
    t = _new_eager(EagerTensor)
    t._value = value if type(value) is np.ndarray or isinstance(value, np.generic) \
        else np.asarray(value)
    return t


_new_eager = EagerTensor.__new__
