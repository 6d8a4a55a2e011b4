"""Every layer that predates the Keras 3 breadth work survives a JSON
serialize_keras_object / deserialize_keras_object round trip computing the same values,
and agrees between its symbolic output shape and compute_output_shape."""
import json

import numpy as np
import pytest

from kilnflow import keras
from kilnflow.keras.saving import deserialize_keras_object, serialize_keras_object

L = keras.layers
RNG = np.random.default_rng(2)
X2 = RNG.normal(size=(2, 4)).astype(np.float32)
X3 = RNG.normal(size=(2, 5, 4)).astype(np.float32)
X4 = RNG.normal(size=(2, 6, 6, 3)).astype(np.float32)
CASES = [
    (lambda: L.Dense(3, activation="relu", kernel_regularizer="l2"), X2),
    (lambda: L.Activation("tanh"), X2), (lambda: L.Flatten(), X4),
    (lambda: L.Reshape((2, 2)), X2), (lambda: L.Dropout(0.3), X2),
    (lambda: L.Embedding(10, 3), np.array([[1, 2], [3, 4]], np.int32)),
    (lambda: L.Conv2D(2, 3, strides=2, padding="same"), X4),
    (lambda: L.MaxPooling2D(2), X4), (lambda: L.AveragePooling2D(3, 1, "same"), X4),
    (lambda: L.GlobalAveragePooling2D(), X4), (lambda: L.GlobalMaxPooling2D(keepdims=True), X4),
    (lambda: L.BatchNormalization(momentum=0.9), X3), (lambda: L.LayerNormalization(), X3),
    (lambda: L.LSTM(3, return_sequences=True), X3), (lambda: L.GRU(3, go_backwards=True), X3),
    (lambda: L.SimpleRNN(3), X3), (lambda: L.Concatenate(axis=1), [X2, X2]),
    (lambda: L.Add(), [X2, X2]), (lambda: L.Subtract(), [X2, X2]),
    (lambda: L.Multiply(), [X2, X2]), (lambda: L.Average(), [X2, X2]),
    (lambda: L.Maximum(), [X2, X2]), (lambda: L.Minimum(), [X2, X2]),
]


@pytest.mark.parametrize("make, x", CASES, ids=lambda c: "" if callable(c) else None)
def test_config_round_trip_and_output_shape(make, x):
    layer = make()
    out = layer(x).numpy()
    config = json.loads(json.dumps(serialize_keras_object(layer)))
    assert config["module"] == "keras.layers" and config["class_name"] == type(layer).__name__
    clone = deserialize_keras_object(config)
    clone(x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(clone(x).numpy(), out, rtol=1e-6)
    if isinstance(x, list):
        inputs = [keras.Input(a.shape[1:]) for a in x]
        shape = layer.compute_output_shape([i.shape for i in inputs])
    else:
        inputs = keras.Input(x.shape[1:], dtype=str(x.dtype))
        shape = layer.compute_output_shape(inputs.shape)
    assert layer(inputs).shape.as_list() == shape.as_list() == [None] + list(out.shape[1:])


def test_model_input_and_output_shapes():
    seq = keras.Sequential([keras.Input((4,)), L.Dense(3)])
    assert (seq.input_shape, seq.output_shape) == ((None, 4), (None, 3))
    assert seq.input.shape.as_list() == [None, 4] and len(seq.outputs) == 1
    a, b = keras.Input((4,)), keras.Input((2,))
    model = keras.Model([a, b], [L.Dense(2)(a), L.Dense(1)(b)])
    assert model.input_shape == [(None, 4), (None, 2)]
    assert model.output_shape == [(None, 2), (None, 1)]
    assert model.input == [a, b]
    with pytest.raises(AttributeError, match="no defined input"):
        keras.Sequential([L.Dense(2)]).input_shape
