"""MirroredStrategy: synchronous data parallelism over replicas in one process.

Each replica is a thread (see mirrored_run.py) standing for one CPU "device". All
replicas share the process's memory, so a variable created under `scope()` has one
buffer that every replica reads: TF's mirrored copies, kept in sync by construction.
Updates go through the cross-replica path (the optimizer all-reduces gradients and
applies them once, see hooks.py), so N replicas on one global batch compute what one
replica computes on it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from kilnflow.distribute import mirrored_run
from kilnflow.distribute.distributed_variables import distributed_creator
from kilnflow.distribute.strategy import Strategy
from kilnflow.variables import variable_creator_scope


def _cpu_devices(count: int) -> tuple:
    return tuple(f"/job:localhost/replica:0/task:0/device:CPU:{i}" for i in range(count))


class MirroredStrategy(Strategy):
    """Synchronous training on several replicas of one process (TF's
    tf.distribute.MirroredStrategy); `devices` names them, e.g. ["/cpu:0", "/cpu:1"].

    >>> import kilnflow as kf
    >>> strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> per_replica = strategy.run(
    ...     lambda: kf.distribute.get_replica_context().replica_id_in_sync_group + 1)
    >>> [int(v) for v in strategy.experimental_local_results(per_replica)]
    [1, 2]
    """

    def __init__(self, devices: Optional[Sequence[str]] = None,
                 cross_device_ops: Any = None):
        if devices is None:
            devices = _cpu_devices(1)
        devices = tuple(devices)
        if not devices:
            raise ValueError("MirroredStrategy needs at least one device")
        if len(set(devices)) != len(devices):
            raise ValueError(f"MirroredStrategy: duplicate devices in {list(devices)}")
        super().__init__(devices)
        self._cross_device_ops = cross_device_ops

    def _creator_scope(self) -> Any:
        """kf.Variable(...) under scope() makes a MirroredVariable (ON_WRITE) or a
        SyncOnReadVariable (ON_READ), as in TF."""
        return variable_creator_scope(distributed_creator)

    def _run_replicas(self, fn: Callable, args: tuple, kwargs: dict) -> list:
        if self.num_replicas_in_sync == 1:
            return super()._run_replicas(fn, args, kwargs)
        return mirrored_run.run_replicas(self, fn, args, kwargs)
