"""DType table: TF dtype names over NumPy dtypes.

Reads nothing from the rest of kilnflow. Conversion rules live here: Python floats
become float32, ints int32, bools bool; ndarrays keep their dtype. There is no silent
promotion between tensors of different dtypes; callers raise when dtypes differ.
"""
from __future__ import annotations

from typing import Any

import numpy as np

_py_bool = type(True)  # `bool` below is TF's dtype name


class DType:
    """A tensor element type, named as in TensorFlow (`kf.float32`, `kf.uint8`, ...)."""

    __slots__ = ("name", "as_numpy_dtype", "kind", "_np")

    def __init__(self, name: str, np_type: Any, kind: str):
        self.name = name
        self.as_numpy_dtype = np_type
        self._np = np.dtype(np_type)
        # kind: 'f' floating, 'i' signed int, 'u' unsigned int, 'b' bool, 'c' complex
        self.kind = kind

    @property
    def is_floating(self) -> bool:
        return self.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("i", "u")

    @property
    def is_unsigned(self) -> bool:
        return self.kind == "u"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_numeric(self) -> bool:
        return self.kind != "b"

    @property
    def base_dtype(self) -> "DType":
        return self

    @property
    def real_dtype(self) -> "DType":
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    @property
    def min(self):
        if self.kind not in "fiu":
            raise TypeError(f"Cannot find minimum value of {self}.")
        return np.finfo(self._np).min if self.kind == "f" else np.iinfo(self._np).min

    @property
    def max(self):
        if self.kind not in "fiu":
            raise TypeError(f"Cannot find maximum value of {self}.")
        return np.finfo(self._np).max if self.kind == "f" else np.iinfo(self._np).max

    @property
    def limits(self) -> tuple:  # TF's intensity range, negatives clipped; none for float16
        if self.name not in ("float32", "float64") and self.kind not in "iub":
            raise ValueError(f"{self} has no intensity limits")
        return (0, {"f": 1, "b": True}.get(self.kind) or int(np.iinfo(self._np).max))

    @property
    def size(self) -> int:
        return 0 if self.kind == "s" else self._np.itemsize

    @property
    def is_numpy_compatible(self) -> _py_bool:
        return self.kind != "v"

    is_quantized = False  # no quantized dtypes (qint8, ...) in kilnflow

    @property
    def as_datatype_enum(self) -> int:  # TF's DataType number (types.proto)
        return _DATATYPE_ENUM[self.name]

    def __eq__(self, other: Any) -> _py_bool:  # as TF: kf.float32 == "float32" == np.float32
        if other is self:
            return True
        if other is None or isinstance(other, DType):
            return False
        try:
            return as_dtype(other) is self
        except (TypeError, ValueError):
            return False

    __hash__ = object.__hash__

    def is_compatible_with(self, other: Any) -> bool:
        return self is as_dtype(other)

    def __repr__(self) -> str:
        return f"tf.{self.name}"

    def __str__(self) -> str:
        return f"<dtype: '{self.name}'>"

    def __reduce__(self):
        return (as_dtype, (self.name,))


float16 = DType("float16", np.float16, "f")
float32 = DType("float32", np.float32, "f")
float64 = DType("float64", np.float64, "f")
int8 = DType("int8", np.int8, "i")
int16 = DType("int16", np.int16, "i")
int32 = DType("int32", np.int32, "i")
int64 = DType("int64", np.int64, "i")
uint8 = DType("uint8", np.uint8, "u")
uint16 = DType("uint16", np.uint16, "u")
uint32 = DType("uint32", np.uint32, "u")
uint64 = DType("uint64", np.uint64, "u")
bool = DType("bool", np.bool_, "b")  # noqa: A001 - TF's public name
complex64 = DType("complex64", np.complex64, "c")
complex128 = DType("complex128", np.complex128, "c")
string = DType("string", np.object_, "s")
# An opaque host value (a while loop's recorded states): like TF's DT_VARIANT, never
# differentiated, never a user-visible tensor.
variant = DType("variant", np.object_, "v")

half = float16
double = float64

