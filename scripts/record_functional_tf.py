"""Records TF's results for tests/functional/tf_cases.py into
tests/functional/data/tf_functional.json. Run in a side venv that has tensorflow-cpu 2.21:
    /work/tfvenv/bin/python scripts/record_functional_tf.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.functional.tf_cases import CASES, ERROR_CASES  # noqa: E402


def _leaf(value):
    value = np.asarray(value)
    flat = value.ravel().tolist()
    if value.dtype.kind in "SO":
        flat = [v.decode() if isinstance(v, bytes) else str(v) for v in flat]
    return {"dtype": "string" if value.dtype.kind in "SO" else str(value.dtype),
            "shape": list(value.shape), "value": flat}


results = {}
for name, case in CASES.items():
    out = case(tf)
    results[name] = {"outputs": [_leaf(v) for v in tf.nest.flatten(out)],
                     "structure": repr(tf.nest.map_structure(lambda _: 0, out))}
errors = {}
for name, case in ERROR_CASES.items():
    try:
        case(tf)
    except Exception as exc:  # noqa: BLE001 - recording the class
        errors[name] = type(exc).__name__
    else:
        errors[name] = None
path = os.path.join(ROOT, "tests", "functional", "data", "tf_functional.json")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "w") as f:
    json.dump({"tensorflow": tf.__version__, "results": results, "errors": errors}, f,
              indent=0, sort_keys=True)
    f.write("\n")
