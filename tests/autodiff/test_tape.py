"""GradientTape eagerly: what is recorded and watched, persistence, nesting for higher
orders, source structures, output_gradients, unconnected gradients, stop_recording,
non-differentiable paths, broadcasting and jacobians."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import kilnflow as kf


def _value(t):
    return None if t is None else t.numpy().tolist()


# ---------------------------------------------------------------- recording and watching

def test_unwatched_constants_get_no_gradient():
    x = kf.constant(3.0)
    with kf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_records_only_while_active():
    x = kf.constant(3.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        inside = x * x
    outside = x * x
    assert _value(tape.gradient([inside, outside], x)) == 6.0
    with kf.GradientTape() as tape:
        tape.watch(x)
    assert tape.gradient(x * x, x) is None


def test_watches_trainable_variables_by_default():
    v = kf.Variable(2.0)
    frozen = kf.Variable(5.0, trainable=False)
    with kf.GradientTape() as tape:
        y = v * frozen
    assert [_value(g) for g in tape.gradient(y, [v, frozen])] == [5.0, None]
    assert tape.watched_variables() == (v,)


def test_watch_accessed_variables_false():
    v, w = kf.Variable(2.0), kf.Variable(3.0)
    with kf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * v * w
    assert tape.gradient(y, v) is None
    with kf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(v)
        y = v * v
    assert _value(tape.gradient(y, v)) == 4.0


def test_watched_non_trainable_variable():
    frozen = kf.Variable(5.0, trainable=False)
    with kf.GradientTape() as tape:
        tape.watch(frozen)
        y = frozen * frozen
    assert _value(tape.gradient(y, frozen)) == 10.0


def test_gradient_with_respect_to_intermediate_and_target_itself():
    x = kf.constant(3.0)
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * 3
    assert _value(tape.gradient(z, y)) == 3.0
    assert _value(tape.gradient(x, x)) == 1.0
    assert [_value(g) for g in tape.gradient(z, [x, y])] == [18.0, 3.0]


# ---------------------------------------------------------------- persistence

def test_persistent_tape_can_be_reused():
    x = kf.constant(3.0)
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    assert _value(tape.gradient(y, x)) == 6.0
    assert _value(tape.gradient(z, x)) == 27.0
    assert _value(tape.gradient(z, x)) == 27.0


def test_non_persistent_tape_raises_on_second_use():
    x = kf.constant(3.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="persistent"):
        tape.gradient(y, x)


def test_reset_forgets_records():
    x = kf.constant(2.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        z = x * 3
    assert _value(tape.gradient(z, x)) == 3.0


def test_gradient_inside_persistent_context_is_recorded():
    x = kf.constant(3.0)
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x ** 3
        dy = tape.gradient(y, x)
    assert _value(tape.gradient(dy, x)) == 18.0


# ---------------------------------------------------------------- higher order

def test_nested_tapes_give_second_and_third_order():
    x = kf.constant(3.0)
    with kf.GradientTape() as t3:
        t3.watch(x)
        with kf.GradientTape() as t2:
            t2.watch(x)
            with kf.GradientTape() as t1:
                t1.watch(x)
                y = x ** 3
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (_value(d1), _value(d2), _value(d3)) == (27.0, 18.0, 6.0)


def test_second_order_through_variables_and_matmul():
    w = kf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=kf.float64)
    x = kf.constant([[1.0], [-1.0]], kf.float64)
    with kf.GradientTape() as outer:
        with kf.GradientTape() as inner:
            y = kf.reduce_sum(kf.tanh(kf.matmul(w, x)) ** 2)
        g = inner.gradient(y, w)
        s = kf.reduce_sum(g * g)
    h = outer.gradient(s, w)
    eps = 1e-6

    def s_of(wv):
        z = np.tanh(wv @ x.numpy())
        gw = (2 * z * (1 - z ** 2)) @ x.numpy().T
        return np.sum(gw ** 2)
    numeric = np.zeros((2, 2))
    for i in np.ndindex(2, 2):
        up, down = w.numpy().copy(), w.numpy().copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (s_of(up) - s_of(down)) / (2 * eps)
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- sources, targets, seeds

def test_nested_source_structures():
    a, b = kf.constant([1.0, 2.0]), kf.constant(3.0)
    with kf.GradientTape() as tape:
        tape.watch({"a": a, "rest": [b]})
        y = kf.reduce_sum(a) * b
    grads = tape.gradient(y, {"a": a, "rest": [b]})
    assert set(grads) == {"a", "rest"} and isinstance(grads["rest"], list)
    assert _value(grads["a"]) == [3.0, 3.0] and _value(grads["rest"][0]) == 3.0


def test_tuple_sources_and_list_targets():
    a, b = kf.constant(2.0), kf.constant(5.0)
    with kf.GradientTape() as tape:
        tape.watch((a, b))
        ys = [a * b, a * 2]
    grads = tape.gradient(ys, (a, b))
    assert isinstance(grads, tuple) and [_value(g) for g in grads] == [7.0, 2.0]


def test_output_gradients_weight_the_target():
    a = kf.constant([1.0, 2.0])
    with kf.GradientTape() as tape:
        tape.watch(a)
        y = a * a
    grad = tape.gradient(y, a, output_gradients=kf.constant([1.0, 10.0]))
    assert _value(grad) == [2.0, 40.0]


def test_none_source_is_rejected():
    a = kf.constant(1.0)
    with kf.GradientTape() as tape:
        tape.watch(a)
        y = a * 2
    with pytest.raises(ValueError):
        tape.gradient(y, [a, None])


def test_unconnected_gradients():
    a, b = kf.constant([1.0, 2.0]), kf.constant(3.0)
    v = kf.Variable([[1.0, 2.0]])
    with kf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * 2
    assert tape.gradient(y, b) is None
    assert tape.gradient(y, b, unconnected_gradients=kf.UnconnectedGradients.NONE) is None
    zero = tape.gradient(y, b, unconnected_gradients=kf.UnconnectedGradients.ZERO)
    assert _value(zero) == 0.0 and zero.dtype is kf.float32
    assert _value(tape.gradient(y, [b, v], unconnected_gradients="zero")[1]) == [[0.0, 0.0]]


def test_stop_recording():
    x = kf.constant(3.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            hidden = x * x
        seen = x * 2
        total = hidden + seen
    assert _value(tape.gradient(total, x)) == 2.0


def test_stop_recording_affects_only_that_tape():
    x = kf.constant(3.0)
    with kf.GradientTape() as outer:
        outer.watch(x)
        with kf.GradientTape() as inner:
            inner.watch(x)
            with inner.stop_recording():
                y = x * x
        assert inner.gradient(y, x) is None
    assert _value(outer.gradient(y, x)) == 6.0


# ---------------------------------------------------------------- what has no gradient

def test_integer_sources_get_none():
    i = kf.constant(3)
    with kf.GradientTape() as tape:
        tape.watch(i)
        y = i * i
    assert tape.gradient(y, i) is None


def test_non_differentiable_ops_give_none():
    x = kf.constant([1.5, 2.5])
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        floored = kf.floor(x)
        through_int = kf.cast(kf.cast(x, kf.int32), kf.float32)
        stopped = kf.stop_gradient(x) * 2
        compared = kf.cast(x > 2.0, kf.float32)
        argmax = kf.argmax(x)
    for target in (floored, through_int, stopped, compared, argmax):
        assert tape.gradient(target, x) is None


def test_partially_stopped_gradient():
    x = kf.constant(2.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = x * kf.stop_gradient(x)
    assert _value(tape.gradient(y, x)) == 2.0


def test_int_target_gives_none():
    x = kf.constant([1.0, 2.0])
    with kf.GradientTape() as tape:
        tape.watch(x)
        n = kf.cast(x, kf.int32) * 2
    assert tape.gradient(n, x) is None


# ---------------------------------------------------------------- broadcasting

def test_broadcast_gradients_are_reduced_to_input_shapes():
    m = kf.constant([[1.0, 2.0], [3.0, 4.0]])
    row = kf.constant([1.0, 1.0])
    col = kf.constant([[2.0], [3.0]])
    s = kf.constant(2.0)
    with kf.GradientTape() as tape:
        tape.watch([m, row, col, s])
        y = m * row * col + s
    gm, grow, gcol, gs = tape.gradient(y, [m, row, col, s])
    assert gm.shape == [2, 2] and _value(gm) == [[2.0, 2.0], [3.0, 3.0]]
    assert grow.shape == [2] and _value(grow) == [11.0, 16.0]
    assert gcol.shape == [2, 1] and _value(gcol) == [[3.0], [7.0]]
    assert gs.shape == [] and _value(gs) == 4.0


def test_broadcast_gradient_to_variable():
    b = kf.Variable([0.5, 0.5])
    x = kf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with kf.GradientTape() as tape:
        y = kf.reduce_sum(x + b)
    grad = tape.gradient(y, b)
    assert grad.shape == [2] and _value(grad) == [3.0, 3.0]


@settings(max_examples=40, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3), st.data())
def test_broadcast_gradient_shapes_match_inputs(shapes, data):
    a_shape, b_shape = shapes.input_shapes
    a = kf.constant(np.ones(a_shape))
    b = kf.constant(np.full(b_shape, 2.0))
    with kf.GradientTape() as tape:
        tape.watch([a, b])
        y = a * b
    ga, gb = tape.gradient(y, [a, b])
    out_size = int(np.prod(shapes.result_shape))
    assert ga.shape == list(a_shape) and gb.shape == list(b_shape)
    # each input element is used out_size / size times
    np.testing.assert_allclose(ga.numpy().sum(), 2.0 * out_size)
    np.testing.assert_allclose(gb.numpy().sum(), 1.0 * out_size)


# ---------------------------------------------------------------- jacobian

def test_jacobian_of_vector_function():
    a = kf.constant([1.0, 2.0, 3.0])
    with kf.GradientTape() as tape:
        tape.watch(a)
        y = a * a
    jac = tape.jacobian(y, a)
    assert jac.shape == [3, 3]
    np.testing.assert_allclose(jac.numpy(), np.diag([2.0, 4.0, 6.0]))


def test_jacobian_of_matmul_and_variables():
    m = kf.constant([[1.0, 2.0], [3.0, 4.0]], kf.float64)
    v = kf.Variable([1.0, -1.0], dtype=kf.float64)
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(m)
        y = kf.matmul(m, m)
        z = v * 3.0
    jac = tape.jacobian(y, m)
    assert jac.shape == [2, 2, 2, 2]
    expected = np.zeros((2, 2, 2, 2))
    mv = m.numpy()
    for i, j, k, l in np.ndindex(2, 2, 2, 2):  # d(MM)_ij / dM_kl
        expected[i, j, k, l] = (i == k) * mv[l, j] + (j == l) * mv[i, k]
    np.testing.assert_allclose(jac.numpy(), expected)
    np.testing.assert_allclose(tape.jacobian(z, v).numpy(), 3.0 * np.eye(2))


def test_jacobian_of_unconnected_source():
    a, b = kf.constant([1.0, 2.0]), kf.constant([3.0])
    with kf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * 2
    assert tape.jacobian(y, b) is None
    zero = tape.jacobian(y, b, unconnected_gradients=kf.UnconnectedGradients.ZERO)
    assert zero.shape == [2, 1] and not zero.numpy().any()


def test_gradient_of_a_watched_variable_with_respect_to_itself_is_ones():
    v = kf.Variable([1.0, 2.0])
    with kf.GradientTape() as tape:
        y = v * 3.0
    assert tape.gradient(v, v).numpy().tolist() == [1.0, 1.0]
    with kf.GradientTape() as tape:
        y = v * 3.0
    # y and v as targets: 3 from y, 1 from v itself
    assert tape.gradient([y, v], v).numpy().tolist() == [4.0, 4.0]


def test_output_gradients_must_match_the_targets():
    x = kf.constant(2.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y, z = x * x, x * 3.0
    with pytest.raises(ValueError, match="output_gradients"):
        tape.gradient([y, z], x, output_gradients=[kf.constant(1.0)])


def test_batch_jacobian_matches_the_full_jacobians_diagonal_blocks():
    x = kf.constant(np.arange(6.0).reshape(2, 3))
    w = kf.constant(np.arange(6.0).reshape(3, 2) / 4.0)
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = kf.tanh(kf.matmul(x, w))  # [2, 2], row i depends on x[i] only
    batch = tape.batch_jacobian(y, x)
    full = tape.jacobian(y, x).numpy()  # [2, 2, 2, 3]
    assert batch.shape == [2, 2, 3]
    np.testing.assert_allclose(batch.numpy(), np.stack([full[i, :, i] for i in range(2)]))
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = kf.zeros([2, 2]) + 1.0
    assert tape.batch_jacobian(y, x) is None
    with kf.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(ValueError, match="batch"):
            tape.batch_jacobian(kf.reduce_sum(x), x)
