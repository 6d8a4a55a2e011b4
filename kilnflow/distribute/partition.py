"""Graph partitions of a ClusterSpec session: which task runs each op, how the ops split
into segments (runs of one task's ops), and the runner that executes a segment, in the
driver or in a task's Ray actor.

A segment reads the tensors it needs from other segments (or the feeds) as its inputs and
hands on the tensors later segments (or the fetches) need: TF's send/recv pairs. The
actor holds its own copy of the graph, rebuilt from kilnflow's JSON graph format, and the
VariableHandles of the variables placed on its task, so their values live in its process.
This module imports Ray nowhere: without the `distributed` extra it still imports.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.graph import Graph
from kilnflow.ops.state import VariableHandle
from kilnflow.runtime import codegen, loader
from kilnflow.shapes import TensorShape

Place = Optional[Tuple[str, int]]  # (job, task); None: the driver (the client process)

_JOB = re.compile(r"/job:([^/]+)")
_TASK = re.compile(r"/task:(\d+)")


def parse_place(device: str) -> Place:
    """(job, task) named by a device string ("/job:worker/task:1/device:CPU:0"); a job
    without a task means task 0; no job: None."""
    job = _JOB.search(device or "")
    if job is None:
        return None
    task = _TASK.search(device)
    return job.group(1), int(task.group(1)) if task else 0


def task_name(place: Place) -> str:
    return "the driver" if place is None else f"/job:{place[0]}/replica:0/task:{place[1]}"


def _handles_of(value: Any, out: Dict[int, VariableHandle]) -> None:
    if isinstance(value, VariableHandle):
        out[id(value)] = value
    elif isinstance(value, (tuple, list)):
        for v in value:
            _handles_of(v, out)
    elif isinstance(value, Graph):
        for op in value.operations:
            for v in op.attrs.values():
                _handles_of(v, out)


def variable_handles(graph: Graph) -> List[VariableHandle]:
    """Every VariableHandle the graph's ops (and their subgraphs) use."""
    out: Dict[int, VariableHandle] = {}
    for op in graph.operations:
        for v in op.attrs.values():
            _handles_of(v, out)
    return list(out.values())


def variable_meta(graph: Graph) -> list:
    return [(h.name, h.dtype.name, h.shape.dims, h.trainable) for h in variable_handles(graph)]


class Segment(NamedTuple):
    place: Place
    ops: list             # in graph order
    inputs: list          # tensors read from the feeds or earlier segments
    outputs: list         # tensors later segments or the fetches read
    after: list           # indices of earlier segments this one has control edges from


def _op_place(op: Any, variable_places: Dict[int, Place], cluster: Any) -> Place:
    handle = op.attrs.get("handle")
    place = variable_places.get(id(handle)) if isinstance(handle, VariableHandle) else \
        parse_place(op.device)
    if place is not None:
        job, task = place
        if job not in cluster.jobs or task not in cluster.task_indices(job):
            raise errors.InvalidArgumentError(
                f"Cannot assign a device for operation {op.name}: {op.device or task_name(place)}"
                f" names /job:{job}/task:{task}, which is not in the cluster "
                f"{cluster.as_dict()}")
    return place


