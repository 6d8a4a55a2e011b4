"""ParameterServerStrategy + ClusterCoordinator on Ray: 1 ps and 2 worker actors.
Scheduled one at a time (join after each), training equals one process; scheduled all at
once, commutative updates add up exactly. Slow (run with `-m slow`)."""
import gc
import os
import signal
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.distribute.cluster_resolver import SimpleClusterResolver

SPEC = {"worker": ["localhost:1", "localhost:2"], "ps": ["localhost:3"]}


def test_needs_ps_and_worker_jobs_and_run_is_refused():
    pytest.importorskip("ray")
    with pytest.raises(ValueError, match="ps"):
        kf.distribute.experimental.ParameterServerStrategy(
            SimpleClusterResolver(kf.train.ClusterSpec({"worker": ["a:1"]})))
    strategy = kf.distribute.experimental.ParameterServerStrategy(
        SimpleClusterResolver(kf.train.ClusterSpec(SPEC)))
    assert strategy.num_replicas_in_sync == 1
    with pytest.raises(kf.errors.UnimplementedError, match="schedule"):
        strategy.run(lambda: 1)


def test_without_ray_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(kf.errors.UnimplementedError, match="distributed"):
        kf.distribute.experimental.ParameterServerStrategy(
            SimpleClusterResolver(kf.train.ClusterSpec(SPEC)))


@pytest.fixture(scope="module")
def coordinator():
    ray = pytest.importorskip("ray")
    strategy = kf.distribute.experimental.ParameterServerStrategy(
        SimpleClusterResolver(kf.train.ClusterSpec(SPEC)))
    yield kf.distribute.experimental.coordinator.ClusterCoordinator(strategy)
    ray.shutdown()


def _regression():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 8, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    return x, y


def _make(strategy):
    with strategy.scope():
        w = kf.Variable(np.zeros((3, 1), np.float32), name="w")
        b = kf.Variable(0.0, name="b")

    def step(x, y):
        with kf.GradientTape() as tape:
            loss = kf.reduce_mean(kf.square(kf.matmul(x, w) + b - y))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
        return loss
    return w, b, step


@pytest.mark.slow
def test_sequential_schedules_train_like_one_process(coordinator):
    x, y = _regression()
    w0, b0, local = _make(kf.distribute.OneDeviceStrategy("/cpu:0"))
    expected = [float(local(kf.constant(a), kf.constant(t))) for a, t in zip(x, y)]
    w, b, step = _make(coordinator.strategy)
    losses = []
    for a, t in zip(x, y):
        losses.append(coordinator.schedule(step, args=(a, t)))
        coordinator.join()
    np.testing.assert_allclose([float(v.fetch()) for v in losses], expected, rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), w0.numpy(), rtol=1e-5)
    np.testing.assert_allclose(float(b.numpy()), float(b0.numpy()), rtol=1e-5)


@pytest.mark.slow
def test_concurrent_updates_add_up_and_a_dead_worker_is_replaced(coordinator):
    with coordinator.strategy.scope():
        total = kf.Variable(0.0, name="total")

    def add(value):
        total.assign_add(value)
        return os.getpid()

    pids = coordinator.fetch([coordinator.schedule(add, args=(float(i),))
                              for i in range(1, 5)])
    coordinator.join()
    assert float(total.numpy()) == 10.0 and len(set(pids)) == 2
    os.kill(pids[0], signal.SIGKILL)
    coordinator.fetch([coordinator.schedule(add, args=(1.0,)) for _ in range(4)])
    coordinator.join()
    assert float(total.numpy()) == 14.0


@pytest.mark.slow
def test_a_new_function_at_a_freed_functions_address_is_shipped(coordinator):
    # Functions were keyed by id(): a closure freed after its schedule and a new one at
    # the same address ran the old function on the worker (CI: "step() missing 1 required
    # positional argument: 'y'" when a test's `add` reused the previous test's `step` id).
    results = []
    for i in range(12):
        def make(i):
            return lambda: i
        fn = make(i)
        results.append(coordinator.fetch(coordinator.schedule(fn)))
        coordinator.join()  # no pending RemoteValue holds the closure any more
        del fn
        gc.collect()
    assert results == list(range(12))  # before the fix: [0, ..., 6, 1, ...] (ids reused)
