"""What runs inside a Ray worker process of MultiWorkerMirroredStrategy: the worker actor,
the rendezvous the workers exchange tensors through, and the replica context whose
all_reduce and merge_call span processes.

Tensors travel through Ray's object store: each worker `ray.put`s its arrays and the
rendezvous actor hands every worker the references of all the others (an all-gather);
each worker then reduces in rank order, so every worker computes bit-identical updates
and its copy of the variables stays equal to the others'. This module imports Ray only
inside functions: without the `distributed` extra it still imports (and is never used).
"""
from __future__ import annotations

import asyncio
import io
import pickle
from typing import Any, Callable, Dict, Optional

import numpy as np

from kilnflow.context import eager_mode
from kilnflow.distribute import distribution_context as dctx
from kilnflow.distribute import reduction
from kilnflow.distribute.distributed_variables import SyncOnReadVariable, create_variable
from kilnflow.distribute.reduce_util import as_reduce_op
from kilnflow.distribute.strategy import ReplicaContext, Strategy
from kilnflow.distribute.values import PerReplica, flatten_values, pack_values
from kilnflow.distribute.values import select_replica
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.tensor import is_tensor
from kilnflow.variables import Variable, VariableSynchronization

VARIABLE_TAG = "kilnflow.variable"
STRATEGY_TAG = "kilnflow.strategy"


class Rendezvous:
    """An async Ray actor: `exchange(key, rank, item)` returns every rank's item once all
    `world` ranks have sent theirs for that key."""

    def __init__(self, world: int):
        self.world = world
        self.rounds: Dict[Any, dict] = {}

    async def exchange(self, key: Any, rank: int, item: Any) -> list:
        entry = self.rounds.setdefault(key, {"items": [None] * self.world, "arrived": 0,
                                             "left": 0, "event": asyncio.Event()})
        entry["items"][rank] = item
        entry["arrived"] += 1
        if entry["arrived"] == self.world:
            entry["event"].set()
        await entry["event"].wait()
        entry["left"] += 1
        if entry["left"] == self.world:
            del self.rounds[key]
        return entry["items"]


class WorkerStrategy(Strategy):
    """The strategy as code on a worker sees it: `world` replicas, this one being `rank`."""

    def __init__(self, world: int):
        super().__init__(tuple(f"/job:worker/replica:0/task:{i}/device:CPU:0"
                               for i in range(world)))

    def input_worker_replicas(self) -> range:
        raise NotImplementedError("distributed datasets are split by the driver")


def _to_numpy(value: Any) -> Any:
    if is_tensor(value) or isinstance(value, (np.ndarray, Variable)):
        return np.asarray(value)
    return value


def _to_tensor(value: Any) -> Any:
    return convert_to_tensor(value) if isinstance(value, np.ndarray) else value


