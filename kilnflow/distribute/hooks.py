"""What training code calls so that it works under any strategy: the loss scaling, the
optimizer's cross-replica update and the per-replica train step of Keras `fit`.

Keras (kilnflow/keras) is owned elsewhere; these are the hooks it calls, each a no-op
under the default strategy. The wiring, for the record:
- Optimizer.apply_gradients: `return hooks.apply_gradients(self._apply_local, pairs)`
  (the current body renamed `_apply_local`): gradients are all-reduced (SUM) across
  replicas and applied once, in the cross-replica context.
- Model.train_step: differentiate `hooks.scale_loss_for_distribution(loss)` (the loss
  divided by the number of replicas, so summed gradients are the global-batch mean).
- Model.make_train_function/test_function: the step body becomes
  `hooks.run_step(self.distribute_strategy, self.train_step, (x, y, sample_weight))`,
  with `distribute_strategy` recorded from `get_strategy()` when the model is compiled.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from kilnflow import nest
from kilnflow.context import quiet_ops
from kilnflow.distribute import strategy as _strategy
from kilnflow.distribute.reduce_util import ReduceOp
from kilnflow.distribute.values import DistributedValues, map_values
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction as kreduction
from kilnflow.ops.array import shape as kshape
from kilnflow.ops.convert import convert_to_tensor


def _replica_context_of_many() -> Optional[_strategy.ReplicaContext]:
    """The replica context when several replicas run in sync, else None."""
    if _strategy.in_cross_replica_context():
        return None
    replica = _strategy.get_replica_context()
    if replica is None or replica.num_replicas_in_sync == 1:
        return None
    return replica


def compute_average_loss(per_example_loss: Any, sample_weight: Any = None,
                         global_batch_size: Optional[int] = None) -> Any:
    """Sum of the per-example losses divided by the GLOBAL batch size (TF's
    tf.nn.compute_average_loss): summed over replicas, this is the global mean.

    >>> import kilnflow as kf
    >>> float(kf.distribute.compute_average_loss(kf.constant([1.0, 2.0, 3.0])))
    2.0
    """
    loss = convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = kmath.multiply(loss, kmath.cast(convert_to_tensor(sample_weight), loss.dtype))
    total = kreduction.reduce_sum(loss)
    if global_batch_size is None:
        replica = _strategy.get_replica_context()
        replicas = 1 if replica is None else replica.num_replicas_in_sync
        batch = kshape(loss)[0] if loss.shape.rank else 1
        global_batch_size = kmath.multiply(batch, replicas)
    return kmath.divide(total, kmath.cast(global_batch_size, loss.dtype))


def scale_loss_for_distribution(loss: Any) -> Any:
    """`loss / num_replicas_in_sync` inside a replica of several (the loss unchanged
    otherwise): gradients of per-replica MEAN losses, summed by the all-reduce, then
    equal the gradient of the global-batch mean."""
    replica = _replica_context_of_many()
    if replica is None:
        return loss
    loss = convert_to_tensor(loss)
    return kmath.divide(loss, kmath.cast(replica.num_replicas_in_sync, loss.dtype))


def apply_gradients(apply_fn: Callable[[list], Any], grads_and_vars: Any) -> Any:
    """Apply (gradient, variable) pairs under the current strategy: in a replica of
    several, all-reduce (SUM) the gradients, then call `apply_fn(pairs)` once, in the
    cross-replica context; otherwise call it directly."""
    pairs = list(grads_and_vars)
    replica = _replica_context_of_many()
    if replica is None:
        return apply_fn(pairs)
    grads = replica.all_reduce(ReduceOp.SUM, [g for g, _ in pairs])
    summed = list(zip(grads, [v for _, v in pairs]))
    return replica.merge_call(lambda strategy, p: apply_fn(list(p)), args=(summed,))


def steps_run_eagerly(strategy: Any) -> bool:
    """True when the strategy ships each step to other processes (MultiWorkerMirrored):
    Keras must then call its train function eagerly (the replica step runs on the
    workers), not trace it into a kf.function."""
    return bool(getattr(strategy, "runs_steps_in_workers", False))


def _shard(tensor: Any, index: int, count: int) -> Any:
    """Rows [index*n//count, (index+1)*n//count) of a batch (n may be unknown)."""
    if tensor is None:
        return None
    n = kshape(tensor)[0]
    return tensor[(n * index) // count:(n * (index + 1)) // count]


def run_step(strategy: Any, step_fn: Callable[[Any], Any], batch: Any) -> Any:
    """One Keras step under `strategy`: the global batch is split into one shard per
    replica, `step_fn(shard)` runs on each, and the logs are those of the last replica
    (metric state is shared by the replicas of one process and the replicas run in order,
    so the last replica reads the metrics after every replica's update); over worker
    processes, the mean of the workers' logs."""
    if strategy is None or strategy.num_replicas_in_sync == 1:
        return step_fn(batch)
    n = strategy.num_replicas_in_sync
    per_replica = strategy.experimental_distribute_values_from_function(
        lambda value_context: nest.map_structure(
            lambda t: _shard(t, value_context.replica_id_in_sync_group, n), batch))
    # The logs of all but the last replica are dropped on purpose: not worth a warning.
    with quiet_ops():
        outputs = strategy.run(step_fn, args=(per_replica,))
    if steps_run_eagerly(strategy):
        # Each worker process keeps its own metric state (over its shards): the logs are
        # the mean over workers, exact for mean metrics over equal shards.
        return map_values(lambda v: kreduction.reduce_mean(
            kmath.cast(list(v), "float32"), axis=0) if isinstance(v, DistributedValues)
            else v, outputs)
    return map_values(lambda v: v[-1] if isinstance(v, DistributedValues) else v, outputs)
