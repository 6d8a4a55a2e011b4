"""Arguments -> a hashable trace key, plus the tensors to feed.

Tensors (and ndarrays) key by shape and dtype; Variables by dtype, shape and which earlier
variable argument they alias (TF traces variables by spec: another variable of the same
spec reuses the trace, rebound to it, see Function); Python scalars and
strings by value; lists, tuples, dicts and namedtuples by structure; composite tensors
(SparseTensor, RaggedTensor) by their TypeSpec, feeding their components; other objects by
identity. The key also names each argument path, for retracing explanations.
"""
from __future__ import annotations

from typing import Any, List, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import EagerTensor, SymbolicTensor

TENSOR = "T"
VARIABLE = "V"
PYTHON = "P"
OBJECT = "O"
COMPOSITE = "C"


def _is_variable(x: Any) -> bool:
    return hasattr(x, "_handle") and hasattr(x, "assign")


def composite_spec(x: Any) -> Any:
    """The TypeSpec of a composite tensor, or `x` itself when it is a composite's TypeSpec
    (one with components, see kilnflow/type_spec.py); None for anything else."""
    spec = getattr(x, "_type_spec", None)
    if spec is not None and hasattr(spec, "_to_components"):
        return spec
    if hasattr(x, "_component_specs") and hasattr(x, "_from_components"):
        return x
    return None


def key_of(value: Any, tensors: list, keep: list) -> Any:
    """Key for one argument; appends the tensors to feed (in order) to `tensors`."""
    t = type(value)
    if t is EagerTensor:
        array = value._value
        tensors.append(array)
        return (TENSOR, array.shape, array.dtype)
    if t is np.ndarray or isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufc":
            raise TypeError(f"Cannot pass an array of dtype {value.dtype} to a kf.function")
        tensors.append(value)
        return (TENSOR, value.shape, value.dtype)
    if isinstance(value, SymbolicTensor):
        tensors.append(value)
        return (TENSOR, tuple(value.shape.dims or ()), value.dtype.as_numpy_dtype)
    if isinstance(value, TensorSpec):
        tensors.append(value)
        return ("S", value.shape, value.dtype)
    if t in (int, float, bool, str, type(None), complex) or isinstance(value, np.generic):
        return (PYTHON, t, value)
    if t is tuple or t is list:
        return (t.__name__, tuple(key_of(v, tensors, keep) for v in value))
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return (t, tuple(key_of(v, tensors, keep) for v in value))
    if isinstance(value, dict):
        keys = sorted(value, key=repr)
        return ("dict", tuple((k, key_of(value[k], tensors, keep)) for k in keys))
    spec = composite_spec(value)
    if spec is not None:  # keyed by its spec: a new nnz or values length reuses the trace
        if spec is not value:
            for component in spec._to_components(value):
                key_of(component, tensors, keep)
        return (COMPOSITE, spec)
    if _is_variable(value):
        earlier = [k for k in keep if _is_variable(k)]
        alias = next((i for i, k in enumerate(earlier) if k._handle is value._handle),
                     len(earlier))
        keep.append(value)
        # TF's VariableSpec: dtype, shape and trainable (code may branch on v.trainable)
        return (VARIABLE, value.dtype, value.shape, alias, bool(value.trainable))
    keep.append(value)
    return (OBJECT, id(value))


def variable_handles(keep: list) -> tuple:
    """The handles of the variable arguments a make_key call saw, in argument order."""
    return tuple(k._handle for k in keep if _is_variable(k))


def python_values(key: Any) -> List[Any]:
    """The Python values in one argument's key, in order: what a trace fixed."""
    if isinstance(key, tuple) and len(key) == 3 and key[0] == PYTHON:
        return [key[2]]
    if not isinstance(key, tuple) or (key and key[0] in (TENSOR, "S", VARIABLE, OBJECT)):
        return []
    return [v for part in key for v in python_values(part)]


def make_key(args: tuple, kwargs: dict) -> Tuple[Any, List[Any], list]:
    tensors: list = []
    keep: list = []
    key = (tuple(key_of(a, tensors, keep) for a in args),
           tuple((k, key_of(kwargs[k], tensors, keep)) for k in sorted(kwargs)))
    return key, tensors, keep


