"""Distributed input: a dataset (any iterable) of global batches split into one shard per
replica, or per-replica datasets built by a function of an InputContext.

kf.data pipelines, lists of arrays and generators all work: anything iterable whose
elements are (nested) arrays or tensors with a batch dimension first. Shards are eager
tensors, so a compiled step traced on one shard shape serves every step.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Optional

import numpy as np

from kilnflow import errors
from kilnflow import nest
from kilnflow.context import eager_mode
from kilnflow.distribute.values import regroup
from kilnflow.ops.convert import convert_to_tensor


class InputOptions:
    """Options of a distributed dataset; accepted for TF compatibility (everything runs
    on the host CPU, so prefetching to devices has nothing to do)."""

    def __init__(self, experimental_fetch_to_device: Optional[bool] = None,
                 experimental_replication_mode: Any = None,
                 experimental_place_dataset_on_device: bool = False,
                 experimental_per_replica_buffer_size: int = 1):
        self.experimental_fetch_to_device = experimental_fetch_to_device
        self.experimental_replication_mode = experimental_replication_mode
        self.experimental_place_dataset_on_device = experimental_place_dataset_on_device
        self.experimental_per_replica_buffer_size = experimental_per_replica_buffer_size


class InputContext:
    """What a `dataset_fn` learns about its input pipeline (TF's tf.distribute.InputContext).

    >>> import kilnflow as kf
    >>> kf.distribute.InputContext(num_replicas_in_sync=4).get_per_replica_batch_size(64)
    16
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0,
                 num_replicas_in_sync: int = 1):
        self.num_input_pipelines = num_input_pipelines
        self.input_pipeline_id = input_pipeline_id
        self.num_replicas_in_sync = num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        if global_batch_size % self.num_replicas_in_sync:
            raise ValueError(f"The `global_batch_size` {global_batch_size} is not divisible by "
                             f"`num_replicas_in_sync` {self.num_replicas_in_sync}")
        return global_batch_size // self.num_replicas_in_sync

    def __repr__(self) -> str:
        return (f"InputContext(num_input_pipelines={self.num_input_pipelines}, "
                f"input_pipeline_id={self.input_pipeline_id}, "
                f"num_replicas_in_sync={self.num_replicas_in_sync})")


class ValueContext:
    """What `experimental_distribute_values_from_function`'s value_fn learns."""

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1):
        self.replica_id_in_sync_group = replica_id_in_sync_group
        self.num_replicas_in_sync = num_replicas_in_sync


def _as_array(leaf: Any) -> np.ndarray:
    array = np.asarray(leaf)
    if array.ndim == 0:
        raise errors.InvalidArgumentError(
            f"experimental_distribute_dataset: every element must have a batch dimension to "
            f"split across replicas; got a scalar {leaf!r}")
    return array


def split_batch(batch: Any, num_shards: int) -> list:
    """A global batch (nested arrays/tensors) -> `num_shards` batches, split along axis 0
    (the first shards get one more example when the size does not divide)."""
    flat = [_as_array(leaf) for leaf in nest.flatten(batch)]
    sizes = {a.shape[0] for a in flat}
    if len(sizes) > 1:
        raise errors.InvalidArgumentError(
            f"experimental_distribute_dataset: the parts of one element have different batch "
            f"sizes {sorted(sizes)}")
    parts = [np.array_split(a, num_shards) for a in flat]
    with eager_mode():
        return [nest.pack_sequence_as(batch, [convert_to_tensor(p[i]) for p in parts])
                for i in range(num_shards)]


class DistributedIterator:
    """Yields one PerReplica element per step (a plain element with one replica)."""

    def __init__(self, next_shards: Callable[[], list]):
        self._next_shards = next_shards

    def __iter__(self) -> "DistributedIterator":
        return self

    def __next__(self) -> Any:
        return regroup(self._next_shards())

    def get_next(self) -> Any:
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError("End of sequence") from None


class DistributedDataset:
    """A dataset of global batches, each split into one shard per replica."""

    def __init__(self, strategy: Any, dataset: Any, options: Any = None):
        try:
            iter(dataset)
        except TypeError:
            raise TypeError(f"experimental_distribute_dataset needs an iterable of batches "
                            f"(a kf.data.Dataset, a list, a generator), got {type(dataset)}"
                            ) from None
        self._strategy = strategy
        self._dataset = dataset
        self._options = options

    def __iter__(self) -> DistributedIterator:
        source = iter(self._dataset)
        replicas = list(self._strategy.input_worker_replicas())
        n = self._strategy.num_replicas_in_sync

        def next_shards() -> list:
            shards = split_batch(next(source), n)
            return [shards[i] for i in replicas]
        return DistributedIterator(next_shards)


class DatasetsFromFunction:
    """Per-replica batches from `dataset_fn(InputContext)`: one pipeline per process,
    consecutive elements go to consecutive replicas."""

    def __init__(self, strategy: Any, dataset_fn: Callable, options: Any = None):
        self._strategy = strategy
        self._dataset_fn = dataset_fn
        self._options = options

    def __iter__(self) -> DistributedIterator:
        context = InputContext(1, 0, self._strategy.num_replicas_in_sync)
        source = iter(self._dataset_fn(context))
        count = len(self._strategy.input_worker_replicas())

        def next_shards() -> list:
            with eager_mode():
                return [nest.map_structure(convert_to_tensor, next(source))
                        for _ in range(count)]
        return DistributedIterator(next_shards)
