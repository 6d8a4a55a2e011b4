"""Records Keras 3's outputs, output shapes, weight shapes and configs for
tests/keras/conv_extra_cases.py into tests/keras/data/keras_conv_extra.json. Run in a side
venv with TF 2.21 (Keras 3):   /work/tfvenv/bin/python scripts/record_keras_reference.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.keras.conv_extra_cases import CASES, case_input, weight_values  # noqa: E402

results = {}
for name, (cls, kwargs, shape) in CASES.items():
    layer = getattr(tf.keras.layers, cls)(**kwargs)
    x = case_input(shape)
    layer(x)
    for i, w in enumerate(layer.weights):
        w.assign(weight_values(w.shape, i))
    y = np.asarray(layer(x))
    results[name] = {"weights": [[w.name, list(w.shape)] for w in layer.weights],
                     "shape": list(y.shape),
                     "output_shape": list(layer.compute_output_shape(tuple(shape))),
                     "value": [float(v) for v in y.astype(np.float64).ravel()]}
path = os.path.join(ROOT, "tests", "keras", "data", "keras_conv_extra.json")
with open(path, "w") as f:
    f.write('{"keras": "%s", "results": {\n' % tf.keras.__version__)
    f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(results.items())))
    f.write("\n}}\n")
print("wrote", path)
