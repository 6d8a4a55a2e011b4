"""Multi-input layers (MultiHeadAttention, Attention, AdditiveAttention, Dot) against
NumPy written from Keras's formulas: values with and without masks, eager ==
kf.function, gradients by finite differences, config round trips, functional use."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers
RNG = np.random.default_rng(11)
Q = RNG.normal(size=(2, 4, 6)).astype(np.float32)
V = RNG.normal(size=(2, 5, 6)).astype(np.float32)


def _softmax(s, mask=None):
    if mask is not None:
        s = s - 1e9 * (1 - mask)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _mha_ref(q, v, w, heads, key_dim, mask=None):
    wq, bq, wk, bk, wv, bv, wo, bo = w
    pq = np.einsum("abc,cde->abde", q, wq) + bq
    pk = np.einsum("abc,cde->abde", v, wk) + bk
    pv = np.einsum("abc,cde->abde", v, wv) + bv
    scores = np.einsum("aecd,abcd->acbe", pk, pq / np.sqrt(key_dim))
    probs = _softmax(scores, None if mask is None else mask[:, None])
    out = np.einsum("acbe,aecd->abcd", probs, pv)
    return np.einsum("abcd,cde->abe", out, wo) + bo, probs


def test_multi_head_attention_values_and_masks():
    layer = L.MultiHeadAttention(num_heads=3, key_dim=2, value_dim=4)
    out, probs = layer(Q, V, return_attention_scores=True)
    ref, ref_probs = _mha_ref(Q, V, layer.get_weights(), 3, 2)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(probs.numpy(), ref_probs, rtol=1e-4, atol=1e-6)
    assert [w.shape for w in layer.weights] == [(6, 3, 2), (3, 2), (6, 3, 2), (3, 2),
                                                (6, 3, 4), (3, 4), (3, 4, 6), (6,)]
    mask = (RNG.uniform(size=(2, 4, 5)) > 0.3).astype(np.float32)
    mask[:, :, 0] = 1
    masked = layer(Q, V, attention_mask=mask).numpy()
    np.testing.assert_allclose(masked, _mha_ref(Q, V, layer.get_weights(), 3, 2, mask)[0],
                               rtol=1e-4, atol=1e-5)
    self_attention = L.MultiHeadAttention(2, 3)
    causal = self_attention(Q, Q, use_causal_mask=True).numpy()
    tril = np.tril(np.ones((4, 4), np.float32))[None].repeat(2, 0)
    np.testing.assert_allclose(causal, _mha_ref(Q, Q, self_attention.get_weights(), 2, 3,
                                                tril)[0], rtol=1e-4, atol=1e-5)
    # step 0 of a causal self-attention ignores later steps
    changed = Q.copy()
    changed[:, 1:] += 5.0
    np.testing.assert_allclose(self_attention(changed, changed, use_causal_mask=True)
                               .numpy()[:, 0], causal[:, 0], rtol=1e-5, atol=1e-6)


def test_multi_head_attention_function_gradient_and_config():
    layer = L.MultiHeadAttention(num_heads=2, key_dim=3, dtype="float64")
    q, v = Q.astype(np.float64), V.astype(np.float64)
    eager = layer(q, v).numpy()
    np.testing.assert_allclose(kf.function(lambda a, b: layer(a, b))(q, v).numpy(), eager,
                               rtol=1e-10)
    weights = RNG.normal(size=eager.shape)
    q_t = kf.constant(q)
    with kf.GradientTape() as tape:
        tape.watch(q_t)
        y = kf.reduce_sum(layer(q_t, v) * weights)
    grad = tape.gradient(y, q_t).numpy()
    eps = 1e-6
    for index in [(0, 0, 0), (1, 3, 5), (0, 2, 1)]:
        up, down = q.copy(), q.copy()
        up[index] += eps
        down[index] -= eps
        numeric = (np.sum(layer(up, v).numpy() * weights) -
                   np.sum(layer(down, v).numpy() * weights)) / (2 * eps)
        assert grad[index] == pytest.approx(numeric, rel=1e-5, abs=1e-8)
    clone = L.MultiHeadAttention.from_config(layer.get_config())
    clone(q, v)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(q, v).numpy(), eager)


def test_transformer_block_in_a_functional_model_saves(tmp_path):
    inputs = keras.Input((4, 6))
    attended = L.MultiHeadAttention(2, 3)(inputs, inputs)
    x = L.LayerNormalization()(inputs + attended)
    x = L.LayerNormalization()(x + L.Dense(6)(L.Dense(8, activation="relu")(x)))
    outputs = L.Dense(2)(L.GlobalAveragePooling1D()(x))
    model = keras.Model(inputs, outputs)
    model.compile("adam", "mse")
    model.fit(Q, RNG.normal(size=(2, 2)), epochs=1, verbose=0)
    model.save(str(tmp_path / "t.keras"))
    loaded = keras.models.load_model(str(tmp_path / "t.keras"))
    np.testing.assert_array_equal(loaded.predict(Q, verbose=0), model.predict(Q, verbose=0))


@pytest.mark.parametrize("make, ref", [
    (lambda: L.Attention(), lambda q, v, w: q @ v.transpose(0, 2, 1)),
    (lambda: L.Attention(use_scale=True), lambda q, v, w: w[0] * q @ v.transpose(0, 2, 1)),
    (lambda: L.Attention(score_mode="concat"),
     lambda q, v, w: w[0] * np.tanh(q[:, :, None] + v[:, None]).sum(-1)),
    (lambda: L.AdditiveAttention(),
     lambda q, v, w: (w[0] * np.tanh(q[:, :, None] + v[:, None])).sum(-1)),
], ids=["dot", "dot_scaled", "concat", "additive"])
def test_attention_layers(make, ref):
    layer = make()
    value_mask = np.ones((2, 5), np.float32)
    value_mask[:, -2:] = 0
    out, probs = layer([Q, V], mask=[None, value_mask], return_attention_scores=True)
    scores = ref(Q, V, layer.get_weights())
    expected_probs = _softmax(scores, value_mask[:, None])
    np.testing.assert_allclose(probs.numpy(), expected_probs, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out.numpy(), expected_probs @ V, rtol=1e-4, atol=1e-5)
    traced = kf.function(lambda a, b: layer([a, b]))
    np.testing.assert_allclose(traced(Q, V).numpy(), layer([Q, V]).numpy(), rtol=1e-6)
    clone = type(layer).from_config(layer.get_config())
    clone([Q, V])
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone([Q, V]).numpy(), layer([Q, V]).numpy(), rtol=1e-6)
    assert layer([keras.Input((4, 6)), keras.Input((5, 6))]).shape.as_list() == [None, 4, 6]


def test_attention_gradient_matches_finite_differences():
    layer = L.Attention(use_scale=True, dtype="float64")
    q, v = Q.astype(np.float64), V.astype(np.float64)
    q_t = kf.constant(q)
    with kf.GradientTape() as tape:
        tape.watch(q_t)
        y = kf.reduce_sum(layer([q_t, v]) ** 2)
    grad = tape.gradient(y, q_t).numpy()
    eps = 1e-6
    for index in [(0, 0, 0), (1, 2, 3)]:
        up, down = q.copy(), q.copy()
        up[index] += eps
        down[index] -= eps
        numeric = (np.sum(layer([up, v]).numpy() ** 2) -
                   np.sum(layer([down, v]).numpy() ** 2)) / (2 * eps)
        assert grad[index] == pytest.approx(numeric, rel=1e-5)


def test_dot_layer():
    a, b = Q[:, 0], V[:, 0]
    np.testing.assert_allclose(L.Dot(1)([a, b]).numpy(), (a * b).sum(-1, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_allclose(L.Dot(2)([Q, V]).numpy(), Q @ V.transpose(0, 2, 1), rtol=1e-5)
    np.testing.assert_allclose(L.Dot((1, 1))([Q, Q]).numpy(), Q.transpose(0, 2, 1) @ Q,
                               rtol=1e-5)
    na = a / np.linalg.norm(a, axis=-1, keepdims=True)
    nb = b / np.linalg.norm(b, axis=-1, keepdims=True)
    np.testing.assert_allclose(L.Dot(1, normalize=True)([a, b]).numpy(),
                               (na * nb).sum(-1, keepdims=True), rtol=1e-5)
    symbolic = L.Dot(2)([keras.Input((4, 6)), keras.Input((5, 6))])
    assert symbolic.shape.as_list() == [None, 4, 5]
    assert L.Dot.from_config(L.Dot((1, 2)).get_config()).axes == (1, 2)
