"""ParameterServerStrategy and ClusterCoordinator (TF's asynchronous training) on Ray.

Variables created under `scope()` are kept by parameter-server actors (the cluster's
`ps` tasks, assigned round-robin). `ClusterCoordinator.schedule(fn)` sends `fn` to a
worker actor (the `worker` tasks, least busy first): the worker reads the current values
from the parameter servers, runs `fn` eagerly on its copies, and sends back the change of
every variable `fn` updated, which the parameter server adds: updates from different
workers interleave without locks, as TF's asynchronous training. `join()` waits for all
scheduled functions and copies the parameter servers' values into the driver's variables.
A function whose worker dies is scheduled again on a new worker (TF re-runs closures).
"""
from __future__ import annotations

import io
import itertools
import pickle
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from kilnflow import errors, nest
from kilnflow.context import eager_mode
from kilnflow.distribute import distribution_context as dctx
from kilnflow.distribute.multi_worker import MultiWorkerMirroredStrategy, init_ray
from kilnflow.distribute.strategy import ReplicaContext, Strategy
from kilnflow.variables import Variable


class ParameterServer:
    """A Ray actor holding some variables' values by index."""

    def __init__(self) -> None:
        self.values: Dict[int, np.ndarray] = {}

    def put(self, values: dict) -> bool:
        self.values.update(values)
        return True

    def get(self, indices: list) -> dict:
        return {i: self.values[i] for i in indices if i in self.values}

    def add(self, deltas: dict) -> bool:
        for i, d in deltas.items():
            self.values[i] = self.values[i] + d
        return True


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, worker: "PSWorker"):
        super().__init__(io.BytesIO(data))
        self._worker = worker

    def persistent_load(self, pid: Any) -> Any:
        tag, index = pid
        if tag == "kilnflow.variable":
            return self._worker.variable(index)
        return self._worker.strategy


class PSWorker:
    """A Ray actor: one worker task of a ParameterServerStrategy cluster."""

    def __init__(self, metas: dict, servers: list):
        self.metas = dict(metas)
        self.servers = servers
        self.variables: Dict[int, Variable] = {}
        self.functions: Dict[int, Callable] = {}
        self.strategy = Strategy(("/job:worker/replica:0/task:0/device:CPU:0",))

    def variable(self, index: int) -> Variable:
        if index not in self.variables:
            with eager_mode():
                self.variables[index] = Variable(np.zeros(self.metas[index][1],
                                                          self.metas[index][0]))
        return self.variables[index]

    def run(self, key: int, payload: Optional[bytes], metas: dict, args: tuple,
            kwargs: dict) -> Any:
        import ray
        self.metas.update(metas)
        if payload is not None:
            self.functions[key] = _Unpickler(payload, self).load()
        fn = self.functions[key]
        indices = sorted(self.metas)
        by_server: Dict[int, list] = {}
        for i in indices:
            by_server.setdefault(i % len(self.servers), []).append(i)
        fetched = ray.get([self.servers[s].get.remote(ix) for s, ix in by_server.items()])
        before = {}
        with eager_mode():
            for values in fetched:
                for i, value in values.items():
                    Variable.assign(self.variable(i), value)
                    before[i] = value
            with dctx.pushed(self.strategy, ReplicaContext(self.strategy, 0)):
                result = fn(*args, **kwargs)
        deltas: Dict[int, dict] = {}
        for i, old in before.items():
            new = np.asarray(Variable.numpy(self.variables[i]))
            if not np.array_equal(new, old):
                deltas.setdefault(i % len(self.servers), {})[i] = new - old
        ray.get([self.servers[s].add.remote(d) for s, d in deltas.items()])
        return nest.map_structure(lambda v: np.asarray(v) if hasattr(v, "numpy") else v,
                                  result)


class ParameterServerStrategy(MultiWorkerMirroredStrategy):
    """Asynchronous training with parameter servers (TF's
    tf.distribute.experimental.ParameterServerStrategy): the cluster needs `ps` and
    `worker` jobs; functions run through a ClusterCoordinator."""

    def __init__(self, cluster_resolver: Any, variable_partitioner: Any = None):
        super().__init__(cluster_resolver=cluster_resolver)
        spec = cluster_resolver.cluster_spec()
        if "ps" not in spec.jobs or "worker" not in spec.jobs:
            raise ValueError("ParameterServerStrategy needs a cluster with `ps` and "
                             f"`worker` jobs, got {spec.jobs}")
        self._num_ps = spec.num_tasks("ps")
        self._num_ps_workers = spec.num_tasks("worker")
        self._extended._devices = ("/job:chief/replica:0/task:0/device:CPU:0",)
        self._servers: Optional[list] = None

    def _creator_scope(self) -> Any:  # plain variables, their values on the ps tasks
        return Strategy._creator_scope(self)

    def _run_replicas(self, fn: Callable, args: tuple, kwargs: dict) -> list:
        raise errors.UnimplementedError(
            "ParameterServerStrategy.run: schedule functions with "
            "kf.distribute.experimental.coordinator.ClusterCoordinator(strategy).schedule")


