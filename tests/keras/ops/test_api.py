"""keras.ops as a namespace: coverage of Keras 3's names, the left-out list, the ops Keras's
TF backend cannot be recorded for (vectorize, argpartition), Variables and tensors as inputs,
and ops used inside a Keras layer's call() in eager, kf.function and fit()."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.keras import ops
from kilnflow.keras.ops.missing import MISSING, PARTIAL

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "keras_names.json")) as f:
    KERAS_NAMES = json.load(f)


def test_coverage_of_keras_names():
    have = [n for n in KERAS_NAMES if hasattr(ops, n)]
    missing = sorted(set(KERAS_NAMES) - set(have))
    assert missing == sorted(MISSING), "update kilnflow/keras/ops/missing.py"
    assert len(have) / len(KERAS_NAMES) >= 0.85
    for name in ("nn", "numpy", "linalg", "image", "math", "core"):
        assert hasattr(ops, name)
    assert kf.keras.ops is ops and ops.nn.relu is ops.relu
    for name in PARTIAL:
        assert hasattr(ops.image if name.startswith("image.") else ops, name.split(".")[-1])


def test_vectorize_is_elementwise_over_broadcast_arguments():
    """Keras's TF backend raises for vectorize; kilnflow follows NumPy's np.vectorize."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([1.0, -1.0, 0.5], np.float32)
    f = ops.vectorize(lambda x, y: ops.where(x > y, x - y, y * 2.0))
    np.testing.assert_allclose(f(a, b).numpy(), np.where(a > b, a - b, b * 2.0))


def test_argpartition_partitions():
    """Keras's TF argpartition returns repeated indices for 2-D input; kilnflow returns a
    stable argsort, which is a valid partition for every kth."""
    x = np.array([[3.0, 1.0, 2.0, 0.5], [9.0, 7.0, 8.0, 10.0]], np.float32)
    idx = ops.argpartition(x, 1).numpy()
    for row, order in zip(x, idx):
        assert sorted(order) == [0, 1, 2, 3]
        assert row[order[1]] == np.sort(row)[1]
        assert all(row[order[:1]] <= row[order[1]]) and all(row[order[2:]] >= row[order[1]])


def test_variables_tensors_and_numpy_mix():
    v = kf.Variable([[1.0, 2.0], [3.0, 4.0]])
    t = kf.constant([[1.0, 0.0], [0.0, 1.0]])
    n = np.array([[0.5, 0.5], [0.5, 0.5]], np.float32)
    out = ops.add(ops.matmul(v, t), n)
    np.testing.assert_allclose(out.numpy(), [[1.5, 2.5], [3.5, 4.5]])
    assert ops.is_tensor(out) and not ops.is_tensor(n)
    assert ops.shape(v) == (2, 2) and ops.dtype(v) == "float32"
    assert isinstance(ops.convert_to_numpy(out), np.ndarray)


def test_shape_inside_function_has_tensors_for_unknown_dims():
    @kf.function(input_signature=[kf.TensorSpec([None, 3], kf.float32)])
    def f(x):
        s = ops.shape(x)
        assert s[1] == 3 and kf.is_tensor(s[0])
        return ops.reshape(x, (s[0] * 3,))
    assert f(kf.ones([2, 3])).shape == (6,)


def test_custom_gradient_is_used():
    @ops.custom_gradient
    def clipped_identity(x):
        def grad(upstream):
            return ops.clip(upstream, -0.1, 0.1)
        return ops.copy(x), grad
    x = kf.constant([1.0, 2.0])
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = ops.sum(ops.multiply(clipped_identity(x), 5.0))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [0.1, 0.1])


def test_loops_trace_into_graphs():
    @kf.function
    def f(n):
        i, total = ops.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + i),
                                  (ops.convert_to_tensor(0), ops.convert_to_tensor(0)))
        return total, ops.fori_loop(0, n, lambda i, v: v * 2, ops.convert_to_tensor(1))
    total, power = f(kf.constant(5))
    assert int(total) == 10 and int(power) == 32
    assert int(f(kf.constant(6))[0]) == 15


