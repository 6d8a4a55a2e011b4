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


LOOP_DETAIL = 256   # a loop whose ops made more records than this is shown aggregated
_LOOPS = ("While", "StatelessWhile")


def aggregate_loops(events: List[tuple], limit: int = LOOP_DETAIL) -> List[tuple]:
    """(site, start, end, tid, count) records to draw: every record as is, except inside a
    loop op that holds more than `limit` records (its iterations): those become one record
    per op with its summed self time and call count, laid end to end from the loop's
    start (they fit: self times never exceed the loop's duration); `count` is an op's
    number of calls, or the number of records a loop's row stands for."""
    selfs = self_times(events)
    order = sorted(range(len(events)), key=lambda i: (events[i][3], events[i][1], -events[i][2]))
    out: List[tuple] = []
    k = 0
    while k < len(order):
        i = order[k]
        site, start, end, tid = events[i]
        inner = k + 1
        while inner < len(order) and events[order[inner]][3] == tid and \
                events[order[inner]][1] < end:
            inner += 1
        if site.type not in _LOOPS or inner - k - 1 <= limit:
            out.append((site, start, end, tid, 1))
            k += 1
            continue
        sums: Dict[int, list] = {}
        for j in order[k + 1:inner]:
            row = sums.setdefault(id(events[j][0]), [events[j][0], 0, 0])
            row[1] += selfs[j]
            row[2] += 1
        out.append((site, start, end, tid, inner - k - 1))
        cursor = start
        for inner_site, total, count in sorted(sums.values(), key=lambda r: -r[1]):
            out.append((inner_site, cursor, cursor + total, tid, count))
            cursor += total
        k = inner
    return out


def chrome_trace(recorder: Any) -> Dict[str, Any]:
    """The Chrome trace event format: one complete ('X') event per record, in µs; the
    iterations of long loops aggregated (aggregate_loops: an op's `args.calls` counts
    them)."""
    pid = os.getpid()
    origin = recorder.start_ns
    names = {t.ident: t.name for t in threading.enumerate()}
    names.update(getattr(recorder, "threads", {}))
    events: List[dict] = []
    for tid in sorted({e[3] for e in recorder.events}):
        events.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                       "args": {"name": names.get(tid, f"thread {tid}")}})
    for site, start, end, tid, calls in aggregate_loops(recorder.events):
        args: Dict[str, Any] = {"type": site.type, "function": site.function}
        if site.location:
            args["source"] = _where(site)
        if calls > 1:
            args["calls" if site.type not in _LOOPS else "folded_records"] = calls
        name = site.name
        if site.type == "trace" and name.endswith("#") and name.count("#") == 2:
            name, _, meta = name[:-1].partition("#")   # Trace("train", step_num=1)
            args.update(item.split("=", 1) for item in meta.split(",") if "=" in item)
        events.append({"name": name, "cat": site.type, "ph": "X", "pid": pid,
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
