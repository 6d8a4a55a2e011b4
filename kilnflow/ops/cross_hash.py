"""DenseCrossHashed: tf.sparse.cross_hashed on dense columns of equal shape, as Keras's
HashedCrossing layer uses it (one feature per row and column, so the sparse cross has
exactly one value per row and its dense form is that value).

Per row: h = hash_key; for each column, h = FingerprintCat64(h, feature), where a string's
feature is its FarmHash Fingerprint64 and an integer's is its own 64-bit pattern; the
result is h mod num_buckets (num_buckets 0: h itself, as int64), bit for bit as TF's
SparseCrossHashed kernel computes it (checked against TF 2.21 in
tests/keras/test_hashed_crossing.py).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.farmhash import M64, fingerprint64
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

DEFAULT_HASH_KEY = 0xDECAFCAFFE  # TF's default for sparse.cross_hashed
_MUL = 0xC6A4A7935BD1E995
_KINDS = (_dtypes.int64, _dtypes.int32, _dtypes.string)


def _shift_mix(v: int) -> int:
    return v ^ (v >> 47)


def fingerprint_cat64(fp1: int, fp2: int) -> int:
    """TF's FingerprintCat64: an order-dependent mix of two 64-bit fingerprints."""
    result = fp1 ^ _MUL
    result ^= (_shift_mix((fp2 * _MUL) & M64) * _MUL) & M64
    result = (result * _MUL) & M64
    result = (_shift_mix(result) * _MUL) & M64
    return _shift_mix(result)


def _feature(value: Any) -> int:
    if isinstance(value, (bytes, np.bytes_)):
        return fingerprint64(bytes(value))
    if isinstance(value, str):
        return fingerprint64(value.encode())
    return int(value) & M64


def _rule(*columns: Any, num_buckets: int, hash_key: int) -> TensorSpec:
    shape = columns[0].shape
    for column in columns[1:]:
        if not shape.is_compatible_with(column.shape):
            raise ValueError(f"DenseCrossHashed: all inputs must have one shape, got {shape} "
                             f"and {column.shape}")
        if column.dtype not in _KINDS:
            raise TypeError(f"DenseCrossHashed: inputs must be int32, int64 or string, got "
                            f"{column.dtype.name}")
    return TensorSpec(shape, _dtypes.int64)


def _kernel(*columns: np.ndarray, num_buckets: int, hash_key: int) -> np.ndarray:
    shape = columns[0].shape
    if any(c.shape != shape for c in columns[1:]):
        raise errors.InvalidArgumentError(
            None, None, f"DenseCrossHashed: all inputs must have one shape, got "
            f"{[list(c.shape) for c in columns]}")
    flat = [c.reshape(-1) for c in columns]
    out = []
    for row in zip(*flat):
        h = int(hash_key) & M64
        for value in row:
            h = fingerprint_cat64(h, _feature(value))
        out.append(h % num_buckets if num_buckets > 0 else h)
    return np.asarray(out, np.uint64).astype(np.int64).reshape(shape)


DENSE_CROSS_HASHED = defop("DenseCrossHashed", shape=_rule, kernel=_kernel, same_dtype=False,
                           dtypes=_KINDS)


def cross_hashed_dense(inputs: Sequence[Any], num_buckets: int = 0,
                       hash_key: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """The hashed cross of dense columns of one shape (int64 bucket ids of that shape):
    the dense form of tf.sparse.cross_hashed for one feature per row and column."""
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"cross_hashed: `inputs` must be a non-empty list of tensors, got {inputs!r}"))
    if not isinstance(num_buckets, (int, np.integer)) or num_buckets < 0:
        raise errors.InvalidArgumentError(errors.with_location(
            f"cross_hashed: `num_buckets` must be a non-negative int, got {num_buckets!r}"))
    columns = tuple(convert_to_tensor(x) for x in inputs)
    key = DEFAULT_HASH_KEY if hash_key is None else int(hash_key)
    return bind(DENSE_CROSS_HASHED, columns, {"num_buckets": int(num_buckets),
                                              "hash_key": key}, name=name)
