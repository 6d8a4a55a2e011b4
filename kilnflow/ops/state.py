"""Variable ops: read, assign, assign_add, assign_sub, and the VariableHandle they act on.

The handle is an attr (hashable by identity), so generated code reaches the variable's
storage directly. Assignments store a new array rather than writing in place: earlier
reads stay immutable, as eager tensors must.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import defop
from kilnflow.graph import register_attr_codec
from kilnflow.shapes import TensorShape, TensorSpec


class VariableHandle:
    """Where a variable's value lives. Identity is the variable's identity."""

    __slots__ = ("name", "dtype", "shape", "value", "trainable", "owner", "__weakref__")

    def __init__(self, name: str, dtype: _dtypes.DType, shape: TensorShape, trainable: bool):
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value: Optional[np.ndarray] = None
        self.trainable = trainable
        self.owner: Any = None  # the Variable, for GradientTape.watched_variables()

    def read(self) -> Any:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                f"Could not find variable {self.name}. This could mean that the variable has "
                "not been initialized (run kf.compat.v1.global_variables_initializer() in the "
                "Session first) [Op:ReadVariableOp]")
        return value

    def __repr__(self) -> str:
        return f"<VariableHandle {self.name}>"


register_attr_codec("variable", VariableHandle,
                    encode=lambda handle, writer: {"name": writer.variable(handle)},
                    decode=lambda fields, reader: reader.variable(fields.get("name")))


def _read_rule(*, handle: VariableHandle) -> TensorSpec:
    return TensorSpec(handle.shape, handle.dtype)


def _check_value(handle: VariableHandle, value: Any) -> None:
    if value.dtype is not handle.dtype:
        raise TypeError(f"Cannot assign a {value.dtype.name} value to variable {handle.name} "
                        f"of dtype {handle.dtype.name}")
    if not handle.shape.is_compatible_with(value.shape):
        raise ValueError(f"Cannot assign value of shape {value.shape} to variable "
                         f"{handle.name} of shape {handle.shape}")


def _assign_rule(value: Any, *, handle: VariableHandle) -> list:
    _check_value(handle, value)
    return []


def _assign(value: Any, *, handle: VariableHandle) -> tuple:
    handle.value = value
    return ()


def _updatable_in_place(value: Any) -> bool:
    """True when nothing but the handle can see `value`'s memory, so updating it in place
    is indistinguishable from storing a new array (and saves an allocation per step).

    The references counted are the handle's, the caller's local and getrefcount's own
    argument; any tensor or other holder adds one. Views (base is set) never qualify."""
    return (type(value) is np.ndarray and value.base is None and value.flags.writeable
            and sys.getrefcount(value) <= 4)


# Read-modify-write updates are atomic per op, as TF's are: threads updating one variable
# never lose an update.
_UPDATES = threading.Lock()


def _update(handle: VariableHandle, delta: Any, ufunc: np.ufunc) -> tuple:
    with _UPDATES:
        value = handle.read()
        if _updatable_in_place(value) and np.broadcast_shapes(value.shape, delta.shape) == \
                value.shape:
            ufunc(value, delta, out=value)
        else:
            handle.value = ufunc(value, delta)
    return ()


def _assign_add(delta: Any, *, handle: VariableHandle) -> tuple:
    return _update(handle, delta, np.add)


def _assign_sub(delta: Any, *, handle: VariableHandle) -> tuple:
    return _update(handle, delta, np.subtract)


READ = defop("ReadVariableOp", shape=_read_rule, kernel=lambda *, handle: handle.read(),
             grad=lambda op, dy: [dy], stateful=True, watch_attr="handle")
ASSIGN = defop("AssignVariableOp", shape=_assign_rule, kernel=_assign, stateful=True,
               multi_output=True, check_eager=True)
ASSIGN_ADD = defop("AssignAddVariableOp", shape=_assign_rule, kernel=_assign_add,
                   stateful=True, multi_output=True, check_eager=True)
ASSIGN_SUB = defop("AssignSubVariableOp", shape=_assign_rule, kernel=_assign_sub,
                   stateful=True, multi_output=True, check_eager=True)
