"""Keras masks: Embedding(mask_zero=True) and Masking make a mask that RNNs (skip masked
steps), GlobalAveragePooling1D (mean of kept steps), losses and metrics (ignore masked
entries) honour — eager, inside kf.function and through fit and save/load."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers
TOKENS = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2], [5, 0, 0, 0, 0]], np.int32)
LENGTHS = [3, 5, 1]


def test_embedding_mask_and_masked_average():
    emb = L.Embedding(10, 4, mask_zero=True)
    vectors = emb(TOKENS)
    mask = keras.backend.get_keras_mask(vectors)
    np.testing.assert_array_equal(mask.numpy(), TOKENS != 0)
    pooled = L.GlobalAveragePooling1D()(vectors).numpy()
    table = emb.get_weights()[0]
    expected = [table[row[:n]].mean(0) for row, n in zip(TOKENS, LENGTHS)]
    np.testing.assert_allclose(pooled, expected, rtol=1e-6)
    assert keras.backend.get_keras_mask(L.Embedding(10, 4)(TOKENS)) is None


@pytest.mark.parametrize("rnn", [lambda: L.LSTM(3), lambda: L.GRU(3),
                                 lambda: L.SimpleRNN(3, return_sequences=True),
                                 lambda: L.LSTM(3, unroll=True)],
                         ids=["lstm", "gru", "simple_rnn_sequences", "lstm_unrolled"])
def test_rnns_skip_masked_steps(rnn):
    emb = L.Embedding(10, 4, mask_zero=True)
    layer = rnn()
    out = layer(emb(TOKENS)).numpy()
    vectors = emb(TOKENS).numpy()
    for i, n in enumerate(LENGTHS):  # the same RNN on the unpadded prefix alone
        alone = layer(vectors[i:i + 1, :n]).numpy()[0]
        if layer.return_sequences:
            np.testing.assert_allclose(out[i, :n], alone, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(out[i, n:], np.repeat(alone[-1:], 5 - n, 0),
                                       rtol=1e-5, atol=1e-6)  # masked steps repeat
        else:
            np.testing.assert_allclose(out[i], alone, rtol=1e-5, atol=1e-6)
    traced = kf.function(lambda t: layer(emb(t)))
    # atol: autoclustered, the loop compiles (numba's float32 tanh): a few ulp on ~1e-3
    np.testing.assert_allclose(traced(kf.constant(TOKENS)).numpy(), out, rtol=1e-6, atol=1e-8)


def test_masking_layer():
    x = np.random.default_rng(0).normal(size=(2, 4, 3)).astype(np.float32)
    x[0, 2:] = 0.0
    masked = L.Masking(0.0)(x)
    np.testing.assert_array_equal(keras.backend.get_keras_mask(masked).numpy(),
                                  [[1, 1, 0, 0], [1, 1, 1, 1]])
    rnn = L.SimpleRNN(2)
    np.testing.assert_allclose(rnn(masked).numpy()[0], rnn(x[:1, :2]).numpy()[0], rtol=1e-5)


def test_losses_and_metrics_ignore_masked_steps():
    emb = L.Embedding(10, 2, mask_zero=True)
    dense = L.Dense(1)
    y_pred = dense(emb(TOKENS))  # Dense passes the mask on
    assert keras.backend.get_keras_mask(y_pred) is not None
    y_true = np.ones((3, 5, 1), np.float32)
    per_step = ((y_pred.numpy() - 1.0) ** 2)[..., 0]
    keep = TOKENS != 0
    assert float(keras.losses.MeanSquaredError()(y_true, y_pred)) == pytest.approx(
        per_step[keep].mean(), rel=1e-5)
    assert float(keras.losses.MeanSquaredError(reduction="sum")(y_true, y_pred)) == \
        pytest.approx(per_step[keep].sum(), rel=1e-5)
    metric = keras.metrics.MeanSquaredError()
    metric.update_state(y_true, y_pred)
    assert float(metric.result()) == pytest.approx(per_step[keep].mean(), rel=1e-5)


def test_masked_text_model_trains_saves_and_reloads(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    lengths = rng.integers(2, 9, n)
    tokens = rng.integers(1, 20, (n, 8))
    tokens[np.arange(8)[None, :] >= lengths[:, None]] = 0  # right padding
    labels = (np.where(tokens > 0, tokens, 0) >= 10).sum(1) * 2 > lengths  # majority big
    keras.utils.set_random_seed(0)
    inputs = keras.Input((8,), dtype="int32")
    x = L.Embedding(20, 8, mask_zero=True)(inputs)
    x = L.Bidirectional(L.LSTM(8))(x)
    outputs = L.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(keras.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    history = model.fit(tokens, labels.astype(np.int32), epochs=15, batch_size=32, verbose=0)
    assert history.history["accuracy"][-1] > 0.85
    model.save(str(tmp_path / "text.keras"))
    loaded = keras.models.load_model(str(tmp_path / "text.keras"))
    np.testing.assert_array_equal(loaded.predict(tokens, verbose=0),
                                  model.predict(tokens, verbose=0))
