"""kf.experimental.Optional (tf.experimental.Optional) and its spec, kf.OptionalSpec.

The same class as what `iterator.get_next_as_optional()` returns, with TF's two
constructors added: `Optional.from_value(value)` and `Optional.empty(element_spec)`. It is
a composite tensor: its components are a bool `has_value` and the value's tensors (zeros
of the element spec when empty), so an Optional passes into and out of kf.function.
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

from kilnflow import errors, nest
from kilnflow.data import iterator as _iterator
from kilnflow.graph import control_dependencies
from kilnflow.ops.array import identity, zeros
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.logging import Assert
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import EagerTensor
from kilnflow.type_spec import CompositeTensor, TypeSpec

__all__ = ["Optional", "OptionalSpec"]

_EMPTY = "The given optional does not have a value."


class Optional(_iterator.Optional, CompositeTensor):
    """A structure of tensors, or nothing.

    >>> import kilnflow as kf
    >>> opt = kf.experimental.Optional.from_value(42)
    >>> bool(opt.has_value()), int(opt.get_value())
    (True, 42)
    >>> bool(kf.experimental.Optional.empty(kf.TensorSpec([], kf.int32)).has_value())
    False
    """

    def __init__(self, spec: Any, flat: Any, has: Any = None):
        super().__init__(spec, flat)
        self._has = has  # a bool tensor when rebuilt from components (maybe symbolic)

    @staticmethod
    def from_value(value: Any) -> "Optional":
        """An Optional holding `value` (a structure of tensors or values convertible to)."""
        tensors = nest.map_structure(convert_to_tensor, value)
        spec = nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), tensors)
        return Optional(spec, nest.flatten(tensors))

    @staticmethod
    def empty(element_spec: Any) -> "Optional":
        """An Optional with no value, whose value would match `element_spec`."""
        return Optional(element_spec, None)

    def has_value(self, name: Any = None) -> Any:
        return self._has if self._has is not None else super().has_value()

    def get_value(self, name: Any = None) -> Any:
        """The value; InvalidArgumentError when there is none (when the graph runs, inside a
        function)."""
        if self._has is None:
            if self._flat is None:
                raise errors.InvalidArgumentError(_EMPTY)
            return super().get_value()
        if isinstance(self._has, EagerTensor):
            if not bool(self._has):
                raise errors.InvalidArgumentError(_EMPTY)
            return nest.pack_sequence_as(self.element_spec, list(self._flat))
        with control_dependencies([Assert(self._has, [_EMPTY])]):
            values = [identity(v) for v in self._flat]
        return nest.pack_sequence_as(self.element_spec, values)

    @property
    def _type_spec(self) -> "OptionalSpec":
        return OptionalSpec(self.element_spec)

    def __repr__(self) -> str:
        return f"<kf.experimental.Optional element_spec={self.element_spec!r}>"


class OptionalSpec(TypeSpec):
    """The TypeSpec of an Optional: the spec its value would have (tf.OptionalSpec).

    >>> import kilnflow as kf
    >>> kf.OptionalSpec(kf.TensorSpec([], kf.int32))
    OptionalSpec(TensorSpec(shape=(), dtype=tf.int32, name=None),)
    """

    __slots__ = ("_element_spec",)

    def __init__(self, element_spec: Any):
        for spec in nest.flatten(element_spec):
            if not isinstance(spec, TensorSpec):
                raise TypeError(f"OptionalSpec: element specs must be TensorSpecs, got {spec!r}")
        self._element_spec = element_spec

    element_spec = property(lambda self: self._element_spec)
    value_type = property(lambda self: Optional)

    @classmethod
    def from_value(cls, value: Optional) -> "OptionalSpec":
        return value._type_spec

    @property
    def _component_specs(self) -> List[TensorSpec]:
        return [TensorSpec([], "bool")] + [TensorSpec(s.shape, s.dtype)
                                           for s in nest.flatten(self._element_spec)]

    def _to_components(self, value: Optional) -> List[Any]:
        specs = nest.flatten(self._element_spec)
        if value._flat is None:  # empty: zeros stand in for the value the spec describes
            flat = [zeros([d or 0 for d in (s.shape.as_list() or [])], s.dtype)
                    if s.shape.rank is not None else zeros([0], s.dtype) for s in specs]
        else:
            flat = [convert_to_tensor(v) for v in value._flat]
        has = value._has if value._has is not None else \
            convert_to_tensor(np.bool_(value._flat is not None))
        return [has] + flat

    def _from_components(self, components: List[Any]) -> Optional:
        return Optional(self._element_spec, list(components[1:]), has=components[0])

    def _serialize(self) -> tuple:
        return (self._element_spec,)

    def __repr__(self) -> str:
        return f"OptionalSpec({self._element_spec!r},)"
