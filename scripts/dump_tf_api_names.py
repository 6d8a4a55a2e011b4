"""Dumps TensorFlow's public API names per namespace into scripts/data/tf_api_names.json.

Run once, in a side venv that has the tensorflow-cpu wheel (never in kilnflow's own env):
    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python scripts/dump_tf_api_names.py scripts/data/tf_api_names.json
The output holds names and their kind only; scripts/api_coverage.py reads it.
"""
import json
import sys
import types

import tensorflow as tf  # the side venv's TF: this script is never run in kilnflow's env

# the namespaces issue 12 counts, plus their sub-namespaces users reach (keras is Keras 3)
NS = ["", "math", "math.special", "nn", "linalg", "random", "random.experimental", "debugging",
      "debugging.experimental", "config", "config.experimental", "config.threading",
      "config.optimizer", "image", "strings", "signal", "data", "data.experimental",
      "bitwise", "dtypes", "errors", "train", "saved_model", "autograph", "autograph.experimental",
      "types.experimental", "experimental", "version", "nest", "sparse"]
out = {"source": f"tensorflow-cpu {tf.__version__} wheel, dir() of each namespace, "
                  "names not starting with '_'; kind is module/class/function/constant",
       "tensorflow_version": tf.__version__, "namespaces": {}}
for ns in NS:  # modules count as names (tf.math is a top-level name), like issue 12
    mod = tf
    for part in filter(None, ns.split(".")):
        mod = getattr(mod, part)
    names = {}
    for n in sorted(dir(mod)):
        if n.startswith("_"):
            continue
        v = getattr(mod, n)
        names[n] = ("module" if isinstance(v, types.ModuleType) else "class"
                    if isinstance(v, type) else "function" if callable(v) else "constant")
    out["namespaces"][ns or "tf"] = names
json.dump(out, open(sys.argv[1], "w"), indent=1, sort_keys=True)