class Attention(keras.layers.Layer):
    """A layer written the Keras 3 way: weights from add_weight, math from keras.ops."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], input_shape[-1]),
                                 initializer="glorot_uniform", name="w")

    def call(self, x):
        q = ops.matmul(x, self.w)
        scores = ops.softmax(ops.einsum("btd,bsd->bts", q, x) / ops.sqrt(
            ops.cast(ops.shape(x)[-1], "float32")), axis=-1)
        out = ops.einsum("bts,bsd->btd", scores, x)
        return ops.mean(ops.where(out > 0, out, ops.multiply(out, 0.1)), axis=1)


def test_ops_inside_a_keras_layer_eager_function_and_fit():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4, 3)), Attention(), keras.layers.Dense(1)])
    x = np.random.default_rng(0).normal(size=(16, 4, 3)).astype(np.float32)
    y = x.sum(axis=(1, 2))[:, None].astype(np.float32)
    eager = model(x).numpy()
    graph = kf.function(lambda t: model(t))(kf.constant(x)).numpy()
    np.testing.assert_allclose(eager, graph, rtol=1e-5, atol=1e-6)
    model.compile(optimizer="adam", loss="mse")
    hist = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert np.isfinite(hist.history["loss"]).all()
    np.testing.assert_allclose(model.predict(x, verbose=0), model(x).numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("bad", [
    lambda: ops.pad(np.ones((2, 2)), 1, mode="wrap"),
    lambda: ops.qr(np.eye(2), mode="raw"),
    lambda: ops.norm(np.ones(3), ord="fro", axis=0),
    lambda: ops.conv(np.ones((1, 4, 2), np.float32), np.ones((2, 2, 3), np.float32),
                     padding="full"),
    lambda: ops.correlate(np.ones(4), np.ones(2), mode="wide"),
    lambda: ops.fft(np.ones(4)),
    lambda: ops.scatter_update(np.ones(3), [[0]], [1.0], reduction="sub"),
    lambda: ops.rearrange(np.ones((2, 6)), "b (h w) -> b h w"),
    lambda: ops.rearrange(np.ones((2, 6)), "b x -> b y"),
    lambda: ops.rearrange(np.ones((2, 6)), "b ((x)) -> b x"),
    lambda: ops.while_loop(lambda x: x < 3, lambda x: x + 1.5, 0),
])
def test_bad_arguments_raise_named_errors(bad):
    """Wrong patterns, modes and dtypes give TF/Keras error types, never a NumPy traceback."""
    with pytest.raises((ValueError, kf.errors.InvalidArgumentError, TypeError)) as info:
        bad()
    assert "numpy" not in type(info.value).__module__


def test_ctc_decode_beam_search_is_not_supported():
    with pytest.raises(NotImplementedError, match="greedy"):
        ops.ctc_decode(np.zeros((1, 3, 2), np.float32), [3], strategy="beam_search")


def test_ops_on_functional_placeholders_build_layers():
    """As in Keras 3: ops on a functional model's KerasTensors give KerasTensors."""
    keras.utils.set_random_seed(1)
    inp = keras.Input((3,))
    h = keras.layers.Dense(4)(inp)
    out = ops.concatenate([ops.softmax(ops.add(h, 1.0), axis=-1), ops.square(h)], axis=-1)
    assert ops.shape(inp) == (None, 3) and ops.dtype(inp) == "float32" and ops.ndim(inp) == 2
    assert tuple(out.shape.as_list()) == (None, 8)
    model = keras.Model(inp, out)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    dense = model.layers[1]
    hv = x @ dense.kernel.numpy() + dense.bias.numpy()
    e = np.exp(hv + 1.0 - (hv + 1.0).max(-1, keepdims=True))
    want = np.concatenate([e / e.sum(-1, keepdims=True), hv ** 2], -1)
    np.testing.assert_allclose(model(x).numpy(), want, rtol=1e-5, atol=1e-6)
    assert ops.nn.relu is ops.relu and ops.numpy.add is ops.add


def test_where_keras_raises():
    """Cases Keras 3's TF backend rejects (recorded as errors in expected.json): kilnflow
    raises the same error class for bool + bool, and gives NumPy's answer for the others."""
    with pytest.raises(kf.errors.InvalidArgumentError, match="AddV2"):
        ops.add(np.array([True]), np.array([False]))
    i = np.array([1, -2, 3], np.int32)
    np.testing.assert_array_equal(ops.clip(i, 0.5, 2.5).numpy(), [1, 0, 2])
    np.testing.assert_array_equal(ops.concatenate([[1, 2], [3]]).numpy(), [1, 2, 3])
    np.testing.assert_allclose(ops.sigmoid(i).numpy(), 1 / (1 + np.exp(-i)), rtol=1e-6)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ops.concatenate([a, a[0]], axis=None).numpy(),
                                  np.concatenate([a, a[0]], axis=None))
    np.testing.assert_array_equal(ops.pad(a, 1).numpy(), np.pad(a, 1))
