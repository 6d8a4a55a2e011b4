"""TypeSpec and the composite-tensor protocol (tf.TypeSpec, tf.type_spec_from_value).

A composite tensor (SparseTensor, RaggedTensor, IndexedSlices) is a Python object made of
component tensors. Its `_type_spec` describes it without the values; the spec splits a value
into components (`_to_components`) and rebuilds one from them (`_from_components`), and
`_component_specs` gives the components' TensorSpecs with the dims that may vary between
calls left unknown. kf.function, kf.nest(expand_composites=True) and the trace key use only
this protocol (by duck typing, so the lower layers import nothing from here).
"""
from __future__ import annotations

import abc
from typing import Any, List

import numpy as np

from kilnflow.shapes import TensorShape, TensorSpec


class TypeSpec(abc.ABC):
    """Describes a value (a tensor or a composite of tensors) without its data.

    Subclasses define `value_type`, `_component_specs`, `_to_components`,
    `_from_components` and `_serialize` (a hashable tuple: equality and the trace key).

    >>> import kilnflow as kf
    >>> isinstance(kf.TensorSpec([2], kf.float32), kf.TypeSpec)
    True
    """

    __slots__ = ()

    @property
    @abc.abstractmethod
    def value_type(self) -> type:
        """The Python type of the values this spec describes."""

    @property
    def _component_specs(self) -> List[TensorSpec]:
        raise NotImplementedError

    def _to_components(self, value: Any) -> List[Any]:
        raise NotImplementedError

    def _from_components(self, components: List[Any]) -> Any:
        raise NotImplementedError

    def _serialize(self) -> tuple:
        raise NotImplementedError

    def is_compatible_with(self, spec_or_value: Any) -> bool:
        """True when both describe values of one type with compatible shapes and dtypes."""
        other = spec_or_value if isinstance(spec_or_value, TypeSpec) else \
            type_spec_from_value(spec_or_value)
        if type(other) is not type(self):
            return False
        return all(_compatible(a, b) for a, b in zip(self._serialize(), other._serialize()))

    def most_specific_common_supertype(self, others: List["TypeSpec"]) -> Any:
        """The narrowest spec of this type that covers self and `others` (None if none)."""
        result = self
        for other in others:
            if type(other) is not type(self):
                return None
            parts = []
            for a, b in zip(result._serialize(), other._serialize()):
                if isinstance(a, TensorShape) and isinstance(b, TensorShape):
                    parts.append(a.most_specific_common_supertype(b))
                elif a != b:
                    return None
                else:
                    parts.append(a)
            result = type(self)(*parts)
        return result

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and self._serialize() == other._serialize()

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((type(self), self._serialize()))


def _compatible(a: Any, b: Any) -> bool:
    if isinstance(a, TensorShape) and isinstance(b, TensorShape):
        return a.is_compatible_with(b)
    return a == b


TypeSpec.register(TensorSpec)  # tf.TensorSpec is a TypeSpec


class CompositeTensor(abc.ABC):
    """Base of the composite tensors: a Python object made of component tensors."""

    @property
    @abc.abstractmethod
    def _type_spec(self) -> TypeSpec:
        """The TypeSpec of this value."""


def is_composite(value: Any) -> bool:
    """True for composite tensors (values with a `_type_spec` that has components)."""
    return isinstance(value, CompositeTensor)


def type_spec_from_value(value: Any) -> TypeSpec:
    """The TypeSpec of a tensor, composite tensor, ndarray or Python value.

    >>> import kilnflow as kf
    >>> kf.type_spec_from_value(kf.constant([1, 2]))
    TensorSpec(shape=(2,), dtype=tf.int32, name=None)
    """
    if isinstance(value, CompositeTensor):
        return value._type_spec
    if isinstance(value, TypeSpec):
        raise TypeError(f"Could not build a TypeSpec for {value!r}: it is a TypeSpec already")
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None and not isinstance(value, np.ndarray):
        return TensorSpec(shape, dtype)
    from kilnflow.ops.convert import convert_to_tensor
    try:
        tensor = convert_to_tensor(value)
    except (TypeError, ValueError):
        raise TypeError(f"Could not build a TypeSpec for {value!r} with type "
                        f"{type(value).__name__}") from None
    return TensorSpec(tensor.shape, tensor.dtype)
