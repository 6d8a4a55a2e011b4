"""ClusterSpec sessions on Ray: `compat.v1.Session(target, config=ConfigProto(cluster_def=))`
runs each op on the task its device names (`with kf.device("/job:worker/task:1"):`), one
Ray actor per task, and ops without a job in the driver (the client process).

A run is planned once per (fetches, feeds, graph size) (partition.plan); every segment
becomes one actor call whose inputs are the Ray object references of the segments it
reads from: the object store carries TF's send/recv, and the driver only waits for the
fetches. Graphs travel in kilnflow's JSON graph format, reshipped when they grow. A task
whose process died surfaces as UnavailableError naming it; the next run restarts it
(its variables uninitialized again, as a restarted TF server's are).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional

from kilnflow import errors
from kilnflow.distribute import partition
from kilnflow.distribute.multi_worker import init_ray, require_ray
from kilnflow.graph import Graph, ops_needed
from kilnflow.train import ClusterSpec

_CLUSTERS: Dict[tuple, "Cluster"] = {}
_TARGETS: Dict[str, ClusterSpec] = {}   # Server targets started in this process
_LOCK = threading.Lock()


def _spec_key(spec: ClusterSpec) -> tuple:
    return tuple(sorted((job, tuple(spec.job_tasks(job))) for job in spec.jobs))


class Cluster:
    """The Ray actors of one cluster's tasks, shared by every session on it (so variables
    placed on a task outlive a session, as on TF servers)."""

    def __init__(self, spec: ClusterSpec):
        self.spec = spec
        self.ray = require_ray()
        self.actors: Dict[tuple, Any] = {}
        self.loaded: Dict[tuple, Dict[Any, int]] = {}  # place -> graph key -> op count

    def actor(self, place: tuple) -> Any:
        actor = self.actors.get(place)
        if actor is None:
            init_ray(self.ray, None, 2)
            actor = self.ray.remote(num_cpus=0)(partition.TaskActor).remote(*place)
            self.actors[place] = actor
            self.loaded[place] = {}
        return actor

    def start(self) -> None:
        for job in self.spec.jobs:
            for task in self.spec.task_indices(job):
                self.actor((job, task))
        self.ray.get([a.pid.remote() for a in self.actors.values()])

    def pid(self, job: str, task: int) -> int:
        """The process id of a task's actor (started if needed)."""
        return self.ray.get(self.actor((job, task)).pid.remote())

    def drop(self, place: tuple) -> None:
        actor = self.actors.pop(place, None)
        self.loaded.pop(place, None)
        if actor is not None:
            try:
                self.ray.kill(actor)
            except Exception:  # already gone
                pass

    def shutdown(self) -> None:
        for place in list(self.actors):
            self.drop(place)

    def ensure_graph(self, place: tuple, graph: Graph) -> Any:
        key = id(graph)
        actor = self.actor(place)
        size = len(graph.operations)
        if self.loaded[place].get(key) != size:
            from kilnflow.saving.graph_json import graph_to_dict
            try:
                data = graph_to_dict(graph)
            except TypeError as exc:
                raise errors.UnimplementedError(
                    f"The graph cannot be sent to {partition.task_name(place)}: {exc}") \
                    from None
            # Ray raises the actor's load errors at the first get: waiting here names them
            self.ray.get(actor.load.remote(key, data, partition.variable_meta(graph)))
            self.loaded[place][key] = size
        return actor


def cluster_for(spec: ClusterSpec) -> Cluster:
    with _LOCK:
        key = _spec_key(spec)
        if key not in _CLUSTERS:
            _CLUSTERS[key] = Cluster(spec)
        return _CLUSTERS[key]


def register_target(target: str, spec: ClusterSpec) -> None:
    _TARGETS[target] = spec


def connect(target: str, config: Any) -> "ClusterSession":
    """The cluster a Session's target and config name: config.cluster_def if given, else
    a Server started in this process for `target`."""
    cluster_def = getattr(config, "cluster_def", None)
    if cluster_def:
        spec = ClusterSpec(cluster_def)
    elif target in _TARGETS:
        spec = _TARGETS[target]
    else:
        raise errors.UnimplementedError(
            f"Session target {target!r}: kilnflow's distributed runtime (kf.distribute, on "
            "Ray) reaches no remote process by address; start a kf.distribute.Server for "
            "this target in this process (Server(cluster, job_name=, task_index=)) or pass "
            "config=ConfigProto(cluster_def=cluster_spec.as_cluster_def())")
    return ClusterSession(cluster_for(spec))


