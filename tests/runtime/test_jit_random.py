"""jit_compile=True over random ops (kilnflow/runtime/jit/random_ops.py): the compiled draws
are the Python runtime's bits. Stateless ops equal eagerly, in a kf.function and compiled;
stateful ops (kf.random.uniform..., keras Dropout, kf.random.Generator) draw the same
sequence over repeated calls as the same function without jit_compile. Ops whose numbers
come from a NumPy Generator still make the compile fail, listed by name."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors, keras
from kilnflow.runtime import jit

pytest.importorskip("numba")


LOGITS = np.array([[0.0, 1.0, -np.inf, 2.0], [-np.inf] * 4, [3.0, 0.5, 0.1, 0.2]], np.float32)


def _bits(value):
    value = np.asarray(value)
    return value.dtype, value.shape, value.tobytes()


def _assert_same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert _bits(g) == _bits(w)


def _stateless(seed):
    return (kf.random.stateless_uniform([5, 7], seed),
            kf.random.stateless_uniform([3], seed, minval=-2.0, maxval=3.0, dtype=kf.float64),
            kf.random.stateless_uniform([], seed),
            kf.random.stateless_normal([9], seed),
            kf.random.stateless_normal([2, 3], seed, mean=1.0, stddev=2.0, dtype=kf.float64),
            kf.random.stateless_truncated_normal([41], seed),
            kf.random.stateless_truncated_normal([3, 5], seed, dtype=kf.float64),
            kf.random.stateless_uniform([6], seed, minval=-5, maxval=9, dtype=kf.int32),
            kf.random.stateless_uniform([2, 3], seed, minval=-2 ** 40, maxval=2 ** 62,
                                        dtype=kf.int64),
            kf.random.stateless_uniform([4], seed, minval=None, maxval=None, dtype=kf.uint32),
            kf.random.stateless_uniform([3], seed, minval=None, maxval=None, dtype=kf.int64),
            kf.random.stateless_uniform([0, 3], seed),
            kf.random.split(seed, 3), kf.random.fold_in(seed, 7),
            kf.random.experimental.stateless_shuffle(kf.reshape(kf.range(30), [10, 3]), seed),
            kf.random.experimental.stateless_shuffle(kf.constant([True, False, True]), seed),
            kf.random.stateless_categorical(LOGITS, 7, seed),
            kf.random.stateless_categorical(kf.cast(LOGITS, kf.float64), 3, seed, kf.int32))


def test_stateless_ops_give_the_python_runtimes_bits():
    compiled, traced = kf.function(_stateless, jit_compile=True), kf.function(_stateless)
    for seed in ([3, -7], [0, 0], [2 ** 31 - 1, -2 ** 31]):
        seed = kf.constant(seed, kf.int32)
        calls = jit.stats["calls"]
        got = [t.numpy() for t in compiled(seed)]
        assert jit.stats["calls"] == calls + 1  # compiled, not interpreted
        _assert_same(got, [t.numpy() for t in traced(seed)])
        _assert_same(got, [t.numpy() for t in _stateless(seed)])
    # int64 seeds (sign-extended words) and a large draw crossing many Philox blocks
    seed = kf.constant([-1, 2 ** 40], kf.int64)
    big = kf.function(lambda s: (kf.random.stateless_uniform([10007], s),
                                 kf.random.stateless_normal([1001], s)), jit_compile=True)
    _assert_same([t.numpy() for t in big(seed)],
                 [kf.random.stateless_uniform([10007], seed).numpy(),
                  kf.random.stateless_normal([1001], seed).numpy()])


def _stateful():
    return (kf.random.uniform([2, 3], seed=1), kf.random.uniform([5], -1.0, 4.0, seed=2),
            kf.random.normal([5], dtype=kf.float64, seed=3),
            kf.random.normal([3], mean=2.0, stddev=0.5, seed=4),
            kf.random.truncated_normal([7], seed=5),
            kf.random.truncated_normal([3], dtype=kf.float64, seed=6),
            kf.random.uniform([4], 0, 100, dtype=kf.int64, seed=7),
            kf.random.uniform([], -3, 3, dtype=kf.int32, seed=8),
            kf.random.shuffle(kf.range(9.0), seed=12), kf.random.categorical(LOGITS, 5, seed=13),
            kf.random.uniform([3]))  # no op seed: the global seed's per-graph counter


def _run(fn, calls, **options):
    """`calls` results of a fresh kf.function of fn, made right after set_seed."""
    kf.random.set_seed(11)
    f = kf.function(fn, **options)
    return [[t.numpy() for t in f()] for _ in range(calls)]


def test_stateful_ops_draw_the_same_sequence_over_calls():
    compiled = _run(_stateful, 3, jit_compile=True)
    traced = _run(_stateful, 3)
    for got, want in zip(compiled, traced):
        _assert_same(got, want)
    assert not np.array_equal(compiled[0][0], compiled[1][0])  # the stream moved on
    kf.random.set_seed(11)  # eagerly, op-seeded ops continue one stream per op: the same
    for want in traced:
        _assert_same([t.numpy() for t in _stateful()[:-1]], want[:-1])


def test_unseeded_draws_still_move_on():
    kf.random.set_seed(None)
    f = kf.function(lambda: kf.random.uniform([4]), jit_compile=True)
    assert not np.array_equal(f().numpy(), f().numpy())


def test_draws_inside_a_compiled_loop_advance_the_stream_in_order():
    def loop(n):
        total = kf.zeros([3])
        for _ in kf.range(n):
            total = total * 0.5 + kf.random.uniform([3], seed=9) + \
                kf.random.stateless_normal([3], [1, 2])
        return total, kf.random.normal([2], seed=10)
    def outer():
        return loop(kf.constant(4))
    calls = jit.stats["calls"]
    for got, want in zip(_run(outer, 2, jit_compile=True), _run(outer, 2)):
        _assert_same(got, want)
    assert jit.stats["calls"] == calls + 2


def test_generator_draws_and_state_match():
    def run(options):
        g = kf.random.Generator.from_seed(42)
        f = kf.function(lambda: (g.normal([3]), g.uniform([2], dtype=kf.float64),
                                 g.uniform([3], 0, 10, dtype=kf.int32),
                                 g.truncated_normal([5]), g.uniform_full_int([2], kf.int64),
                                 g.uniform_full_int([2], kf.uint32),
                                 g.normal([2, 2], dtype=kf.float64)), **options)
        out = [[t.numpy() for t in f()] for _ in range(3)]
        return out, g.state.numpy()
    (got, state), (want, want_state) = run({"jit_compile": True}), run({})
    for g, w in zip(got, want):
        _assert_same(g, w)
    np.testing.assert_array_equal(state, want_state)
    eager = kf.random.Generator.from_seed(42)  # eagerly: the same first draw
    _assert_same([eager.normal([3]).numpy()], [want[0][0]])


def test_rng_skip_carries_into_the_high_counter_word():
    g = kf.random.Generator.from_state([-256, 5, 9], "philox")  # low word 2**64 - 256
    f = kf.function(lambda: (g.uniform([2]), g.state.read_value()), jit_compile=True)
    values, state = (t.numpy() for t in f())
    assert state.tolist() == [256, 6, 9]
    want = kf.random.Generator.from_state([-256, 5, 9], "philox").uniform([2])
    _assert_same([values], [want.numpy()])


def test_bad_bounds_raise_invalid_argument():
    f = kf.function(lambda lo: kf.random.uniform([2], lo, 3, dtype=kf.int32, seed=1),
                    jit_compile=True)
    assert f(kf.constant(0)).numpy().shape == (2,)
    with pytest.raises(errors.InvalidArgumentError, match="minval < maxval"):
        f(kf.constant(3))
    g = kf.function(lambda n: kf.random.categorical(LOGITS, n, seed=1), jit_compile=True)
    with pytest.raises(errors.InvalidArgumentError, match="nonnegative"):
        g(kf.constant(-1))


def _train_step(options, steps):
    """Losses, dropout outputs and final weights of `steps` keras train steps."""
    kf.random.set_seed(1)
    dropout = keras.layers.Dropout(0.5, seed=3)
    inputs = keras.Input((3,))
    hidden = dropout(keras.layers.Dense(8)(inputs))
    noisy = keras.layers.GaussianNoise(0.1)(hidden)
    model = keras.Model(inputs, [keras.layers.Dense(1)(noisy), hidden])
    model.set_weights([np.full(w.shape, 0.1 * (i + 1), np.float32)
                       for i, w in enumerate(model.get_weights())])
    opt = keras.optimizers.SGD(0.1)

    @kf.function(**options)
    def step(x, y):
        with kf.GradientTape() as tape:
            out, dropped = model(x, training=True)
            loss = kf.reduce_mean((out - y) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss, dropped

    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    y = np.ones((4, 1), np.float32)
    results = [[t.numpy() for t in step(x, y)] for _ in range(steps)]
    return results, model.get_weights()


def test_a_jit_train_step_with_dropout_matches_the_python_runtime():
    calls = jit.stats["calls"]
    (got, weights), (want, want_weights) = _train_step({"jit_compile": True}, 3), \
        _train_step({}, 3)
    assert jit.stats["calls"] >= calls + 3
    for (loss, dropped), (want_loss, want_dropped) in zip(got, want):
        # the masks are the same bits; float32 sums may round differently (1 ulp)
        np.testing.assert_array_equal(dropped == 0, want_dropped == 0)
        np.testing.assert_allclose(dropped, want_dropped, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-5)
    assert not np.array_equal(got[0][1] == 0, got[1][1] == 0)  # a new mask every step
    for w, v in zip(weights, want_weights):
        np.testing.assert_allclose(w, v, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("draw, op_type", [
    (lambda s: kf.random.gamma([2], 1.5, seed=1), "RandomGamma"),
    (lambda s: kf.random.poisson([2], 3.0, seed=1), "RandomPoissonV2"),
    (lambda s: kf.random.stateless_gamma([2], s, 1.5), "StatelessRandomGammaV2"),
    (lambda s: kf.random.stateless_poisson([2], s, 3.0), "StatelessRandomPoisson"),
    (lambda s: kf.random.stateless_binomial([2], s, 5.0, 0.5), "StatelessRandomBinomial"),
    (lambda s: kf.random.stateless_uniform([2], s, dtype=kf.float16),
     "StatelessRandomUniform"),
    (lambda s: kf.random.uniform([2], dtype=kf.float16, seed=1), "RandomUniform"),
])
def test_unlowered_random_ops_are_listed(draw, op_type):
    seed = kf.constant([1, 2])
    with pytest.raises(errors.InvalidArgumentError, match=rf"\({op_type}\)"):
        kf.function(draw, jit_compile=True)(seed)
    kf.function(draw)(seed)  # the Python runtime runs them

