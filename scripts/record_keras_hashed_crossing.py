"""Records TF 2.21's Keras 3 HashedCrossing outputs for the cases in
tests/keras/test_hashed_crossing.py (CASES) into tests/keras/data/keras_hashed_crossing.json.
Run in the side venv:   /work/tfvenv/bin/python scripts/record_keras_hashed_crossing.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.keras.hashed_crossing_cases import CASES  # noqa: E402

out = {}
for name, kwargs, inputs in CASES:
    y = np.asarray(tf.keras.layers.HashedCrossing(**kwargs)(inputs))
    out[name] = {"dtype": str(y.dtype), "shape": list(y.shape),
                 "value": [str(v) for v in y.ravel().tolist()]}
with open(os.path.join(ROOT, "tests", "keras", "data", "keras_hashed_crossing.json"), "w") as f:
    json.dump(out, f, indent=0)
print("wrote keras_hashed_crossing.json")