class WorkerReplicaContext(ReplicaContext):
    """One replica per worker process; cross-replica calls are collective over Ray."""

    def __init__(self, strategy: Strategy, rank: int, rendezvous: Any, step: int):
        super().__init__(strategy, rank)
        self._rendezvous = rendezvous
        self._step = step
        self._calls = 0
        # ids of tensors every worker holds equal copies of (all-reduce results), and the
        # tensors themselves, kept for the step so that their ids are not reused
        self._mirrored: set = set()
        self._mirrored_tensors: list = []

    def _exchange(self, arrays: list) -> list:
        """All workers' `arrays` lists, in rank order."""
        import ray
        self._calls += 1
        key = (self._step, self._calls)
        mine = ray.put(arrays)
        refs = ray.get(self._rendezvous.exchange.remote(key, self._replica_id, [mine]))
        return ray.get([r[0] for r in refs])

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        reduce_op = as_reduce_op(reduce_op)
        flat = flatten_values(value)
        positions = [i for i, v in enumerate(flat) if v is not None]
        gathered = self._exchange([np.asarray(flat[i]) for i in positions])
        out = list(flat)
        with eager_mode():
            for j, i in enumerate(positions):
                out[i] = reduction.reduce_components(reduce_op, [g[j] for g in gathered])
                self._mirrored.add(id(out[i]))
                self._mirrored_tensors.append(out[i])
        return pack_values(value, out)

    def merge_call(self, merge_fn: Callable, args: tuple = (), kwargs: Optional[dict] = None
                   ) -> Any:
        """Every worker runs merge_fn on the gathered arguments (tensors that differ per
        worker become PerReplica; all-reduced tensors and other objects are local)."""
        structure = (tuple(args), dict(kwargs or {}))
        flat = flatten_values(structure)
        positions = [i for i, v in enumerate(flat)
                     if (is_tensor(v) or isinstance(v, np.ndarray)) and id(v) not in
                     self._mirrored and not isinstance(v, Variable)]
        # Every worker runs the same code, so all of them skip (or make) this exchange.
        gathered = self._exchange([np.asarray(flat[i]) for i in positions]) if positions \
            else []
        with eager_mode():
            for j, i in enumerate(positions):
                flat[i] = PerReplica(*[convert_to_tensor(g[j]) for g in gathered])
        merged_args, merged_kwargs = pack_values(structure, flat)
        with dctx.pushed(self._strategy, None):
            result = merge_fn(self._strategy, *merged_args, **merged_kwargs)
        return select_replica(self._replica_id, result)


class _Unpickler(pickle.Unpickler):
    def __init__(self, data: bytes, worker: "Worker"):
        super().__init__(io.BytesIO(data))
        self._worker = worker

    def persistent_load(self, pid: Any) -> Any:
        tag, index = pid
        if tag == VARIABLE_TAG:
            return self._worker.variables[index]
        if tag == STRATEGY_TAG:
            return self._worker.strategy
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


class Worker:
    """A Ray actor (one process): holds this worker's copy of the strategy's variables and
    the functions shipped to it, and runs them as replica `rank` of `world`."""

    def __init__(self, rank: int, world: int, rendezvous: Any):
        self.rank = rank
        self.world = world
        self.rendezvous = rendezvous
        self.strategy = WorkerStrategy(world)
        self.variables: Dict[int, Variable] = {}
        self.functions: Dict[int, Callable] = {}

    def pid(self) -> int:
        import os
        return os.getpid()

    def run(self, step: int, key: int, payload: Optional[bytes], pushes: dict, args: tuple,
            kwargs: dict, pull: bool) -> tuple:
        with eager_mode():
            for index, (value, meta) in sorted(pushes.items()):
                if VariableSynchronization.of(meta.get("synchronization")) is \
                        VariableSynchronization.ON_READ:
                    value = value[self.rank]  # the driver's copy r is this worker's copy
                    meta = dict(meta, num_replicas=self.world)
                if index not in self.variables:
                    self.variables[index] = create_variable(value, **meta)
                Variable.assign(self._own_copy(self.variables[index]), value)
        if payload is not None:
            self.functions[key] = _Unpickler(payload, self).load()
        fn = self.functions[key]
        replica = WorkerReplicaContext(self.strategy, self.rank, self.rendezvous, step)
        with eager_mode():
            args, kwargs = pack_values((args, kwargs), [
                _to_tensor(v) for v in flatten_values((args, kwargs))])
        with dctx.pushed(self.strategy, replica):
            result = fn(*args, **kwargs)
        flat = [_to_numpy(v) for v in flatten_values(result)]
        pulled = None
        if pull:
            pulled = {i: np.array(Variable.numpy(v)) for i, v in self.variables.items()
                      if not isinstance(v, SyncOnReadVariable)}
        # every worker's own copy of each SyncOnReadVariable (its metric state)
        local = {i: np.array(Variable.numpy(self._own_copy(v)))
                 for i, v in self.variables.items() if isinstance(v, SyncOnReadVariable)}
        return pack_values(result, flat), pulled, local

    def _own_copy(self, v: Variable) -> Variable:
        """The copy of `v` replica `rank` reads and updates (v itself unless ON_READ)."""
        return v.components[self.rank] if isinstance(v, SyncOnReadVariable) else v
