"""Record what TF 2.21's Keras gives for every loss and metric class with labels of
shape (N,), (N, 1), one-hot (N, C) and sparse class ids, as test data for
tests/keras/test_label_shapes_tf.py. Run with the TF side venv only:

    /work/tfvenv/bin/python scripts/record_label_shapes.py
"""
import inspect
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "keras"))
from label_shape_forms import FORMS  # noqa: E402  (the pairs the test feeds kilnflow)
OUT = os.path.join(HERE, "..", "tests", "keras", "data", "label_shapes_tf.json")

N = 6
INPUTS = {
    "y01": [0, 1, 1, 0, 1, 0],
    "p_col": [[0.9], [0.8], [0.3], [0.2], [0.6], [0.7]],
    "sparse": [0, 2, 1, 1, 0, 2],
    "p_cat": [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.5, 0.3], [0.3, 0.4, 0.3],
              [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]],
    "ids_pred": [0, 2, 2, 1, 0, 1],
}
# constructor arguments for classes that need some
METRIC_ARGS = {
    "TopKCategoricalAccuracy": {"k": 2}, "SparseTopKCategoricalAccuracy": {"k": 2},
    "IoU": {"num_classes": 3, "target_class_ids": [0, 2]}, "MeanIoU": {"num_classes": 3},
    "OneHotIoU": {"num_classes": 3, "target_class_ids": [0, 2]},
    "OneHotMeanIoU": {"num_classes": 3}, "BinaryIoU": {"target_class_ids": [0, 1]},
    "PrecisionAtRecall": {"recall": 0.5}, "RecallAtPrecision": {"precision": 0.5},
    "SensitivityAtSpecificity": {"specificity": 0.5},
    "SpecificityAtSensitivity": {"sensitivity": 0.5},
    "F1Score": {"threshold": 0.5}, "FBetaScore": {"beta": 2.0, "threshold": 0.5},
}
NOT_LABEL_METRICS = {"Metric", "Mean", "Sum", "MeanMetricWrapper"}


def _value(fn):
    try:
        return np.asarray(fn(), np.float64).round(6).tolist()
    except Exception as e:  # noqa: BLE001 - the error class is the recorded answer
        return {"error": type(e).__name__}


def main():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import keras
    out = {"inputs": INPUTS, "losses": {}, "metrics": {}, "metric_args": METRIC_ARGS}
    losses = [n for n, c in vars(keras.losses).items()
              if inspect.isclass(c) and issubclass(c, keras.losses.Loss) and n != "Loss"
              and n not in ("LossFunctionWrapper", "Reduction")]
    for name in sorted(losses):
        for form, make in FORMS.items():
            y, p = make(INPUTS)
            out["losses"][f"{name}/{form}"] = _value(
                lambda: getattr(keras.losses, name)()(y, p))
            out["losses"][f"{name}/{form}/none"] = _value(
                lambda: getattr(keras.losses, name)(reduction="none")(y, p))
    metrics = [n for n, c in vars(keras.metrics).items()
               if inspect.isclass(c) and issubclass(c, keras.metrics.Metric)
               and n not in NOT_LABEL_METRICS]
    for name in sorted(metrics):
        for form, make in FORMS.items():
            y, p = make(INPUTS)

            def run():
                m = getattr(keras.metrics, name)(**METRIC_ARGS.get(name, {}))
                m.update_state(y, p)
                return m.result()
            out["metrics"][f"{name}/{form}"] = _value(run)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"{len(out['losses'])} loss cases, {len(out['metrics'])} metric cases -> {OUT}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
