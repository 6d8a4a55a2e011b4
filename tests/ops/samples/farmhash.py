"""Samples of kilnflow/ops/farmhash.py: StringToHashBucketFast, with buckets TF 2.21 gave
for the same strings (tests/keras/data/keras_hashing.json)."""
import numpy as np

from kilnflow.ops.farmhash import to_hash_bucket_fast
from tests.ops.samples import add

WORDS = np.array([[b"", b"a"], [b"hello world!", b"x" * 31]], dtype=object)
add("StringToHashBucketFast", lambda x: to_hash_bucket_fast(x, 1000), (WORDS,),
    lambda x: np.array([[263, 939], [596, 223]], np.int64))
