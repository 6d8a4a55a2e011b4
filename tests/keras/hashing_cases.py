"""Hashing cases shared by scripts/record_keras_hashing.py (TF 2.21 + Keras 3, side venv)
and tests/keras/test_hashing.py; Keras's outputs are in tests/keras/data/keras_hashing.json,
with TF's to_hash_bucket_fast of STRINGS (FarmHash Fingerprint64 across every length
branch: 0-16, 17-32, 33-64 and the 64-byte block loop)."""
import numpy as np

CASES = [  # (name, Hashing kwargs, input)
 ("str_int", dict(num_bins=3), np.array([["A"], ["B"], ["C"], ["D"], ["E"]])),
 ("str_mask", dict(num_bins=5, mask_value=""), np.array([["hello", ""], ["world", "x"]])),
 ("ints", dict(num_bins=7), np.array([[1, 2, 3], [-4, 500, 123456789]], np.int64)),
 ("ints_mask", dict(num_bins=4, mask_value=0), np.array([0, 1, 2, 3, 4], np.int64)),
 ("floats", dict(num_bins=10), np.array([1.5, -2.7, 3.0], np.float32)),
 ("multi_hot", dict(num_bins=6, output_mode="multi_hot"),
  np.array([["a", "b", "a"], ["c", "d", "e"]])),
 ("count", dict(num_bins=6, output_mode="count"), np.array([["a", "b", "a"], ["c", "d", "e"]])),
 ("one_hot", dict(num_bins=4, output_mode="one_hot"), np.array([["a"], ["long string " * 10]])),
]
STRINGS = [b"", b"a", b"ab", b"abc", b"abcd", b"hello", b"abcdefg", b"abcdefgh",
           b"hello world!", b"0123456789abcdef", b"0123456789abcdefg", b"x" * 31, b"y" * 32,
           b"z" * 33, b"The quick brown fox jumps over the lazy dog.", bytes(range(64)),
           bytes(range(65)), bytes(range(200)), b"w" * 128, b"q" * 129,
           "caf\u00e9 \u4e2d\u6587".encode(), b"-1", b"42"]
