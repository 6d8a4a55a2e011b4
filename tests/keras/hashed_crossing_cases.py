"""HashedCrossing cases shared by scripts/record_keras_hashed_crossing.py (TF 2.21's Keras)
and tests/keras/test_hashed_crossing.py."""
import numpy as np

_A = np.array([[1], [2], [3], [-4]], np.int64)
_B = np.array([["x"], ["y"], ["x"], ["hello world"]])
_C = np.array([5, 6, 7, 8], np.int64)
CASES = [  # (name, layer kwargs, inputs)
    ("int_str", dict(num_bins=1000), [_A, _B]),
    ("str_int", dict(num_bins=7), [_B, _A]),
    ("rank1", dict(num_bins=13), [_A[:, 0], _C]),
    ("three_one_hot", dict(num_bins=5, output_mode="one_hot"), [_A, _B, _A]),
    ("rank1_one_hot", dict(num_bins=4, output_mode="one_hot"), [_C, _A[:, 0]]),
    ("scalar", dict(num_bins=100), [np.int64(3), np.array("z")]),
    ("huge_bins", dict(num_bins=2 ** 62), [_A, _C[:, None]]),
    ("long_strings", dict(num_bins=10 ** 9), [np.array([["a" * 40], ["b" * 70]]),
                                              np.array([["q" * 17], [""]])]),
]
