"""Record Keras 3's (TF 2.21 side venv) ConvLSTM weight names/paths and .weights.h5 layout for
tests/keras/test_conv_lstm.py:
   /work/tfvenv/bin/python scripts/record_keras_conv_lstm_paths.py > tests/keras/data/keras_conv_lstm_paths.json"""
import json
import os
import tempfile

import h5py
import keras
import numpy as np

out = {"layers": {}}
for cls, shape in [(keras.layers.ConvLSTM1D, (4, 5, 2)), (keras.layers.ConvLSTM2D, (4, 5, 5, 2)),
                   (keras.layers.ConvLSTM3D, (4, 5, 5, 5, 2))]:
    layer = cls(3, 3)
    layer(np.zeros((1,) + shape, "float32"))
    out["layers"][cls.__name__] = {"names": [w.name for w in layer.weights],
                                   "paths": [w.path for w in layer.weights],
                                   "cell": layer.cell.name}
model = keras.Sequential([keras.Input((4, 5, 5, 2)), keras.layers.ConvLSTM2D(3, 3),
                          keras.layers.Flatten()])
path = os.path.join(tempfile.mkdtemp(), "m.weights.h5")
model.save_weights(path)
datasets = []
h5py.File(path).visititems(lambda k, v: datasets.append(k) if isinstance(v, h5py.Dataset) else None)
out["h5_datasets"] = datasets
print(json.dumps(out, indent=1))
