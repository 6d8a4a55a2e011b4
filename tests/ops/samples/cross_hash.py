"""Samples of the ops in kilnflow/ops/cross_hash.py (see tests/ops/samples/__init__.py).
The reference recomputes the cross from the published FingerprintCat64 steps; TF's own
values are checked in tests/keras/test_hashed_crossing.py."""
import numpy as np

from kilnflow.ops.cross_hash import DENSE_CROSS_HASHED, cross_hashed_dense
from tests.ops.samples import add, ints

_M = (1 << 64) - 1


def _reference(a, b, buckets=97):
    def mix(x, y):
        k = 0xC6A4A7935BD1E995
        r = x ^ k
        r ^= ((((y * k) & _M) ^ (((y * k) & _M) >> 47)) * k) & _M
        r = (r * k) & _M
        r = (((r ^ (r >> 47)) * k) & _M)
        return r ^ (r >> 47)
    out = [mix(mix(0xDECAFCAFFE, int(x) & _M), int(y) & _M) % buckets
           for x, y in zip(a.ravel(), b.ravel())]
    return np.asarray(out, np.int64).reshape(a.shape)


add(DENSE_CROSS_HASHED.name, lambda a, b: cross_hashed_dense([a, b], 97),
    (ints(4, 1, dtype=np.int64), ints(4, 1, dtype=np.int64)), _reference)
