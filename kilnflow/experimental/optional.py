"""kf.experimental.Optional (tf.experimental.Optional): a value that may be missing.

The same class as what `iterator.get_next_as_optional()` returns, with TF's two
constructors added: `Optional.from_value(value)` and `Optional.empty(element_spec)`.
"""
from __future__ import annotations

from typing import Any

from kilnflow import nest
from kilnflow.data import iterator as _iterator
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec

__all__ = ["Optional"]


class Optional(_iterator.Optional):
    """A structure of tensors, or nothing.

    >>> import kilnflow as kf
    >>> opt = kf.experimental.Optional.from_value(42)
    >>> bool(opt.has_value()), int(opt.get_value())
    (True, 42)
    >>> bool(kf.experimental.Optional.empty(kf.TensorSpec([], kf.int32)).has_value())
    False
    """

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

    def __repr__(self) -> str:
        return f"<kf.experimental.Optional element_spec={self.element_spec!r}>"
