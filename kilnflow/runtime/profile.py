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

import functools
import threading
import time
import weakref
from typing import Any, Callable, Iterable, Iterator, List, Optional

from kilnflow.runtime import codegen, loader

clock = time.perf_counter_ns
MAX_EVENTS = 2_000_000  # a long profile keeps its first events, then counts the dropped


class Site:
    """What one record is about: an op of a graph, a whole function call, or a range."""

    __slots__ = ("name", "type", "location", "function", "pinned", "op")

    def __init__(self, name: str, type_: str, location: Any = None, function: str = "",
                 pinned: Optional["Recorder"] = None, op: Any = None):
        self.name = name
        self.type = type_
        self.location = location   # (file, line) of the user code that created the op
        self.function = function   # the compiled function it belongs to
        self.pinned = pinned       # the recorder of a kf.function(experimental_profile=True)
        self.op = op               # the graph op (of the function or of a body), if any


class Recorder:
    """Events (site, start ns, end ns, thread id) and the graphs of the functions run."""

    def __init__(self) -> None:
        self.events: list = []
        self.dropped = 0
        self.graphs: dict = {}      # function name -> optimized graph, in first-run order
        self.threads: dict = {}     # thread id -> name, taken while it runs (it may end)
        self.traced: dict = {}      # function name -> its graph as traced (before passes)
        self.start_ns = clock()
        self.stop_ns: Optional[int] = None

    def add(self, site: Site, start: int, end: int) -> None:
        if len(self.events) < MAX_EVENTS:
            tid = threading.get_ident()
            if tid not in self.threads:
                self.threads[tid] = threading.current_thread().name
            self.events.append((site, start, end, tid))
        else:
            self.dropped += 1


_active: List[Recorder] = []
_call_hook: List[Callable] = []   # enable_compare_modes: runs instead of each call
_checks: List[tuple] = []   # enable_check_numerics: (value observer, graph to compile)
_live: "weakref.WeakSet" = weakref.WeakSet()
_twins: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_pinned: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # owner -> Recorder
_lock = threading.RLock()


def record_op(site: Site, start: int, end: int) -> None:
    """Called by profiled twins after each op (and by Trace ranges)."""
    for recorder in _active:
        recorder.add(site, start, end)
    if site.pinned is not None:
        site.pinned.add(site, start, end)


def recording() -> bool:
    return bool(_active)


def host_task(fn: Callable, name: str) -> Callable:
    """`fn`, timed on whichever thread runs it while a profile records (else `fn` itself):
    the fused engine's worker threads show as their own rows of the trace."""
    if not _active:
        return fn
    site = Site(name, "host_thread", None, "")

    def timed(*args: Any) -> Any:
        start = clock()
        try:
            return fn(*args)
        finally:
            record_op(site, start, clock())
    return timed


_host_sites: dict = {}


def host_range(name: str, type_: str, start: int) -> None:
    """Record [start, now] on this thread as a `type_` range called `name` (tf.data's
    GetNext and its prefetch thread). Callers test recording() first: off costs that."""
    site = _host_sites.get((name, type_))
    if site is None:
        site = _host_sites[(name, type_)] = Site(name, type_, None, "")
    record_op(site, start, clock())


def timed_items(items: Iterable, name: str, type_: str = "tf.data") -> Iterator:
    """`items`, each one's production recorded as a `name` range while a profile records
    (a background producer's thread shows as its own row of the trace)."""
    source = iter(items)
    while True:
        start = clock() if _active else 0
        try:
            item = next(source)
        except StopIteration:
            return
        if start and _active:
            host_range(name, type_, start)
        yield item


