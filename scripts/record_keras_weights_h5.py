"""Saves small models' weights with TF 2.21's Keras 3 (model.save_weights to .weights.h5)
plus their predictions on a fixed probe, for tests/keras/test_export_h5.py. Run in the side
venv:   /work/tfvenv/bin/python scripts/record_keras_weights_h5.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.keras.h5_reference_models import MODELS, probe  # noqa: E402

tf.keras.utils.set_random_seed(3)
data = os.path.join(ROOT, "tests", "keras", "data")
expected = {"keras": tf.keras.__version__}
for name, (build, shape) in MODELS.items():
    model = build(tf.keras)
    model.compile("adam", "mse")
    x = probe(shape)
    y = np.asarray(model(x))
    model.fit(x, np.roll(y, 1, 0), epochs=2, verbose=0)  # moving statistics and all
    model.save_weights(os.path.join(data, f"keras3_{name}.weights.h5"))
    expected[name] = np.asarray(model.predict(x, verbose=0)).astype(float).round(7).tolist()
with open(os.path.join(data, "keras3_weights_h5_predictions.json"), "w") as f:
    json.dump(expected, f)
print("wrote", data)
