"""keras.random: Keras 3's seeding semantics (an int seed repeats, a SeedGenerator advances,
also across kf.function calls), shapes and dtypes as Keras gives them (recorded below from
Keras 3), and the distributions' moments on large samples. Values are kilnflow's own
stream, not TF's: only the distributions are compared."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.keras import random

# (function, kwargs) -> (dtype, shape) as recorded from Keras 3.13 / TF 2.21
SIGNATURES = [
    (random.normal, {"shape": (2, 3)}, "float32", (2, 3)),
    (random.uniform, {"shape": (4,), "dtype": "float16"}, "float16", (4,)),
    (random.truncated_normal, {"shape": (3, 1)}, "float32", (3, 1)),
    (random.randint, {"shape": (5,), "minval": 0, "maxval": 4}, "int32", (5,)),
    (random.categorical, {"logits": [[0.0, 1.0], [1.0, 0.0]], "num_samples": 3}, "int32", (2, 3)),
    (random.dropout, {"inputs": np.ones((2, 2), np.float32), "rate": 0.5}, "float32", (2, 2)),
    (random.shuffle, {"x": np.arange(6)}, "int64", (6,)),
    (random.gamma, {"shape": (3,), "alpha": 2.0}, "float32", (3,)),
    (random.beta, {"shape": (3,), "alpha": 2.0, "beta": 3.0}, "float32", (3,)),
    (random.binomial, {"shape": (3,), "counts": 5.0, "probabilities": 0.5}, "float32", (3,)),
]


@pytest.mark.parametrize("fn,kwargs,dtype,shape", SIGNATURES)
def test_dtype_shape_and_int_seed_repeats(fn, kwargs, dtype, shape):
    a = fn(seed=7, **kwargs)
    b = fn(seed=7, **kwargs)
    assert a.dtype.name == dtype and tuple(a.shape.as_list()) == shape
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_seed_generator_advances_and_is_reproducible():
    g1, g2 = random.SeedGenerator(3), random.SeedGenerator(3)
    a1, b1 = random.normal((4,), seed=g1), random.normal((4,), seed=g1)
    a2, b2 = random.normal((4,), seed=g2), random.normal((4,), seed=g2)
    assert not np.allclose(a1.numpy(), b1.numpy())
    np.testing.assert_array_equal(a1.numpy(), a2.numpy())
    np.testing.assert_array_equal(b1.numpy(), b2.numpy())
    assert random.SeedGenerator.from_config(g1.get_config()).get_config() == {"seed": 3}


def test_seed_generator_inside_function_draws_fresh_values_per_call():
    g = random.SeedGenerator(11)
    f = kf.function(lambda: random.uniform((3,), seed=g))
    first, second = f().numpy(), f().numpy()
    assert not np.allclose(first, second)
    eager = random.SeedGenerator(11)
    np.testing.assert_array_equal(first, random.uniform((3,), seed=eager).numpy())


def test_unseeded_calls_differ():
    assert not np.allclose(random.normal((8,)).numpy(), random.normal((8,)).numpy())


def test_moments():
    n = (20000,)
    x = random.normal(n, mean=1.0, stddev=2.0, seed=1).numpy()
    assert abs(x.mean() - 1.0) < 0.05 and abs(x.std() - 2.0) < 0.05
    u = random.uniform(n, minval=-1.0, maxval=3.0, seed=2).numpy()
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean() - 1.0) < 0.05
    t = random.truncated_normal(n, mean=0.0, stddev=1.0, seed=3).numpy()
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.88) < 0.03
    r = random.randint(n, 2, 6, seed=4).numpy()
    assert set(np.unique(r)) == {2, 3, 4, 5}
    g = random.gamma(n, alpha=3.0, seed=5).numpy()
    assert abs(g.mean() - 3.0) < 0.1
    b = random.beta(n, alpha=2.0, beta=6.0, seed=6).numpy()
    assert abs(b.mean() - 0.25) < 0.01
    k = random.binomial(n, counts=10.0, probabilities=0.3, seed=7).numpy()
    assert abs(k.mean() - 3.0) < 0.1
    c = random.categorical(np.log([[0.1, 0.6, 0.3]]), 20000, seed=8).numpy()
    np.testing.assert_allclose(np.bincount(c[0], minlength=3) / 20000, [0.1, 0.6, 0.3],
                               atol=0.02)


def test_dropout_and_shuffle():
    x = np.ones((200, 50), np.float32)
    y = random.dropout(x, 0.25, seed=1).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    shared = random.dropout(x, 0.5, noise_shape=(1, 50), seed=2).numpy()
    assert (shared == shared[0]).all()
    s = random.shuffle(np.arange(20).reshape(10, 2), seed=3).numpy()
    assert sorted(s[:, 0].tolist()) == list(range(0, 20, 2)) and (s[:, 1] == s[:, 0] + 1).all()
    with pytest.raises(ValueError, match="rate"):
        random.dropout(x, 1.5)


def test_seed_generator_in_a_layer_is_tracked_and_advances_during_fit():
    from kilnflow import keras
    from kilnflow.keras import ops

    class Noise(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = random.SeedGenerator(5)

        def call(self, x, training=None):
            if training:
                return x + random.normal(ops.shape(x), stddev=0.1, seed=self.seed_generator)
            return x
    model = keras.Sequential([keras.Input((3,)), Noise(), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(np.ones((8, 3), np.float32), np.ones((8, 1), np.float32), epochs=2, verbose=0)
    state = model.layers[0].seed_generator.state
    assert any(v is state for v in model.non_trainable_weights)
    assert state.numpy().tolist() == [5, 2]  # one batch per epoch: two draws
    np.testing.assert_array_equal(model.predict(np.ones((2, 3), np.float32), verbose=0),
                                  model(np.ones((2, 3), np.float32)).numpy())
