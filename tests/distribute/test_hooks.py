"""The Keras hooks: keras.Model.compile records the strategy, fit's step runs once per
replica on its shard, train_step scales the loss and the optimizer all-reduces the
gradients, so `fit` under MirroredStrategy matches single-replica training."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.distribute import hooks


def _fit(strategy, run_eagerly):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) * 0.5).astype(np.float32)
    with strategy.scope():
        keras.utils.set_random_seed(3)
        model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(8, "relu"),
                                  keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.SGD(0.05, momentum=0.9), loss="mse", metrics=["mae"],
                      run_eagerly=run_eagerly)
    history = model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    return history.history, [w.numpy() for w in model.weights]


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_fit_under_mirrored_strategy_matches_one_replica(run_eagerly):
    one_history, one_weights = _fit(kf.distribute.get_strategy(), run_eagerly)
    two_history, two_weights = _fit(kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"]),
                                    run_eagerly)
    for key in ("loss", "mae"):  # Keras 3 logs compile(metrics=["mae"]) as `mae`
        np.testing.assert_allclose(two_history[key], one_history[key], rtol=1e-5)
    for a, b in zip(two_weights, one_weights):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_hooks_are_no_ops_without_a_strategy():
    loss = kf.constant(3.0)
    assert hooks.scale_loss_for_distribution(loss) is loss
    applied = []
    hooks.apply_gradients(applied.extend, [(kf.constant(1.0), "v")])
    assert len(applied) == 1
    assert hooks.run_step(None, lambda batch: batch, (1, 2)) == (1, 2)


def test_compute_average_loss_divides_by_the_global_batch():
    strategy = kf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    per_example = strategy.experimental_distribute_values_from_function(
        lambda c: kf.constant([1.0, 3.0]) * float(c.replica_id_in_sync_group + 1))
    losses = strategy.run(kf.distribute.compute_average_loss, args=(per_example,))
    assert float(strategy.reduce("SUM", losses, axis=None)) == 3.0  # (4 + 8) / 4
    weighted = kf.distribute.compute_average_loss(kf.constant([2.0, 4.0]),
                                                  sample_weight=kf.constant([1.0, 0.0]))
    assert float(weighted) == 1.0
