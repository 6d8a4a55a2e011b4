"""Records TF 2.21's results for tests/ragged/dispatch_cases.py (run in a side venv with
TensorFlow: `/work/tfvenv/bin/python scripts/record_ragged_dispatch.py`); writes
tests/ragged/tf_dispatch_expected.json."""
import json
import os
import sys

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests",
                    "ragged")
sys.path.insert(0, HERE)
import dispatch_cases  # noqa: E402
import tensorflow as tf  # noqa: E402

table = {tag: dispatch_cases.run(tf, thunk)
         for tag, thunk in sorted(dispatch_cases.cases(tf).items())}
with open(os.path.join(HERE, "tf_dispatch_expected.json"), "w", encoding="utf-8") as f:
    json.dump(table, f, indent=0, sort_keys=True)
    f.write("\n")
