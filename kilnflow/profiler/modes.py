"""kf.debugging.compare_modes: run a function the eager way and compiled on the same
inputs and name the first op of the compiled graph whose outputs differ.

The reference runs the traced graph op by op with the same kernels eager execution uses
(cond / while bodies too, by the graph interpreter); the compiled code runs with every
op's outputs observed (runtime/profile.py). Random ops take the compiled run's draws in
the reference, in the order they were drawn (inside branches and loop bodies too), and
so do stateful ops with outside effects (print, summaries, iterators); variables are
restored between runs, so the function's effects happen once. A difference inside a fused
group is looked for again with fusion off, to name the member op, and one in a cond /
while op inside its bodies. enable_compare_modes does it on every call.
"""
from __future__ import annotations

import contextlib
import warnings
from collections import deque
from typing import Any, Callable, Dict, Iterator, Optional

import numpy as np

from kilnflow.core.opdef import REGISTRY
from kilnflow.function.api import Function, function
from kilnflow.function.trace_key import make_key
from kilnflow.passes import pipeline
from kilnflow.runtime import interpreter, profile


def unfused(graph: Any) -> Any:
    """`graph` optimized with fusion off, so every op is checked on its own."""
    options = pipeline.get_options()
    pipeline.set_options({"fuse_elementwise": False})
    try:
        return pipeline.optimize(graph)[0]
    finally:
        pipeline.set_options(options)


class ModeComparison:
    """What compare_modes found: `equal`, or the first differing op and its numbers."""

    def __init__(self, name: str, op: Any = None, eager: Any = None, compiled: Any = None,
                 inputs: Optional[list] = None):
        self.function = name
        self.equal = op is None
        self.op_name = getattr(op, "name", None)
        self.op_type = getattr(op, "type", None)
        self.location = getattr(op, "location", None)
        self.eager_value, self.compiled_value = eager, compiled
        self.inputs = inputs or []
        self.max_abs_diff = self.max_rel_diff = 0.0
        if op is not None and np.shape(eager) == np.shape(compiled):
            diff = np.abs(np.asarray(eager, np.float64) - np.asarray(compiled, np.float64))
            self.max_abs_diff = float(np.nanmax(diff)) if diff.size else 0.0
            scale = np.maximum(np.abs(np.asarray(eager, np.float64)), 1e-30)
            self.max_rel_diff = float(np.nanmax(diff / scale)) if diff.size else 0.0

    def __bool__(self) -> bool:
        return self.equal

    def __str__(self) -> str:
        if self.equal:
            return f"compare_modes({self.function}): eager and compiled agree"
        where = f" at {self.location[0]}:{self.location[1]}" if self.location else ""
        shown = "\n".join(f"    input {i}: {np.array2string(np.asarray(v), threshold=20)}"
                          for i, v in enumerate(self.inputs))
        return (f"compare_modes({self.function}): first difference at op {self.op_name} "
                f"({self.op_type}){where}: max abs diff {self.max_abs_diff:.6g}, max rel diff "
                f"{self.max_rel_diff:.6g}\n  eager:    {self.eager_value!r}\n  compiled: "
                f"{self.compiled_value!r}\n  inputs:\n{shown}")


def _is_handle(value: Any) -> bool:
    return hasattr(value, "value") and hasattr(value, "dtype") and hasattr(value, "trainable")


def _handles(graph: Any) -> list:
    return [v for op in graph.operations for v in op.attrs.values() if _is_handle(v)]


def _replayed(op: Any) -> bool:
    """Ops whose outputs the reference takes from the compiled run, in order, instead of
    running them again: random ops (same draws) and stateful ops whose effects are outside
    the function's variables (print, summaries, iterators, py_function), which so happen
    once. Variable ops and ops with bodies run in both (variables are restored)."""
    if op is None:
        return False
    if op.opdef.random:
        return True
    return op.opdef.stateful and not any(
        _is_handle(v) or (hasattr(v, "graph") and hasattr(v, "run")) for v in op.attrs.values())


