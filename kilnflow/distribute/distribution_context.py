"""Which strategy is current, per thread, and whether code runs in a replica or in the
cross-replica context: the stack behind `get_strategy()` and `get_replica_context()`.

Each entry is (strategy, replica context or None); None means cross-replica (inside
`strategy.scope()`, or in a merge_call's merge function). Replica threads of a
MirroredStrategy start with their own stack. Imports nothing from kilnflow.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional, Tuple


class _Stack(threading.local):
    def __init__(self) -> None:
        self.entries: list = []
        self.base: Any = None  # set by experimental_set_strategy: (strategy, None)


_STACK = _Stack()


def top() -> Optional[Tuple[Any, Any]]:
    """(strategy, replica context or None) innermost, or None outside every strategy."""
    return _STACK.entries[-1] if _STACK.entries else _STACK.base


def set_base(strategy: Any) -> None:
    """The entry in effect when no scope is entered (None: the default strategy)."""
    _STACK.base = None if strategy is None else (strategy, None)


def entries() -> list:
    return list(_STACK.entries)


@contextlib.contextmanager
def pushed(strategy: Any, replica_context: Any) -> Iterator[None]:
    """Run the body with `strategy` current, in `replica_context` (None: cross-replica)."""
    _STACK.entries.append((strategy, replica_context))
    try:
        yield
    finally:
        _STACK.entries.pop()


@contextlib.contextmanager
def replaced(stack: list) -> Iterator[None]:
    """Run the body with a whole stack (a replica thread inheriting its caller's)."""
    saved = _STACK.entries
    _STACK.entries = list(stack)
    try:
        yield
    finally:
        _STACK.entries = saved
