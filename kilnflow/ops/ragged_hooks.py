"""Where kilnflow.ragged plugs RaggedTensor support into the dense ops, which sit below it
and must not import it: `RAGGED` is the RaggedTensor class (a placeholder no value is an
instance of until kilnflow.ragged is imported), so the dense path pays a type check (binary
ops compare exact types: an ABC isinstance costs 100-300 ns on `x + 1`'s hot path, and
RaggedTensor has no subclasses); the handlers are installed by kilnflow/ragged/dispatch.py at import time."""
from __future__ import annotations

from typing import Any, Callable, Optional


class _NoRaggedYet:
    """Stands in for RaggedTensor until kilnflow.ragged installs it."""


RAGGED: type = _NoRaggedYet
binary: Optional[Callable[..., Any]] = None   # (fn, x, y, name) -> RaggedTensor
reduce: Optional[Callable[..., Any]] = None   # (kind, rt, axis, keepdims) -> tensor
concat: Optional[Callable[..., Any]] = None   # (values, axis) -> RaggedTensor
stack: Optional[Callable[..., Any]] = None    # (values, axis) -> RaggedTensor

