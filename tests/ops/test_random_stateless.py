"""kf.random.stateless_*: TF's seed semantics (a shape [2] int32/int64 seed fixes the numbers
in every mode), distributions, split/fold_in, index_shuffle, and bad seeds. Exact values and
the mode differentials of each op are in the sample table (tests/ops/samples/)."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

R = kf.random
SEED = [3, 14]


def test_same_seed_same_numbers_and_different_seed_different_numbers():
    a = R.stateless_normal([100], SEED).numpy()
    np.testing.assert_array_equal(a, R.stateless_normal([100], SEED).numpy())
    assert not np.array_equal(a, R.stateless_normal([100], [3, 15]).numpy())
    assert not np.array_equal(a, R.stateless_normal([100], [14, 3]).numpy())


def test_int32_and_int64_seeds_with_the_same_words_agree():
    a = R.stateless_uniform([5], kf.constant([-1, 2], kf.int32))
    b = R.stateless_uniform([5], kf.constant([-1, 2], kf.int64))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_eager_function_and_session_agree():
    def draw(seed):
        return [R.stateless_normal([3], seed), R.stateless_uniform([2], seed, 0, 10,
                                                                    dtype=kf.int64),
                R.stateless_categorical([[0.0, 1.0, 2.0]], 4, seed)]
    eager = draw(kf.constant(SEED))
    compiled = kf.function(draw)(kf.constant(SEED))
    v1 = kf.compat.v1
    g = kf.Graph()
    with g.as_default():
        seed = v1.placeholder(kf.int32, [2])
        fetches = draw(seed)
    with v1.Session(graph=g) as sess:
        session = sess.run(fetches, {seed: np.array(SEED, np.int32)})
    for e, c, s in zip(eager, compiled, session):
        np.testing.assert_array_equal(e.numpy(), c.numpy())
        np.testing.assert_array_equal(e.numpy(), s)


def test_a_function_with_a_fixed_seed_repeats_while_a_seed_argument_varies():
    f = kf.function(lambda: R.stateless_uniform([4], [1, 1]))
    np.testing.assert_array_equal(f().numpy(), f().numpy())
    g = kf.function(lambda s: R.stateless_uniform([4], s))
    assert not np.array_equal(g(kf.constant([1, 1])).numpy(), g(kf.constant([1, 2])).numpy())


@pytest.mark.parametrize("dtype", [kf.float16, kf.float32, kf.float64])
def test_float_dtypes(dtype):
    for fn in (R.stateless_normal, R.stateless_uniform, R.stateless_truncated_normal):
        t = fn([2, 3], SEED, dtype=dtype)
        assert t.dtype is dtype and t.shape == (2, 3)


def test_distributions():
    n = 20000
    x = R.stateless_normal([n], SEED, 2.0, 3.0, dtype=kf.float64).numpy()
    assert abs(x.mean() - 2.0) < 0.1 and abs(x.std() - 3.0) < 0.1
    u = R.stateless_uniform([n], SEED, -1.0, 1.0).numpy()
    assert u.min() >= -1.0 and u.max() < 1.0 and abs(u.mean()) < 0.03
    t = R.stateless_truncated_normal([n], SEED, dtype=kf.float64).numpy()
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.8796) < 0.02
    b = R.stateless_binomial([n], SEED, counts=10.0, probs=0.3).numpy()
    assert b.dtype == np.int32 and b.min() >= 0 and b.max() <= 10 and abs(b.mean() - 3) < 0.1
    g = R.stateless_gamma([n], SEED, alpha=2.0, beta=4.0).numpy()
    assert abs(g.mean() - 0.5) < 0.02  # alpha / beta
    p = R.stateless_poisson([n], SEED, lam=4.0).numpy()
    assert p.dtype == np.int32 and abs(p.mean() - 4.0) < 0.1
    c = R.stateless_categorical(np.log([[0.2, 0.8]]), n, SEED).numpy()
    assert c.dtype == np.int64 and abs(c.mean() - 0.8) < 0.02


def test_uniform_integers_and_full_range():
    x = R.stateless_uniform([2000], SEED, -3, 4, dtype=kf.int32).numpy()
    assert sorted(set(x.tolist())) == list(range(-3, 4))
    full = R.stateless_uniform([2000], SEED, None, None, dtype=kf.uint32).numpy()
    assert full.dtype == np.uint32 and full.max() > 2 ** 31


def test_parameterized_truncated_normal_respects_each_bound():
    x = R.stateless_parameterized_truncated_normal(
        [3, 1000], SEED, means=[[0.0], [5.0], [0.0]], stddevs=1.0,
        minvals=[[-1.0], [4.0], [3.0]], maxvals=[[1.0], [7.0], [3.5]]).numpy()
    assert x[0].min() >= -1 and x[0].max() <= 1
    assert x[1].min() >= 4 and x[1].max() <= 7
    assert x[2].min() >= 3 and x[2].max() <= 3.5  # far in the tail: still inside


def test_split_and_fold_in_make_new_seeds():
    seeds = R.split(kf.constant(SEED), 4)
    assert seeds.shape == (4, 2) and seeds.dtype is kf.int32
    assert len({tuple(s) for s in seeds.numpy().tolist()}) == 4
    folded = R.fold_in(kf.constant(SEED, kf.int64), 7)  # data's dtype, as TF
    assert folded.dtype is kf.int32 and int(folded[1]) == 7
    assert R.fold_in(SEED, kf.constant(7, kf.int64)).dtype is kf.int64
    assert R.experimental.stateless_split is R.split
    assert R.experimental.stateless_fold_in is R.fold_in


def test_shuffle_permutes_the_first_dimension():
    x = np.arange(12).reshape(6, 2)
    out = R.experimental.stateless_shuffle(x, SEED).numpy()
    assert sorted(out[:, 0].tolist()) == [0, 2, 4, 6, 8, 10]
    np.testing.assert_array_equal(out[:, 1], out[:, 0] + 1)


def test_index_shuffle_is_a_bijection_also_for_huge_ranges():
    out = R.experimental.index_shuffle(kf.range(1000), [4, 5, 6], 999).numpy()
    assert sorted(out.tolist()) == list(range(1000))
    assert not np.array_equal(out, np.arange(1000))
    big = R.experimental.index_shuffle(kf.constant([0, 1, 2], kf.int64), [4, 5, 6], 10 ** 15)
    assert len(set(big.numpy().tolist())) == 3 and big.numpy().max() <= 10 ** 15


def test_gradients_flow_through_mean_and_stddev():
    mean, stddev = kf.constant(1.0), kf.constant(2.0)
    with kf.GradientTape() as tape:
        tape.watch([mean, stddev])
        loss = kf.reduce_sum(R.stateless_normal([50], SEED, mean, stddev))
    d_mean, d_stddev = tape.gradient(loss, [mean, stddev])
    assert float(d_mean) == 50.0
    np.testing.assert_allclose(float(d_stddev),
                               R.stateless_normal([50], SEED).numpy().sum(), rtol=1e-5)


def test_bad_seeds_fail_in_both_modes():
    for seed in ([1, 2, 3], [[1, 2]]):
        with pytest.raises(errors.InvalidArgumentError, match="seed must have shape"):
            R.stateless_normal([2], seed)
    with pytest.raises(errors.InvalidArgumentError, match="Tseed"):
        R.stateless_uniform([2], [1.0, 2.0])
    f = kf.function(lambda s: R.stateless_normal([2], s))
    with pytest.raises(errors.InvalidArgumentError, match="seed must have shape"):
        f(kf.constant([1, 2, 3]))
    with pytest.raises(ValueError, match="unsupported value mersenne"):
        R.stateless_normal([2], SEED, alg="mersenne")
    with pytest.raises(TypeError, match="dtype"):
        R.stateless_normal([2], SEED, dtype=kf.int32)