@contextlib.contextmanager
def _replaying(draws: deque, log: Optional[list] = None) -> Iterator[None]:
    """While open, stateful kernels return the compiled run's outputs (oldest first) when
    the next one recorded (see _replayed) is of their type, else run; with `log`, every
    kernel call appends (op type, inputs, outputs) to it."""
    saved = {}
    for opdef in list(REGISTRY.values()):
        if opdef.stateful or (log is not None and opdef.name not in ("Const", "Placeholder")):
            saved[opdef] = opdef.kernel
            opdef.kernel = _replay(opdef, opdef.kernel, draws, log)
    try:
        yield
    finally:
        for opdef, kernel in saved.items():
            opdef.kernel = kernel


def _replay(opdef: Any, kernel: Callable, draws: deque, log: Optional[list]) -> Callable:
    def run(*arrays: Any, **attrs: Any) -> Any:
        if draws and draws[0][0] == opdef.name:
            outputs = draws.popleft()[1]
            out = list(outputs) if opdef.multi_output else outputs[0]
        else:
            out = kernel(*arrays, **attrs)
        if log is not None:
            results = list(out) if opdef.multi_output else [out]
            log.append((opdef.name, [np.array(a, copy=True) for a in arrays],
                        [np.array(r, copy=True) for r in results]))
        return out
    return run


def _reference(graph: Any, arrays: list, draws: deque) -> Dict[str, tuple]:
    """Every op's (inputs, outputs) from its kernel, in graph order, as eager runs them;
    ops with bodies (cond, while) run them op by op through the graph interpreter."""
    env: Dict[int, Any] = {id(t): a for t, a in zip(graph.inputs, arrays)}
    values: Dict[str, tuple] = {}
    with _replaying(draws):
        for op in graph.operations:
            if op.outputs and id(op.outputs[0]) in env:
                continue
            args = [env[id(t)] for t in op.inputs]
            result = interpreter.evaluate([op], list(op.inputs), list(op.outputs), args)
            for t, value in zip(op.outputs, result):
                env[id(t)] = value
            values[op.name] = (args, [np.array(r, copy=True) for r in result])
    return values


def _differs(a: Any, b: Any, rtol: float, atol: float) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return True
    if a.dtype.kind in "fc":
        return not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
    return not np.array_equal(a, b)


def _first_difference(graph: Any, concrete: Any, arrays: list, handles: list, saved: list,
                      rtol: float, atol: float) -> tuple:
    """((op, eager value, compiled value, op inputs) of the first differing op of `graph`
    (compiled) or None, the compiled outputs); variables are left as the compiled run
    left them."""
    seen: Dict[str, list] = {}
    draws: deque = deque()   # (op type, outputs) of every replayed op run, in order
    top = {id(op) for op in graph.operations}

    def observe(site: Any, outputs: tuple) -> None:
        copies = [np.array(o, copy=True) for o in outputs]
        if id(site.op) in top:   # an op of the function itself, not of a body
            seen.setdefault(site.name, copies)
        if _replayed(site.op):
            draws.append((site.type, copies))

    for h, value in zip(handles, saved):
        h.value = np.array(value, copy=True)
    outputs = profile.observed(graph, concrete.name, observe)(*[a.copy() for a in arrays])
    after = [h.value for h in handles]
    for h, value in zip(handles, saved):
        h.value = np.array(value, copy=True)
    reference = _reference(concrete.traced_graph, [a.copy() for a in arrays], draws)
    for h, value in zip(handles, after):   # the function's effects happen once
        h.value = value
    for op in graph.operations:
        if op.name not in seen or op.name not in reference:
            continue
        inputs, expected = reference[op.name]
        for want, got in zip(expected, seen[op.name]):
            if _differs(want, got, rtol, atol):
                return (op, want, got, inputs), outputs
    return None, outputs


