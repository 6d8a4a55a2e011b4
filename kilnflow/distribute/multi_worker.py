"""MultiWorkerMirroredStrategy: synchronous data parallelism with one replica per Ray
worker process (the `distributed` extra).

The driver (this process) keeps the variables created under `scope()` and ships each
replica function to the workers once, pickled by Ray's cloudpickle with those variables
replaced by references (pickle persistent ids), so every function shipped later shares
the workers' copies. Before a step the driver pushes variables whose value it changed
(a restored checkpoint), after it pulls worker 0's values, so reading a variable on the
driver shows the trained value; of a SyncOnReadVariable worker r holds copy r, pulled
from every worker so that the driver's read combines them. all_reduce and merge_call run between the workers
(ray_worker.py). A worker that dies surfaces as UnavailableError naming its task; the
next `run` starts fresh workers from the driver's variables.
"""
from __future__ import annotations

import io
import os
import sys
from typing import Any, Callable, Optional

import numpy as np

from kilnflow import errors
from kilnflow.context import ctx, eager_mode
from kilnflow.distribute import ray_worker
from kilnflow.distribute.cluster_resolver import TFConfigClusterResolver
from kilnflow.distribute.distributed_variables import MirroredVariable, SyncOnReadVariable
from kilnflow.distribute.distributed_variables import distributed_creator
from kilnflow.distribute.strategy import Strategy
from kilnflow.function.api import Function
from kilnflow.distribute.values import flatten_values, pack_values, regroup, select_replica
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.tensor import is_tensor
from kilnflow.variables import Variable, variable_creator_scope

_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def require_ray() -> Any:
    """The ray module, or UnimplementedError naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise errors.UnimplementedError(
            "MultiWorkerMirroredStrategy runs its workers on Ray, which is not installed: "
            "install the `distributed` extra (pip install 'kilnflow[distributed]')") from None
    return ray


def init_ray(ray: Any, address: Optional[str], workers: int) -> None:
    """Connect to the Ray instance at `address`, or start a local one (once per process);
    its workers find this kilnflow through PYTHONPATH."""
    if ray.is_initialized():
        return
    path = os.pathsep.join(p for p in (_PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    ray.init(address=address, num_cpus=None if address else max(2, workers),
             include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})


def _variable_meta(v: Variable) -> dict:
    meta = {"name": v.name.split(":")[0], "trainable": v.trainable}
    if isinstance(v, (MirroredVariable, SyncOnReadVariable)):
        meta.update(synchronization=v.synchronization, aggregation=v.aggregation)
    return meta


def _to_numpy(value: Any) -> Any:
    return np.asarray(value) if is_tensor(value) or isinstance(value, Variable) else value


def _held(v: Variable) -> np.ndarray:
    """What the workers hold of `v`: a SyncOnReadVariable's per-replica copies stacked
    (worker r holds copy r: metric state stays per worker and is combined when read),
    any other variable's one value."""
    if isinstance(v, SyncOnReadVariable):
        return np.stack([np.array(Variable.numpy(c)) for c in v.components])
    return np.array(Variable.numpy(v))


