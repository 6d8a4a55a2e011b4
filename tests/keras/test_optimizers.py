"""Optimizers against hand-computed NumPy updates (Keras 3's formulas), schedules, clipping,
minimize, configs, and slot creation."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

opt = keras.optimizers
schedules = keras.optimizers.schedules


def _run(optimizer, steps=4):
    """Apply `steps` updates to w from gradients g_t = 2 * w + t (deterministic)."""
    w = kf.Variable(np.array([1.0, -2.0, 0.5]))
    trace = []
    for t in range(steps):
        g = 2 * w.numpy() + t
        optimizer.apply_gradients([(kf.constant(g), w)])
        trace.append(w.numpy().copy())
    return np.array(trace)


def f32(x):
    """The learning rate as the optimizer holds it: a float32 variable."""
    return float(np.float32(x))


def _reference(update, steps=4):
    w = np.array([1.0, -2.0, 0.5])
    state: dict = {}
    trace = []
    for t in range(steps):
        g = 2 * w + t
        w = update(w, g, t + 1, state)
        trace.append(w.copy())
    return np.array(trace)


def test_sgd_plain_momentum_nesterov():
    lr, mu = f32(0.1), 0.9
    np.testing.assert_allclose(_run(opt.SGD(0.1)), _reference(lambda w, g, t, s: w - lr * g))

    def momentum(nesterov):
        def update(w, g, t, s):
            m = mu * s.get("m", 0.0) - lr * g
            s["m"] = m
            return w + (mu * m - lr * g if nesterov else m)
        return update
    np.testing.assert_allclose(_run(opt.SGD(0.1, momentum=mu)), _reference(momentum(False)))
    np.testing.assert_allclose(_run(opt.SGD(0.1, momentum=mu, nesterov=True)),
                               _reference(momentum(True)))


def _adam(lr, b1=0.9, b2=0.999, eps=1e-7, wd=0.0, amsgrad=False):
    lr = f32(lr)

    def update(w, g, t, s):
        w = w - w * wd * lr
        m = s.get("m", 0.0) + (g - s.get("m", 0.0)) * (1 - b1)
        v = s.get("v", 0.0) + (g * g - s.get("v", 0.0)) * (1 - b2)
        s["m"], s["v"] = m, v
        if amsgrad:
            v = s["vhat"] = np.maximum(s.get("vhat", 0.0), v)
        alpha = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        return w - m * alpha / (np.sqrt(v) + eps)
    return update


def test_adam_adamw_amsgrad():
    np.testing.assert_allclose(_run(opt.Adam(0.1)), _reference(_adam(0.1)), rtol=1e-10)
    np.testing.assert_allclose(_run(opt.Adam(0.1, amsgrad=True)),
                               _reference(_adam(0.1, amsgrad=True)), rtol=1e-10)
    np.testing.assert_allclose(_run(opt.AdamW(0.1, weight_decay=0.05)),
                               _reference(_adam(0.1, wd=0.05)), rtol=1e-10)


@pytest.mark.parametrize("centered, momentum", [(False, 0.0), (True, 0.0), (False, 0.5),
                                                (True, 0.5)])
def test_rmsprop(centered, momentum):
    lr, rho, eps = f32(0.01), 0.9, 1e-7

    def update(w, g, t, s):
        vel = rho * s.get("vel", 0.0) + (1 - rho) * g * g
        s["vel"] = vel
        if centered:
            avg = rho * s.get("avg", 0.0) + (1 - rho) * g
            s["avg"] = avg
            denominator = vel - avg * avg + eps
        else:
            denominator = vel + eps
        increment = lr * g / np.sqrt(denominator)
        if momentum:
            s["mom"] = momentum * s.get("mom", 0.0) + increment
            return w - s["mom"]
        return w - increment
    got = _run(opt.RMSprop(0.01, centered=centered, momentum=momentum))
    np.testing.assert_allclose(got, _reference(update), rtol=1e-10)


def test_schedules_follow_their_formulas():
    decay = schedules.ExponentialDecay(0.1, decay_steps=4, decay_rate=0.5)
    stairs = schedules.ExponentialDecay(0.1, decay_steps=4, decay_rate=0.5, staircase=True)
    piecewise = schedules.PiecewiseConstantDecay([2, 5], [1.0, 0.5, 0.1])
    cosine = schedules.CosineDecay(1.0, 10, alpha=0.1)
    inverse = schedules.InverseTimeDecay(1.0, 2, 0.5)
    for step in range(8):
        assert float(decay(step)) == pytest.approx(0.1 * 0.5 ** (step / 4), rel=1e-6)
        assert float(stairs(step)) == pytest.approx(0.1 * 0.5 ** (step // 4), rel=1e-6)
        assert float(piecewise(step)) == pytest.approx(1.0 if step <= 2 else
                                                       0.5 if step <= 5 else 0.1)
        cos = 0.5 * (1 + np.cos(np.pi * min(step, 10) / 10))
        assert float(cosine(step)) == pytest.approx(0.9 * cos + 0.1, rel=1e-6)
        assert float(inverse(step)) == pytest.approx(1 / (1 + 0.5 * step / 2), rel=1e-6)
    with pytest.raises(ValueError, match="1 less"):
        schedules.PiecewiseConstantDecay([1], [1.0])


def test_schedule_drives_the_learning_rate():
    schedule = schedules.PiecewiseConstantDecay([1], [1.0, 0.1])
    got = _run(opt.SGD(schedule), steps=3)
    lrs = [1.0, 1.0, f32(0.1)]  # iterations 0, 1 -> 1.0; 2 -> 0.1
    np.testing.assert_allclose(got, _reference(lambda w, g, t, s: w - lrs[t - 1] * g, 3))


def test_clipping():
    w = kf.Variable([0.0, 0.0])
    opt.SGD(1.0, clipnorm=1.0).apply_gradients([(kf.constant([3.0, 4.0]), w)])
    np.testing.assert_allclose(w.numpy(), [-0.6, -0.8], rtol=1e-6)
    w.assign([0.0, 0.0])
    opt.SGD(1.0, clipvalue=0.5).apply_gradients([(kf.constant([3.0, -0.1]), w)])
    np.testing.assert_allclose(w.numpy(), [-0.5, 0.1], rtol=1e-6)
    w.assign([0.0, 0.0])
    u = kf.Variable([0.0])
    opt.SGD(1.0, global_clipnorm=1.0).apply_gradients(
        [(kf.constant([3.0, 0.0]), w), (kf.constant([4.0]), u)])
    np.testing.assert_allclose([*w.numpy(), *u.numpy()], [-0.6, 0.0, -0.8], rtol=1e-6)
    with pytest.raises(ValueError, match="Only one"):
        opt.SGD(clipnorm=1.0, clipvalue=1.0)


def test_minimize_slots_and_iterations():
    w = kf.Variable(3.0)
    adam = opt.Adam(0.5)
    for _ in range(3):
        adam.minimize(lambda: (w - 1.0) ** 2, [w])
    assert int(adam.iterations.numpy()) == 3
    assert adam.get_slot(w, "m").shape == w.shape and set(adam.get_slot_names()) == {"m", "v"}
    assert len(adam.variables) == 4 and float(w.numpy()) < 3.0
    with kf.GradientTape() as tape:
        loss = w * w
    adam.minimize(loss, [w], tape=tape)
    with pytest.raises(ValueError, match="tape"):
        adam.minimize(kf.constant(1.0), [w])


def test_missing_gradients():
    w, u = kf.Variable(1.0), kf.Variable(2.0)
    with pytest.warns(UserWarning, match="Gradients do not exist"):
        opt.SGD(0.1).apply_gradients([(kf.constant(1.0), w), (None, u)])
    with pytest.raises(ValueError, match="No gradients"):
        opt.SGD(0.1).apply_gradients([(None, u)])


def test_learning_rate_is_an_assignable_variable_and_configs_round_trip():
    sgd = opt.SGD(0.1, momentum=0.5)
    sgd.learning_rate = 0.01
    assert float(sgd.learning_rate.numpy()) == pytest.approx(0.01)
    clone = opt.SGD.from_config(sgd.get_config())
    assert clone.momentum == 0.5 and float(clone.learning_rate.numpy()) == pytest.approx(0.01)
    scheduled = opt.Adam(schedules.ExponentialDecay(0.1, 10, 0.9))
    again = opt.Adam.from_config(scheduled.get_config())
    assert isinstance(again.learning_rate, schedules.ExponentialDecay)
    assert isinstance(opt.get("rmsprop"), opt.RMSprop)
    with pytest.raises(ValueError, match="Unknown optimizer"):
        opt.get("nope")


def test_slots_created_in_the_first_trace_only():
    w = kf.Variable(np.ones(3, np.float32))
    adam = opt.Adam(0.1)

    @kf.function
    def step(g):
        adam.apply_gradients([(g, w)])
    for _ in range(3):
        step(kf.constant(np.ones(3, np.float32)))
    assert int(adam.iterations.numpy()) == 3 and len(adam.variables) == 4
    expected = _adam(0.1)
    ref = np.ones(3)
    state: dict = {}
    for t in range(1, 4):
        ref = expected(ref, np.ones(3), t, state)
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-5)
