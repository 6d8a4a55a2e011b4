"""Record Keras 3's outputs for the keras.ops cases in tests/keras/ops/cases.py into
tests/keras/ops/expected.json. Run with TF 2.21's venv (never imported by kilnflow):

    /work/tfvenv/bin/python scripts/record_keras_ops.py

Each result is stored as nested lists / tuples of {"dtype", "shape", "data"} leaves
(complex as [re, im] pairs; NaN and infinities as strings) or plain Python values.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES_PATH = os.path.join(ROOT, "tests", "keras", "ops", "cases.py")
OUT = os.path.join(ROOT, "tests", "keras", "ops", "expected.json")


def load_cases():
    spec = importlib.util.spec_from_file_location("keras_ops_cases", CASES_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _num(v):
    v = float(v)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def encode(value, to_numpy):
    if value is None or isinstance(value, (bool, int, float, str)):
        return {"py": value}
    if isinstance(value, (tuple, list)):
        return {"seq": [encode(v, to_numpy) for v in value]}
    arr = np.asarray(to_numpy(value))
    dtype = str(arr.dtype)
    flat = arr.reshape(-1)
    if np.iscomplexobj(arr):
        data = [[_num(v.real), _num(v.imag)] for v in flat]
    elif arr.dtype == bool:
        data = [bool(v) for v in flat]
    elif arr.dtype.kind in "iu":
        data = [int(v) for v in flat]
    else:
        data = [_num(v) for v in flat]
    return {"dtype": dtype, "shape": list(arr.shape), "data": data}


def resolve(ops, path):
    fn = ops
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def main() -> int:
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    import keras  # noqa: WPS433 - only in the recording venv
    ops = keras.ops
    cases = load_cases()
    out = {}
    for case_id, path, args, kwargs in cases.CASES:
        try:
            out[case_id] = encode(resolve(ops, path)(*args, **kwargs), ops.convert_to_numpy)
        except Exception:  # some Keras ops take tensors only: retry with tensors
            try:
                targs = [ops.convert_to_tensor(a) if isinstance(a, np.ndarray) else a
                         for a in args]
                out[case_id] = encode(resolve(ops, path)(*targs, **kwargs),
                                      ops.convert_to_numpy)
            except Exception as e:  # recorded; the kilnflow test skips it with the reason
                out[case_id] = {"error": f"{type(e).__name__}: {e}"[:300]}
    for case_id, fn in cases.CALLS.items():
        try:
            out["call:" + case_id] = encode(fn(ops), ops.convert_to_numpy)
        except Exception as e:
            out["call:" + case_id] = {"error": f"{type(e).__name__}: {e}"[:300]}
    out["_keras_version"] = {"py": keras.__version__}
    with open(OUT + ".tmp", "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
    os.replace(OUT + ".tmp", OUT)
    errors = [k for k, v in out.items() if "error" in v]
    print(f"recorded {len(out) - 1} cases ({len(errors)} errors) -> {os.path.relpath(OUT, ROOT)}")
    for k in errors:
        print("  error:", k, out[k]["error"][:160])
    return 0


if __name__ == "__main__":
    sys.exit(main())
