"""The Const op and Literal, its hashable value attr: the one op graph, runtime and passes
need without loading the op families. Imports dtypes, shapes and core.opdef only.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.core.opdef import defop
from kilnflow.shapes import TensorSpec


class Literal:
    """A constant's value as a hashable attr: small values hash by content, large by identity."""

    __slots__ = ("array", "_hash")

    SMALL = 64

    def __init__(self, array: Any):
        self.array = array
        if array.size <= self.SMALL:
            self._hash = hash((array.dtype.str, array.shape, array.tobytes()))
        else:
            self._hash = id(array)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Literal):
            return False
        if other.array is self.array:
            return True
        a, b = self.array, other.array
        return (a.size <= self.SMALL and a.dtype == b.dtype and a.shape == b.shape
                and a.tobytes() == b.tobytes())

    def __repr__(self) -> str:
        return f"Literal({np.asarray(self.array)!r})"


def _const_shape(*, value: Literal) -> TensorSpec:
    return TensorSpec(value.array.shape, _dtypes.from_numpy(value.array.dtype))


CONST = defop("Const", shape=_const_shape, kernel=lambda *, value: value.array)
