"""Records Keras 3's (TF 2.21's) answers to tests/keras/keras3_probes.py.

Run with a Python that has ``tensorflow-cpu==2.21.0`` (a side venv; kilnflow never depends
on TF):

    /work/tfvenv/bin/python scripts/record_keras3_probes.py [probe ...]

Writes tests/keras/data/keras3_probes.json (probes not named keep their recorded values).
"""
from __future__ import annotations

import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET = ROOT / "tests" / "keras" / "data" / "keras3_probes.json"


def main(names: list) -> int:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    import keras  # the real Keras 3, only here
    sys.path.insert(0, str(ROOT / "tests" / "keras"))
    import keras3_probes
    recorded = json.loads(TARGET.read_text()) if TARGET.exists() else {}
    for name, probe in keras3_probes.PROBES.items():
        if names and name not in names:
            continue
        keras.utils.set_random_seed(0)
        recorded[name] = probe(keras)
        print(f"recorded {name}")
    recorded["_keras_version"] = keras.__version__
    tmp = TARGET.with_suffix(".tmp")
    tmp.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, TARGET)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
