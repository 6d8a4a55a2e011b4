"""How values become tensors: convert_to_tensor, constant, and the Const op.

TF's conversion rules: Python floats -> float32, ints -> int32, bools -> bool; ndarrays
keep their dtype. A Python operand next to a tensor takes the tensor's dtype; anything
that cannot be represented in that dtype raises TypeError.
"""
from __future__ import annotations

import inspect
import os
import sys
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.context import ctx
from kilnflow.core.const import CONST, Literal
from kilnflow.core.opdef import bind
from kilnflow.shapes import TensorShape
from kilnflow.tensor import EagerTensor, Tensor, wrap

_PYTHON_SCALARS = (int, float, bool, complex)
_INT32 = np.iinfo(np.int32)
_OPS_DIR = os.path.dirname(os.path.abspath(__file__))
_PACKAGE_DIR = os.path.dirname(_OPS_DIR)
_HELPERS = {os.path.join(_OPS_DIR, "convert.py"), os.path.join(_OPS_DIR, "args.py")}


def _holds(candidate: Any, value: Any) -> bool:
    if candidate is value:
        return True
    return isinstance(candidate, (list, tuple)) and any(c is value for c in candidate)


def _argument_of(value: Any) -> Optional[tuple]:
    """(op, argument) of the innermost public op function whose argument holds `value`
    (read off the stack, on the error path only, so conversion costs nothing more); the
    conversion function itself when the user called it directly."""
    frame = sys._getframe(2)
    direct = None
    while frame is not None:
        code = frame.f_code
        inside = code.co_filename.startswith(_OPS_DIR)
        if inside and code.co_filename not in _HELPERS \
                and not code.co_name.startswith(("_", "<")):
            return _holder(frame, value)
        if inside and code.co_name in ("convert_to_tensor", "constant"):
            direct = frame  # the outermost one counts
        if not code.co_filename.startswith(_PACKAGE_DIR):
            break  # the user's code: no op above this
        frame = frame.f_back
    return _holder(direct, value) if direct is not None else None