def relax(key: Any, other: Any) -> Any:
    """The most specific key covering both (unknown dims where shapes differ), or None."""
    if key == other:
        return key
    if isinstance(key, tuple) and isinstance(other, tuple) and len(key) == len(other):
        if key and key[0] in (TENSOR, "S") and other[0] in (TENSOR, "S"):
            a, b = _spec_shape(key), _spec_shape(other)
            if _spec_dtype(key) != _spec_dtype(other):
                return None
            merged = a.most_specific_common_supertype(b)
            return ("S", merged, _spec_dtype(key))
        parts = [relax(a, b) for a, b in zip(key, other)]
        if any(p is None for p, a in zip(parts, key) if a is not None):
            return None
        return tuple(parts)
    return None


def _spec_shape(k: tuple) -> TensorShape:
    return k[1] if k[0] == "S" else TensorShape(k[1])


def _spec_dtype(k: tuple) -> Any:
    return _dtypes.as_dtype(k[2])


def key_matches(general: Any, specific: Any) -> bool:
    """True when a call with key `specific` can use a trace made for key `general`."""
    if general == specific:
        return True
    if isinstance(general, tuple) and general and general[0] == "S":
        if not isinstance(specific, tuple) or not specific or specific[0] not in (TENSOR, "S"):
            return False
        return (_spec_dtype(general) is _spec_dtype(specific)
                and general[1].is_compatible_with(_spec_shape(specific)))
    if isinstance(general, tuple) and isinstance(specific, tuple) and \
            len(general) == len(specific):
        return all(key_matches(g, s) for g, s in zip(general, specific))
    return False


def describe_change(path: str, old: Any, new: Any) -> List[str]:
    """Human-readable differences between two argument keys."""
    if old == new:
        return []
    if isinstance(old, tuple) and isinstance(new, tuple) and old and new:
        if old[0] in (TENSOR, "S") and new[0] in (TENSOR, "S"):
            changes = []
            if _spec_dtype(old) is not _spec_dtype(new):
                changes.append(f"{path}: dtype {_spec_dtype(old).name} -> "
                               f"{_spec_dtype(new).name}")
            if _spec_shape(old) != _spec_shape(new):
                changes.append(f"{path}: shape {_spec_shape(old)} -> {_spec_shape(new)}")
            return changes
        if old[0] == PYTHON and new[0] == PYTHON:
            return [f"{path}: Python value {old[2]!r} -> {new[2]!r} (Python values are part "
                    f"of the trace key; pass a tensor to avoid retracing)"]
        if old[0] == VARIABLE and new[0] == VARIABLE:
            if old[1:3] != new[1:3]:
                return [f"{path}: a kf.Variable of dtype {old[1].name}, shape {old[2]} -> "
                        f"dtype {new[1].name}, shape {new[2]}"]
            return [f"{path}: a variable aliasing another argument (or no longer)"
                    if old[3] != new[3] else f"{path}: trainable {old[4]} -> {new[4]}"]
        if old[0] == COMPOSITE and new[0] == COMPOSITE:
            return [f"{path}: {old[1]!r} -> {new[1]!r}"]
        if old[0] == OBJECT and new[0] == OBJECT:
            return [f"{path}: a different Python object"]
        if old[0] == new[0] and isinstance(old[1], tuple) and isinstance(new[1], tuple) \
                and len(old[1]) == len(new[1]):
            out: List[str] = []
            for i, (a, b) in enumerate(zip(old[1], new[1])):
                if isinstance(a, tuple) and len(a) == 2 and not isinstance(a[0], str) is False \
                        and old[0] == "dict":
                    out += describe_change(f"{path}[{a[0]!r}]", a[1], b[1])
                else:
                    out += describe_change(f"{path}[{i}]", a, b)
            return out
    return [f"{path}: {_kind(old)} -> {_kind(new)}"]


def _kind(k: Any) -> str:
    if isinstance(k, tuple) and k:
        return {TENSOR: "tensor", "S": "tensor", PYTHON: f"Python {getattr(k[1], '__name__', '')}",
                VARIABLE: "variable", OBJECT: "object",
                COMPOSITE: "composite tensor"}.get(k[0], f"{k[0]} structure")
    return repr(k)
