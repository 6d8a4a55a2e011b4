"""The string hashes TF keeps besides FarmHash's bucket op (kilnflow/ops/farmhash.py), and
tf.fingerprint; each written from the published algorithm in plain Python integers so the
values equal TF's bit for bit (checked against values recorded from TF 2.21):

  StringToHashBucket        tf.strings.to_hash_bucket: TF's legacy Hash64 (a MurmurHash64A
                            variant, seed 0xDECAFCAFFE) modulo num_buckets
  StringToHashBucketStrong  tf.strings.to_hash_bucket_strong: SipHash-2-4 keyed by two
                            uint64s, modulo num_buckets
  Fingerprint               tf.fingerprint: per row of the first dimension, FarmHash's
                            Fingerprint64 of the row's bytes as 8 little-endian uint8s (a
                            string row of several strings: of their fingerprints' bytes)
"""
from __future__ import annotations

import struct
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.farmhash import fingerprint64
from kilnflow.ops.strings import STRING, strings_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor

M64 = (1 << 64) - 1


def hash64(data: bytes, seed: int = 0xDECAFCAFFE) -> int:
    """TF's Hash64 (tensorflow/core/lib/hash): MurmurHash64A over little-endian words."""
    m, r = 0xC6A4A7935BD1E995, 47
    h = (seed ^ (len(data) * m)) & M64
    full = len(data) - len(data) % 8
    for i in range(0, full, 8):
        k = (struct.unpack_from("<Q", data, i)[0] * m) & M64
        k = ((k ^ (k >> r)) * m) & M64
        h = ((h ^ k) * m) & M64
    tail = data[full:]
    if tail:
        for i, byte in enumerate(tail):
            h ^= byte << (8 * i)
        h = (h * m) & M64
    h = ((h ^ (h >> r)) * m) & M64
    return h ^ (h >> r)


def _rotl(x: int, bits: int) -> int:
    return ((x << bits) | (x >> (64 - bits))) & M64


def _sip_rounds(v: list, count: int) -> None:
    for _ in range(count):
        v[0] = (v[0] + v[1]) & M64
        v[1] = _rotl(v[1], 13) ^ v[0]
        v[0] = _rotl(v[0], 32)
        v[2] = (v[2] + v[3]) & M64
        v[3] = _rotl(v[3], 16) ^ v[2]
        v[0] = (v[0] + v[3]) & M64
        v[3] = _rotl(v[3], 21) ^ v[0]
        v[2] = (v[2] + v[1]) & M64
        v[1] = _rotl(v[1], 17) ^ v[2]
        v[2] = _rotl(v[2], 32)


def siphash24(k0: int, k1: int, data: bytes) -> int:
    """SipHash-2-4 of `data` under the 128-bit key (k0, k1)."""
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D,
         k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]
    full = len(data) - len(data) % 8
    last = (len(data) & 0xFF) << 56
    for i, byte in enumerate(data[full:]):
        last |= byte << (8 * i)
    for word in [struct.unpack_from("<Q", data, i)[0] for i in range(0, full, 8)] + [last]:
        v[3] ^= word
        _sip_rounds(v, 2)
        v[0] ^= word
    v[2] ^= 0xFF
    _sip_rounds(v, 4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def _bucket_rule(op: str):
    def rule(x: Any, **attrs: Any) -> TensorSpec:
        if int(attrs["num_buckets"]) < 1:
            raise ValueError(f"{op}: num_buckets must be >= 1, got {attrs['num_buckets']}")
        return TensorSpec(x.shape, _dtypes.int64)
    return rule


def _hash_bucket_kernel(x: np.ndarray, *, num_buckets: int) -> np.ndarray:
    flat = [hash64(bytes(item)) % num_buckets for item in x.reshape(-1)]
    return np.asarray(flat, np.int64).reshape(x.shape)


def _strong_kernel(x: np.ndarray, *, num_buckets: int, key: tuple) -> np.ndarray:
    flat = [siphash24(key[0], key[1], bytes(item)) % num_buckets for item in x.reshape(-1)]
    return np.asarray(flat, np.int64).reshape(x.shape)


STRING_TO_HASH_BUCKET = defop("StringToHashBucket", shape=_bucket_rule("StringToHashBucket"),
                              kernel=_hash_bucket_kernel, dtypes=STRING)
STRING_TO_HASH_BUCKET_STRONG = defop(
    "StringToHashBucketStrong", shape=_bucket_rule("StringToHashBucketStrong"),
    kernel=_strong_kernel, dtypes=STRING)


def _num_buckets(value: Any, what: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or \
            value < 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"{what}: num_buckets must be a positive int, got {value!r}"))
    return int(value)


