"""A recorded profile as a Chrome trace event JSON (chrome://tracing and Perfetto open it)
and as a text table of the top ops by self time, with the user source line of each op.

Self time is an event's duration minus that of the events nested in it on the same thread
(a while op's own time excludes its body's ops; a function's excludes its ops).
"""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from typing import Any, Dict, List, Tuple

from kilnflow.saving.fileio import write_atomically


def self_times(events: List[tuple]) -> List[int]:
    """Per event (same order): its duration minus its direct children's, per thread."""
    result = [0] * len(events)
    order = sorted(range(len(events)), key=lambda i: (events[i][3], events[i][1], -events[i][2]))
    stack: List[int] = []
    thread = None
    for i in order:
        _, start, end, tid = events[i]
        if tid != thread:
            stack, thread = [], tid
        while stack and events[stack[-1]][2] <= start:
            stack.pop()
        result[i] = end - start
        if stack:
            result[stack[-1]] -= end - start
        stack.append(i)
    return result


def _where(site: Any) -> str:
    return f"{site.location[0]}:{site.location[1]}" if site.location else ""


def chrome_trace(recorder: Any) -> Dict[str, Any]:
    """The Chrome trace event format: one complete ('X') event per record, in µs."""
    pid = os.getpid()
    origin = recorder.start_ns
    names = {t.ident: t.name for t in threading.enumerate()}
    names.update(getattr(recorder, "threads", {}))
    events: List[dict] = []
    for tid in sorted({e[3] for e in recorder.events}):
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"name": names.get(tid, f"thread {tid}")}})
    for site, start, end, tid in recorder.events:
        args = {"type": site.type, "function": site.function}
        if site.location:
            args["source"] = _where(site)
        events.append({"name": site.name, "cat": site.type, "ph": "X", "pid": pid,
                       "tid": tid, "ts": (start - origin) / 1000.0,
                       "dur": (end - start) / 1000.0, "args": args})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"producer": "kilnflow", "dropped_events": recorder.dropped}}


def op_table(recorder: Any, top: int = 20) -> List[Tuple[str, str, str, int, int, int]]:
    """(op name, type, source line, calls, self ns, total ns) rows, largest self time first;
    function calls and Trace ranges are left out."""
    selfs = self_times(recorder.events)
    rows: Dict[tuple, list] = {}
    for (site, start, end, _), own in zip(recorder.events, selfs):
        if site.type in ("function", "trace"):
            continue
        row = rows.setdefault((site.function, site.name, site.type, _where(site)), [0, 0, 0])
        row[0] += 1
        row[1] += own
        row[2] += end - start
    ranked = sorted(rows.items(), key=lambda kv: -kv[1][1])[:top]
    return [(f"{k[0]}/{k[1]}", k[2], k[3], v[0], v[1], v[2]) for k, v in ranked]


def format_table(recorder: Any, top: int = 20) -> str:
    """The top ops by self time as text, with their share of the profiled function time."""
    calls = [e for e in recorder.events if e[0].type == "function"]
    wall = sum(end - start for _, start, end, _ in calls) or 1
    lines = [f"{'op':40} {'type':18} {'calls':>6} {'self ms':>9} {'self %':>7}  source"]
    for name, type_, where, count, own, _ in op_table(recorder, top):
        lines.append(f"{name[:40]:40} {type_[:18]:18} {count:6d} {own / 1e6:9.3f} "
                     f"{100.0 * own / wall:6.1f}%  {where}")
    lines.append(f"{len(calls)} function calls, {wall / 1e6:.3f} ms in compiled functions")
    return "\n".join(lines)


def write_profile(recorder: Any, logdir: str) -> str:
    """Write `<logdir>/plugins/profile/<run>/<host>.trace.json` (TensorBoard's profile
    layout) and a `top_ops.txt` beside it; returns the trace file's path."""
    run = time.strftime("%Y_%m_%d_%H_%M_%S")
    folder = os.path.join(os.fspath(logdir), "plugins", "profile", run)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{socket.gethostname()}.trace.json")
    write_atomically(path, json.dumps(chrome_trace(recorder)).encode())
    write_atomically(os.path.join(folder, "top_ops.txt"),
                       (format_table(recorder) + "\n").encode())
    return path