class MultiWorkerMirroredStrategy(Strategy):
    """Synchronous training over worker processes (TF's
    tf.distribute.MultiWorkerMirroredStrategy), one replica per Ray worker.

    The cluster comes from `cluster_resolver` (its `chief` and `worker` tasks; `master()`
    is a Ray address, "" starts a local Ray instance) or from TF_CONFIG; without either,
    one worker. Call `run` eagerly: the replica function itself runs eagerly on the
    workers (it may call kf.function-compiled code that does no cross-replica calls).
    """

    def __init__(self, communication_options: Any = None, cluster_resolver: Any = None):
        self._ray = require_ray()
        resolver = cluster_resolver or TFConfigClusterResolver()
        world = resolver.num_workers() or 1
        super().__init__(tuple(f"/job:worker/replica:0/task:{i}/device:CPU:0"
                               for i in range(world)))
        self._resolver = resolver
        self._communication_options = communication_options
        self._workers: Optional[list] = None
        self._rendezvous: Any = None
        self._indices: dict = {}      # id(variable) -> index shared with the workers
        self._tracked: list = []      # variables by index (kept alive: indices stay valid)
        self._synced: dict = {}       # index -> value the workers hold
        self._shipped: dict = {}      # ids of fn -> (fn, key): pickled to the workers once
        self._step = 0

    runs_steps_in_workers = True  # Keras fit calls run() eagerly (hooks.steps_run_eagerly)

    @property
    def cluster_resolver(self) -> Any:
        return self._resolver

    def _creator_scope(self) -> Any:
        """Variables made under scope() are MirroredVariables or SyncOnReadVariables."""
        return variable_creator_scope(distributed_creator)

    # ---------------------------------------------------------------- workers

    def _start(self) -> None:
        ray = self._ray
        init_ray(ray, self._resolver.master() or None, len(self.extended.worker_devices))
        world = self.num_replicas_in_sync
        self._rendezvous = ray.remote(num_cpus=0)(ray_worker.Rendezvous).remote(world)
        actor = ray.remote(num_cpus=0)(ray_worker.Worker)
        self._workers = [actor.remote(rank, world, self._rendezvous) for rank in range(world)]
        ray.get([w.pid.remote() for w in self._workers])  # started: timeouts count steps only
        self._synced = {}
        self._shipped = {}

    def worker_pids(self) -> list:
        """The process id of each worker task (starting the workers if needed)."""
        if self._workers is None:
            self._start()
        return self._ray.get([w.pid.remote() for w in self._workers])

    def shutdown(self) -> None:
        """Stop the worker processes (a later `run` starts new ones)."""
        for actor in (self._workers or []) + [self._rendezvous] * bool(self._rendezvous):
            self._ray.kill(actor)
        self._workers = self._rendezvous = None

    # ---------------------------------------------------------------- shipping

    def _track(self) -> None:
        for v in list(self.extended._variables.values()):
            if id(v) not in self._indices:
                self._indices[id(v)] = len(self._tracked)
                self._tracked.append(v)

    def _pickle(self, fn: Callable) -> bytes:
        from ray import cloudpickle
        indices, strategy = self._indices, self

        class Pickler(cloudpickle.CloudPickler):
            def persistent_id(self, obj: Any) -> Any:
                if isinstance(obj, Variable) and id(obj) in indices:
                    return (ray_worker.VARIABLE_TAG, indices[id(obj)])
                if obj is strategy:
                    return (ray_worker.STRATEGY_TAG, 0)
                return None

            def reducer_override(self, obj: Any) -> Any:
                # A kf.function travels as its Python function and options (its traces,
                # compiled code and locks stay here); the worker traces its own.
                if isinstance(obj, Function):
                    return Function, (obj.python_function, obj.input_signature,
                                      getattr(obj, "_autograph", True),
                                      getattr(obj, "_reduce_retracing", False),
                                      obj.jit_compile, obj.__name__)
                return super().reducer_override(obj)

        # The user's own module (a script, a test) may not be importable on the workers:
        # ship its functions and classes by value.
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
        filename = getattr(module, "__file__", None) or ""
        if module is not None and not module.__name__.startswith("kilnflow") and \
                "site-packages" not in filename and module.__name__ not in sys.builtin_module_names:
            cloudpickle.register_pickle_by_value(module)
        buffer = io.BytesIO()
        Pickler(buffer).dump(fn)
        return buffer.getvalue()

    def _pushes(self) -> dict:
        """Variables whose driver value differs from what the workers hold."""
        out = {}
        for index, v in enumerate(self._tracked):
            value = _held(v)
            held = self._synced.get(index)
            if held is None or held.shape != value.shape or not np.array_equal(held, value):
                out[index] = (value, _variable_meta(v))
                self._synced[index] = value
        return out

    # ---------------------------------------------------------------- running

    def _run_replicas(self, fn: Callable, args: tuple, kwargs: dict) -> list:
        if ctx.graph is not None:
            raise errors.UnimplementedError(
                "MultiWorkerMirroredStrategy.run ships the replica function to worker "
                "processes: call it eagerly (outside kf.function); the function may use "
                "kf.function inside")
        if self._workers is None:
            self._start()
        self._track()
        self._step += 1
        pushes = self._pushes()
        # A bound method (Keras' model.train_step) is a new object on every access: key it
        # by its object and function, so the model (and the optimizer slots the workers
        # create for it) is shipped once and lives on.
        owner = (getattr(fn, "__self__", None), getattr(fn, "__func__", fn))
        entry = self._shipped.get((id(owner[0]), id(owner[1])))
        payload = None
        if entry is None or entry[0][0] is not owner[0] or entry[0][1] is not owner[1]:
            entry = (owner, len(self._shipped) + 1)
            self._shipped[(id(owner[0]), id(owner[1]))] = entry
            payload = self._pickle(fn)
        calls = []
        for rank, worker in enumerate(self._workers):
            shard = [_to_numpy(v) for v in flatten_values(select_replica(rank, (args, kwargs)))]
            shard_args, shard_kwargs = pack_values((args, kwargs), shard)
            calls.append(worker.run.remote(self._step, entry[1], payload, pushes,
                                           shard_args, shard_kwargs, rank == 0))
        outputs = self._gather(calls)
        self._pull(outputs[0][1])
        self._pull_replica_copies([local for _, _, local in outputs])
        with eager_mode():
            return [pack_values(out, [convert_to_tensor(v) if isinstance(v, np.ndarray) else v
                                      for v in flatten_values(out)]) for out, _, _ in outputs]

    def _gather(self, calls: list) -> list:
        """Every worker's output; on the first failure the workers are stopped (the
        others would wait for the failed one forever) and the error raised."""
        ray = self._ray
        outputs: dict = {}
        pending = list(calls)
        timeout = getattr(self._communication_options, "timeout_seconds", None)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1, timeout=timeout)
            if not ready:
                self.shutdown()
                raise errors.DeadlineExceededError(
                    f"MultiWorkerMirroredStrategy: no worker finished the step within "
                    f"{timeout} s (communication_options.timeout_seconds); workers stopped")
            rank = calls.index(ready[0])
            try:
                outputs[rank] = ray.get(ready[0])
            except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError) as exc:
                self.shutdown()
                raise errors.UnavailableError(
                    f"Worker /job:worker/replica:0/task:{rank} died during the step "
                    f"({type(exc).__name__}); the driver keeps the variables of the last "
                    "completed step, and the next run starts new workers") from None
            except BaseException:
                self.shutdown()
                raise
        return [outputs[rank] for rank in range(len(calls))]

    def _pull(self, pulled: dict) -> None:
        with eager_mode():
            for index, value in pulled.items():
                if index < len(self._tracked) and \
                        not isinstance(self._tracked[index], SyncOnReadVariable):
                    Variable.assign(self._tracked[index], value)
                    self._synced[index] = value

    def _pull_replica_copies(self, per_worker: list) -> None:
        """Copy r of each SyncOnReadVariable (a metric's total or count) from worker r,
        so that reading it here combines every worker's state (TF's ON_READ read)."""
        with eager_mode():
            for index in per_worker[0]:
                v = self._tracked[index]
                for component, local in zip(v.components, per_worker):
                    Variable.assign(component, local[index])
                self._synced[index] = _held(v)