def to_hash_bucket(string_tensor: Any, num_buckets: int,
                   name: Optional[str] = None) -> Tensor:
    """Each string's TF Hash64 modulo `num_buckets` (int64); prefer to_hash_bucket_fast.

    >>> import kilnflow as kf
    >>> kf.strings.to_hash_bucket(["hello world"], 1000003).numpy().tolist()
    [168296]
    """
    return bind(STRING_TO_HASH_BUCKET, (strings_tensor(string_tensor),),
                {"num_buckets": _num_buckets(num_buckets, "to_hash_bucket")}, name=name)


def to_hash_bucket_strong(input: Any, num_buckets: int, key: Sequence[int],  # noqa: A002
                          name: Optional[str] = None) -> Tensor:
    """Each string's SipHash-2-4 under `key` (two non-negative ints) modulo `num_buckets`:
    a keyed hash an adversary cannot steer into one bucket without the key."""
    try:
        pair = tuple(int(k) for k in key)
    except TypeError:
        pair = ()
    if len(pair) != 2 or not all(0 <= k <= M64 for k in pair):
        raise errors.InvalidArgumentError(errors.with_location(
            f"to_hash_bucket_strong: key must be a list of 2 uint64 values, got {key!r}"))
    return bind(STRING_TO_HASH_BUCKET_STRONG, (strings_tensor(input),),
                {"num_buckets": _num_buckets(num_buckets, "to_hash_bucket_strong"),
                 "key": pair}, name=name)


def _fingerprint_rule(data: Any, *, method: str) -> TensorSpec:
    if data.shape.rank == 0:
        raise ValueError(f"Fingerprint: `data` should have at least one dimension: "
                         f"{data.shape.as_list()}")
    rows = data.shape.as_list()[0] if data.shape.rank is not None else None
    return TensorSpec(TensorShape([rows, 8]), _dtypes.uint8)


def _le(value: int) -> bytes:
    return struct.pack("<Q", value)


def _fingerprint_kernel(data: np.ndarray, *, method: str) -> np.ndarray:
    rows = data.reshape(data.shape[0], -1)
    if data.dtype == object:  # strings: one row of one string, or of several
        digests = [fingerprint64(bytes(row[0])) if rows.shape[1] == 1 else
                   fingerprint64(b"".join(_le(fingerprint64(bytes(s))) for s in row))
                   for row in rows]
    else:
        contiguous = np.ascontiguousarray(rows)
        digests = [fingerprint64(row.tobytes()) for row in contiguous]
    out = np.frombuffer(b"".join(_le(d) for d in digests), np.uint8)
    return out.reshape(data.shape[0], 8).copy()


FINGERPRINT = defop("Fingerprint", shape=_fingerprint_rule, kernel=_fingerprint_kernel,
                    check_eager=True)


def fingerprint(data: Any, method: str = "farmhash64", name: Optional[str] = None) -> Tensor:
    """A [rows, 8] uint8 fingerprint of each row (first dimension) of `data`, stable across
    platforms and releases (FarmHash's Fingerprint64, as TF's "farmhash64").

    >>> import kilnflow as kf
    >>> kf.fingerprint(kf.constant(["a"])).numpy().tolist()
    [[227, 117, 223, 182, 101, 66, 69, 179]]
    """
    if method != "farmhash64":
        raise errors.InvalidArgumentError(errors.with_location(
            f"Unsupported fingerprint method: {method} [Op:Fingerprint]"))
    tensor = convert_to_tensor(data)
    return bind(FINGERPRINT, (tensor,), {"method": "farmhash64"}, name=name)
