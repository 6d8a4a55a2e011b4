"""Adagrad, Adadelta, Adamax, Nadam, Ftrl and Lion against NumPy implementations of Keras
3's update formulas over several steps, eager and inside kf.function; names, configs."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

W0 = np.array([0.5, -1.0, 2.0], np.float64)
GRADS = [np.array([0.1, -0.2, 0.3]), np.array([-0.4, 0.5, 0.05]),
         np.array([0.2, 0.2, -0.6]), np.array([0.0, -0.1, 0.4])]
LR = 0.1


def _adagrad(w, gs, init=0.1, eps=1e-7):
    acc = np.full_like(w, init)
    for g in gs:
        acc = acc + g * g
        w = w - LR * g / np.sqrt(acc + eps)
    return w


def _adadelta(w, gs, rho=0.95, eps=1e-7):
    ag, ad = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        ag = rho * ag + (1 - rho) * g * g
        delta = -np.sqrt(ad + eps) * g / np.sqrt(ag + eps)
        ad = rho * ad + (1 - rho) * delta * delta
        w = w + LR * delta
    return w


def _adamax(w, gs, b1=0.9, b2=0.999, eps=1e-7):
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        m = m + (g - m) * (1 - b1)
        u = np.maximum(b2 * u, np.abs(g))
        w = w - LR * m / ((1 - b1 ** t) * (u + eps))
    return w


def _nadam(w, gs, b1=0.9, b2=0.999, eps=1e-7):
    m, v, prod = np.zeros_like(w), np.zeros_like(w), 1.0
    for t, g in enumerate(gs, 1):
        u_t = b1 * (1 - 0.5 * 0.96 ** t)
        u_t1 = b1 * (1 - 0.5 * 0.96 ** (t + 1))
        prod = prod * u_t
        m = m + (g - m) * (1 - b1)
        v = v + (g * g - v) * (1 - b2)
        m_hat = u_t1 * m / (1 - prod * u_t1) + (1 - u_t) * g / (1 - prod)
        w = w - m_hat * LR / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return w


def _ftrl(w, gs, power=-0.5, init=0.1, l1=0.01, l2=0.02, shrink=0.0, beta=0.0):
    acc, lin = np.full_like(w, init), np.zeros_like(w)
    for g in gs:
        grad = g + 2 * shrink * w
        new_acc = acc + g * g
        lin = lin + grad - (new_acc ** -power - acc ** -power) / LR * w
        quad = new_acc ** -power / LR + 2 * (l2 + beta / (2 * LR))
        w = (np.clip(lin, -l1, l1) - lin) / quad
        acc = new_acc
    return w


def _lion(w, gs, b1=0.9, b2=0.99):
    m = np.zeros_like(w)
    for g in gs:
        w = w - LR * np.sign(m * b1 + g * (1 - b1))
        m = m * b2 + g * (1 - b2)
    return w


CASES = [
    (lambda: keras.optimizers.Adagrad(LR), _adagrad),
    (lambda: keras.optimizers.Adadelta(LR), _adadelta),
    (lambda: keras.optimizers.Adamax(LR), _adamax),
    (lambda: keras.optimizers.Nadam(LR), _nadam),
    (lambda: keras.optimizers.Ftrl(LR, l1_regularization_strength=0.01,
                                   l2_regularization_strength=0.02), _ftrl),
    (lambda: keras.optimizers.Lion(LR), _lion),
]


@pytest.mark.parametrize("make, reference", CASES,
                         ids=["adagrad", "adadelta", "adamax", "nadam", "ftrl", "lion"])
@pytest.mark.parametrize("traced", [False, True], ids=["eager", "function"])
def test_updates_match_numpy(make, reference, traced):
    opt = make()
    w = kf.Variable(W0)

    def step(g):
        opt.apply_gradients([(g, w)])
    run = kf.function(step) if traced else step
    for g in GRADS:
        run(kf.constant(g))
    np.testing.assert_allclose(w.numpy(), reference(W0, GRADS), rtol=1e-6, atol=1e-9)
    assert int(opt.iterations.numpy()) == len(GRADS)
    again = type(opt).from_config(opt.get_config())
    assert again.get_config() == opt.get_config()
    assert isinstance(keras.optimizers.get(type(opt).__name__.lower()), type(opt))


def test_new_optimizers_train_and_save(tmp_path):
    x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    for name in ("adagrad", "adadelta", "adamax", "nadam", "ftrl", "lion"):
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        model.compile(name, "mse")
        model.fit(x, y, epochs=1, verbose=0)
        model.save(str(tmp_path / f"{name}.keras"))
        loaded = keras.models.load_model(str(tmp_path / f"{name}.keras"))
        assert type(loaded.optimizer) is type(model.optimizer)
        for a, b in zip(model.optimizer.variables, loaded.optimizer.variables):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "function"])
def test_use_ema_keeps_moving_averages_and_fit_ends_on_them(traced):
    opt = keras.optimizers.SGD(LR, use_ema=True, ema_momentum=0.5)
    w = kf.Variable(W0)

    def step(g):
        opt.apply_gradients([(g, w)])
    run = kf.function(step) if traced else step
    weights, average = W0.copy(), None
    for g in GRADS:
        run(kf.constant(g))
        weights = weights - LR * g
        average = weights.copy() if average is None else 0.5 * average + 0.5 * weights
    np.testing.assert_allclose(w.numpy(), weights, rtol=1e-7)
    np.testing.assert_allclose(opt.get_slot(w, "average").numpy(), average, rtol=1e-7)
    opt.finalize_variable_values([w])
    np.testing.assert_allclose(w.numpy(), average, rtol=1e-7)


def test_ema_overwrite_frequency_and_fit():
    opt = keras.optimizers.SGD(LR, use_ema=True, ema_momentum=0.5, ema_overwrite_frequency=2)
    w = kf.Variable(W0)
    opt.apply_gradients([(kf.constant(GRADS[0]), w)])
    first = W0 - LR * GRADS[0]
    np.testing.assert_allclose(w.numpy(), first)
    opt.apply_gradients([(kf.constant(GRADS[1]), w)])
    second = first - LR * GRADS[1]
    np.testing.assert_allclose(w.numpy(), 0.5 * first + 0.5 * second)  # overwritten
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile(keras.optimizers.Adam(0.1, use_ema=True), "mse")
    model.fit(np.ones((8, 2), np.float32), np.ones(8), epochs=2, verbose=0)
    kernel = model.trainable_variables[0]
    np.testing.assert_array_equal(kernel.numpy(),
                                  model.optimizer.get_slot(kernel, "average").numpy())
    with pytest.raises(NotImplementedError, match="gradient_accumulation_steps"):
        keras.optimizers.Adam(gradient_accumulation_steps=4)


def test_default_names_are_keras_3s_snake_case_class_names():
    # recorded from Keras 3.15.1: keras.optimizers.X().name (first instance in a process)
    import kilnflow as kf
    expected = {"SGD": "sgd", "Adam": "adam", "AdamW": "adam_w", "RMSprop": "rm_sprop",
                "Adagrad": "adagrad", "Adadelta": "adadelta", "Adamax": "adamax",
                "Nadam": "nadam", "Ftrl": "ftrl", "Lion": "lion", "Lamb": "lamb",
                "Adafactor": "adafactor"}
    for cls, name in expected.items():
        kf.keras.backend.clear_session()
        assert getattr(kf.keras.optimizers, cls)().name == name


def test_unnamed_optimizers_are_numbered_per_process_as_keras_3_does():
    # recorded from Keras 3.15.1: Adam().name, Adam().name, SGD().name, Adam(name='x').name
    # twice, then the slot paths of a third Adam
    import kilnflow as kf
    opts = kf.keras.optimizers
    assert [opts.Adam().name, opts.Adam().name, opts.SGD().name] == ["adam", "adam_1", "sgd"]
    assert [opts.Adam(name="x").name, opts.Adam(name="x").name] == ["x", "x"]
    third = opts.Adam()
    third.build([kf.keras.Variable(1.0)])
    assert [v.path for v in third.variables] == [
        "adam_2/iteration", "adam_2/learning_rate", "adam_2/variable_momentum",
        "adam_2/variable_velocity"]