def _holder(frame: Any, value: Any) -> Optional[tuple]:
    """(function name, parameter) of `frame`'s argument that holds `value`."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS)  # *values: an argument too
    local = frame.f_locals
    name = code.co_name
    if name == "apply" and hasattr(local.get("opdef"), "name"):
        name = local["opdef"].name  # an op function made by a family's factory
    for param in code.co_varnames[:count]:
        if _holds(local.get(param), value):
            return name, param
    return None


def conversion_error(kind: type, message: str, value: Any) -> Exception:
    """`kind(message)` naming the op and argument being converted and the user's line:
    "matmul: argument `b` cannot be None; expected a tensor or array-like"."""
    found = _argument_of(value)
    if found is not None:
        op, param = found
        if value is None:
            message = f"{op}: argument `{param}` cannot be None; expected a tensor or array-like"
        else:
            message = f"{op}: argument `{param}`: {message}"
    return kind(errors.with_location(message))


def _python_to_array(value: Any, dtype: Optional[_dtypes.DType]) -> Any:
    try:
        array = np.asarray(value)
    except ValueError as exc:  # ragged nested lists
        raise conversion_error(ValueError, "Can't convert non-rectangular Python sequence to "
                               f"Tensor: {exc}", value) from exc
    kind = array.dtype.kind
    if kind in "US" or dtype is _dtypes.string or kind == "O" and any(
            isinstance(item, (str, bytes)) for item in array.reshape(-1)):
        return _strings(value, dtype)
    if kind not in "biufc":
        raise conversion_error(TypeError, f"Cannot convert {value!r} to a Tensor: unsupported "
                               f"type {type(value).__name__}", value)
    if dtype is None:
        if kind == "f":
            return array.astype(np.float32)
        if kind in "iu":
            if array.size and (array.min() < _INT32.min or array.max() > _INT32.max):
                return array.astype(np.int64)
            return array.astype(np.int32)
        return array
    return _cast_exactly(value, array, dtype)


def _strings(value: Any, dtype: Optional[_dtypes.DType]) -> Any:
    """Strings become an object array of bytes (tf.string); no cast to or from numbers."""
    if dtype is not None and dtype is not _dtypes.string:
        raise conversion_error(TypeError, f"Cannot convert {value!r} to EagerTensor of dtype "
                               f"{dtype.name}", value)
    try:
        return _dtypes.string_array(value)
    except TypeError as exc:  # TF: a sequence mixing strings and numbers is a ValueError
        if isinstance(value, (list, tuple)):
            raise conversion_error(ValueError, "Can't convert Python sequence with mixed types "
                                   f"to Tensor ({exc})", value) from exc
        if isinstance(value, np.ndarray):
            raise conversion_error(ValueError, "Failed to convert a NumPy array to a Tensor "
                                   f"({exc})", value) from exc
        raise conversion_error(TypeError, str(exc), value) from exc


def _cast_exactly(value: Any, array: Any, dtype: _dtypes.DType) -> Any:
    target = dtype.as_numpy_dtype
    if array.dtype.kind == "c" and dtype.kind != "c" or array.dtype.kind == "b" and \
            dtype.kind != "b" and dtype.kind != "s":
        raise conversion_error(TypeError, f"Cannot convert {value!r} to EagerTensor of dtype "
                               f"{dtype.name}", value)
    with np.errstate(all="ignore"):
        cast = array.astype(target)
    if dtype.kind in "iu" and array.dtype.kind in "fiu":
        if not np.array_equal(cast.astype(array.dtype), array):
            raise conversion_error(TypeError, f"Cannot convert {value!r} to EagerTensor of "
                                   f"dtype {dtype.name}", value)
    return cast


def convert_to_tensor(value: Any, dtype: Any = None, dtype_hint: Any = None,
                      name: Optional[str] = None) -> Tensor:
    """Convert a tensor, Variable, ndarray, Python scalar or nested list to a Tensor.

    >>> import kilnflow as kf
    >>> kf.convert_to_tensor([1, 2]).dtype
    tf.int32
    """
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype is not _dtypes.as_dtype(dtype):
            raise conversion_error(ValueError, "Tensor conversion requested dtype "
                                   f"{_dtypes.as_dtype(dtype).name} for Tensor with dtype "
                                   f"{value.dtype.name}: {value!r}", value)
        return value
    as_tensor = getattr(value, "_as_tensor", None)
    if as_tensor is not None:  # Variables, and anything else that reads into a tensor
        return convert_to_tensor(as_tensor(), dtype)
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype.kind in "USO" or dtype is _dtypes.string:
            return wrap(_strings(value, dtype))
        if value.dtype.kind not in "biufc":
            raise conversion_error(TypeError, f"Cannot convert an array of dtype {value.dtype} "
                                   "to a Tensor", value)
        if dtype is not None and value.dtype != dtype.as_numpy_dtype:
            value = _cast_exactly(value, value, dtype)
        elif isinstance(value, np.ndarray) and value.flags.writeable:
            value = value.copy()  # tensors are immutable: later writes to `value` must not leak
        return wrap(value)
    if dtype is None and dtype_hint is not None:
        try:
            return wrap(_python_to_array(value, _dtypes.as_dtype(dtype_hint)))
        except (TypeError, ValueError):
            pass
    if hasattr(value, "_type_spec"):  # SparseTensor, RaggedTensor: never densified implicitly
        raise conversion_error(ValueError, f"Attempt to convert a value ({value!r}) with an "
                               f"unsupported type ({type(value)}) to a Tensor.", value)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) or
                                                hasattr(v, "_as_tensor") for v in value):
        from kilnflow.ops.joining import stack  # a list of tensors packs like tf.stack
        return stack([convert_to_tensor(v, dtype) for v in value])
    return wrap(_python_to_array(value, dtype))


# `x + 1` and `x * 0.5` meet the same few Python scalars again and again. Tensors are
# immutable, so one converted tensor per (type, value, dtype) is kept and reused: it saves
# the array construction and the exactness checks on the eager hot path. The type is in
# the key so 1, 1.0 and True stay apart; float zeros are not kept (0.0 == -0.0).
_SCALAR_OPERANDS: dict = {}
_SCALAR_OPERANDS_MAX = 1024


def _cached_scalar_operand(value: Any, dtype: _dtypes.DType) -> Optional[Tensor]:
    key = (type(value), value, dtype)
    found = _SCALAR_OPERANDS.get(key)
    if found is None:
        found = wrap(_python_to_array(value, dtype))
        if len(_SCALAR_OPERANDS) >= _SCALAR_OPERANDS_MAX:
            _SCALAR_OPERANDS.clear()
        _SCALAR_OPERANDS[key] = found
    return found


def operand(value: Any, dtype: _dtypes.DType) -> Tensor:
    """Convert the other operand of a binary op: Python values take `dtype`."""
    if isinstance(value, Tensor):
        return value
    kind = type(value)
    if kind is int or kind is float and value:
        try:
            return _cached_scalar_operand(value, dtype)
        except TypeError:
            raise conversion_error(TypeError, f"Cannot convert {value!r} to EagerTensor of "
                                   f"dtype {dtype.name}", value) from None
    if isinstance(value, _PYTHON_SCALARS) or isinstance(value, (list, tuple)):
        if isinstance(value, (list, tuple)) and any(
                isinstance(v, Tensor) or hasattr(v, "_as_tensor") for v in value):
            return convert_to_tensor(value)
        try:
            return wrap(_python_to_array(value, dtype))
        except TypeError:
            raise conversion_error(TypeError, f"Cannot convert {value!r} to EagerTensor of "
                                   f"dtype {dtype.name}", value) from None
    return convert_to_tensor(value)


def binary(x: Any, y: Any) -> tuple:
    """Convert both operands of a binary op the way TF does (Python values adopt the dtype)."""
    if isinstance(x, Tensor):
        if isinstance(y, Tensor):
            return x, y
        return x, operand(y, x.dtype)
    if isinstance(y, Tensor):
        return operand(x, y.dtype), y
    if hasattr(x, "_as_tensor"):
        x = convert_to_tensor(x)
        return x, operand(y, x.dtype)
    if hasattr(y, "_as_tensor"):
        y = convert_to_tensor(y)
        return operand(x, y.dtype), y
    x = convert_to_tensor(x)
    return x, operand(y, x.dtype)


def constant(value: Any, dtype: Any = None, shape: Any = None, name: str = "Const") -> Tensor:
    """A tensor holding `value` (copied), optionally cast to `dtype` and reshaped/filled to `shape`.

    >>> import kilnflow as kf
    >>> kf.constant([[1, 2], [3, 4]])
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=
    array([[1, 2],
           [3, 4]], dtype=int32)>
    """
    if isinstance(value, Tensor) or hasattr(value, "_as_tensor"):
        value = convert_to_tensor(value)
        if isinstance(value, EagerTensor):
            value = value._value
        else:
            raise TypeError("kf.constant() needs a concrete value, got a symbolic tensor; "
                            "use kf.identity or kf.cast instead")
    array = convert_to_tensor(value, dtype)._value
    if isinstance(value, np.ndarray) and array is value:
        array = array.copy()  # a constant owns its value: later writes to `value` don't leak
    array = np.asarray(array)
    if shape is not None:
        shape = TensorShape(shape).as_list()
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                            f"{value!r} (converted from {value!r}) has {array.size} elements, "
                            f"but got `shape` {tuple(shape)} with {int(np.prod(shape))} elements).")
    if ctx.graph is None:
        return wrap(array)
    return bind(CONST, [], {"value": Literal(array)}, name)
