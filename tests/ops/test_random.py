"""kf.random: shapes and dtypes, rough moments, TF's global/op seed rules eagerly and inside
@kf.function, and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import random as R
from kilnflow.core.opdef import REGISTRY


@pytest.fixture(autouse=True)
def no_global_seed():
    R.set_seed(None)
    yield
    R.set_seed(None)


def values(t):
    return t.numpy().tolist()


# ---------------------------------------------------------------- shapes, dtypes, moments

@pytest.mark.parametrize("dtype", [kf.float16, kf.float32, kf.float64])
def test_float_dtypes_and_shapes(dtype):
    for fn in (R.normal, R.uniform, R.truncated_normal):
        t = fn([2, 3], dtype=dtype)
        assert t.dtype is dtype and t.shape == (2, 3)
    assert R.normal([], dtype=dtype).shape == ()
    assert R.uniform(kf.constant([4, 0]), dtype=dtype).shape == (4, 0)
    assert R.normal(kf.TensorShape([5])).shape == (5,)


def test_normal_moments():
    x = R.normal([20000], mean=3.0, stddev=2.0, dtype=kf.float64).numpy()
    assert abs(x.mean() - 3.0) < 0.06 and abs(x.std() - 2.0) < 0.06


def test_uniform_float_range_and_moments():
    x = R.uniform([20000], -2.0, 4.0).numpy()
    assert x.min() >= -2.0 and x.max() < 4.0
    assert abs(x.mean() - 1.0) < 0.06
    y = R.uniform([1000]).numpy()
    assert y.min() >= 0.0 and y.max() < 1.0


@pytest.mark.parametrize("dtype", [kf.int32, kf.int64])
def test_uniform_integers(dtype):
    x = R.uniform([5000], -3, 4, dtype=dtype)
    assert x.dtype is dtype
    assert sorted(set(values(x))) == list(range(-3, 4))


def test_uniform_with_tensor_bounds():
    x = R.uniform([1000], kf.constant(5.0), kf.constant(6.0)).numpy()
    assert x.min() >= 5.0 and x.max() < 6.0


def test_truncated_normal_stays_within_two_stddevs():
    x = R.truncated_normal([20000], mean=1.0, stddev=0.5, dtype=kf.float64).numpy()
    assert np.all(np.abs(x - 1.0) <= 1.0)
    # the standard normal truncated to [-2, 2] has standard deviation 0.8796
    assert abs(x.std() / 0.5 - 0.8796) < 0.02


def test_gradients_flow_through_mean_and_stddev():
    mean, stddev = kf.constant(1.0), kf.constant(2.0)
    with kf.GradientTape() as tape:
        tape.watch([mean, stddev])
        x = R.normal([100], mean, stddev)
        loss = kf.reduce_sum(x)
    d_mean, d_stddev = tape.gradient(loss, [mean, stddev])
    assert float(d_mean) == 100.0
    # atol: a float32 sum of normals can land near zero
    np.testing.assert_allclose(float(d_stddev), np.sum((x.numpy() - 1.0) / 2.0), rtol=1e-5,
                               atol=1e-4)


def test_ops_are_random_and_stateful():
    for name in ("RandomStandardNormal", "RandomUniform", "RandomUniformInt",
                 "TruncatedNormal"):
        assert REGISTRY[name].random and REGISTRY[name].stateful


# ---------------------------------------------------------------- seed rules, eagerly

def test_no_seed_gives_fresh_numbers_every_call():
    assert values(R.uniform([4])) != values(R.uniform([4]))


def test_global_seed_gives_a_repeatable_sequence_of_distinct_ops():
    R.set_seed(1234)
    a1, a2 = values(R.uniform([3])), values(R.uniform([3]))
    b1 = values(R.normal([3]))
    R.set_seed(1234)
    assert values(R.uniform([3])) == a1
    assert values(R.uniform([3])) == a2
    assert values(R.normal([3])) == b1
    assert a1 != a2
    R.set_seed(99)
    assert values(R.uniform([3])) != a1


def test_op_seed_alone_continues_one_stream_and_set_seed_restarts_it():
    a1 = values(R.uniform([2], seed=1))
    a2 = values(R.uniform([2], seed=1))
    assert a1 != a2
    R.set_seed(None)
    assert values(R.uniform([2], seed=1)) == a1
    assert values(R.uniform([2], seed=1)) == a2
    assert values(R.uniform([2], seed=2)) != a1


def test_global_and_op_seed_together():
    R.set_seed(5)
    a = values(R.normal([3], seed=7))
    R.set_seed(6)
    b = values(R.normal([3], seed=7))
    R.set_seed(5)
    assert values(R.normal([3], seed=7)) == a
    assert a != b


def test_seed_determines_numbers_independently_of_shape_bookkeeping():
    first = values(R.uniform([2], seed=3))
    R.set_seed(None)
    assert values(R.uniform([2], seed=3)) == first
    # TF's cached kernel is per (op, seeds, dtype), not per shape: a call with another shape
    # continues the same stream (values now TF's: see test_random_tf_parity.py)
    R.set_seed(None)
    R.uniform([2], seed=3)
    third = values(R.uniform([3], seed=3))
    R.set_seed(None)
    R.uniform([5], seed=3)
    assert values(R.uniform([3], seed=3)) != third  # 5 values were reserved, not 2
    R.set_seed(None)
    R.uniform([2], seed=3)
    assert values(R.uniform([3], seed=3)) == third


def test_int_uniform_is_reproducible():
    R.set_seed(3)
    a = values(R.uniform([10], 0, 100, dtype=kf.int32))
    R.set_seed(3)
    assert values(R.uniform([10], 0, 100, dtype=kf.int32)) == a


# ---------------------------------------------------------------- seed rules in functions

def test_function_draws_new_numbers_on_every_call():
    @kf.function
    def f():
        return R.normal([3])

    assert values(f()) != values(f())


def test_global_seed_gives_each_traced_function_the_same_sequence():
    R.set_seed(1234)

    @kf.function
    def f():
        return R.uniform([1]), R.uniform([1])

    @kf.function
    def g():
        return R.uniform([1]), R.uniform([1])

    fa, fb = f()
    ga, gb = g()
    assert values(fa) == values(ga) and values(fb) == values(gb)
    assert values(fa) != values(fb)
    assert values(f()[0]) != values(fa)  # the stream continues on the next call


def test_identical_op_seeds_in_one_function_give_identical_streams():
    @kf.function
    def foo():
        return R.uniform([2], seed=1), R.uniform([2], seed=1)

    a1, b1 = foo()
    a2, b2 = foo()
    assert values(a1) == values(b1) and values(a2) == values(b2)
    assert values(a1) != values(a2)


def test_dynamic_shape_inside_a_function():
    @kf.function(input_signature=[kf.TensorSpec([None, 2], kf.float32)])
    def noise_like(x):
        noise = R.normal(kf.shape(x))
        assert noise.shape.as_list() == [None, None]
        return noise

    assert noise_like(kf.ones([5, 2])).shape == (5, 2)


# ---------------------------------------------------------------- bad arguments

def test_bad_arguments():
    with pytest.raises(TypeError, match="dtype"):
        R.normal([2], dtype=kf.int32)
    with pytest.raises(TypeError, match="dtype"):
        R.truncated_normal([2], dtype=kf.bool)
    with pytest.raises(TypeError, match="bool"):
        R.uniform([2], dtype=kf.bool)
    with pytest.raises(ValueError, match="maxval"):
        R.uniform([2], dtype=kf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="minval < maxval"):
        R.uniform([2], 5, 5, dtype=kf.int64)
    with pytest.raises(errors.InvalidArgumentError, match="negative"):
        R.normal([2, -1])
    with pytest.raises(TypeError, match="shape"):
        R.normal(kf.constant([2.0]))


# ---------------------------------------------------------------- categorical, gamma, poisson...

def test_more_stateful_ops_are_random():
    for name in ("Multinomial", "RandomGamma", "RandomPoissonV2", "RandomShuffle"):
        assert REGISTRY[name].random and REGISTRY[name].stateful


def test_categorical_frequencies_and_never_a_minus_inf_class():
    logits = kf.math.log([[0.1, 0.9], [1.0, 0.0]])
    x = R.categorical(logits, 5000, seed=4)
    assert x.dtype is kf.int64 and x.shape == (2, 5000)
    assert abs(x.numpy()[0].mean() - 0.9) < 0.03
    assert x.numpy()[1].tolist() == [0] * 5000
    assert R.categorical(logits, 3, dtype=kf.int32).dtype is kf.int32


def test_gamma_and_poisson_shapes_and_means():
    g = R.gamma([4000], alpha=[1.0, 3.0], beta=[[1.0], [2.0]], dtype=kf.float64)
    assert g.shape == (4000, 2, 2)
    np.testing.assert_allclose(g.numpy().mean(axis=0), [[1, 3], [0.5, 1.5]], rtol=0.08)
    p = R.poisson([4000], lam=[1.0, 6.0])
    assert p.dtype is kf.float32 and p.shape == (4000, 2)
    np.testing.assert_allclose(p.numpy().mean(axis=0), [1, 6], rtol=0.08)
    assert R.poisson([3], lam=2.0, dtype=kf.int64).dtype is kf.int64


def test_shuffle_permutes_rows_and_reseeds_like_other_ops():
    x = np.arange(10)
    out = R.shuffle(x).numpy()
    assert sorted(out.tolist()) == list(range(10))
    R.set_seed(3)
    a = R.shuffle(x).numpy()
    R.set_seed(3)
    np.testing.assert_array_equal(a, R.shuffle(x).numpy())


def test_stateful_extras_draw_new_numbers_in_a_function():
    f = kf.function(lambda: (R.categorical([[0.0, 0.0]], 40), R.gamma([20], 1.0),
                             R.poisson([20], 5.0), R.shuffle(kf.range(20))))
    first, second = f(), f()
    assert any(not np.array_equal(a.numpy(), b.numpy()) for a, b in zip(first, second))
    assert not np.array_equal(first[3].numpy(), second[3].numpy())


def test_extras_bad_arguments():
    with pytest.raises(errors.InvalidArgumentError, match="matrix"):
        R.categorical([0.0, 1.0], 2)
    with pytest.raises(TypeError, match="int32 or int64"):
        R.categorical([[0.0, 1.0]], 2, dtype=kf.float32)
    with pytest.raises(errors.InvalidArgumentError, match="lam"):
        R.poisson([2], lam=-1.0)
