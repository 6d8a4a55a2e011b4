"""How keras.ops sees its arguments: tensors, Variables, NumPy arrays and Python values
become kilnflow tensors, and mixed inputs meet at Keras 3's result dtype (JAX's promotion
lattice with Python scalars as *weak* types: `int32_tensor + 1.5` is float32, not float64).
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

import kilnflow as kf
from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend

_INTS = ("int8", "int16", "int32", "int64")
_UINTS = ("uint8", "uint16", "uint32", "uint64")
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_SIGNED_FOR_UINT = {"uint8": "int16", "uint16": "int32", "uint32": "int64", "uint64": "int64"}


def is_tensor_like(x: Any) -> bool:
    return kf.is_tensor(x) or isinstance(x, kf.Variable)


def is_placeholder(x: Any) -> bool:
    """A functional-model KerasTensor (a shape and a dtype, no value)."""
    return isinstance(getattr(x, "shape", None), kf.TensorShape) and hasattr(
        x, "_keras_history")


def dtype_name(x: Any) -> str:
    """The (strong) dtype Keras gives `x`: a tensor's own, a NumPy array's own, Python
    lists as int32 / floatx / bool."""
    if is_tensor_like(x) or is_placeholder(x):
        return x.dtype.name
    if isinstance(x, (np.ndarray, np.generic)):
        return _dtypes.as_dtype(x.dtype).name
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        return backend.floatx()
    if arr.dtype.kind in "iu":
        return "int32"
    if arr.dtype.kind == "c":
        return "complex64"
    return _dtypes.as_dtype(arr.dtype).name


def weak_kind(x: Any) -> Optional[str]:
    """'bool' / 'int' / 'float' for a Python scalar (a weak type), else None."""
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, float):
        return "float"
    return None


def _promote2(a: str, b: str) -> str:
    if a == b:
        return a
    if a == "bool" or b == "bool":
        return b if a == "bool" else a
    if "complex" in a or "complex" in b:
        return "complex128" if "128" in a + b or "float64" in (a, b) else "complex64"
    if a in _FLOATS or b in _FLOATS:
        if a in _FLOATS and b in _FLOATS:
            if {a, b} == {"float16", "bfloat16"}:
                return "float32"
            return max(a, b, key=_FLOATS.index)
        return a if a in _FLOATS else b
    if a in _INTS and b in _INTS:
        return max(a, b, key=_INTS.index)
    if a in _UINTS and b in _UINTS:
        return max(a, b, key=_UINTS.index)
    signed, unsigned = (a, b) if a in _INTS else (b, a)
    return max(signed, _SIGNED_FOR_UINT[unsigned], key=_INTS.index)


def result_type(*xs: Any) -> str:
    """keras.backend.result_type over values: strong dtypes promote on the lattice, Python
    scalars only lift the kind (int -> floatx when a Python float joins)."""
    strong = [dtype_name(x) for x in xs if x is not None and weak_kind(x) is None]
    weak = [weak_kind(x) for x in xs if weak_kind(x) is not None]
    if strong:
        out = strong[0]
        for d in strong[1:]:
            out = _promote2(out, d)
    else:
        out = "bool" if weak and all(w == "bool" for w in weak) else None
        out = out or ("int32" if "float" not in weak else backend.floatx())
    if "float" in weak and out not in _FLOATS and "complex" not in out:
        out = backend.floatx()
    elif "int" in weak and out == "bool":
        out = "int32"
    return out


def to_tensor(x: Any, dtype: Any = None) -> Any:
    """keras.ops.convert_to_tensor: a kilnflow tensor, cast to `dtype` when given."""
    if isinstance(x, kf.Variable):
        x = x.read_value() if hasattr(x, "read_value") else kf.identity(x)
    if kf.is_tensor(x):
        if dtype is not None and x.dtype.name != _dtypes.as_dtype(dtype).name:
            return kf.cast(x, dtype)
        return x
    if dtype is None:
        dtype = dtype_name(x)
    if isinstance(x, (list, tuple)) and any(is_tensor_like(v) for v in x):
        return kf.stack([to_tensor(v, dtype) for v in x])
    return kf.convert_to_tensor(np.asarray(x).astype(_dtypes.as_dtype(dtype).as_numpy_dtype))


def promote(*xs: Any, dtype: Any = None) -> List[Any]:
    """The arguments as tensors of their common Keras result dtype (or `dtype`)."""
    dt = dtype if dtype is not None else result_type(*xs)
    return [to_tensor(x, dt) for x in xs]


def float_dtype(x: Any) -> str:
    """The float dtype a float-valued op gives `x`: its own when floating, else floatx."""
    d = dtype_name(x) if weak_kind(x) is None else ("float32" if weak_kind(x) == "float"
                                                     else "int32")
    return floating(d)


def floating(d: str) -> str:
    """dtype name `d` when floating or complex, else floatx."""
    return d if d in _FLOATS or "complex" in d else backend.floatx()


def to_float(x: Any) -> Any:
    return to_tensor(x, float_dtype(x))


def axes(axis: Any) -> Any:
    """Keras axis arguments (int, tuple, list or None) as kilnflow wants them."""
    return list(axis) if isinstance(axis, tuple) else axis


def shape_of(x: Any) -> Any:
    """x's shape as a list of ints when fully known (so results keep static shapes inside
    kf.function), else the run-time shape tensor."""
    return x.shape.as_list() if x.shape.is_fully_defined() else kf.shape(x)


def static_shape(x: Any) -> tuple:
    return tuple(to_tensor(x).shape.as_list())


def standardize_dtype(dtype: Any) -> Optional[str]:
    if dtype is None:
        return None
    if dtype in ("float", float):
        return backend.floatx()
    if dtype in ("int", int):
        return "int32"
    return _dtypes.as_dtype(dtype).name
