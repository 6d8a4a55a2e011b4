"""SimpleRNN, LSTM and GRU walk time with kf.while_loop: outputs against a NumPy reference,
eager == @kf.function, gradients through the While op against finite differences (float64),
one While op in the traced graph whatever the length, unknown time lengths in compiled
code, and a small sequence task that trains."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _numpy_rnn(kind, weights, x, h0=None, go_backwards=False):
    """(all outputs [batch, time, units], final states) of a Keras recurrent layer."""
    kernel, recurrent, bias = weights
    units = recurrent.shape[0]
    batch = x.shape[0]
    h = np.zeros((batch, units)) if h0 is None else h0[0]
    c = np.zeros((batch, units)) if h0 is None or len(h0) < 2 else h0[1]
    steps = range(x.shape[1])[::-1] if go_backwards else range(x.shape[1])
    outputs = []
    for t in steps:
        if kind == "simple":
            h = np.tanh(x[:, t] @ kernel + h @ recurrent + bias)
        elif kind == "lstm":
            z = x[:, t] @ kernel + h @ recurrent + bias
            i, f, g, o = np.split(z, 4, axis=-1)
            c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
            h = _sigmoid(o) * np.tanh(c)
        elif kind == "gru":  # reset_after=True: bias rows for the input and recurrent parts
            xz, xr, xh = np.split(x[:, t] @ kernel + bias[0], 3, axis=-1)
            rz, rr, rh = np.split(h @ recurrent + bias[1], 3, axis=-1)
            z, r = _sigmoid(xz + rz), _sigmoid(xr + rr)
            h = z * h + (1 - z) * np.tanh(xh + r * rh)
        else:  # "gru_before": reset_after=False
            xz, xr, xh = np.split(x[:, t] @ kernel + bias, 3, axis=-1)
            z = _sigmoid(xz + h @ recurrent[:, :units])
            r = _sigmoid(xr + h @ recurrent[:, units:2 * units])
            h = z * h + (1 - z) * np.tanh(xh + (r * h) @ recurrent[:, 2 * units:])
        outputs.append(h)
    states = [h, c] if kind == "lstm" else [h]
    return np.stack(outputs, axis=1), states


KINDS = {
    "simple": lambda units, **kw: L.SimpleRNN(units, **kw),
    "lstm": lambda units, **kw: L.LSTM(units, **kw),
    "gru": lambda units, **kw: L.GRU(units, **kw),
    "gru_before": lambda units, **kw: L.GRU(units, reset_after=False, **kw),
}


def _layer(kind, units=3, dtype="float64", **kwargs):
    return KINDS[kind](units, dtype=dtype, bias_initializer="glorot_uniform", **kwargs)


def _data(shape, seed=0, dtype="float64"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("go_backwards", [False, True])
def test_outputs_match_numpy_eager_and_compiled(kind, go_backwards):
    x = _data((2, 5, 4))
    layer = _layer(kind, return_sequences=True, return_state=True, go_backwards=go_backwards)
    eager = layer(x)
    sequences, states = _numpy_rnn(kind, layer.get_weights(), x, go_backwards=go_backwards)
    np.testing.assert_allclose(eager[0].numpy(), sequences, rtol=1e-10, atol=1e-12)
    for got, want in zip(eager[1:], states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    compiled = kf.function(lambda t: layer(t))(kf.constant(x))
    for got, want in zip(compiled, eager):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    last = _layer(kind, go_backwards=go_backwards)
    last(x)
    last.set_weights(layer.get_weights())
    np.testing.assert_allclose(kf.function(last)(kf.constant(x)).numpy(), sequences[:, -1],
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_unroll_gives_the_same_values_and_gradients(kind):
    x = _data((2, 4, 3))
    r = _data((2, 4, 2), seed=6)
    looped = _layer(kind, units=2, return_sequences=True, go_backwards=True)
    unrolled = _layer(kind, units=2, return_sequences=True, go_backwards=True, unroll=True)
    looped(x)
    unrolled(x)
    unrolled.set_weights(looped.get_weights())
    assert unrolled.get_config()["unroll"] and not looped.get_config()["unroll"]
    for compiled in (False, True):
        for a, b in zip(_loss_and_grads(looped, x, r, compiled),
                        _loss_and_grads(unrolled, x, r, compiled)):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    fn = kf.function(lambda t: unrolled(t))
    assert "While" not in _op_types(fn.get_concrete_function(kf.TensorSpec([2, 4, 3],
                                                                             kf.float64)))
    unknown = kf.function(lambda t: unrolled(t),
                          input_signature=[kf.TensorSpec([None, None, 3], kf.float64)])
    with pytest.raises(ValueError, match="unroll=True needs a known number of time steps"):
        unknown.get_concrete_function()


def test_initial_state_is_used():
    x = _data((2, 3, 4))
    h0, c0 = _data((2, 3), seed=1), _data((2, 3), seed=2)
    layer = _layer("lstm")
    out = kf.function(lambda t, h, c: layer(t, initial_state=[h, c]))(x, h0, c0)
    want, _ = _numpy_rnn("lstm", layer.get_weights(), x, [h0, c0])
    np.testing.assert_allclose(out.numpy(), want[:, -1], rtol=1e-10)


def _loss_and_grads(layer, x, r, compiled):
    def loss_and_grads(t):
        with kf.GradientTape() as tape:
            tape.watch(t)
            out = layer(t)
            loss = kf.reduce_sum(out * r)
        return [loss] + tape.gradient(loss, [t] + layer.trainable_weights)
    fn = kf.function(loss_and_grads) if compiled else loss_and_grads
    return [v.numpy() for v in fn(kf.constant(x))]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_gradients_match_finite_differences(kind, compiled):
    x = _data((2, 4, 3))
    layer = _layer(kind, units=2, return_sequences=True, go_backwards=kind == "gru")
    layer(x)
    weights = layer.get_weights()
    r = _data((2, 4, 2), seed=3)
    _, dx, *dws = _loss_and_grads(layer, x, r, compiled)

    def numpy_loss(x, weights):
        sequences, _ = _numpy_rnn(kind, weights, x, go_backwards=kind == "gru")
        return np.sum(sequences * r)

    eps = 1e-6
    rng = np.random.default_rng(4)
    for which, grad in enumerate([dx] + dws):
        values = [x] + weights
        for i in rng.choice(grad.size, min(grad.size, 5), replace=False):
            up = [v.copy() for v in values]
            down = [v.copy() for v in values]
            up[which].flat[i] += eps
            down[which].flat[i] -= eps
            numeric = (numpy_loss(up[0], up[1:]) - numpy_loss(down[0], down[1:])) / (2 * eps)
            np.testing.assert_allclose(grad.flat[i], numeric, rtol=1e-6, atol=1e-8)


def test_compiled_gradients_equal_eager_gradients():
    x = _data((3, 6, 2))
    layer = _layer("lstm", units=4, return_sequences=True)
    layer(x)
    r = _data((3, 6, 4), seed=5)
    for eager, compiled in zip(_loss_and_grads(layer, x, r, False),
                               _loss_and_grads(layer, x, r, True)):
        np.testing.assert_allclose(compiled, eager, rtol=1e-10, atol=1e-12)


def _op_types(concrete):
    return [op.type for op in concrete.traced_graph.get_operations()]


@pytest.mark.parametrize("kind", list(KINDS))
def test_one_while_op_whatever_the_length(kind):
    layer = _layer(kind, return_sequences=True, dtype="float32")
    fn = kf.function(lambda t: layer(t))
    counts = []
    for steps in (2, 9):
        types = _op_types(fn.get_concrete_function(kf.TensorSpec([2, steps, 3])))
        assert sum(t in ("While", "StatelessWhile") for t in types) == 1
        counts.append(len(types))
    assert counts[0] == counts[1]  # no per-step copies of the cell


def test_gradient_graph_keeps_one_loop():
    layer = _layer("simple", dtype="float32")
    layer(np.ones((2, 3, 3), "float32"))

    @kf.function
    def grads(x):
        with kf.GradientTape() as tape:
            loss = kf.reduce_sum(layer(x))
        return tape.gradient(loss, layer.trainable_weights)

    types = _op_types(grads.get_concrete_function(kf.TensorSpec([2, 40, 3])))
    assert types.count("StatelessWhile") + types.count("While") == 1
    assert types.count("WhileGrad") == 1
    assert types.count("MatMul") < 5  # the step's matmuls live in the loop body


@pytest.mark.parametrize("kind", list(KINDS))
def test_unknown_time_length_in_compiled_code(kind):
    layer = _layer(kind, return_sequences=True, dtype="float32")
    layer.build((None, None, 3))
    fn = kf.function(lambda t: layer(t),
                     input_signature=[kf.TensorSpec([None, None, 3], kf.float32)])
    concrete = fn.get_concrete_function()
    assert concrete.structured_outputs.shape.as_list() == [None, None, 3]
    for steps in (1, 4, 7):
        x = _data((2, steps, 3), seed=steps, dtype="float32")
        want, _ = _numpy_rnn(kind, [w.astype("float64") for w in layer.get_weights()], x)
        np.testing.assert_allclose(fn(x).numpy(), want, rtol=1e-5, atol=1e-6)
    assert fn.experimental_get_tracing_count() == 1


def test_functional_model_with_unknown_length():
    inputs = keras.Input(shape=(None, 2))
    hidden = L.GRU(4, return_sequences=True)(inputs)
    outputs = L.LSTM(3)(hidden)
    assert hidden.shape.as_list() == [None, None, 4] and outputs.shape.as_list() == [None, 3]
    model = keras.Model(inputs, outputs)
    for steps in (3, 5):
        x = _data((2, steps, 2), seed=steps, dtype="float32")
        np.testing.assert_allclose(model.predict(x, verbose=0), model(x).numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_dropout_in_compiled_training_call():
    layer = _layer("lstm", dropout=0.3, recurrent_dropout=0.3, dtype="float32")
    training = kf.function(lambda t: layer(t, training=True))
    x = _data((4, 5, 3), dtype="float32")
    first, second = training(x).numpy(), training(x).numpy()
    assert first.shape == (4, 3)
    assert not np.allclose(first, second)  # a new mask on every run of the While loop
    inference = kf.function(lambda t: layer(t, training=False))(x).numpy()
    np.testing.assert_allclose(layer(x).numpy(), inference, rtol=1e-5, atol=1e-6)
    assert not np.allclose(first, inference)


def test_small_sequence_task_trains():
    """Is the running sum of the sequence positive at the end? A compiled fit learns it."""
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 6, 1)).astype("float32")
    y = (x.sum(axis=(1, 2)) > 0).astype("float32")[:, None]
    model = keras.Sequential([keras.Input(shape=(None, 1)), L.SimpleRNN(8), L.Dense(1)])
    model.compile(keras.optimizers.Adam(0.05),
                  keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=8, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0]
    assert history.history["accuracy"][-1] > 0.85
