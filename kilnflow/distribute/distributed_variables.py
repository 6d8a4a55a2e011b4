"""Strategy-aware variables with TF's synchronization and aggregation options.

MirroredVariable (synchronization ON_WRITE): one buffer shared by the replicas of this
process; an update made inside a replica is combined across replicas with the variable's
aggregation (SUM, MEAN, ONLY_FIRST_REPLICA) and applied once. SyncOnReadVariable (ON_READ,
e.g. metric accumulators): one buffer per replica, updated locally; reading it in the
cross-replica context combines the buffers. `create_variable` picks the class from
`synchronization`, as `kf.Variable(..., synchronization=, aggregation=)` does in TF.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow.context import eager_mode
from kilnflow.distribute import reduction
from kilnflow.distribute import strategy as _strategy
from kilnflow.distribute.reduce_util import ReduceOp, VariableAggregation
from kilnflow.distribute.reduce_util import VariableSynchronization
from kilnflow.ops import math as kmath
from kilnflow.variables import Variable, replaced_creator_stack


def distributed_creator(next_creator: Any, **kwargs: Any) -> Variable:
    """The variable creator a MirroredStrategy-like scope installs: TF's creator keyword
    arguments in, a MirroredVariable or SyncOnReadVariable out. TF builds one component per
    device through `next_creator`; here the replicas share one buffer, so outer creators
    are not called for components."""
    for unused in ("caching_device", "variable_def", "import_scope", "constraint",
                   "experimental_enable_variable_lifting"):
        kwargs.pop(unused, None)
    return create_variable(**kwargs)


def _many_replicas() -> Optional[_strategy.ReplicaContext]:
    if _strategy.in_cross_replica_context():
        return None
    replica = _strategy.get_replica_context()
    return replica if replica is not None and replica.num_replicas_in_sync > 1 else None


class MirroredVariable(Variable):
    """A variable every replica sees the same value of (synchronization ON_WRITE).

    >>> import kilnflow as kf
    >>> strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> with strategy.scope():
    ...     v = kf.distribute.MirroredVariable(0.0, aggregation="MEAN")
    >>> _ = strategy.run(lambda: v.assign_add(
    ...     kf.cast(kf.distribute.get_replica_context().replica_id_in_sync_group, kf.float32)))
    >>> float(v.numpy())  # mean of the replicas' deltas 0 and 1
    0.5
    """

    def __init__(self, initial_value: Any = None, *args: Any, aggregation: Any = None,
                 synchronization: Any = None, **kwargs: Any):
        super().__init__(initial_value, *args, aggregation=aggregation,
                         synchronization=VariableSynchronization.ON_WRITE, **kwargs)

    def _update(self, method: Any, value: Any, read_value: bool) -> Any:
        replica = _many_replicas()
        if replica is None:
            return method(self, value, read_value=read_value)
        if self._aggregation is VariableAggregation.NONE:
            # TF keeps a copy per device, each replica updating its own (they diverge);
            # the replicas here share one buffer, so each replica's update lands in it.
            return method(self, value, read_value=read_value)
        aggregation = self._aggregation
        count = replica.num_replicas_in_sync

        def merge(strategy: Any, per_replica: Any) -> Any:
            if aggregation is VariableAggregation.ONLY_FIRST_REPLICA:
                combined = reduction.local_first(per_replica)
            else:
                combined = reduction.reduce_leaf(
                    ReduceOp.from_variable_aggregation(aggregation), per_replica, count)
            return method(self, combined, read_value=read_value)
        return replica.merge_call(merge, args=(value,))

    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> Any:
        return self._update(Variable.assign, value, read_value)

    def assign_add(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        return self._update(Variable.assign_add, delta, read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        return self._update(Variable.assign_sub, delta, read_value)


class SyncOnReadVariable(Variable):
    """One copy per replica, combined when read across replicas (synchronization ON_READ):
    what metrics accumulate into.

    >>> import kilnflow as kf
    >>> strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    >>> with strategy.scope():
    ...     total = kf.distribute.SyncOnReadVariable(0.0, aggregation="SUM")
    >>> _ = strategy.run(lambda: total.assign_add(2.0))
    >>> float(total.numpy())
    4.0
    """

    def __init__(self, initial_value: Any = None, *args: Any, aggregation: Any = None,
                 synchronization: Any = None, num_replicas: Optional[int] = None,
                 **kwargs: Any):
        super().__init__(initial_value, *args, aggregation=aggregation,
                         synchronization=VariableSynchronization.ON_READ, **kwargs)
        count = num_replicas or _strategy.get_strategy().num_replicas_in_sync
        base = self.name.split(":")[0]
        with eager_mode(), replaced_creator_stack([]):  # plain per-replica buffers
            self._others = [Variable(self.initial_value, trainable=False, dtype=self.dtype,
                                     name=f"{base}/replica_{i}") for i in range(1, count)]

    @property
    def components(self) -> list:
        """The per-replica copies (this variable's own buffer first)."""
        return [self] + self._others

    def _local(self) -> Optional[Variable]:
        replica = _many_replicas()
        if replica is None:
            return None
        return self.components[replica.replica_id_in_sync_group]

    def read_value(self) -> Any:
        local = self._local()
        if local is self:
            return Variable.read_value(self)
        if local is not None:
            return local.read_value()
        reads = [Variable.read_value(self)] + [v.read_value() for v in self._others]
        if self._aggregation is VariableAggregation.ONLY_FIRST_REPLICA:
            return reads[0]
        return reduction.reduce_components(
            ReduceOp.from_variable_aggregation(self._aggregation), reads)

    def numpy(self) -> Any:
        return self.read_value().numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return self.read_value().__array__(dtype)

    def _update(self, method: Any, value: Any, read_value: bool) -> Any:
        local = self._local()
        if local is not None:
            return method(local, value, read_value=read_value)
        if method is not Variable.assign:
            raise ValueError(f"SyncOnReadVariable {self.name} does not support assign_add or "
                             "assign_sub in the cross-replica context")
        if self._aggregation is VariableAggregation.SUM:  # copies summing to the value
            value = kmath.divide(self._converted(value),
                                 kmath.cast(len(self.components), self.dtype))
        for component in self.components:
            method(component, value, read_value=False)
        return self if read_value else None

    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> Any:
        return self._update(Variable.assign, value, read_value)

    def assign_add(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        return self._update(Variable.assign_add, delta, read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        return self._update(Variable.assign_sub, delta, read_value)


def create_variable(*args: Any, synchronization: Any = None, aggregation: Any = None,
                    **kwargs: Any) -> Variable:
    """The variable `kf.Variable(..., synchronization=, aggregation=)` makes under a
    strategy's scope: SyncOnReadVariable for ON_READ, MirroredVariable otherwise."""
    synchronization = VariableSynchronization.of(synchronization)
    if synchronization is VariableSynchronization.NONE:
        raise ValueError("`NONE` variable synchronization mode is not supported with "
                         "tf.distribute strategy. Please change the `synchronization` for "
                         f"variable: {kwargs.get('name')}")
    if synchronization is VariableSynchronization.ON_READ:
        return SyncOnReadVariable(*args, aggregation=aggregation, **kwargs)
    return MirroredVariable(*args, aggregation=aggregation, **kwargs)