def plan(graph: Graph, ops: Sequence, fed: set, fetches: Sequence, cluster: Any
         ) -> List[Segment]:
    """Split `ops` (graph order) into segments: an op joins the latest segment of its
    task unless it depends on a segment started after that one. Variable ops run where
    their variable was created (the device of its first op)."""
    variable_places: Dict[int, Place] = {}
    for op in graph.operations:
        handle = op.attrs.get("handle")
        if isinstance(handle, VariableHandle) and id(handle) not in variable_places:
            variable_places[id(handle)] = parse_place(op.device)
    producer: Dict[int, int] = {}   # id(tensor) -> segment index
    op_segment: Dict[int, int] = {}
    last_of: Dict[Place, int] = {}
    segments: List[Segment] = []
    for op in ops:
        place = _op_place(op, variable_places, cluster)
        deps = [producer[id(t)] for t in op.inputs if id(t) in producer] + \
            [op_segment[id(c)] for c in op.control_inputs if id(c) in op_segment]
        index = last_of.get(place, -1)
        if index < 0 or any(d > index for d in deps):
            index = len(segments)
            segments.append(Segment(place, [], [], [], []))
            last_of[place] = index
        segment = segments[index]
        segment.ops.append(op)
        op_segment[id(op)] = index
        for t in op.inputs:
            source = producer.get(id(t))
            if source != index and all(t is not s for s in segment.inputs):
                segment.inputs.append(t)
                if source is not None and all(t is not s for s in segments[source].outputs):
                    segments[source].outputs.append(t)
        for c in op.control_inputs:
            source = op_segment.get(id(c))
            if source is not None and source != index and source not in segment.after:
                segment.after.append(source)
        for t in op.outputs:
            if id(t) not in fed:
                producer[id(t)] = index
    for t in fetches:
        source = producer.get(id(t))
        if source is not None and all(t is not s for s in segments[source].outputs):
            segments[source].outputs.append(t)
    return segments


class PartitionRunner:
    """Runs segments of graphs by op name, compiled once each (as Session.run compiles
    its pruned graph). In an actor it owns rebuilt graphs and the variables placed there."""

    def __init__(self) -> None:
        self.graphs: Dict[Any, Graph] = {}
        self.handles: Dict[str, VariableHandle] = {}
        self.compiled: Dict[tuple, Any] = {}

    def load(self, key: Any, data: dict, meta: list) -> None:
        """Rebuild a graph sent in kilnflow's graph format; variables keep their values
        across reloads (the graph grew) because their handles are kept by name."""
        from kilnflow.saving.graph_json import graph_from_dict
        for name, dtype, dims, trainable in meta:
            if name not in self.handles:
                self.handles[name] = VariableHandle(name, _dtypes.as_dtype(dtype),
                                                    TensorShape(dims), trainable)
        graph = graph_from_dict(data, Graph(), variables=self.handles)
        self.graphs[key] = graph
        self.compiled = {k: v for k, v in self.compiled.items() if k[0] != key}

    def run(self, key: Any, graph: Graph, op_names: tuple, input_names: tuple,
            output_names: tuple, values: Sequence) -> list:
        cache_key = (key, op_names, input_names, output_names)
        fn = self.compiled.get(cache_key)
        if fn is None:
            ops = [graph.get_operation_by_name(n) for n in op_names]
            inputs = [graph.get_tensor_by_name(n) for n in input_names]
            outputs = [graph.get_tensor_by_name(n) for n in output_names]
            source, globals_, _ = codegen.generate("partition", ops, inputs, outputs)
            fn = self.compiled[cache_key] = loader.load(source, globals_, "partition")
        with np.errstate(all="ignore"):
            try:
                return list(fn(*values))
            except errors.OpError:
                raise
            except Exception as exc:
                raise errors.InvalidArgumentError(f"{type(exc).__name__}: {exc}") from None


class TaskActor:
    """A Ray actor: one task (/job:J/task:T) of a ClusterSpec session's cluster."""

    def __init__(self, job: str, task: int):
        self.place = (job, task)
        self.runner = PartitionRunner()

    def pid(self) -> int:
        return os.getpid()

    def load(self, key: Any, data: dict, meta: list) -> bool:
        self.runner.load(key, data, meta)
        return True

    def run(self, key: Any, op_names: tuple, input_names: tuple, output_names: tuple,
            count: int, *values: Any) -> Any:
        """`values`: the segment's inputs, then tokens of segments it waits for (Ray
        resolves them first: the recv). Returns the outputs and a done token."""
        from kilnflow.context import eager_mode
        with eager_mode():
            outs = self.runner.run(key, self.runner.graphs[key], op_names, input_names,
                                   output_names, values[:count])
        outs.append(True)
        return tuple(outs) if len(outs) > 1 else outs[0]
