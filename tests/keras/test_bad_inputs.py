"""The bad-input tier for Keras layers: each layer, called first with a malformed input,
raises TF's kind of error naming the layer or the argument, never an internal exception
(AttributeError, KeyError, IndexError...) and never a raw MemoryError."""
import pytest

import kilnflow as kf
from kilnflow import keras
from tests.ops import bad_inputs

L = keras.layers
LAYERS = [
    lambda: L.Dense(3), lambda: L.Conv1D(2, 3), lambda: L.Conv2D(2, 3),
    lambda: L.LSTM(2), lambda: L.GRU(2), lambda: L.SimpleRNN(2), lambda: L.Embedding(10, 3),
    lambda: L.BatchNormalization(), lambda: L.LayerNormalization(),
    lambda: L.Flatten(), lambda: L.Reshape((2, -1)), lambda: L.MaxPooling2D(),
    lambda: L.GlobalAveragePooling1D(), lambda: L.Activation("relu"), lambda: L.Softmax(),
    lambda: L.MultiHeadAttention(2, 4), lambda: L.Normalization(), lambda: L.Rescaling(0.5),
]
VALUES = {"none": None, "string": "abc", "object": object(), "ragged": [[1.0, 2.0], [3.0]],
          "dict": {"a": 1.0}}


@pytest.mark.parametrize("make", LAYERS, ids=[f"layer{i}" for i in range(len(LAYERS))])
@pytest.mark.parametrize("category", sorted(VALUES))
def test_layers_reject_malformed_inputs_by_name(make, category):
    layer = make()
    with pytest.raises(Exception) as info:
        layer(VALUES[category])
    exc = info.value
    assert isinstance(exc, bad_inputs.ALLOWED) and (
        isinstance(exc, kf.errors.OpError) or not isinstance(exc, bad_inputs.INTERNAL)), \
        f"{type(exc).__name__}: {exc}"
    message = str(exc)
    assert layer.name in message or "`" in message or "[Op:" in message, message


def test_weights_too_large_raise_resource_exhausted():
    with pytest.raises(kf.errors.ResourceExhaustedError, match="Layer 'huge'"):
        L.Dense(2 ** 34, name="huge")(kf.ones([1, 2]))