def _inside_bodies(concrete: Any, arrays: list, handles: list, saved: list, rtol: float,
                   atol: float) -> Optional[tuple]:
    """The first differing op anywhere, cond / while bodies included: the traced graph run
    compiled (unfused) and by the interpreter, their op executions matched in order."""
    graph = unfused(concrete.traced_graph)
    compiled: list = []
    draws: deque = deque()

    def observe(site: Any, outputs: tuple) -> None:
        copies = [np.array(o, copy=True) for o in outputs]
        compiled.append((site.op, copies))
        if _replayed(site.op):
            draws.append((site.type, copies))

    for h, value in zip(handles, saved):
        h.value = np.array(value, copy=True)
    after = [h.value for h in handles]
    try:
        profile.observed(graph, concrete.name, observe)(*[a.copy() for a in arrays])
        after = [h.value for h in handles]
        for h, value in zip(handles, saved):
            h.value = np.array(value, copy=True)
        log: list = []
        with _replaying(draws, log):
            interpreter.evaluate_graph(graph, [a.copy() for a in arrays])
    except Exception:  # noqa: BLE001 - the search is best effort; the outer report stands
        return None
    finally:
        for h, value in zip(handles, after):
            h.value = value
    for (op, got), (kind, inputs, want) in zip(compiled, log):
        if op is None or op.type != kind:
            return None   # the runs took different paths: no reliable match
        for w, g in zip(want, got):
            if _differs(w, g, rtol, atol):
                return op, w, g, inputs
    return None


def compare_modes(f: Callable, *args: Any, rtol: float = 1e-5, atol: float = 1e-6,
                  **kwargs: Any) -> ModeComparison:
    """Run `f` (a kf.function or a Python function) the eager way and compiled on the same
    inputs; return the first op of the compiled graph whose outputs differ (op name, type,
    user line, max abs/rel difference, its input values), or an `equal` report. A
    difference inside a fused group is looked for again with fusion off, to name the op.

    >>> import kilnflow as kf
    >>> report = kf.debugging.compare_modes(lambda x: kf.exp(x) * 2.0, kf.constant([1.0]))
    >>> report.equal
    True
    """
    fn = f if isinstance(f, Function) else function(f)
    concrete = fn.get_concrete_function(*args, **kwargs)
    _, tensors, _ = make_key(args, kwargs)
    arrays = [np.array(t) for t in tensors]
    found, _ = _compare_flat(concrete, arrays, rtol, atol)
    return ModeComparison(concrete.name, *found) if found else ModeComparison(concrete.name)


def _compare_flat(concrete: Any, arrays: list, rtol: float, atol: float) -> tuple:
    """(first difference or None, compiled outputs) for one call on flat input arrays."""
    handles = _handles(concrete.traced_graph)
    saved = [np.array(h.value, copy=True) for h in handles]
    found, outputs = _first_difference(concrete.graph, concrete, arrays, handles, saved,
                                       rtol, atol)
    if found is not None and "program" in found[0].attrs:   # a fused group: which member?
        member, outputs = _first_difference(unfused(concrete.traced_graph), concrete,
                                            arrays, handles, saved, rtol, atol)
        found = member or found
    if found is not None and any(hasattr(v, "graph") and hasattr(v, "run")
                                 for v in found[0].attrs.values()):   # which op inside?
        after = [h.value for h in handles]
        found = _inside_bodies(concrete, arrays, handles, saved, rtol, atol) or found
        for h, value in zip(handles, after):
            h.value = value
    return found, outputs


class ModeMismatchWarning(UserWarning):
    """enable_compare_modes found a compiled op that disagrees with eager execution."""


def enable_compare_modes(rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """While debugging: every call of every compiled function is also run the eager way
    (as compare_modes does) and a ModeMismatchWarning names the first differing op.
    Calls are several times slower until disable_compare_modes()."""
    def call(concrete: Any, *arrays: Any) -> tuple:
        found, outputs = _compare_flat(concrete, list(arrays), rtol, atol)
        if found is not None:
            warnings.warn(str(ModeComparison(concrete.name, *found)), ModeMismatchWarning)
        return outputs
    profile.set_call_hook(call)


def disable_compare_modes() -> None:
    profile.set_call_hook(None)
