"""kf.summary.trace_on / trace_off / trace_export: record the graphs (and, with
profiler=True, the op timings) of the compiled functions that run in between, and write
them as TF 2.21 does: one summary tagged with the trace's name holding a RunMetadata whose
function_graphs are the functions run (as traced, and as optimized), for the Graphs
dashboard (plugin graph_run_metadata_graph; graph_run_metadata when profiled, then with
per-node step stats too, and a Chrome trace in `profiler_outdir`)."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from kilnflow.runtime import profile
from kilnflow.summary.graph_def import graph_def
from kilnflow.summary.writer import default_writer, get_step

_trace: dict = {"recorder": None, "profiler": False, "outdir": None, "graph": True}


def trace_on(graph: bool = True, profiler: bool = False,
             profiler_outdir: Optional[str] = None) -> None:
    """Start recording the graphs (and with `profiler`, the op timings) of the kf.functions
    called from now on, until trace_export or trace_off."""
    if _trace["recorder"] is not None:
        warnings.warn("kf.summary.trace_on: a trace is already on; ignoring this call")
        return
    recorder = profile.Recorder()
    _trace.update(recorder=recorder, profiler=bool(profiler), outdir=profiler_outdir,
                  graph=bool(graph))
    profile.start(recorder)


def trace_off() -> None:
    """Stop recording and discard what was recorded."""
    recorder = _trace["recorder"]
    if recorder is not None:
        profile.stop(recorder)
    _trace.update(recorder=None, profiler=False, outdir=None, graph=True)


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


def run_metadata(recorder: Any, timings: bool = True) -> Any:
    """RunMetadata with the recorded functions' graphs (as traced and as optimized) and,
    with `timings`, step stats giving each node's start and duration (microseconds)."""
    from tensorboard.compat.proto import config_pb2, step_stats_pb2
    meta = config_pb2.RunMetadata()
    for name, optimized in recorder.graphs.items():
        graphs = meta.function_graphs.add()
        graphs.pre_optimization_graph.CopyFrom(graph_def(recorder.traced.get(name, optimized)))
        graphs.post_optimization_graph.CopyFrom(graph_def(optimized))
    if not timings:
        return meta
    device = step_stats_pb2.DeviceStepStats(device="/job:localhost/replica:0/task:0/device:CPU:0")
    several = len(recorder.graphs) > 1
    for site, start, end, _ in recorder.events:
        if site.type in ("function", "trace"):
            continue
        name = f"{site.function}/{site.name}" if several else site.name
        device.node_stats.add(node_name=name, all_start_micros=start // 1000,
                              op_start_rel_micros=0, op_end_rel_micros=(end - start) // 1000,
                              all_end_rel_micros=(end - start) // 1000)
    meta.step_stats.CopyFrom(step_stats_pb2.StepStats(dev_stats=[device]))
    return meta


def trace_export(name: str, step: Any = None, profiler_outdir: Optional[str] = None) -> None:
    """Write the recorded graph (and timings) with the default writer, then stop tracing."""
    recorder = _trace["recorder"]
    if recorder is None:
        warnings.warn("kf.summary.trace_export: no trace is on (call trace_on first)")
        return
    profile.stop(recorder)
    profiled, outdir = _trace["profiler"], profiler_outdir or _trace["outdir"]
    graphed = _trace["graph"]
    _trace.update(recorder=None, profiler=False, outdir=None, graph=True)
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
    if graphed or profiled:
        import numpy as np
        from tensorboard.compat.proto import summary_pb2
        from tensorboard.util import tensor_util
        plugin = "graph_run_metadata" if profiled else "graph_run_metadata_graph"
        meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(
            plugin_name=plugin, content=b"1"))
        serialized = run_metadata(recorder, timings=profiled).SerializeToString()
        summary = summary_pb2.Summary()
        summary.value.add(tag=name, metadata=meta, tensor=tensor_util.make_tensor_proto(
            np.array(serialized, object)))
        writer.write_event(step=step, summary=summary)
    if profiled and outdir:
        from kilnflow.profiler.trace_file import write_profile
        write_profile(recorder, outdir)
    writer.flush()
