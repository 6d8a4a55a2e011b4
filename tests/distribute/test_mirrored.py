"""MirroredStrategy: N replicas on one global batch train exactly as one replica does,
eagerly and inside @kf.function; the replica context, merge_call and errors."""
import itertools

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.distribute import hooks


def _data(n=16, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 5)).astype(np.float32)
    y = (x @ rng.standard_normal((5, 1)) + 0.1).astype(np.float32)
    return x, y


def _mlp_variables():
    rng = np.random.default_rng(1)
    return [kf.Variable(rng.standard_normal((5, 8)).astype(np.float32) * 0.3, name="w1"),
            kf.Variable(np.zeros(8, np.float32), name="b1"),
            kf.Variable(rng.standard_normal((8, 1)).astype(np.float32) * 0.3, name="w2")]


def _train(strategy, steps, compiled, x, y, lr=0.1):
    """Custom training loop in TF's style: per-example loss averaged over the global
    batch, gradients applied through the cross-replica hook."""
    with strategy.scope():
        w1, b1, w2 = variables = _mlp_variables()

    def apply(pairs):
        for g, v in pairs:
            v.assign_sub(lr * g)

    def step(xb, yb):
        with kf.GradientTape() as tape:
            h = kf.nn.relu(kf.matmul(xb, w1) + b1)
            per_example = kf.reduce_sum(kf.square(kf.matmul(h, w2) - yb), axis=1)
            loss = kf.distribute.compute_average_loss(per_example, global_batch_size=len(x))
        grads = tape.gradient(loss, variables)
        hooks.apply_gradients(apply, zip(grads, variables))
        return loss

    def train_step(batch):
        losses = strategy.run(step, args=batch)
        return strategy.reduce(kf.distribute.ReduceOp.SUM, losses, axis=None)

    if compiled:
        train_step = kf.function(train_step)
    dataset = strategy.experimental_distribute_dataset([(x, y)] * steps)
    losses = [float(train_step(batch)) for batch in dataset]
    return losses, [v.numpy() for v in variables]


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("replicas", [2, 4])
def test_replicas_train_like_one(compiled, replicas):
    x, y = _data()
    one_losses, one_weights = _train(kf.distribute.OneDeviceStrategy("/cpu:0"), 3, compiled,
                                     x, y)
    devices = [f"/cpu:{i}" for i in range(replicas)]
    many_losses, many_weights = _train(kf.distribute.MirroredStrategy(devices), 3, compiled,
                                       x, y)
    np.testing.assert_allclose(many_losses, one_losses, rtol=1e-5)
    for a, b in zip(many_weights, one_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert one_losses[-1] < one_losses[0]


def test_replicas_trace_into_one_graph():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    traces = itertools.count()

    @kf.function
    def total(x):
        def body(xr):
            next(traces)
            ctx = kf.distribute.get_replica_context()
            return ctx.all_reduce("SUM", kf.reduce_sum(xr))
        return strategy.reduce("MEAN", strategy.run(body, args=(x,)), axis=None)

    per_replica = strategy.experimental_distribute_values_from_function(
        lambda c: kf.constant([1.0, 2.0]) * float(c.replica_id_in_sync_group + 1))
    assert float(total(per_replica)) == 9.0
    assert float(total(per_replica)) == 9.0
    assert next(traces) == 2  # one trace, one call per replica


def test_replica_context_and_all_reduce():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])
    assert strategy.num_replicas_in_sync == 3

    def fn():
        ctx = kf.distribute.get_replica_context()
        assert not kf.distribute.in_cross_replica_context()
        assert kf.distribute.get_strategy() is strategy
        i = float(ctx.replica_id_in_sync_group)
        total = ctx.all_reduce(kf.distribute.ReduceOp.SUM, {"a": kf.constant(i), "b": None})
        mean = ctx.all_reduce(kf.distribute.ReduceOp.MEAN, kf.constant([i, 1.0]))
        gathered = ctx.all_gather(kf.constant([i]), axis=0)
        return total["a"], mean, gathered

    totals, means, gathered = strategy.run(fn)
    assert float(totals) == 3.0  # the same reduced tensor on every replica: not per-replica
    assert means.numpy().tolist() == [1.0, 1.0]
    assert gathered.numpy().tolist() == [0.0, 1.0, 2.0]


