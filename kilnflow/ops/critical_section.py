"""kf.CriticalSection: run a function with exclusive access, one caller at a time.

Eagerly, execute() calls the function under the section's lock. While a graph is built the
function is traced into a subgraph held by one stateful CriticalSectionExecute op, whose
kernel runs it under the lock: the lock is released however the run ends, so a failing
call never leaves the section held. A section re-entered from inside itself raises
ValueError, as in TF. Gradients replay the traced fn under a tape (fns with side effects
are refused: a replay would repeat them).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, Optional

from kilnflow import nest
from kilnflow.context import ctx
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array
from kilnflow.ops.subgraph import Subgraph, any_stateful, replay, trace_subgraph, \
    unify_captures
from kilnflow.shapes import TensorSpec


def _rule(*captured: Any, body: Subgraph, section: Any, output_specs: tuple) -> list:
    return list(output_specs)


def _kernel(*captured: Any, body: Subgraph, section: Any, output_specs: tuple) -> tuple:
    with section.held():
        return tuple(body.run((), captured))


def _grad(op: Any, *dys: Any) -> list:
    """fn's gradient: its subgraph replayed under a tape (as cond's branches are)."""
    body, captured = op.attrs["body"], list(op.inputs)
    if not captured:
        return []
    if any_stateful(body.graph):  # replaying would update variables / draw numbers again
        raise NotImplementedError("Gradients through a CriticalSection.execute whose fn "
                                  "has side effects are not supported inside a graph")
    from kilnflow.autodiff.tape import GradientTape
    dys = [array.zeros_like(o) if d is None else d for d, o in zip(dys, op.outputs)]
    with GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(captured)
        outs = replay(body.graph, body.feed((), captured))
    return tape.gradient(outs, captured, output_gradients=dys)


EXECUTE = defop("CriticalSectionExecute", shape=_rule, kernel=_kernel, grad=_grad,
                stateful=True, multi_output=True, same_dtype=False)


class CriticalSection:
    """A resource that lets one `execute(fn)` run at a time (across threads and calls).

    >>> import kilnflow as kf
    >>> cs = kf.CriticalSection()
    >>> v = kf.Variable(0)
    >>> int(cs.execute(lambda: v.assign_add(1)))
    1
    """

    def __init__(self, name: Optional[str] = None, shared_name: Optional[str] = None,
                 critical_section_def: Any = None, import_scope: Any = None):
        self.name = name or "CriticalSection"
        self._lock = threading.Lock()
        self._running = threading.local()  # this thread is inside execute() / tracing it

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The lock, refused (ValueError) to a thread already inside this section."""
        if getattr(self._running, "inside", False):
            raise ValueError("Attempting to lock a CriticalSection in which we are already "
                             "running. This is illegal and may cause deadlocks.")
        with self._lock:
            self._running.inside = True
            try:
                yield
            finally:
                self._running.inside = False

    def execute(self, fn: Callable[[], Any], exclusive_resource_access: bool = True,
                name: Optional[str] = None) -> Any:
        """The result of `fn()`, computed while no other execute() of this section runs."""
        if ctx.graph is None:
            with self.held():
                return fn()
        if getattr(self._running, "inside", False):
            raise ValueError("Attempting to lock a CriticalSection in which we are already "
                             "running. This is illegal and may cause deadlocks.")
        self._running.inside = True
        try:  # a nested execute() of this section is refused while fn is traced
            graph, result, flat = trace_subgraph("critical_section", fn, (), ctx.graph)
        finally:
            self._running.inside = False
        graph.outputs = [t for t in flat if t is not None]
        captured, (positions,) = unify_captures([graph])
        specs = tuple(TensorSpec(t.shape, t.dtype) for t in graph.outputs)
        outs = iter(bind(EXECUTE, captured, {"body": Subgraph(graph, 0, positions),
                                             "section": self, "output_specs": specs},
                         name=name or "CriticalSectionExecute"))
        return nest.pack_sequence_as(result, [next(outs) if t is not None else None
                                              for t in flat])

    def __repr__(self) -> str:
        return f"<CriticalSection {self.name}>"
