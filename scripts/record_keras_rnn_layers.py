"""Records TF 2.21's Keras 3 outputs for tests/keras/rnn_layer_cases.py into
tests/keras/data/keras_rnn_layers.json (outputs, and the weights after the call: the
training-mode SpectralNormalization updates its kernel and vector_u).
Run in the side venv:   /work/tfvenv/bin/python scripts/record_keras_rnn_layers.py
"""
import json
import os
import sys

import types

import numpy as np

try:
    import scipy.signal  # noqa: F401
except ImportError:  # the side venv has no SciPy: Keras's STFT layer only needs get_window
    def _get_window(name, n, fftbins=True):
        make = {"hann": np.hanning, "hamming": np.hamming}[name]
        return make(n + 1)[:-1] if fftbins else make(n)
    _scipy = types.ModuleType("scipy")
    _scipy.signal = types.SimpleNamespace(get_window=_get_window)
    sys.modules["scipy"], sys.modules["scipy.signal"] = _scipy, _scipy.signal
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.keras import rnn_layer_cases as cases  # noqa: E402


def record(y):
    y = np.asarray(y)
    return {"shape": list(y.shape), "value": [float(f"{v:.7g}") for v in y.astype(np.float64).ravel()]}  # float32 digits


out = {"keras": tf.keras.__version__, "cases": {}}
for name, build, x, kwargs in cases.CASES:
    layer = build(tf.keras.layers)
    args = cases.inputs(x) if isinstance(x, tuple) else [cases.inputs(x)]
    layer.build(*[a.shape for a in args])
    shapes = [tuple(w.shape) for w in layer.weights]
    layer.set_weights(cases.weights_for(shapes))
    y = layer(*args, **cases.call_kwargs(kwargs))
    ys = tf.nest.flatten(y)
    out["cases"][name] = {"weight_shapes": [list(s) for s in shapes],
                          "outputs": [record(v) for v in ys],
                          "weights_after": [record(w) for w in layer.get_weights()]}
with open(os.path.join(ROOT, "tests", "keras", "data", "keras_rnn_layers.json"), "w") as f:
    json.dump(out, f, indent=0)
print("wrote keras_rnn_layers.json")
