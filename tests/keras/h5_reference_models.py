"""The models whose weights TF 2.21's Keras 3 saved to tests/keras/data/keras3_*.weights.h5
(scripts/record_keras_weights_h5.py); the same code builds them with kilnflow's Keras
(`keras` is either module), so the files must load and predict as Keras did."""
import numpy as np


def cnn(keras):
    L = keras.layers
    inputs = keras.Input((8, 8, 2))
    x = L.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    x = L.BatchNormalization()(x)
    x = L.MaxPooling2D()(x)
    x = L.SeparableConv2D(4, 3)(x)
    x = L.Flatten()(x)
    outputs = L.Dense(3, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def rnn(keras):
    L = keras.layers
    return keras.Sequential([keras.Input((5, 3)), L.LSTM(4, return_sequences=True),
                             L.GRU(3), L.Dense(2)])


MODELS = {"cnn": (cnn, (4, 8, 8, 2)), "rnn": (rnn, (4, 5, 3))}


def probe(shape):
    return (np.cos(np.arange(int(np.prod(shape))) * 0.37) * 0.8).reshape(shape).astype("float32")
