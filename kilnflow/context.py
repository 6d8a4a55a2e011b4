"""The mode stack: eager, or building a graph; plus the active gradient tapes.

`ctx.graph is None` means eager. Only core/opdef.bind() branches on the mode; other
layers push and pop graphs (Graph.as_default, FuncGraph tracing) and tapes here.
Imports nothing from kilnflow.
"""
from __future__ import annotations

import contextlib
import os
import threading
import weakref
from typing import Any, Iterator


# run_functions_eagerly is process-wide, as in TF; every thread's precomputed `plain_call`
# flag is refreshed when it changes (each thread's attribute dict, kept by its thread).
def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 1 << 40


_process = {"run_functions_eagerly": False, "allocation_limit": _physical_memory()}
_thread_states: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


class _Context(threading.local):
    def __init__(self) -> None:
        self._graph = None         # the Graph being built, or None when eager
        self._tapes: list = []     # active GradientTapes, innermost last
        with _states_lock:
            _thread_states[threading.current_thread()] = self.__dict__
        self._refresh()
        self.graph_stack: list = []
        self.eager_default = True  # False after compat.v1.disable_eager_execution()
        self.v1_default_graph = None
        self.control_deps: list = []  # stack of lists of ops (kf.control_dependencies)
        self.variable_hooks: list = []  # called with each new Variable (function tracing)
        self.default_session = None
        # >0 while building ops the pruning diagnostic should not report (gradients, probes)
        self.quiet_ops = 0


    # The hot paths (eager dispatch, compiled calls) read one precomputed flag instead of
    # three attributes; the setters below keep it current.
    def _refresh(self) -> None:
        with _states_lock:  # a concurrent run_functions_eagerly() cannot leave us stale
            self.plain_eager = self._graph is None and not self._tapes
            self.plain_call = self.plain_eager and not _process["run_functions_eagerly"]

    @property
    def graph(self):
        return self._graph

    @graph.setter
    def graph(self, value) -> None:
        self._graph = value
        self._refresh()

    @property
    def tapes(self) -> list:
        return self._tapes

    @tapes.setter
    def tapes(self, value: list) -> None:
        self._tapes = value
        self._refresh()

    @property
    def run_functions_eagerly(self) -> bool:
        return _process["run_functions_eagerly"]

    @run_functions_eagerly.setter
    def run_functions_eagerly(self, value: bool) -> None:
        with _states_lock:
            _process["run_functions_eagerly"] = bool(value)
            for state in list(_thread_states.values()):
                state["plain_call"] = state["plain_eager"] and not value


ctx = _Context()


def allocation_limit() -> int:
    """Bytes one op output may take (process-wide); larger ones raise
    ResourceExhaustedError before anything is allocated."""
    return _process["allocation_limit"]


def set_allocation_limit(limit_bytes=None) -> None:
    """Set the per-output allocation limit; None restores the default (physical memory)."""
    if limit_bytes is not None and (not isinstance(limit_bytes, int) or limit_bytes <= 0):
        raise ValueError(f"set_allocation_limit: expected a positive int of bytes or None, "
                         f"got {limit_bytes!r}")
    _process["allocation_limit"] = _physical_memory() if limit_bytes is None else limit_bytes


def executing_eagerly() -> bool:
    """True when ops run immediately (TF2's default), False while a graph is being built.

    >>> import kilnflow as kf
    >>> kf.executing_eagerly()
    True
    """
    return ctx.graph is None


@contextlib.contextmanager
def building(graph: Any) -> Iterator[Any]:
    """Make `graph` the graph that new ops are added to."""
    ctx.graph_stack.append(ctx.graph)
    ctx.graph = graph
    try:
        yield graph
    finally:
        ctx.graph = ctx.graph_stack.pop()


@contextlib.contextmanager
def eager_mode() -> Iterator[None]:
    """Run ops eagerly inside, even while a graph is being built (init_scope)."""
    ctx.graph_stack.append(ctx.graph)
    ctx.graph = None
    try:
        yield
    finally:
        ctx.graph = ctx.graph_stack.pop()


@contextlib.contextmanager
def quiet_ops() -> Iterator[None]:
    """Ops built inside are bookkeeping (gradients of unused inputs, AutoGraph probes):
    if they end up unused, pruning them is expected and not worth a warning."""
    ctx.quiet_ops += 1
    try:
        yield
    finally:
        ctx.quiet_ops -= 1


@contextlib.contextmanager
def no_tapes() -> Iterator[None]:
    saved = ctx.tapes
    ctx.tapes = []
    try:
        yield
    finally:
        ctx.tapes = saved
