"""kf.summary.trace_on / trace_off / trace_export: record the graphs (and, with
profiler=True, the op timings) of the compiled functions that run in between, and write
them as TensorBoard events: a GraphDef for the Graphs dashboard and, when profiled, run
metadata with per-node step stats (and a Chrome trace in `profiler_outdir`)."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from kilnflow.runtime import profile
from kilnflow.summary.graph_def import graph_def
from kilnflow.summary.writer import default_writer, get_step

_trace: dict = {"recorder": None, "profiler": False, "outdir": None}


def trace_on(graph: bool = True, profiler: bool = False,
             profiler_outdir: Optional[str] = None) -> None:
    """Start recording the graphs (and with `profiler`, the op timings) of the kf.functions
    called from now on, until trace_export or trace_off."""
    if _trace["recorder"] is not None:
        warnings.warn("kf.summary.trace_on: a trace is already on; ignoring this call")
        return
    recorder = profile.Recorder()
    _trace.update(recorder=recorder, profiler=bool(profiler), outdir=profiler_outdir)
    profile.start(recorder)


def trace_off() -> None:
    """Stop recording and discard what was recorded."""
    recorder = _trace["recorder"]
    if recorder is not None:
        profile.stop(recorder)
    _trace.update(recorder=None, profiler=False, outdir=None)


def combined_graph_def(graphs: dict) -> Any:
    """One GraphDef: a single function's graph as is, several each under its own scope."""
    if len(graphs) == 1:
        return graph_def(next(iter(graphs.values())))
    from tensorboard.compat.proto import graph_pb2
    combined = graph_pb2.GraphDef()
    for name, graph in graphs.items():
        part = graph_def(graph)
        for node in part.node:
            node.name = f"{name}/{node.name}"
            node.input[:] = [("^" + name + "/" + i[1:]) if i.startswith("^")
                             else f"{name}/{i}" for i in node.input]
        combined.node.extend(part.node)
        combined.library.function.extend(part.library.function)
    return combined


def run_metadata(recorder: Any) -> Any:
    """RunMetadata whose step stats give each node's start and duration (microseconds)."""
    from tensorboard.compat.proto import config_pb2, step_stats_pb2
    device = step_stats_pb2.DeviceStepStats(device="/job:localhost/replica:0/task:0/device:CPU:0")
    several = len(recorder.graphs) > 1
    for site, start, end, _ in recorder.events:
        if site.type in ("function", "trace"):
            continue
        name = f"{site.function}/{site.name}" if several else site.name
        device.node_stats.add(node_name=name, all_start_micros=start // 1000,
                              op_start_rel_micros=0, op_end_rel_micros=(end - start) // 1000,
                              all_end_rel_micros=(end - start) // 1000)
    return config_pb2.RunMetadata(step_stats=step_stats_pb2.StepStats(dev_stats=[device]))


def trace_export(name: str, step: Any = None, profiler_outdir: Optional[str] = None) -> None:
    """Write the recorded graph (and timings) with the default writer, then stop tracing."""
    recorder = _trace["recorder"]
    if recorder is None:
        warnings.warn("kf.summary.trace_export: no trace is on (call trace_on first)")
        return
    profile.stop(recorder)
    profiled, outdir = _trace["profiler"], profiler_outdir or _trace["outdir"]
    _trace.update(recorder=None, profiler=False, outdir=None)
    writer = default_writer()
    if writer is None:
        raise ValueError("kf.summary.trace_export: no default summary writer "
                         "(use `with writer.as_default():`)")
    step = get_step() if step is None else step
    if step is None:
        raise ValueError("kf.summary.trace_export: no step set. Please specify one either "
                         "through the `step` argument or through "
                         "kf.summary.experimental.set_step()")
    step = int(step.numpy() if hasattr(step, "numpy") else step)
    if recorder.graphs:
        writer.write_event(step=step,
                           graph_def=combined_graph_def(recorder.graphs).SerializeToString())
    if profiled:
        from tensorboard.compat.proto import event_pb2
        tagged = event_pb2.TaggedRunMetadata(
            tag=name, run_metadata=run_metadata(recorder).SerializeToString())
        writer.write_event(step=step, tagged_run_metadata=tagged)
        if outdir:
            from kilnflow.profiler.trace_file import write_profile
            write_profile(recorder, outdir)
    writer.flush()
