"""Samples of kilnflow/ops/string_hash.py (StringToHashBucket, StringToHashBucketStrong,
Fingerprint) and kilnflow/ops/edit_distance.py (EditDistance), with the values TF 2.21 gave
for the same inputs (tf_string_hash_expected.json). None is differentiable (as in TF)."""
import json
import os

import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add

with open(os.path.join(os.path.dirname(__file__), "tf_string_hash_expected.json")) as _f:
    TF = json.load(_f)

WORDS = np.array([b"", b"a", b"hello world", b"The quick brown fox jumps over the lazy dog" * 3],
                 dtype=object)
add("StringToHashBucket", lambda x: kf.strings.to_hash_bucket(x, 1000003), (WORDS,),
    lambda x: np.array(TF["hb"], np.int64))
add("StringToHashBucketStrong", lambda x: kf.strings.to_hash_bucket_strong(x, 1000003, [1, 2]),
    (WORDS,), lambda x: np.array(TF["hbs"], np.int64))
add("StringToHashBucketStrong",
    lambda x: kf.strings.to_hash_bucket_strong(x, 7, [123456789012, 98765]), (WORDS,),
    lambda x: np.array(TF["hbs2"], np.int64), name="big_key")
add("Fingerprint", kf.fingerprint, (WORDS,), lambda x: np.array(TF["fp_str"], np.uint8))
add("Fingerprint", kf.fingerprint, (np.array([[b"a", b"b"], [b"cd", b""]], dtype=object),),
    lambda x: np.array(TF["fp_str2d"], np.uint8), name="string_rows")
add("Fingerprint", kf.fingerprint, (np.array([[1, 2], [3, 4]], np.int32),),
    lambda x: np.array(TF["fp_int"], np.uint8), name="int32")
add("Fingerprint", kf.fingerprint, (np.array([1.5, 2.5]),),
    lambda x: np.array(TF["fp_f"], np.uint8), name="float64")


def _edit(normalize):
    return lambda hi, hv, hs, ti, tv, ts: kf.edit_distance(
        kf.SparseTensor(hi, hv, hs), kf.SparseTensor(ti, tv, ts), normalize=normalize)


_I64 = np.int64
_STRINGS = (np.array([[0, 0, 0], [1, 0, 0]], _I64), np.array([b"a", b"b"], dtype=object),
            np.array([2, 1, 1], _I64),
            np.array([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], _I64),
            np.array([b"a", b"b", b"c", b"a"], dtype=object), np.array([2, 2, 2], _I64))
# the output's dims are the shapes' values, which a shape rule does not read
add("EditDistance", _edit(True), _STRINGS, lambda *a: np.array(TF["ed"], np.float32),
    static_shape=False)
add("EditDistance", _edit(False), _STRINGS, lambda *a: np.array(TF["ed_un"], np.float32),
    name="unnormalized", static_shape=False)
_INTS = (np.array([[0, 0], [0, 1], [0, 2], [1, 0]], _I64), np.array([1, 2, 3, 4], np.int32),
         np.array([3, 3], _I64), np.array([[0, 0], [0, 1], [2, 0]], _I64),
         np.array([1, 3, 4], np.int32), np.array([3, 2], _I64))
add("EditDistance", _edit(True), _INTS, lambda *a: np.array(TF["ed2"], np.float32),
    name="int_rows", static_shape=False)

ERRORS.extend([
    ErrorSample("Fingerprint", kf.fingerprint, (np.array(1, np.int32),),
                errors.InvalidArgumentError, ("at least one dimension",)),
    ErrorSample("Fingerprint", lambda x: kf.fingerprint(x, method="md5"),
                (np.array([1], np.int32),), errors.InvalidArgumentError,
                ("Unsupported fingerprint method: md5",)),
    ErrorSample("EditDistance", _edit(True),
                _INTS[:4] + (np.array([1.0, 2.0, 3.0], np.float32), _INTS[5]),
                errors.InvalidArgumentError, ("EditDistance", "float32")),
    ErrorSample("StringToHashBucket", lambda x: kf.strings.to_hash_bucket(x, 0), (WORDS,),
                errors.InvalidArgumentError, ("num_buckets",)),
    ErrorSample("StringToHashBucketStrong",
                lambda x: kf.strings.to_hash_bucket_strong(x, 5, [1]), (WORDS,),
                errors.InvalidArgumentError, ("key",)),
    ErrorSample("StringToHashBucket", lambda x: kf.strings.to_hash_bucket(x, 3),
                (np.array([1, 2], np.int32),), TypeError, ("string",)),
])
ERRORS.append(ErrorSample(
    "EditDistance", _edit(True),
    (np.array([[5, 0]], _I64), np.array([1], np.int32), np.array([3, 3], _I64)) + _INTS[3:],
    errors.InvalidArgumentError, ("EditDistance", "out of bounds")))