class ClusterSession:
    """What a compat.v1 Session with a cluster target runs its steps through."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.runner = partition.PartitionRunner()  # the driver's own segments
        self.plans: Dict[tuple, List[partition.Segment]] = {}

    def _plan(self, graph: Graph, flat: list, feeds: list) -> List[partition.Segment]:
        key = (tuple(id(f) for f in flat), tuple(id(f) for f in feeds), len(graph.operations))
        segments = self.plans.get(key)
        if segments is None:
            fed = {id(t) for t in feeds}
            ops = ops_needed(graph, [getattr(f, "op", f) for f in flat], fed)
            for op in ops:
                if op.type == "Placeholder" and id(op.outputs[0]) not in fed:
                    raise errors.InvalidArgumentError(
                        f"You must feed a value for placeholder tensor '{op.name}'")
            tensors = [f for f in flat if hasattr(f, "value_index")]
            segments = self.plans[key] = partition.plan(graph, ops, fed, tensors,
                                                        self.cluster.spec)
        return segments

    def run(self, graph: Graph, flat: list, feeds: list, values: list) -> list:
        """The values of the tensors among `flat` (in order), with `feeds` fed."""
        ray = self.cluster.ray
        segments = self._plan(graph, flat, feeds)
        refs: Dict[int, Any] = {id(t): v for t, v in zip(feeds, values)}
        tokens: List[Any] = []
        try:
            for segment in segments:
                names = tuple(op.name for op in segment.ops)
                inputs = tuple(t.name for t in segment.inputs)
                outputs = tuple(t.name for t in segment.outputs)
                waits = [tokens[i] for i in segment.after if tokens[i] is not None]
                args = [refs[id(t)] for t in segment.inputs]
                if segment.place is None:
                    ray.get(waits) if waits else None
                    got = [ray.get(a) if isinstance(a, ray.ObjectRef) else a for a in args]
                    outs = self.runner.run(id(graph), graph, names, inputs, outputs, got)
                    tokens.append(None)
                else:
                    actor = self.cluster.ensure_graph(segment.place, graph)
                    result = actor.run.options(num_returns=len(outputs) + 1).remote(
                        id(graph), names, inputs, outputs, len(args), *args, *waits)
                    result = [result] if not isinstance(result, list) else result
                    outs, token = result[:-1], result[-1]
                    tokens.append(token)
                for t, v in zip(segment.outputs, outs):
                    refs[id(t)] = v
            # every remote segment must finish (assignments fetch nothing): errors surface
            # here, the earliest segment first
            for segment, token in zip(segments, tokens):
                if token is not None:
                    self._wait(segment, token)
            tensors = [f for f in flat if hasattr(f, "value_index")]
            return [ray.get(refs[id(t)]) if isinstance(refs[id(t)], ray.ObjectRef)
                    else refs[id(t)] for t in tensors]
        except ray.exceptions.RayError as exc:
            # the driver read a failed segment's output: name the earliest failed task
            for segment, token in zip(segments, tokens):
                if token is not None:
                    self._wait(segment, token)
            raise errors.UnavailableError(f"ClusterSpec session: {exc}") from None

    def _wait(self, segment: partition.Segment, token: Any) -> None:
        ray = self.cluster.ray
        try:
            ray.get(token)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, errors.OpError):
                raise type(cause)(*cause.args) from None
            raise errors.InternalError(
                f"{partition.task_name(segment.place)} failed: {exc}") from None
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
            self.cluster.drop(segment.place)
            raise errors.UnavailableError(
                f"Task {partition.task_name(segment.place)} is unavailable: its process "
                f"died during the step ({type(exc).__name__}). The driver stays usable; "
                "the next run restarts the task with its variables uninitialized") from None


class Server:
    """An in-process handle on one task of a cluster (TF's tf.distribute.Server /
    compat.v1.train.Server). Starting it starts a Ray actor for every task of the cluster;
    `target` is what a compat.v1 Session connects to.

    >>> import kilnflow as kf
    >>> server = kf.distribute.Server({"worker": ["localhost:2222"]}, start=False)
    >>> server.target
    'grpc://localhost:2222'
    """

    def __init__(self, server_or_cluster_def: Any, job_name: Optional[str] = None,
                 task_index: Optional[int] = None, protocol: Optional[str] = None,
                 config: Any = None, start: bool = True):
        spec = ClusterSpec(server_or_cluster_def)
        if job_name is None:
            if len(spec.jobs) != 1:
                raise ValueError(f"Server: job_name must be given for a cluster with jobs "
                                 f"{spec.jobs}")
            job_name = spec.jobs[0]
        task_index = 0 if task_index is None else int(task_index)
        self._spec, self._job, self._task = spec, job_name, task_index
        self._target = f"{protocol or 'grpc'}://{spec.task_address(job_name, task_index)}"
        self._config = config
        register_target(self._target, spec)
        if start:
            self.start()

    @property
    def target(self) -> str:
        return self._target

    @property
    def server_def(self) -> dict:
        return {"cluster": self._spec.as_dict(), "job_name": self._job,
                "task_index": self._task}

    def start(self) -> None:
        """Start the cluster's task actors (on Ray: the `distributed` extra)."""
        cluster_for(self._spec).start()

    def join(self) -> None:
        """Block while this server's task is alive (TF: until the server shuts down)."""
        cluster = cluster_for(self._spec)
        while (self._job, self._task) in cluster.actors:
            try:
                cluster.pid(self._job, self._task)
            except cluster.ray.exceptions.RayError:
                return
            time.sleep(1.0)

    @staticmethod
    def create_local_server(config: Any = None, start: bool = True) -> "Server":
        """A single-task cluster ("local" job) on this machine."""
        return Server({"local": ["localhost:0"]}, protocol="grpc", config=config, start=start)
