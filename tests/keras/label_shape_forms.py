"""The label/prediction pairs (by form: flat, column, one-hot, sparse ids) that
tests/keras/test_label_shapes_tf.py feeds kilnflow and scripts/record_label_shapes.py fed
TF 2.21's Keras. NumPy only: the recorder imports it under TF's venv."""
import numpy as np

C = 3  # classes
# form -> (labels, predictions) built from the recorded inputs
FORMS = {
    "binary_flat": lambda d: (np.array(d["y01"], np.float32), np.array(d["p_col"], np.float32)),
    "binary_column": lambda d: (np.array(d["y01"], np.float32)[:, None],
                                np.array(d["p_col"], np.float32)),
    "binary_flat_pred": lambda d: (np.array(d["y01"], np.float32)[:, None],
                                   np.array(d["p_col"], np.float32)[:, 0]),
    "one_hot": lambda d: (np.eye(C, dtype=np.float32)[d["sparse"]],
                          np.array(d["p_cat"], np.float32)),
    "sparse_flat": lambda d: (np.array(d["sparse"], np.int32), np.array(d["p_cat"], np.float32)),
    "sparse_column": lambda d: (np.array(d["sparse"], np.int32)[:, None],
                                np.array(d["p_cat"], np.float32)),
    "ids_flat": lambda d: (np.array(d["sparse"], np.int32), np.array(d["ids_pred"], np.int32)),
    "ids_column": lambda d: (np.array(d["sparse"], np.int32)[:, None],
                             np.array(d["ids_pred"], np.int32)),
}