def test_merge_call_sees_per_replica_values():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    seen = []

    def merge(strat, value, same):
        assert kf.distribute.in_cross_replica_context()
        seen.append((type(value).__name__, same))
        return strat.reduce("SUM", value, axis=None) * 10.0

    def fn():
        ctx = kf.distribute.get_replica_context()
        value = kf.constant(float(ctx.replica_id_in_sync_group + 1))
        return ctx.merge_call(merge, args=(value, "same"))

    result = strategy.run(fn)
    assert float(result) == 30.0  # one merged result, the same object on both replicas
    assert seen == [("PerReplica", "same")]


def test_reduce_along_axis_weighs_unequal_shards():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    batches = strategy.experimental_distribute_dataset([np.arange(5, dtype=np.float32)])
    (batch,) = list(batches)
    assert [v.shape[0] for v in batch.values] == [3, 2]
    assert float(strategy.reduce("MEAN", batch, axis=0)) == 2.0
    assert float(strategy.reduce("SUM", batch, axis=0)) == 10.0
    with pytest.raises(ValueError, match="non-DistributedValues"):
        strategy.reduce("SUM", kf.constant(1.0), axis=None)


def test_errors_reach_the_caller_and_the_strategy_stays_usable():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

    def fails_on_one():
        ctx = kf.distribute.get_replica_context()
        if ctx.replica_id_in_sync_group == 1:
            raise KeyError("replica one")
        return ctx.all_reduce("SUM", kf.constant(1.0))

    with pytest.raises(KeyError, match="replica one"):
        strategy.run(fails_on_one)

    def uneven():
        ctx = kf.distribute.get_replica_context()
        if ctx.replica_id_in_sync_group == 0:
            return ctx.all_reduce("SUM", kf.constant(1.0))
        return kf.constant(0.0)

    with pytest.raises(RuntimeError, match="not by the others"):
        strategy.run(uneven)
    assert float(strategy.reduce("SUM", strategy.run(lambda: kf.constant(2.0)), None)) == 4.0


def test_scope_contexts_and_default_strategy():
    default = kf.distribute.get_strategy()
    assert not kf.distribute.has_strategy()
    assert kf.distribute.get_replica_context().num_replicas_in_sync == 1
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with strategy.scope():
        assert kf.distribute.get_strategy() is strategy
        assert kf.distribute.in_cross_replica_context()
        assert kf.distribute.get_replica_context() is None
        assert kf.distribute.get_cross_replica_context() is strategy
        v = kf.Variable(1.0)
        with pytest.raises(ValueError, match="Mixing"):
            with kf.distribute.OneDeviceStrategy("/cpu:0").scope():
                pass
    assert strategy.extended.variable_created_in_scope(v)
    assert not strategy.extended.variable_created_in_scope(kf.Variable(1.0))
    assert kf.distribute.get_strategy() is default
    kf.distribute.experimental_set_strategy(strategy)
    try:
        assert kf.distribute.get_strategy() is strategy
    finally:
        kf.distribute.experimental_set_strategy(None)
    assert kf.distribute.get_strategy() is default
    with pytest.raises(ValueError, match="duplicate"):
        kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:0"])


def test_replica_functions_are_converted_by_autograph_when_traced():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])

    def clipped_total(x):
        total = kf.reduce_sum(x)
        if total > 4.0:  # a tensor condition: a cond op inside the traced replica
            total = total * 0.0 + 4.0
        return total

    @kf.function
    def step(batch):
        return strategy.reduce("SUM", strategy.run(clipped_total, args=(batch,)), axis=None)

    (batch,) = strategy.experimental_distribute_dataset([np.array([1.0, 2.0, 3.0, 4.0])])
    assert float(step(batch)) == 3.0 + 4.0  # replica 0: 1+2, replica 1: min(7, 4)


def test_nested_run_and_failing_merge_functions_are_reported():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with pytest.raises(RuntimeError, match="inside a replica function"):
        strategy.run(lambda: strategy.run(lambda: kf.constant(1.0)))

    def bad_merge(strat, value):
        raise ZeroDivisionError("in the merge")

    with pytest.raises(ZeroDivisionError, match="in the merge"):
        strategy.run(lambda: kf.distribute.get_replica_context().merge_call(
            bad_merge, args=(kf.constant(1.0),)))
    assert float(strategy.reduce("SUM", strategy.run(lambda: kf.constant(1.0)), None)) == 2.0
