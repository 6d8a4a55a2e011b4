"""keras.constraints: the projections against NumPy, applied by the optimizer after every
step (eager and compiled), and kept in layer configs."""
import json

import numpy as np
import pytest

from kilnflow import keras

C = keras.constraints
W = np.random.default_rng(0).normal(size=(4, 3)) * 3


@pytest.mark.parametrize("constraint, expected", [
    (C.MaxNorm(2.0), W * np.minimum(np.linalg.norm(W, axis=0), 2.0) /
     (1e-7 + np.linalg.norm(W, axis=0))),
    (C.NonNeg(), np.maximum(W, 0)),
    (C.UnitNorm(axis=1), W / (1e-7 + np.linalg.norm(W, axis=1, keepdims=True))),
    (C.MinMaxNorm(1.0, 2.0, rate=0.5), W * (0.5 * np.clip(np.linalg.norm(W, axis=0), 1, 2) +
                                            0.5 * np.linalg.norm(W, axis=0)) /
     (1e-7 + np.linalg.norm(W, axis=0))),
])
def test_constraint_values(constraint, expected):
    np.testing.assert_allclose(constraint(W).numpy(), expected, rtol=1e-6)
    again = C.get({"class_name": type(constraint).__name__,
                   "config": constraint.get_config()})
    np.testing.assert_allclose(again(W).numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_optimizer_applies_constraints_after_each_step(run_eagerly):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    y = x @ np.array([[-3.0], [2.0], [-1.0]], np.float32)
    dense = keras.layers.Dense(1, kernel_constraint=C.NonNeg(),
                               bias_constraint=C.MaxNorm(0.1))
    model = keras.Sequential([keras.Input((3,)), dense])
    model.compile(keras.optimizers.SGD(0.1), "mse", run_eagerly=run_eagerly)
    model.fit(x, y, epochs=3, verbose=0)
    assert np.all(dense.kernel.numpy() >= 0)
    assert np.abs(dense.bias.numpy()).max() <= 0.1 + 1e-6
    config = json.loads(json.dumps(keras.saving.serialize_keras_object(dense)))
    clone = keras.saving.deserialize_keras_object(config)
    assert isinstance(clone.kernel_constraint, C.NonNeg)
    assert clone.bias_constraint.max_value == 0.1
    conv = keras.layers.Conv2D(2, 3, kernel_constraint="unit_norm")
    assert isinstance(keras.layers.Conv2D.from_config(conv.get_config()).kernel_constraint,
                      C.UnitNorm)


def test_constraints_of_attention_prelu_and_group_norm_layers():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(8, 4, 6)).astype(np.float32)
    inputs = keras.Input((4, 6))
    mha = keras.layers.MultiHeadAttention(2, 3, kernel_constraint="non_neg")
    h = mha(inputs, inputs)
    prelu = keras.layers.PReLU(alpha_constraint=C.MaxNorm(0.01, axis=[0, 1]))
    h = prelu(h)
    norm = keras.layers.GroupNormalization(2, gamma_constraint="non_neg")
    model = keras.Model(inputs, norm(h))
    model.compile(keras.optimizers.SGD(0.5), "mse")
    model.fit(x, rng.normal(size=(8, 4, 6)) * 5, epochs=2, verbose=0)
    for layer in (mha.query_dense, mha.key_dense, mha.value_dense, mha.output_dense):
        assert np.all(layer.kernel.numpy() >= 0)
    assert np.linalg.norm(prelu.alpha.numpy()) <= 0.01 + 1e-6
    assert np.all(norm.gamma.numpy() >= 0)
    assert isinstance(keras.layers.MultiHeadAttention.from_config(mha.get_config())
                      .kernel_constraint, C.NonNeg)
