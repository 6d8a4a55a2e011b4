"""MultiWorkerMirroredStrategy on a local Ray cluster of 2 worker processes: N steps
equal single-process training on the concatenated batch; a killed worker surfaces as
UnavailableError and training resumes from the last checkpoint. Ray tests are slow
(a local Ray instance starts in seconds): run them with `-m slow`."""
import os
import signal
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.distribute import hooks
from kilnflow.distribute.cluster_resolver import SimpleClusterResolver


class HookedSGD(keras.optimizers.SGD):
    def apply_gradients(self, grads_and_vars, name=None, **kwargs):
        parent = super().apply_gradients
        return hooks.apply_gradients(lambda pairs: parent(pairs), grads_and_vars)


def _data(steps=3, batch=8):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps, batch, 4)).astype(np.float32)
    y = x.sum(axis=2, keepdims=True) * 0.5
    return list(zip(x, y.astype(np.float32)))


def _model(strategy):
    with strategy.scope():
        keras.utils.set_random_seed(3)
        model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, "relu"),
                                  keras.layers.Dense(1)])
        optimizer = HookedSGD(0.05, momentum=0.9)
    return model, optimizer


def _step_fn(model, optimizer):
    def step(x, y):
        with kf.GradientTape() as tape:
            per_example = kf.reduce_sum(kf.square(model(x, training=True) - y), axis=1)
            loss = kf.distribute.compute_average_loss(per_example, global_batch_size=8)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return step


def _setup(strategy):
    model, optimizer = _model(strategy)
    return model, optimizer, _step_fn(model, optimizer)


def _train(strategy, batches):
    model, optimizer, step = _setup(strategy)
    losses = []
    for x, y in strategy.experimental_distribute_dataset(batches):
        losses.append(float(strategy.reduce("SUM", strategy.run(step, args=(x, y)), None)))
    return losses, [w.numpy() for w in model.weights]


@pytest.fixture(scope="module")
def two_workers():
    ray = pytest.importorskip("ray")
    spec = kf.train.ClusterSpec({"worker": ["localhost:0", "localhost:1"]})
    strategy = kf.distribute.MultiWorkerMirroredStrategy(
        cluster_resolver=SimpleClusterResolver(spec))
    yield strategy
    strategy.shutdown()
    ray.shutdown()


