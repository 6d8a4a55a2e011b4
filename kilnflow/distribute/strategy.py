"""The Strategy API of tf.distribute: `scope`, `run`, `reduce`, distributed datasets, the
replica context with `all_reduce` and `merge_call`, and the default and one-device
strategies (a single replica in the calling thread).

A strategy runs `fn` once per replica through `_run_replicas`; subclasses with several
replicas (MirroredStrategy) override it. Everything here is built from public kf ops,
so it works eagerly and while a kf.function is traced.
"""
from __future__ import annotations

import contextlib
import weakref
from typing import Any, Callable, Iterator, Optional

from kilnflow import nest
from kilnflow.context import ctx
from kilnflow.distribute import distribution_context as dctx
from kilnflow.distribute import input_lib
from kilnflow.distribute import reduction
from kilnflow.distribute.reduce_util import ReduceOp, as_reduce_op
from kilnflow.distribute.values import DistributedValues, local_results, map_values
from kilnflow.distribute.values import regroup, select_replica
from kilnflow.ops.joining import concat


def call_replica_fn(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Call a replica function; while a kf.function is traced it is converted by AutoGraph
    first, as the function that calls strategy.run is."""
    graph = ctx.graph
    if graph is not None and graph.is_function:
        from kilnflow.autograph import api as autograph_api
        return autograph_api.converted_call(fn, args, kwargs)
    return fn(*args, **kwargs)


class ReplicaContext:
    """What code running on one replica sees (TF's tf.distribute.ReplicaContext).

    >>> import kilnflow as kf
    >>> rc = kf.distribute.get_replica_context()
    >>> rc.num_replicas_in_sync, rc.replica_id_in_sync_group
    (1, 0)
    """

    def __init__(self, strategy: "Strategy", replica_id_in_sync_group: int):
        self._strategy = strategy
        self._replica_id = replica_id_in_sync_group

    @property
    def strategy(self) -> "Strategy":
        return self._strategy

    @property
    def num_replicas_in_sync(self) -> int:
        return self._strategy.num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> int:
        return self._replica_id

    @property
    def devices(self) -> tuple:
        return (self._strategy.extended.worker_devices[self._replica_id],)

    def merge_call(self, merge_fn: Callable, args: tuple = (), kwargs: Optional[dict] = None
                   ) -> Any:
        """Pause every replica, call `merge_fn(strategy, *args, **kwargs)` once in the
        cross-replica context (arguments that differ per replica arrive as PerReplica),
        and hand each replica its part of the result."""
        kwargs = kwargs or {}
        with dctx.pushed(self._strategy, None):
            return merge_fn(self._strategy, *args, **kwargs)

    def all_reduce(self, reduce_op: Any, value: Any, options: Any = None) -> Any:
        """SUM or MEAN of `value` (a nested structure of tensors) over all replicas; every
        replica gets the result."""
        reduce_op = as_reduce_op(reduce_op)
        n = self.num_replicas_in_sync
        return self.merge_call(
            lambda strategy, v: reduction.reduce_structure(reduce_op, v, n), args=(value,))

    def all_gather(self, value: Any, axis: int, options: Any = None) -> Any:
        """The replicas' values concatenated along `axis`, on every replica."""
        def gather(strategy: "Strategy", v: Any) -> Any:
            return map_values(
                lambda leaf: concat(list(local_results(leaf)), axis) if isinstance(
                    leaf, DistributedValues) else concat([leaf] * strategy.num_replicas_in_sync,
                                                         axis), v)
        return self.merge_call(gather, args=(value,))

    def __repr__(self) -> str:
        return (f"<ReplicaContext replica {self._replica_id} of "
                f"{self.num_replicas_in_sync} ({type(self._strategy).__name__})>")


class StrategyExtended:
    """The lower-level API (`strategy.extended`): devices, update and reduce_to."""

    def __init__(self, strategy: "Strategy", devices: tuple):
        self._strategy = weakref.proxy(strategy)
        self._devices = tuple(devices)
        # variables created under scope(), by id (variables are unhashable, like tensors)
        self._variables: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()

    @property
    def worker_devices(self) -> tuple:
        return self._devices

    @property
    def parameter_devices(self) -> tuple:
        return self._devices

    @property
    def experimental_require_static_shapes(self) -> bool:
        return False

    @property
    def should_checkpoint(self) -> bool:
        return True

    @property
    def should_save_summary(self) -> bool:
        return True

    def variable_created_in_scope(self, v: Any) -> bool:
        return self._variables.get(id(v)) is v

    def colocate_vars_with(self, colocate_with_variable: Any) -> Any:
        return contextlib.nullcontext()

    def reduce_to(self, reduce_op: Any, value: Any, destinations: Any = None,
                  options: Any = None) -> Any:
        return reduction.reduce_leaf(reduce_op, value, self._strategy.num_replicas_in_sync)

    def batch_reduce_to(self, reduce_op: Any, value_destination_pairs: Any,
                        options: Any = None) -> list:
        return [self.reduce_to(reduce_op, v, d) for v, d in value_destination_pairs]

    def update(self, var: Any, fn: Callable, args: tuple = (), kwargs: Optional[dict] = None,
               group: bool = True) -> Any:
        """Run `fn(var, *args, **kwargs)` once on the (shared) variable."""
        with dctx.pushed(self._strategy, None):
            return fn(var, *select_replica(0, args), **select_replica(0, kwargs or {}))

    def value_container(self, value: Any) -> Any:
        return value


class Strategy:
    """Base of the distribution strategies (TF's tf.distribute.Strategy).

    >>> import kilnflow as kf
    >>> strategy = kf.distribute.get_strategy()
    >>> strategy.run(lambda x: x + 1, args=(kf.constant(1.0),)).numpy()
    np.float32(2.0)
    """

    def __init__(self, devices: tuple):
        self._extended = StrategyExtended(self, devices)

    # ---------------------------------------------------------------- properties

    @property
    def extended(self) -> StrategyExtended:
        return self._extended

    @property
    def num_replicas_in_sync(self) -> int:
        return len(self._extended.worker_devices)

    @property
    def cluster_resolver(self) -> Any:
        return None

    # ---------------------------------------------------------------- scope

    @contextlib.contextmanager
    def scope(self) -> Iterator["Strategy"]:
        """Make this the current strategy: variables created inside belong to it, and
        `kf.distribute.get_strategy()` returns it."""
        current = dctx.top()
        if current is not None and current[0] is self and current[1] is not None:
            yield self  # already in one of this strategy's replicas: stay there
            return
        if current is not None and current[0] is not self and current[0] is not _default():
            raise ValueError(f"Mixing different tf.distribute.Strategy objects: entering the "
                             f"scope of {type(self).__name__} inside the scope of "
                             f"{type(current[0]).__name__}")
        def hook(variable: Any) -> None:
            self._extended._variables[id(variable)] = variable
        ctx.variable_hooks.append(hook)
        # re-entered (strategy.run inside scope()): creator scopes entered since stay inner
        creators = contextlib.nullcontext() if current is not None and current[0] is self \
            else self._creator_scope()
        try:
            with dctx.pushed(self, None), creators:
                yield self
        finally:
            ctx.variable_hooks.remove(hook)

    def _creator_scope(self) -> Any:
        """The variable creator scope of `scope()`: none here (one replica: plain
        kf.Variables, as TF's default and one-device strategies make)."""
        return contextlib.nullcontext()

    # ---------------------------------------------------------------- running

    def run(self, fn: Callable, args: tuple = (), kwargs: Optional[dict] = None,
            options: Any = None) -> Any:
        """Call `fn` once per replica with that replica's part of `args` (PerReplica
        values are split, anything else is passed to every replica); returns a PerReplica
        of the results (or the plain result with one replica)."""
        if not callable(fn):
            raise TypeError(f"strategy.run expects a callable fn, got {fn!r}")
        top = dctx.top()
        if top is not None and top[1] is not None and top[1].num_replicas_in_sync > 1:
            raise RuntimeError("strategy.run was called inside a replica function: call it "
                               "from the cross-replica context (outside strategy.run)")
        kwargs = dict(kwargs or {})
        with self.scope():
            results = self._run_replicas(fn, tuple(args), kwargs)
        return regroup(results)

    def _run_replicas(self, fn: Callable, args: tuple, kwargs: dict) -> list:
        """One result per replica. A single replica runs in the calling thread."""
        replica = ReplicaContext(self, 0)
        with dctx.pushed(self, replica):
            return [call_replica_fn(fn, select_replica(0, args), select_replica(0, kwargs))]

    def reduce(self, reduce_op: Any, value: Any, axis: Optional[int]) -> Any:
        """Combine a per-replica value into one tensor: SUM or MEAN across replicas, and
        along `axis` of each replica's value when axis is not None."""
        reduce_op = as_reduce_op(reduce_op)
        if not isinstance(value, DistributedValues):
            if reduce_op is ReduceOp.SUM and self.num_replicas_in_sync > 1 and axis is None:
                raise ValueError(f"A non-DistributedValues value {value!r} cannot be reduced "
                                 f"with {reduce_op} over {self.num_replicas_in_sync} replicas")
            return reduction.reduce_with_axis(reduce_op, [value], axis)
        return reduction.reduce_with_axis(reduce_op, value.values, axis)

    def experimental_local_results(self, value: Any) -> tuple:
        """The per-replica components of `value` as a tuple (a 1-tuple when not
        distributed)."""
        return local_results(value) if isinstance(value, DistributedValues) or not \
            nest.is_nested(value) else map_values(local_results, value)

    def gather(self, value: Any, axis: int) -> Any:
        """Concatenate the per-replica values along `axis` (cross-replica context)."""
        return concat(list(local_results(value)), axis)

    # ---------------------------------------------------------------- input

    def experimental_distribute_dataset(self, dataset: Any, options: Any = None) -> Any:
        """Distribute a dataset (or any iterable) of GLOBAL batches: each batch is split
        along its first axis into one shard per replica."""
        return input_lib.DistributedDataset(self, dataset, options)

    def distribute_datasets_from_function(self, dataset_fn: Callable,
                                          options: Any = None) -> Any:
        """`dataset_fn(input_context)` returns an iterable of PER-REPLICA batches; the
        replicas take consecutive elements."""
        return input_lib.DatasetsFromFunction(self, dataset_fn, options)

    def experimental_distribute_values_from_function(self, value_fn: Callable) -> Any:
        """PerReplica of `value_fn(ValueContext(replica_id, num_replicas))`."""
        n = self.num_replicas_in_sync
        return regroup([value_fn(input_lib.ValueContext(i, n)) for i in range(n)])

    def input_worker_replicas(self) -> range:
        """The global replica ids whose inputs this process feeds (all of them locally)."""
        return range(self.num_replicas_in_sync)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} with {self.num_replicas_in_sync} replica(s)>"


class OneDeviceStrategy(Strategy):
    """Everything on one device, one replica: the strategy code runs unchanged on one CPU.

    >>> import kilnflow as kf
    >>> strategy = kf.distribute.OneDeviceStrategy("/cpu:0")
    >>> strategy.num_replicas_in_sync
    1
    """

    def __init__(self, device: str = "/cpu:0"):
        super().__init__((device,))


class _DefaultStrategy(Strategy):
    """The strategy in effect when no other is: one replica, no distribution."""

    def __init__(self) -> None:
        super().__init__(("/job:localhost/replica:0/task:0/device:CPU:0",))


_DEFAULT: list = []


def _default() -> Strategy:
    if not _DEFAULT:
        _DEFAULT.append(_DefaultStrategy())
    return _DEFAULT[0]


def get_strategy() -> Strategy:
    """The current strategy: the innermost `scope()` or `run()`, else the default one.

    >>> import kilnflow as kf
    >>> kf.distribute.get_strategy().num_replicas_in_sync
    1
    """
    top = dctx.top()
    return _default() if top is None else top[0]


def has_strategy() -> bool:
    """True inside the scope (or run) of a non-default strategy."""
    return get_strategy() is not _default()


def in_cross_replica_context() -> bool:
    """True inside `strategy.scope()` (or a merge function), not in a replica function."""
    top = dctx.top()
    return top is not None and top[1] is None


def get_replica_context() -> Optional[ReplicaContext]:
    """The replica context (None in the cross-replica context; the default strategy's
    single replica outside every strategy)."""
    top = dctx.top()
    if top is None:
        return ReplicaContext(_default(), 0)
    return top[1]


def get_cross_replica_context() -> Optional[Strategy]:
    """The strategy when in the cross-replica context, else None."""
    top = dctx.top()
    if top is None:
        return _default()
    return top[0] if top[1] is None else None


def experimental_set_strategy(strategy: Optional[Strategy]) -> None:
    """Make `strategy` current in this thread outside any scope (None: the default)."""
    dctx.set_base(strategy)
