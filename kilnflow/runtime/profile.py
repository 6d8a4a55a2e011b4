"""The profiler's runtime half: op start/stop records from compiled functions, at zero
cost when no profile is being recorded.

Every compiled function registers here (`register`). While a Recorder is active, each one
runs a *profiled twin*: the same graph generated again with a clock reading before and a
`record_op` call after every op (cond / while bodies included, each loop iteration
recorded), wrapped by one record for the whole call. When the last Recorder stops, the
plain generated code is back: an unprofiled call runs exactly the code it ran before, no
flag checked per op or per call.

Protocol: a registered owner has `.name`, `.graph` (the optimized graph it runs), `._fn`
(what its calls run) and `._plain_fn` (its unprofiled code); only this module swaps `_fn`.
Reads graph ops only; never imports function/ or above.
"""
from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable, List, Optional

from kilnflow.runtime import codegen, loader

clock = time.perf_counter_ns
MAX_EVENTS = 2_000_000  # a long profile keeps its first events, then counts the dropped


class Site:
    """What one record is about: an op of a graph, a whole function call, or a range."""

    __slots__ = ("name", "type", "location", "function")

    def __init__(self, name: str, type_: str, location: Any = None, function: str = ""):
        self.name = name
        self.type = type_
        self.location = location   # (file, line) of the user code that created the op
        self.function = function   # the compiled function it belongs to


class Recorder:
    """Events (site, start ns, end ns, thread id) and the graphs of the functions run."""

    def __init__(self) -> None:
        self.events: list = []
        self.dropped = 0
        self.graphs: dict = {}      # function name -> optimized graph, in first-run order
        self.start_ns = clock()
        self.stop_ns: Optional[int] = None

    def add(self, site: Site, start: int, end: int) -> None:
        if len(self.events) < MAX_EVENTS:
            self.events.append((site, start, end, threading.get_ident()))
        else:
            self.dropped += 1


_active: List[Recorder] = []
_live: "weakref.WeakSet" = weakref.WeakSet()
_twins: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_lock = threading.RLock()


def record_op(site: Site, start: int, end: int) -> None:
    """Called by profiled twins after each op (and by Trace ranges)."""
    for recorder in _active:
        recorder.add(site, start, end)


def recording() -> bool:
    return bool(_active)


class _Probe:
    """Adds `t = clock()` before an op's statement and `record_op(site, t, clock())` after."""

    def __init__(self, function: str):
        self.function = function
        self._starts: dict = {}

    def before(self, op: Any, emitter: Any, indent: str) -> None:
        start = emitter.namer.fresh("t_" + op.name)
        self._starts[id(op)] = start
        emitter.lines.append(f"{indent}{start} = {emitter.global_ref(clock, 'clock')}()")

    def after(self, op: Any, emitter: Any, indent: str) -> None:
        site = Site(op.name, op.type, op.location, self.function)
        emitter.lines.append(
            f"{indent}{emitter.global_ref(record_op, 'record_op')}("
            f"{emitter.global_ref(site, 'site')}, {self._starts.pop(id(op))}, "
            f"{emitter.global_ref(clock, 'clock')}())")


def profiled_twin(owner: Any) -> Callable:
    """The owner's graph compiled with a probe on every op, plus a record per call."""
    twin = _twins.get(owner)
    if twin is not None:
        return twin
    graph = owner.graph
    source, globals_, _ = codegen.generate(codegen.identifier(owner.name), graph.operations,
                                           graph.inputs, graph.outputs,
                                           probe=_Probe(owner.name))
    fn = loader.load(source, globals_, f"{owner.name} profiled")
    site = Site(owner.name, "function", None, owner.name)
    name = owner.name

    def run(*arrays: Any) -> Any:
        for recorder in _active:
            recorder.graphs.setdefault(name, graph)
        start = clock()
        try:
            return fn(*arrays)
        finally:
            record_op(site, start, clock())
    run.__kilnflow_source__ = source
    _twins[owner] = run
    return run


def register(owner: Any) -> None:
    """Track a compiled function; it runs its profiled twin while a profile records."""
    with _lock:
        _live.add(owner)
        if _active:
            owner._fn = profiled_twin(owner)


def start(recorder: Recorder) -> None:
    with _lock:
        _active.append(recorder)
        if len(_active) == 1:
            for owner in list(_live):
                owner._fn = profiled_twin(owner)


def stop(recorder: Recorder) -> None:
    with _lock:
        if recorder in _active:
            _active.remove(recorder)
            recorder.stop_ns = clock()
        if not _active:
            for owner in list(_live):
                owner._fn = owner._plain_fn