@pytest.mark.slow
def test_two_workers_train_like_one_process(two_workers):
    assert two_workers.num_replicas_in_sync == 2
    batches = _data()
    one_losses, one_weights = _train(kf.distribute.OneDeviceStrategy("/cpu:0"), batches)
    many_losses, many_weights = _train(two_workers, batches)
    np.testing.assert_allclose(many_losses, one_losses, rtol=1e-5)
    for a, b in zip(many_weights, one_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    pids = two_workers.worker_pids()
    assert len(set(pids)) == 2 and os.getpid() not in pids


@pytest.mark.slow
def test_killed_worker_is_unavailable_and_training_resumes(two_workers, tmp_path):
    batches = _data(steps=4)
    # Reference, one process: 2 steps, then (as after the restart) steps 3 and 4 with the
    # momentum restarted: the optimizer's slots lived on the workers that were stopped.
    one = kf.distribute.OneDeviceStrategy("/cpu:0")
    model, optimizer = _model(one)
    step = _step_fn(model, optimizer)
    for x, y in list(one.experimental_distribute_dataset(batches))[:2]:
        one.run(step, args=(x, y))
    with one.scope():
        fresh = _step_fn(model, HookedSGD(0.05, momentum=0.9))
    for x, y in list(one.experimental_distribute_dataset(batches))[2:]:
        one.run(fresh, args=(x, y))
    expected = [w.numpy() for w in model.weights]

    model, optimizer, step = _setup(two_workers)
    checkpoint = kf.train.Checkpoint(model=model)
    dist = list(two_workers.experimental_distribute_dataset(batches))
    for x, y in dist[:2]:
        two_workers.run(step, args=(x, y))
    path = checkpoint.save(str(tmp_path / "ckpt"))
    two_workers.run(step, args=dist[2])
    os.kill(two_workers.worker_pids()[1], signal.SIGKILL)
    with pytest.raises(kf.errors.UnavailableError, match="task:1"):
        two_workers.run(step, args=dist[3])
    checkpoint.restore(path)  # the driver stays usable: back to the last checkpoint
    for x, y in dist[2:]:
        two_workers.run(step, args=(x, y))  # new workers, from the driver's variables
    for a, b in zip([w.numpy() for w in model.weights], expected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_replica_function_may_call_a_kf_function(two_workers):
    with two_workers.scope():
        w = kf.Variable(np.ones((3, 1), np.float32))

    @kf.function
    def gradient(x):
        with kf.GradientTape() as tape:
            loss = kf.distribute.compute_average_loss(
                kf.reduce_sum(kf.square(kf.matmul(x, w)), axis=1), global_batch_size=4)
        return tape.gradient(loss, w)

    def step(x):
        hooks.apply_gradients(lambda pairs: [v.assign_sub(0.1 * g) for g, v in pairs],
                              [(gradient(x), w)])
        return kf.distribute.get_replica_context().replica_id_in_sync_group

    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    (batch,) = two_workers.experimental_distribute_dataset([x])
    ranks = two_workers.run(step, args=(batch,))
    assert [int(r) for r in two_workers.experimental_local_results(ranks)] == [0, 1]
    expected = np.ones((3, 1), np.float32) - 0.1 * (2 * x.T @ (x @ np.ones((3, 1)))) / 4
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)


def test_without_ray_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(kf.errors.UnimplementedError, match="distributed"):
        kf.distribute.MultiWorkerMirroredStrategy()
    assert kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]).num_replicas_in_sync == 2


def test_run_inside_a_function_is_refused():
    pytest.importorskip("ray")
    strategy = kf.distribute.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    def one():
        return kf.constant(1.0)

    @kf.function
    def compiled():
        return strategy.run(one)
    with pytest.raises(kf.errors.UnimplementedError, match="eagerly"):
        compiled()


@pytest.mark.slow
def test_a_step_past_the_timeout_is_a_deadline_error(two_workers):
    options = kf.distribute.experimental.CommunicationOptions(timeout_seconds=2)
    strategy = kf.distribute.MultiWorkerMirroredStrategy(
        communication_options=options, cluster_resolver=two_workers.cluster_resolver)

    def stuck():  # replica 1 never reaches the all-reduce replica 0 waits in
        ctx = kf.distribute.get_replica_context()
        if ctx.replica_id_in_sync_group == 0:
            ctx.all_reduce("SUM", kf.constant(1.0))
        else:
            import time
            time.sleep(60)
        return kf.constant(0.0)

    with pytest.raises(kf.errors.DeadlineExceededError, match="timeout_seconds"):
        strategy.run(stuck)
    assert float(strategy.reduce("SUM", strategy.run(lambda: kf.constant(1.0)), None)) == 2.0
    strategy.shutdown()


@pytest.mark.slow
def test_sync_on_read_variable_combines_every_workers_copy(two_workers):
    # each worker accumulates into its own copy (metric state); the driver's read sums
    # them all, a cross-replica reset reaches every worker's copy
    with two_workers.scope():
        total = kf.Variable(0.0, synchronization="ON_READ", aggregation="SUM")

    def add():
        rank = kf.distribute.get_replica_context().replica_id_in_sync_group
        total.assign_add(kf.cast(rank + 1, "float32"))
        return total.read_value()

    local = two_workers.run(add)
    assert [float(v) for v in two_workers.experimental_local_results(local)] == [1.0, 2.0]
    assert float(total.numpy()) == 3.0
    two_workers.run(add)
    assert float(total.numpy()) == 6.0
    total.assign(0.0)
    local = two_workers.run(add)
    assert [float(v) for v in two_workers.experimental_local_results(local)] == [1.0, 2.0]
    assert float(total.numpy()) == 3.0