class _Probe:
    """Adds `t = clock()` before an op's statement and `record_op(site, t, clock())` after."""

    def __init__(self, function: str, observe: Optional[Callable] = None,
                 pinned: Optional[Recorder] = None):
        self.function = function
        self.pinned = pinned
        self.observe = observe   # called with (site, output arrays) after each op
        self._starts: dict = {}

    def before(self, op: Any, emitter: Any, indent: str) -> None:
        start = emitter.namer.fresh("t_" + op.name)
        self._starts[id(op)] = start
        emitter.lines.append(f"{indent}{start} = {emitter.global_ref(clock, 'clock')}()")

    def after(self, op: Any, emitter: Any, indent: str, env: dict) -> None:
        site = Site(op.name, op.type, op.location, self.function, self.pinned, op)
        if self.observe is not None:  # values too (check_numerics, compare_modes)
            outs = "".join(env[id(t)] + ", " for t in op.outputs)
            emitter.lines.append(f"{indent}{emitter.global_ref(self.observe, 'observe')}("
                                 f"{emitter.global_ref(site, 'site')}, ({outs}))")
        emitter.lines.append(
            f"{indent}{emitter.global_ref(record_op, 'record_op')}("
            f"{emitter.global_ref(site, 'site')}, {self._starts.pop(id(op))}, "
            f"{emitter.global_ref(clock, 'clock')}())")


def observed(graph: Any, name: str, observe: Callable) -> Callable:
    """`graph` compiled with `observe(site, outputs)` called after every op."""
    source, globals_, _ = codegen.generate(codegen.identifier(name), graph.operations,
                                           graph.inputs, graph.outputs,
                                           probe=_Probe(name, observe))
    return loader.load(source, globals_, f"{name} observed")


def profiled_twin(owner: Any) -> Callable:
    """The owner's graph compiled with a probe on every op, plus a record per call."""
    twin = _twins.get(owner)
    if twin is not None:
        return twin
    observe, graph_for = _checks[0] if _checks else (None, None)
    graph = graph_for(owner) if graph_for is not None else owner.graph
    pinned = _pinned.get(owner)
    source, globals_, _ = codegen.generate(codegen.identifier(owner.name), graph.operations,
                                           graph.inputs, graph.outputs,
                                           probe=_Probe(owner.name, observe, pinned))
    fn = loader.load(source, globals_, f"{owner.name} profiled")
    site = Site(owner.name, "function", None, owner.name, pinned)
    name = owner.name
    traced = getattr(owner, "traced_graph", graph)

    def run(*arrays: Any) -> Any:
        for recorder in _active:
            if name not in recorder.graphs:
                recorder.graphs[name] = graph
                recorder.traced[name] = traced
        if pinned is not None:
            pinned.graphs.setdefault(name, graph)
        start = clock()
        try:
            return fn(*arrays)
        finally:
            record_op(site, start, clock())
    run.__kilnflow_source__ = source
    _twins[owner] = run
    return run


def _code_for(owner: Any) -> Callable:
    """What a call of `owner` runs now: the call hook, a twin, or its plain code."""
    if _call_hook:
        return functools.partial(_call_hook[0], owner)
    if _active or _checks or owner in _pinned:
        return profiled_twin(owner)
    return owner._plain_fn


def _update_all() -> None:
    for owner in list(_live):
        owner._fn = _code_for(owner)


def register(owner: Any, pinned: Optional[Recorder] = None) -> None:
    """Track a compiled function; it runs its profiled twin while a profile records (or
    while value checks are on), always when `pinned` (a recorder of its own: the
    experimental_profile option of kf.function)."""
    with _lock:
        _live.add(owner)
        if pinned is not None:
            _pinned[owner] = pinned
            _twins.pop(owner, None)
        if _active or _checks or _call_hook or pinned is not None:
            owner._fn = _code_for(owner)


def set_checks(observe: Optional[Callable], graph_for: Optional[Callable] = None) -> None:
    """Turn the per-op value observer on (kf.debugging.enable_check_numerics) or off;
    `graph_for(owner)` gives the graph twins compile (e.g. one without fused groups)."""
    with _lock:
        _checks[:] = [(observe, graph_for)] if observe is not None else []
        _twins.clear()   # twins are regenerated with (or without) the observer
        _update_all()


def set_call_hook(hook: Optional[Callable]) -> None:
    """While set, every compiled call runs `hook(owner, *arrays)` instead of its code
    (kf.debugging.enable_compare_modes); None restores the usual code."""
    with _lock:
        _call_hook[:] = [hook] if hook is not None else []
        _update_all()


def start(recorder: Recorder) -> None:
    with _lock:
        _active.append(recorder)
        if len(_active) == 1:
            _update_all()


def stop(recorder: Recorder) -> None:
    with _lock:
        if recorder in _active:
            _active.remove(recorder)
            recorder.stop_ns = clock()
        if not _active:
            _update_all()
