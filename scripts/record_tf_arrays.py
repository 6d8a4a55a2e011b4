"""Records TF's results for tests/ops/tf_reference_arrays_cases.py into
tests/ops/data/tf_reference_arrays.json. Run in a side venv that has tensorflow-cpu 2.21:
    /work/tfvenv/bin/python scripts/record_tf_reference.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.ops.tf_reference_arrays_cases import CASES, inputs  # noqa: E402

results = {}
for name, case in CASES.items():
    try:
        value = np.asarray(case(tf, inputs()))
    except Exception as exc:  # noqa: BLE001 - recorded: kilnflow must raise the same class
        results[name] = {"error": type(exc).__name__}
        print(name, type(exc).__name__, str(exc)[:300])
        continue
    results[name] = {"dtype": str(value.dtype), "shape": list(value.shape),
                     "value": [float(v) if np.isfinite(v) else str(v)  # "-inf", "nan"
                               for v in value.astype(np.float64).ravel()]}
path = os.path.join(ROOT, "tests", "ops", "data", "tf_reference_arrays.json")
with open(path, "w") as f:
    f.write('{"tensorflow": "%s", "results": {\n' % tf.__version__)
    f.write(",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(results.items())))
    f.write("\n}}\n")
