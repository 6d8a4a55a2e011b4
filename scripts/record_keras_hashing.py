"""Records TF 2.21's Keras 3 Hashing outputs for tests/keras/hashing_cases.py, and
tf.strings.to_hash_bucket_fast of its STRINGS, into tests/keras/data/keras_hashing.json.
Run in the side venv:   /work/tfvenv/bin/python scripts/record_keras_hashing.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.keras.hashing_cases import CASES, STRINGS  # noqa: E402

out = {"keras": tf.keras.__version__, "layers": {},
       "buckets_2_63_minus_1": [str(v) for v in
                                tf.strings.to_hash_bucket_fast(STRINGS, 2**63 - 1).numpy()],
       "buckets_1000": tf.strings.to_hash_bucket_fast(STRINGS, 1000).numpy().tolist()}
for name, kwargs, x in CASES:
    y = np.asarray(tf.keras.layers.Hashing(**kwargs)(x))
    out["layers"][name] = {"dtype": str(y.dtype), "shape": list(y.shape),
                           "value": y.astype(float).ravel().tolist()}
with open(os.path.join(ROOT, "tests", "keras", "data", "keras_hashing.json"), "w") as f:
    json.dump(out, f, indent=0)
print("wrote keras_hashing.json")
