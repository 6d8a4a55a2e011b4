"""Keras `fit` under MultiWorkerMirroredStrategy with 2 Ray worker processes trains like
one process on the concatenated (global) batch. Slow: a local Ray instance starts in
seconds (run with `-m slow`)."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.distribute.cluster_resolver import SimpleClusterResolver


def _data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((48, 5)).astype(np.float32)
    y = (x @ rng.standard_normal((5, 2)) + 0.1).astype(np.float32)
    return x, y


def _fit(strategy, x, y):
    with strategy.scope():
        keras.utils.set_random_seed(7)
        model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(16, "tanh"),
                                  keras.layers.Dense(2)])
        model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse")
    history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    return model, history


@pytest.mark.slow
def test_fit_on_two_workers_equals_one_process():
    ray = pytest.importorskip("ray")
    x, y = _data()
    reference, expected = _fit(kf.distribute.OneDeviceStrategy("/cpu:0"), x, y)
    spec = kf.train.ClusterSpec({"worker": ["localhost:0", "localhost:1"]})
    strategy = kf.distribute.MultiWorkerMirroredStrategy(
        cluster_resolver=SimpleClusterResolver(spec))
    try:
        model, history = _fit(strategy, x, y)
        assert len(set(strategy.worker_pids())) == 2
    finally:
        strategy.shutdown()
        ray.shutdown()
    assert model.distribute_strategy is strategy
    for a, b in zip(model.get_weights(), reference.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert int(model.optimizer.iterations.numpy()) == 12  # 2 epochs x 6 global batches
    # each worker tracks the loss of its shards; the logs are the workers' mean
    np.testing.assert_allclose(history.history["loss"], expected.history["loss"], rtol=1e-5)
    np.testing.assert_allclose(model.predict(x, verbose=0), reference.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