# TF's DataType enum numbers (tensorflow/core/framework/types.proto)
_DATATYPE_ENUM = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
                  "string": 7, "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14,
                  "uint16": 17, "complex128": 18, "float16": 19, "resource": 20,
                  "variant": 21, "uint32": 22, "uint64": 23}


class Unavailable(DType):
    """bfloat16 without the optional extra: the dtype exists, using it raises ImportError."""

    def __init__(self, name: str, extra: str, package: str):
        self.name, self.kind = name, "f"
        self._missing = f"{name} needs the optional extra kilnflow[{extra}] ({package})"

    @property
    def as_numpy_dtype(self):  # type: ignore[override]
        raise ModuleNotFoundError(self._missing)

    _np = as_numpy_dtype
    __slots__ = ("_missing",)


try:  # NumPy has no bfloat16; ml_dtypes (the optional extra kilnflow[bf16]) adds it
    from ml_dtypes import bfloat16 as _ml_bfloat16
    bfloat16 = DType("bfloat16", _ml_bfloat16, "f")
except ImportError:
    bfloat16 = Unavailable("bfloat16", "bf16", "ml_dtypes")

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
       bool, complex64, complex128)
FLOATS = frozenset((float16, float32, float64))
INTEGERS = frozenset((int8, int16, int32, int64, uint8, uint16, uint32, uint64))
NUMERIC = FLOATS | INTEGERS | frozenset((complex64, complex128))
INEXACT = FLOATS | frozenset((complex64, complex128))
REAL = FLOATS | INTEGERS

_by_name = {d.name: d for d in ALL}
_by_name.update(half=float16, double=float64, float=float32, int=int32, string=string,
                variant=variant, bfloat16=bfloat16)
# NumPy dtype -> DType; the hot path looks up `array.dtype` here.
_by_numpy = {d._np: d for d in ALL}
if not isinstance(bfloat16, Unavailable):
    _by_numpy[bfloat16._np] = bfloat16
# Strings are bytes objects in an object array (TF's tf.string); `variant` values are never
# user-visible, so an object array reads as a string tensor.
_by_numpy[np.dtype(object)] = string


def from_numpy(np_dtype: np.dtype) -> DType:
    """DType of a NumPy dtype; TypeError for types TF has no name for (e.g. object)."""
    try:
        return _by_numpy[np_dtype]
    except KeyError:
        raise TypeError(f"NumPy dtype {np_dtype} has no kilnflow equivalent") from None


def as_dtype(value: Any) -> DType:
    """Convert a DType, NumPy dtype or type, TF dtype name, or Python type to a DType."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        try:
            return _by_name[value]
        except KeyError:
            raise TypeError(f"Cannot convert {value!r} to a DType") from None
    if value is float:
        return float32
    if value is int:
        return int32
    if value is _py_bool:
        return bool
    try:
        return from_numpy(np.dtype(value))
    except TypeError:
        raise TypeError(f"Cannot convert {value!r} to a DType") from None



def string_array(value: Any) -> np.ndarray:
    """`value` (str, bytes, nested lists of them, or a NumPy str/bytes/object array) as TF
    holds strings: an object array of bytes, str encoded as UTF-8. TypeError names the first
    element that is not a string."""
    array = np.array(value, dtype=object)
    flat = array.reshape(-1)
    for i, item in enumerate(flat):
        if isinstance(item, str):
            flat[i] = item.encode("utf-8")
        elif isinstance(item, bytes):
            flat[i] = bytes(item)  # np.bytes_ -> plain bytes, as TF's numpy() gives
        else:
            raise TypeError(f"Expected string, but got {item!r} of type "
                            f"'{type(item).__name__}'")
    return array


def __getattr__(name: str) -> Any:
    """kf.dtypes.cast, complex and saturate_cast (TF exposes them here): ops of a higher
    layer, so looked up on first use rather than imported by this lowest layer."""
    if name == "cast":
        from kilnflow.ops.math import cast
        return cast
    if name == "complex":
        from kilnflow.ops.complex import complex as complex_
        return complex_
    if name == "saturate_cast":
        from kilnflow.ops.math_extra import saturate_cast
        return saturate_cast
    raise AttributeError(f"module 'kilnflow.dtypes' has no attribute {name!r}")
