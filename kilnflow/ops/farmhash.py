"""StringToHashBucketFast (tf.strings.to_hash_bucket_fast): Fingerprint64(s) mod buckets,
where Fingerprint64 is FarmHash's 64-bit fingerprint (its "na" Hash64), written here from
the published algorithm in plain Python integers so hashes equal TF's bit for bit (checked
against values recorded from TF 2.21). keras.layers.Hashing is built on it. Imports ops only.
"""
from __future__ import annotations

import struct
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.strings import STRING, strings_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

M64 = (1 << 64) - 1
K0, K1, K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F


def _u64(s: bytes, i: int) -> int:
    return struct.unpack_from("<Q", s, i)[0]


def _u32(s: bytes, i: int) -> int:
    return struct.unpack_from("<I", s, i)[0]


def _rot(v: int, shift: int) -> int:
    return ((v >> shift) | (v << (64 - shift))) & M64


def _mix(v: int) -> int:
    return v ^ (v >> 47)


def _len16(u: int, v: int, mul: int) -> int:
    a = ((u ^ v) * mul) & M64
    a ^= a >> 47
    b = ((v ^ a) * mul) & M64
    b ^= b >> 47
    return (b * mul) & M64


def _upto16(s: bytes, n: int) -> int:
    if n >= 8:
        mul = K2 + n * 2
        a = (_u64(s, 0) + K2) & M64
        b = _u64(s, n - 8)
        c = (_rot(b, 37) * mul + a) & M64
        d = ((_rot(a, 25) + b) * mul) & M64
        return _len16(c, d, mul)
    if n >= 4:
        mul = K2 + n * 2
        return _len16((n + (_u32(s, 0) << 3)) & M64, _u32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_mix(((y * K2) ^ (z * K0)) & M64) * K2) & M64
    return K2


def _upto32(s: bytes, n: int) -> int:
    mul = K2 + n * 2
    a = (_u64(s, 0) * K1) & M64
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & M64
    d = (_u64(s, n - 16) * K2) & M64
    return _len16((_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64,
                  (a + _rot((b + K2) & M64, 18) + c) & M64, mul)


def _upto64(s: bytes, n: int) -> int:
    mul = K2 + n * 2
    a = (_u64(s, 0) * K2) & M64
    b = _u64(s, 8)
    c = (_u64(s, n - 8) * mul) & M64
    d = (_u64(s, n - 16) * K2) & M64
    y = (_rot((a + b) & M64, 43) + _rot(c, 30) + d) & M64
    z = _len16(y, (a + _rot((b + K2) & M64, 18) + c) & M64, mul)
    e = (_u64(s, 16) * mul) & M64
    f = _u64(s, 24)
    g = ((y + _u64(s, n - 32)) * mul) & M64
    h = ((z + _u64(s, n - 24)) * mul) & M64
    return _len16((_rot((e + f) & M64, 43) + _rot(g, 30) + h) & M64,
                  (e + _rot((f + a) & M64, 18) + g) & M64, mul)


def _weak32(s: bytes, i: int, a: int, b: int) -> tuple:
    w, x, y, z = _u64(s, i), _u64(s, i + 8), _u64(s, i + 16), _u64(s, i + 24)
    a = (a + w) & M64
    b = _rot((b + a + z) & M64, 21)
    c = a
    a = (a + x + y) & M64
    b = (b + _rot(a, 44)) & M64
    return (a + z) & M64, (b + c) & M64


def fingerprint64(s: bytes) -> int:
    """FarmHash Fingerprint64 of `s` (TF's Fingerprint64), as an unsigned int."""
    n = len(s)
    if n <= 16:
        return _upto16(s, n)
    if n <= 32:
        return _upto32(s, n)
    if n <= 64:
        return _upto64(s, n)
    x, y = 81, (81 * K1 + 113) & M64
    z = (_mix((y * K2 + 113) & M64) * K2) & M64
    v, w = (0, 0), (0, 0)
    x = (x * K2 + _u64(s, 0)) & M64
    end = ((n - 1) // 64) * 64
    last = end + ((n - 1) & 63) - 63
    i = 0
    while True:
        x = (_rot((x + y + v[0] + _u64(s, i + 8)) & M64, 37) * K1) & M64
        y = (_rot((y + v[1] + _u64(s, i + 48)) & M64, 42) * K1) & M64
        x ^= w[1]
        y = (y + v[0] + _u64(s, i + 40)) & M64
        z = (_rot((z + w[0]) & M64, 33) * K1) & M64
        v = _weak32(s, i, (v[1] * K1) & M64, (x + w[0]) & M64)
        w = _weak32(s, i + 32, (z + w[1]) & M64, (y + _u64(s, i + 16)) & M64)
        z, x = x, z
        i += 64
        if i == end:
            break
    mul = K1 + ((z & 0xFF) << 1)
    w = ((w[0] + ((n - 1) & 63)) & M64, w[1])
    v = ((v[0] + w[0]) & M64, v[1])
    w = ((w[0] + v[0]) & M64, w[1])
    x = (_rot((x + y + v[0] + _u64(s, last + 8)) & M64, 37) * mul) & M64
    y = (_rot((y + v[1] + _u64(s, last + 48)) & M64, 42) * mul) & M64
    x ^= (w[1] * 9) & M64
    y = (y + v[0] * 9 + _u64(s, last + 40)) & M64
    z = (_rot((z + w[0]) & M64, 33) * mul) & M64
    v = _weak32(s, last, (v[1] * mul) & M64, (x + w[0]) & M64)
    w = _weak32(s, last + 32, (z + w[1]) & M64, (y + _u64(s, last + 16)) & M64)
    z, x = x, z
    return _len16((_len16(v[0], w[0], mul) + _mix(y) * K0 + z) & M64,
                  (_len16(v[1], w[1], mul) + x) & M64, mul)


def _bucket_rule(x: Any, *, num_buckets: int) -> TensorSpec:
    if int(num_buckets) < 1:
        raise ValueError(f"StringToHashBucketFast: num_buckets must be >= 1, got "
                         f"{num_buckets}")
    return TensorSpec(x.shape, _dtypes.int64)


def _bucket_kernel(x: np.ndarray, *, num_buckets: int) -> np.ndarray:
    flat = [fingerprint64(bytes(item)) % int(num_buckets) for item in x.reshape(-1)]
    return np.asarray(flat, np.int64).reshape(x.shape)


STRING_TO_HASH_BUCKET_FAST = defop("StringToHashBucketFast", shape=_bucket_rule,
                                   kernel=_bucket_kernel, dtypes=STRING)


def to_hash_bucket_fast(input: Any, num_buckets: int,  # noqa: A002 - TF's name
                        name: Optional[str] = None) -> Tensor:
    """Each string's FarmHash Fingerprint64 modulo `num_buckets` (int64), as TF computes it."""
    if not isinstance(num_buckets, (int, np.integer)) or num_buckets < 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"to_hash_bucket_fast: num_buckets must be a positive int, got {num_buckets!r}"))
    return bind(STRING_TO_HASH_BUCKET_FAST, (strings_tensor(input),),
                {"num_buckets": int(num_buckets)}, name=name)