class RemoteValue:
    """The result of a scheduled function (TF's RemoteValue)."""

    def __init__(self, coordinator: "ClusterCoordinator", rank: int, submit: Callable):
        self._coordinator, self._rank, self._submit = coordinator, rank, submit
        self._ref = submit(rank)

    def fetch(self) -> Any:
        return self._coordinator.fetch(self)

    def get(self) -> Any:
        return self.fetch()


class ClusterCoordinator:
    """Schedules functions on the workers of a ParameterServerStrategy (TF's
    tf.distribute.experimental.coordinator.ClusterCoordinator)."""

    def __init__(self, strategy: ParameterServerStrategy):
        if not isinstance(strategy, ParameterServerStrategy):
            raise ValueError("ClusterCoordinator needs a ParameterServerStrategy")
        self.strategy = strategy
        self._ray = strategy._ray
        self._workers: List[Any] = []
        self._pending: Dict[int, RemoteValue] = {}
        self._shipped: Dict[tuple, tuple] = {}  # (rank, id(fn)) -> (fn, number)
        self._numbers = itertools.count(1)
        self._round = itertools.count()

    def _start(self) -> None:
        s, ray = self.strategy, self._ray
        init_ray(ray, s.cluster_resolver.master() or None, 2)
        if s._servers is None:
            s._servers = [ray.remote(num_cpus=0)(ParameterServer).remote()
                          for _ in range(s._num_ps)]
        if not self._workers:
            self._workers = [self._new_worker() for _ in range(s._num_ps_workers)]
            self._shipped = {}

    def _new_worker(self) -> Any:
        return self._ray.remote(num_cpus=0)(PSWorker).remote({}, self.strategy._servers)

    def _sync(self) -> dict:
        """Push variables the driver changed; the metas every worker needs."""
        s = self.strategy
        s._track()
        pushes = s._pushes()
        by_server: Dict[int, dict] = {}
        for i, (value, _) in pushes.items():
            by_server.setdefault(i % s._num_ps, {})[i] = value
        self._ray.get([s._servers[k].put.remote(v) for k, v in by_server.items()])
        return {i: (Variable.numpy(v).dtype, Variable.numpy(v).shape)
                for i, v in enumerate(s._tracked)}

    def schedule(self, fn: Callable, args: tuple = (), kwargs: Optional[dict] = None
                 ) -> RemoteValue:
        """Run `fn(*args, **kwargs)` on some worker, asynchronously."""
        self._start()
        metas = self._sync()
        args = nest.map_structure(lambda v: np.asarray(v) if hasattr(v, "numpy") else v,
                                  tuple(args))
        rank = next(self._round) % len(self._workers)

        def submit(worker_rank: int) -> Any:
            # keyed by id(fn) but holding fn: a function freed since (its id reused by a
            # new one) is not taken for the new one, and numbers are never reused
            key = (worker_rank, id(fn))
            payload = None
            entry = self._shipped.get(key)
            if entry is None or entry[0] is not fn:
                entry = self._shipped[key] = (fn, next(self._numbers))
                payload = self.strategy._pickle(fn)
            return self._workers[worker_rank].run.remote(entry[1], payload, metas,
                                                         args, dict(kwargs or {}))
        remote = RemoteValue(self, rank, submit)
        self._pending[id(remote)] = remote
        return remote

    def _resolve(self, remote: RemoteValue) -> Any:
        ray = self._ray
        while True:
            try:
                return ray.get(remote._ref)
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError):
                rank = remote._rank  # its worker died: TF re-runs the closure
                if (rank, "restarted", id(remote)) not in self._shipped:
                    self._workers[rank] = self._new_worker()
                    self._shipped = {k: v for k, v in self._shipped.items() if k[0] != rank}
                    self._shipped[(rank, "restarted", id(remote))] = (remote, 0)
                remote._ref = remote._submit(rank)

    def join(self) -> None:
        """Wait for every scheduled function, then read the trained values."""
        for remote in list(self._pending.values()):
            self._resolve(remote)
        self._pending.clear()
        s = self.strategy
        if s._servers is not None:
            pulled: dict = {}
            for values in self._ray.get([p.get.remote(list(range(len(s._tracked))))
                                         for p in s._servers]):
                pulled.update(values)
            s._pull(pulled)

    def done(self) -> bool:
        refs = [r._ref for r in self._pending.values()]
        ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
        return len(ready) == len(refs)

    def fetch(self, value: Any) -> Any:
        """The value(s) of RemoteValues (nested), waiting for them."""
        return nest.map_structure(lambda v: self._resolve(v) if isinstance(v, RemoteValue)
                                  else v, value)
