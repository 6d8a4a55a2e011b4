"""The issue's model zoo: an MLP, a CNN (Conv2D + BatchNorm + pooling), a 1-D conv text
model on integer sequences with Embedding and masking, a bidirectional LSTM and a small
transformer block each train on synthetic data to a stated accuracy, are saved with
model.save, and predict identically after loading in a fresh process."""
import os
import subprocess
import sys

import numpy as np
import pytest

from kilnflow import keras

L = keras.layers
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(0)


def _mlp():
    x = RNG.normal(size=(400, 4)).astype(np.float32)
    y = ((x[:, 0] * x[:, 1] > 0) ^ (x[:, 2] > 0)).astype(np.int32)
    model = keras.Sequential([keras.Input((4,)), L.Dense(32, activation="relu"),
                              L.Dense(32, activation="relu"), L.Dense(2, activation="softmax")])
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model, x, y, 40, 0.9


def _cnn():
    x = RNG.normal(0, 0.3, size=(240, 8, 8, 1)).astype(np.float32)
    y = RNG.integers(0, 2, 240)
    x[y == 0, 2:6, 3:5, 0] += 1.0   # a vertical bar
    x[y == 1, 3:5, 2:6, 0] += 1.0   # a horizontal bar
    inputs = keras.Input((8, 8, 1))
    h = L.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    h = L.BatchNormalization()(h)
    h = L.MaxPooling2D()(h)
    h = L.Conv2D(8, 3, activation="relu")(h)
    h = L.GlobalAveragePooling2D()(h)
    model = keras.Model(inputs, L.Dense(2, activation="softmax")(h))
    model.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    return model, x, y, 15, 0.95


def _sequences(n=300, steps=10):
    lengths = RNG.integers(3, steps + 1, n)
    tokens = RNG.integers(1, 30, (n, steps))
    tokens[np.arange(steps)[None, :] >= lengths[:, None]] = 0
    y = ((tokens == 7).any(1) | (tokens == 13).any(1)).astype(np.int32)
    return tokens.astype(np.int32), y


def _text_conv():
    x, y = _sequences()
    inputs = keras.Input((10,), dtype="int32")
    h = L.Embedding(30, 16, mask_zero=True)(inputs)
    h = L.Conv1D(16, 1, activation="relu")(h)  # one token at a time: flags 7 and 13
    h = L.GlobalMaxPooling1D()(h)
    model = keras.Model(inputs, L.Dense(1, activation="sigmoid")(h))
    model.compile(keras.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    return model, x, y, 25, 0.95


def _bilstm():
    x, y = _sequences()
    model = keras.Sequential([keras.Input((10,), dtype="int32"),
                              L.Embedding(30, 8, mask_zero=True),
                              L.Bidirectional(L.LSTM(8)), L.Dense(1, activation="sigmoid")])
    model.compile(keras.optimizers.Adam(0.02), "binary_crossentropy", metrics=["accuracy"])
    return model, x, y, 25, 0.9


def _transformer():
    x, y = _sequences()
    inputs = keras.Input((10,), dtype="int32")
    h = L.Embedding(30, 16)(inputs)
    attended = L.MultiHeadAttention(num_heads=2, key_dim=8)(h, h)
    h = L.LayerNormalization()(h + attended)
    h = L.LayerNormalization()(h + L.Dense(16)(L.Dense(32, activation="relu")(h)))
    h = L.GlobalAveragePooling1D()(h)
    model = keras.Model(inputs, L.Dense(1, activation="sigmoid")(h))
    model.compile(keras.optimizers.Adam(0.005), "binary_crossentropy", metrics=["accuracy"])
    return model, x, y, 30, 0.9


ZOO = {"mlp": _mlp, "cnn": _cnn, "text_conv": _text_conv, "bilstm": _bilstm,
       "transformer": _transformer}


@pytest.mark.slow
def test_zoo_trains_saves_and_reloads_in_a_fresh_process(tmp_path):
    expected = {}
    for name, make in ZOO.items():
        keras.utils.set_random_seed(0)
        model, x, y, epochs, target = make()
        history = model.fit(x, y, epochs=epochs, batch_size=32, verbose=0)
        accuracy = history.history["accuracy"][-1]
        assert accuracy >= target, f"{name}: training accuracy {accuracy:.3f} < {target}"
        model.save(str(tmp_path / f"{name}.keras"))
        np.save(tmp_path / f"{name}_x.npy", x)
        expected[name] = model.predict(x, verbose=0)
    script = ("import sys, numpy as np\nfrom kilnflow import keras\n"
              "for name in sys.argv[2:]:\n"
              "    m = keras.models.load_model(f'{sys.argv[1]}/{name}.keras')\n"
              "    x = np.load(f'{sys.argv[1]}/{name}_x.npy')\n"
              "    np.save(f'{sys.argv[1]}/{name}_out.npy', m.predict(x, verbose=0))\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path)] + list(ZOO), check=True,
                   cwd=ROOT, env={**os.environ,
                                  "PYTHONPATH": os.pathsep.join([ROOT] + sys.path[1:])})
    for name in ZOO:
        np.testing.assert_array_equal(np.load(tmp_path / f"{name}_out.npy"), expected[name])
