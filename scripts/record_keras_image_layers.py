"""Records TF 2.21's Keras 3 image-layer outputs for tests/keras/image_layer_cases.py, and
tf.raw_ops.ImageProjectiveTransformV3 for its OP_CASES, into
tests/keras/data/keras_image_layers.json.
Run in the side venv:   /work/tfvenv/bin/python scripts/record_keras_image_layers.py
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf  # the side venv's TF: never imported by kilnflow or its tests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from tests.keras import image_layer_cases as cases  # noqa: E402


def record(y):
    y = np.asarray(y)
    return {"dtype": str(y.dtype), "shape": list(y.shape),
            "value": [float(f"{v:.7g}") for v in y.astype(np.float64).ravel()]}  # float32 digits


out = {"keras": tf.keras.__version__, "layers": {}, "ops": {}}
for name, cls, kwargs, x, call_kwargs in cases.CASES:
    layer = getattr(tf.keras.layers, cls)(**kwargs)
    out["layers"][name] = record(layer(cases.inputs(x), **call_kwargs))
    out["layers"][name]["config"] = {k: v for k, v in layer.get_config().items()
                                     if k not in ("dtype", "name", "trainable")}
for name, i, interpolation, fill_mode in cases.OP_CASES:
    t = np.array([cases.TRANSFORMS[i]] * 2, np.float32)
    out["ops"][name] = record(tf.raw_ops.ImageProjectiveTransformV3(
        images=cases.IMG, transforms=t, output_shape=[6, 8], fill_value=0.5,
        interpolation=interpolation, fill_mode=fill_mode))
for name, mode, order in cases.MAP_CASES:
    out["ops"][name] = record(tf.keras.ops.image.map_coordinates(
        cases.IMG[0, :, :, 0], [cases.MAP_YS, cases.MAP_XS], order, fill_mode=mode,
        fill_value=-3.0))
out["ops"]["perspective"] = record(tf.keras.ops.image.perspective_transform(
    cases.IMG, cases.PERSPECTIVE_START, cases.PERSPECTIVE_END, fill_value=2.0))
with open(os.path.join(ROOT, "tests", "keras", "data", "keras_image_layers.json"), "w") as f:
    json.dump(out, f, indent=0, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
print("wrote keras_image_layers.json")
