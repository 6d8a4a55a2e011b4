"""kf.random.Generator and the global generator: TF's state layout and counter steps, the
same numbers eagerly and in kf.function (new numbers on every call), split / make_seeds,
reset / skip, checkpoints, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import random_generator as G

R = kf.random


@pytest.fixture(autouse=True)
def fresh_global_generator():
    saved = G._GlobalGenerator.generator
    G._GlobalGenerator.generator = None
    yield
    G._GlobalGenerator.generator = saved


def test_state_layout_and_counter_steps_follow_tf():
    # TF 2.21 prints these states for the same calls (recorded in a side venv)
    assert R.create_rng_state(1234, "philox").numpy().tolist() == [1234, 0, 0]
    g = R.Generator.from_seed(1234)
    assert g.state.numpy().tolist() == [1234, 0, 0] and g.algorithm == 1 and int(g.key) == 0
    assert g.state.dtype is kf.int64 and g.state.name == "StateVar:0"
    g.normal([2])
    assert g.state.numpy().tolist() == [1746, 0, 0]
    g.normal([5])
    assert g.state.numpy().tolist() == [3026, 0, 0]
    g.uniform([3], maxval=10, dtype=kf.int32)
    assert g.state.numpy().tolist() == [3794, 0, 0]
    g.make_seeds(2)
    children = g.split(2)
    assert g.state.numpy().tolist() == [4818, 0, 0]
    assert children[0].state.numpy().tolist()[:2] == [0, 0]


def test_a_draw_is_philox_at_the_states_key_and_counter():
    # TF's stateful kernels use the state as key and counter as is (no seed scrambling);
    # TF's own values are checked in test_random_tf_parity.py
    from kilnflow.ops import philox
    g = R.Generator.from_state([77, 0, 5], alg="philox")
    expected = philox.normal((5, 0), (77, 0, 0, 0), 4, np.float32)
    np.testing.assert_array_equal(g.normal([4]).numpy(), expected)


def test_same_seed_same_sequence_and_successive_draws_differ():
    a, b = R.Generator.from_seed(9), R.Generator.from_seed(9)
    first = a.uniform([5]).numpy()
    np.testing.assert_array_equal(first, b.uniform([5]).numpy())
    assert not np.array_equal(first, a.uniform([5]).numpy())


def test_function_draws_new_numbers_per_call_matching_eager():
    eager_gen, function_gen = R.Generator.from_seed(3), R.Generator.from_seed(3)
    draw = kf.function(lambda: function_gen.normal([3]))
    for _ in range(3):
        np.testing.assert_array_equal(eager_gen.normal([3]).numpy(), draw().numpy())
    np.testing.assert_array_equal(eager_gen.state.numpy(), function_gen.state.numpy())


def test_dynamic_shape_in_a_function_advances_by_the_drawn_size():
    g = R.Generator.from_seed(0)
    draw = kf.function(lambda shape: g.uniform(shape),
                       input_signature=[kf.TensorSpec([1], kf.int32)])
    assert draw(kf.constant([4])).shape == (4,)
    assert g.state.numpy().tolist() == [4 * 256, 0, 0]


def test_distributions():
    g = R.Generator.from_seed(11)
    x = g.normal([20000], 1.0, 2.0, dtype=kf.float64).numpy()
    assert abs(x.mean() - 1.0) < 0.06 and abs(x.std() - 2.0) < 0.06
    t = g.truncated_normal([20000]).numpy()
    assert np.abs(t).max() <= 2.0
    u = g.uniform([20000], 2, 5, dtype=kf.int64).numpy()
    assert sorted(set(u.tolist())) == [2, 3, 4]
    b = g.binomial([20000], counts=[5.0], probs=[0.5]).numpy()
    assert b.dtype == np.int32 and abs(b.mean() - 2.5) < 0.05
    full = g.uniform_full_int([4], kf.int32)
    assert full.dtype is kf.int32


def test_split_and_make_seeds():
    g = R.Generator.from_seed(1)
    seeds = g.make_seeds(3)
    assert seeds.shape == (2, 3) and seeds.dtype is kf.int64
    assert seeds.numpy()[1].tolist() == [0, 0, 0]
    r = R.stateless_uniform([2], seeds[:, 0])
    assert r.shape == (2,)
    a, b = g.split(2)
    assert not np.array_equal(a.normal([8]).numpy(), b.normal([8]).numpy())


def test_reset_skip_and_copy():
    g = R.Generator.from_seed(5)
    first = g.normal([3]).numpy()
    g.reset_from_seed(5)
    np.testing.assert_array_equal(first, g.normal([3]).numpy())
    g.reset_from_key_counter(key=0, counter=[5, 0])
    old = g.skip(3)
    assert old.numpy().tolist() == [5, 0, 0]
    assert g.state.numpy().tolist() == [5 + 3 * 256, 0, 0]
    clone = R.Generator(copy_from=g)
    np.testing.assert_array_equal(clone.normal([2]).numpy(), g.normal([2]).numpy())
    h = R.Generator.from_key_counter(key=4, counter=[1, 0], alg=R.Algorithm.PHILOX)
    assert h.state.numpy().tolist() == [1, 0, 4]


def test_non_deterministic_generators_differ():
    a = R.Generator.from_non_deterministic_state()
    b = R.Generator.from_non_deterministic_state()
    assert not np.array_equal(a.normal([4]).numpy(), b.normal([4]).numpy())


def test_global_generator_is_made_once_also_inside_a_function():
    draw = kf.function(lambda: R.get_global_generator().normal([2]))
    first, second = draw().numpy(), draw().numpy()
    assert not np.array_equal(first, second)
    assert R.get_global_generator() is R.get_global_generator()
    mine = R.Generator.from_seed(42)
    R.set_global_generator(mine)
    assert R.get_global_generator() is mine
    assert R.experimental.get_global_generator is R.get_global_generator
    with pytest.raises(TypeError, match="Generator"):
        R.set_global_generator(3)


def test_checkpoint_saves_and_restores_the_state(tmp_path):
    g = R.Generator.from_seed(8)
    ckpt = kf.train.Checkpoint(generator=g)
    path = ckpt.save(str(tmp_path / "ckpt"))
    expected = g.normal([3]).numpy()
    ckpt.restore(path)
    np.testing.assert_array_equal(expected, g.normal([3]).numpy())


def test_gradients_flow_through_mean_and_stddev():
    g = R.Generator.from_seed(2)
    mean = kf.constant(0.5)
    with kf.GradientTape() as tape:
        tape.watch(mean)
        loss = kf.reduce_sum(g.normal([10], mean, 3.0))
    assert float(tape.gradient(loss, mean)) == 10.0


def test_errors():
    with pytest.raises(errors.UnimplementedError, match="ThreeFry"):  # as TF on CPU
        R.Generator.from_seed(1, alg="threefry").normal([2])
    with pytest.raises(ValueError, match="unsupported value"):
        R.Generator.from_seed(1, alg="mt19937")
    with pytest.raises(ValueError, match="shape"):
        R.Generator(state=[1, 2])
    with pytest.raises(ValueError, match="maxval"):
        R.Generator.from_seed(1).uniform([2], dtype=kf.int32)
