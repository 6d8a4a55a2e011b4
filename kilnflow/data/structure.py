"""Elements of a dataset: nested structures (tuples, dicts, namedtuples) of NumPy arrays.

A pipeline passes each element as a flat list of arrays; `element_spec` (the same structure
with TensorSpec leaves) packs it back. As in tf.data, a Python list is a tensor, not a
structure. This module converts user values, describes them and checks them; it imports
only the vocabulary layers (nest, shapes, dtypes, errors, tensor) and ops.convert.
"""
from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors, nest
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import SymbolicTensor, wrap


def is_structure(value: Any) -> bool:
    """Tuples (namedtuples too) and dicts nest; lists are tensors, as in tf.data."""
    return isinstance(value, (tuple, dict))


def to_array(value: Any, what: str) -> np.ndarray:
    """One leaf as a read-only array with TF's conversion rules (floats are float32)."""
    if isinstance(value, SymbolicTensor):
        raise TypeError(f"{what}: cannot build a dataset from the graph tensor {value}; "
                        "build the dataset outside kf.function, or from NumPy values")
    if value is None:
        raise TypeError(f"{what}: None is not a valid dataset component")
    try:
        tensor = convert_to_tensor(value)  # copies a writable ndarray: later writes don't leak
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what}: cannot convert {type(value).__name__} to a tensor: "
                        f"{exc}") from None
    array = np.asarray(tensor)  # a read-only view: elements are shared, nobody writes them
    return array


def normalize(value: Any, what: str) -> Any:
    """The structure of `value` with every leaf converted by to_array."""
    if isinstance(value, dict):
        return type(value)((k, normalize(v, what)) for k, v in value.items()) \
            if type(value) is not dict else {k: normalize(v, what) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[normalize(v, what) for v in value])
    if isinstance(value, tuple):
        return tuple(normalize(v, what) for v in value)
    return to_array(value, what)


def flatten(value: Any) -> list:
    """Leaves of an element in tf.nest order (dicts by sorted key); lists are leaves."""
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in flatten(value[k])]
    if isinstance(value, tuple):
        return [x for v in value for x in flatten(v)]
    return [value]


def flatten_up_to(spec: Any, value: Any, what: str) -> list:
    """`value` split along `spec`'s structure: its leaves are what sits where spec has a
    leaf (so a shape may be a list or a tuple). A non-structure `value` applies to every
    leaf (one padding value for all components)."""
    if not is_structure(spec):
        return [value]
    if not is_structure(value):
        return [value] * len(flatten(spec))
    try:
        if isinstance(spec, dict):
            if set(spec) != set(value):
                raise KeyError
            return [x for k in sorted(spec) for x in flatten_up_to(spec[k], value[k], what)]
        if len(spec) != len(value):
            raise KeyError
        return [x for s, v in zip(spec, value) for x in flatten_up_to(s, v, what)]
    except (KeyError, TypeError):
        raise ValueError(f"{what}: {value!r} does not match the structure of {spec}") from None


def signature(value: Any) -> Any:
    """The nesting of an element (lists are leaves), for structure checks."""
    if isinstance(value, dict):
        return ("dict", tuple((k, signature(value[k])) for k in sorted(value)))
    if isinstance(value, tuple):
        return ("tuple", tuple(signature(v) for v in value))
    return "."


def pack(spec: Any, flat: Sequence) -> Any:
    """`flat` packed into the structure of `spec`; a single leaf comes back bare."""
    if not is_structure(spec):
        return flat[0]
    return nest.pack_sequence_as(spec, flat)


def spec_of(array: np.ndarray) -> TensorSpec:
    return TensorSpec(array.shape, _dtypes.as_dtype(array.dtype))


def specs_of(structure: Any) -> Any:
    """The element_spec of a structure of arrays."""
    return nest.map_structure(spec_of, structure)


def flat_specs(spec: Any) -> List[TensorSpec]:
    return nest.flatten(spec)


def batched(spec: Any, size: Any) -> Any:
    """Every leaf spec with a leading dimension `size` (None when unknown)."""
    return nest.map_structure(
        lambda s: TensorSpec(TensorShape([size]).concatenate(s.shape), s.dtype), spec)


def unbatched(spec: Any, what: str) -> Any:
    def one(s: TensorSpec) -> TensorSpec:
        if s.shape.rank == 0:
            raise errors.InvalidArgumentError(
                f"{what}: every component must have at least one dimension, got {s}")
        return TensorSpec(s.shape[1:] if s.shape.rank is not None else None, s.dtype)
    return nest.map_structure(one, spec)


def relaxed(a: TensorShape, b: TensorShape) -> TensorShape:
    """The most specific shape both `a` and `b` fit (differing dims become None)."""
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def common_spec(a: Any, b: Any, what: str) -> Any:
    """The spec covering elements of spec `a` and of spec `b` (concatenate, a reduce
    state): same structure and dtypes, differing dims relaxed to None."""
    if nest.structure_signature(a) != nest.structure_signature(b):
        raise TypeError(f"{what}: the structures differ: {a} vs {b}")

    def one(x: TensorSpec, y: TensorSpec) -> TensorSpec:
        if x.dtype is not y.dtype:
            raise TypeError(f"{what}: the dtypes differ: {a} vs {b}")
        return TensorSpec(relaxed(x.shape, y.shape), x.dtype)
    return nest.map_structure(one, a, b)


def same_structure(spec: Any, value: Any) -> bool:
    if isinstance(spec, TensorSpec):
        return not is_structure(value)
    return signature(spec) == signature(value)


def describe(flat: Sequence[np.ndarray]) -> str:
    """What an element actually is, for error messages: its shapes and dtypes."""
    return ", ".join(f"{a.dtype.name}{list(a.shape)}" for a in flat)


def tensor_packer(spec: Any) -> Any:
    """A function packing flat arrays into the element structure of EagerTensors (a
    shortcut for the common flat tuple of tensors)."""
    if type(spec) is tuple and all(isinstance(s, TensorSpec) for s in spec):
        return lambda flat: tuple([wrap(a) if isinstance(a, np.ndarray) else a for a in flat])
    if isinstance(spec, TensorSpec):
        return lambda flat: wrap(flat[0]) if isinstance(flat[0], np.ndarray) else flat[0]
    return lambda flat: to_tensors(spec, flat)


def to_tensors(spec: Any, flat: Sequence[np.ndarray]) -> Any:
    """An element as TF yields it: EagerTensors in the element's structure."""
    return pack(spec, [wrap(a) if isinstance(a, np.ndarray) else a for a in flat])


def to_numpy(spec: Any, flat: Sequence[np.ndarray]) -> Any:
    """An element as as_numpy_iterator yields it: arrays (scalars as NumPy scalars)."""
    return pack(spec, [a[()] if isinstance(a, np.ndarray) and a.ndim == 0 else a
                       for a in flat])
