"""Records Keras 3's TextVectorization / StringLookup vocabularies and outputs for
tests/keras/text_cases.py into tests/keras/data/keras_text.json. Run in the side venv:
    /work/tfvenv/bin/python scripts/record_keras_text.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.keras.text_cases import CASES, CORPUS, PROBE, lookup_data, lookup_probe  # noqa: E402,E501

results = {}
for name, (cls, kwargs) in CASES.items():
    layer = getattr(tf.keras.layers, cls)(**kwargs)
    if cls == "StringLookup":
        corpus, probe = lookup_data()[0], lookup_probe(kwargs)
        if "vocabulary" not in kwargs:
            layer.adapt(np.array(corpus))
        out = layer(np.array(probe))
    else:
        if "vocabulary" not in kwargs:
            layer.adapt(CORPUS)
        out = layer(np.array(PROBE))
    out = np.asarray(out)
    results[name] = {"vocabulary": [v if isinstance(v, str) else v.decode()
                                    for v in layer.get_vocabulary()],
                     "dtype": str(out.dtype), "shape": list(out.shape),
                     "value": out.astype(np.float64).round(6).ravel().tolist()}
path = os.path.join(ROOT, "tests", "keras", "data", "keras_text.json")
with open(path, "w") as f:
    f.write('{"keras": "%s", "results": {\n' % tf.keras.__version__)
    f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(results.items())))
    f.write("\n}}\n")
print("wrote", path)
