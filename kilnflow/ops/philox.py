"""Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011),
vectorised in NumPy, and the conversions of its 32-bit words into the values TF's CPU
kernels produce. Written from the published algorithm; the conversions were pinned by
comparing with TensorFlow 2.21's outputs (tests/ops/data/tf_random_reference.json).

A Philox stream is a 64-bit key and a 128-bit counter. Block n of the stream is the
10-round bijection of (counter + n) under the key: four uint32 words. TF reads the words
in order, block after block. Pure NumPy, no kilnflow imports.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

_W0 = 0x9E3779B9
_W1 = 0xBB67AE85
_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)
_MASK64 = (1 << 64) - 1

Key = Tuple[int, int]                # two uint32 words
Counter = Tuple[int, int, int, int]  # four uint32 words, least significant first


def blocks(key: Key, counter: Counter, first: int, count: int) -> np.ndarray:
    """Blocks first .. first+count-1 of the stream: uint32 array [count, 4]."""
    base_lo = (counter[0] | (counter[1] << 32)) + int(first)
    base_hi = (counter[2] | (counter[3] << 32)) + (base_lo >> 64)
    base_lo &= _MASK64
    if base_lo + count <= _MASK64:  # no carry into the high half: one value for all
        lo = np.arange(base_lo, base_lo + count, dtype=np.uint64)
        return _rounds(key, lo, np.broadcast_to(np.uint64(base_hi & _MASK64), (count,)))
    n = np.arange(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        lo = n + np.uint64(base_lo)
        hi = np.full(count, base_hi & _MASK64, np.uint64) + (lo < n).astype(np.uint64)
    return _rounds(key, lo, hi)


def blocks_at(key: Key, counter: Counter, index: np.ndarray) -> np.ndarray:
    """Blocks at the given offsets (uint64 array) from `counter`: uint32 [len, 4]."""
    base_lo = np.uint64(counter[0] | (counter[1] << 32))
    base_hi = np.uint64(counter[2] | (counter[3] << 32))
    index = index.astype(np.uint64)
    with np.errstate(over="ignore"):
        lo = index + base_lo
        hi = base_hi + (lo < index).astype(np.uint64)
    return _rounds(key, lo, hi)


_MULTIPLIERS = np.array([[0xD2511F53], [0xCD9E8D57]], np.uint64)
_CHUNK = 8192  # counters per pass: the working arrays stay in cache


def _round_keys(key: Key) -> list:
    """The key of each of the ten rounds, as a [2, 1] column (bumped by the Weyl constants
    between rounds)."""
    k0, k1 = int(key[0]), int(key[1])
    keys = []
    for _ in range(10):
        keys.append(np.array([[k0], [k1]], np.uint64))
        k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return keys


def _rounds(key: Key, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The ten Philox rounds over counters (lo, hi: uint64 halves of 128 bits).

    Words (c0, c1, c2, c3) are kept as x = [c0, c2] (the multiplied words) and y = [c1, c3];
    a round is x' = [hi(c2 * M1) ^ c1 ^ k0, hi(c0 * M0) ^ c3 ^ k1], y' = [lo(c2 * M1),
    lo(c0 * M0)]: the 32 x 32 -> 64-bit products are exact in uint64. Worked in chunks,
    in place, so the arrays stay in cache.
    """
    n = lo.size
    out = np.empty((n, 4), np.uint32)
    keys = _round_keys(key)
    width = min(_CHUNK, max(n, 1))
    x_buf, y_buf, p_buf, h_buf = (np.empty((2, width), np.uint64) for _ in range(4))
    for start in range(0, n, width):
        m = min(width, n - start)
        x, y, product, high = x_buf[:, :m], y_buf[:, :m], p_buf[:, :m], h_buf[:, :m]
        np.bitwise_and(lo[start:start + m], _LOW32, out=x[0])
        np.right_shift(lo[start:start + m], _SHIFT32, out=y[0])
        np.bitwise_and(hi[start:start + m], _LOW32, out=x[1])
        np.right_shift(hi[start:start + m], _SHIFT32, out=y[1])
        for round_key in keys:
            np.multiply(x, _MULTIPLIERS, out=product)
            np.right_shift(product, _SHIFT32, out=high)
            np.bitwise_xor(high[::-1], y, out=x)
            x ^= round_key
            np.bitwise_and(product[::-1], _LOW32, out=y)
        block = out[start:start + m]
        block[:, 0], block[:, 1], block[:, 2], block[:, 3] = x[0], y[0], x[1], y[1]
    return out


def words(key: Key, counter: Counter, count: int) -> np.ndarray:
    """The first `count` uint32 words of the stream, in TF's reading order."""
    nblocks = -(-int(count) // 4)
    return blocks(key, counter, 0, nblocks).reshape(-1)[:count]


# ---------------------------------------------------------------- bits -> values

def uint32_to_float(x: np.ndarray) -> np.ndarray:
    """[0, 1) float32 from the low 23 bits: a float in [1, 2) minus 1 (exact)."""
    bits = np.bitwise_and(x, np.uint32(0x7FFFFF), dtype=np.uint32)
    bits |= np.uint32(0x3F800000)
    values = bits.view(np.float32)
    values -= np.float32(1.0)  # in place: one array for the whole conversion
    return values


def uint64_to_double(x0: np.ndarray, x1: np.ndarray) -> np.ndarray:
    """[0, 1) float64 from 52 bits: x0's low 20 bits high, x1 low; a double in [1, 2) - 1."""
    bits = (x1.astype(np.uint64) | ((x0.astype(np.uint64) & np.uint64(0xFFFFF)) << _SHIFT32))
    bits |= np.uint64(0x3FF0000000000000)
    return bits.view(np.float64) - 1.0


def uint16_to_half(x: np.ndarray) -> np.ndarray:
    """[0, 1) float16 from the low 10 bits."""
    bits = ((x.astype(np.uint32) & np.uint32(0x3FF)) | np.uint32(0x3C00)).astype(np.uint16)
    return bits.view(np.float16) - np.float16(1.0)


def box_muller_float(x0: np.ndarray, x1: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Two float32 normals per word pair; each step rounded to float32 as TF's float code
    does (the transcendental functions are evaluated in float64 and rounded once, which
    is the correctly rounded float32 result)."""
    u1 = np.maximum(uint32_to_float(x0), np.float32(1.0e-7))
    v1 = (np.float64(2.0 * np.pi) * uint32_to_float(x1).astype(np.float64)).astype(np.float32)
    log_u1 = np.log(u1.astype(np.float64)).astype(np.float32)
    radius = np.sqrt(np.float32(-2.0) * log_u1)
    v = v1.astype(np.float64)
    return (radius * np.sin(v).astype(np.float32), radius * np.cos(v).astype(np.float32))


def box_muller_double(x0: np.ndarray, x1: np.ndarray, x2: np.ndarray,
                      x3: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Two float64 normals per four words."""
    u1 = np.maximum(uint64_to_double(x0, x1), 1.0e-12)
    v1 = 2.0 * np.pi * uint64_to_double(x2, x3)
    radius = np.sqrt(-2.0 * np.log(u1))
    return radius * np.sin(v1), radius * np.cos(v1)


# ---------------------------------------------------------------- distributions

_UNIFORM_BITS = {"float16": (0x3FF, 0x3C00, np.uint16, np.float16),
                 "bfloat16": (0x7F, 0x3F80, np.uint16, None)}


def uniform(key: Key, counter: Counter, count: int, dtype: np.dtype) -> np.ndarray:
    """`count` values in [0, 1) of `dtype`: one word each (two for float64)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        w = words(key, counter, 2 * count)
        return uint64_to_double(w[0::2], w[1::2])
    w = words(key, counter, count)
    if dtype == np.float32:
        return uint32_to_float(w)
    mask, one, raw, _ = _UNIFORM_BITS.get(dtype.name, _UNIFORM_BITS["float16"])
    bits = ((w & np.uint32(mask)) | np.uint32(one)).astype(raw)
    return bits.view(dtype) - dtype.type(1.0)


def full_int(key: Key, counter: Counter, count: int, dtype: np.dtype) -> np.ndarray:
    """`count` integers over the whole range of a 32- or 64-bit integer dtype (the low word
    first for 64 bits)."""
    dtype = np.dtype(dtype)
    if dtype.itemsize == 8:
        w = words(key, counter, 2 * count).astype(np.uint64)
        return (w[0::2] | (w[1::2] << _SHIFT32)).view(dtype)
    return words(key, counter, count).view(dtype)


def uniform_int(key: Key, counter: Counter, count: int, dtype: np.dtype, low: int,
                high: int) -> np.ndarray:
    """`count` integers in [low, high): low + (random bits mod the range), as TF does (a
    slight bias toward small values for ranges that do not divide 2**bits)."""
    dtype = np.dtype(dtype)
    bits = full_int(key, counter, count, np.uint64 if dtype.itemsize == 8 else np.uint32)
    span = (int(high) - int(low)) & ((1 << (8 * dtype.itemsize)) - 1)
    offset = bits % bits.dtype.type(span)
    with np.errstate(over="ignore"):  # the sum wraps modulo 2**bits, as in C
        return (offset + bits.dtype.type(int(low) & ((1 << (8 * dtype.itemsize)) - 1))).view(
            dtype)


def normal(key: Key, counter: Counter, count: int, dtype: np.dtype) -> np.ndarray:
    """`count` standard normal values: Box-Muller on word pairs (float32 math, narrower
    floats rounded from it) or on word quadruples (float64)."""
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        pairs = -(-count // 2)
        w = words(key, counter, 4 * pairs)
        a, b = box_muller_double(w[0::4], w[1::4], w[2::4], w[3::4])
    else:
        pairs = -(-count // 2)
        w = words(key, counter, 2 * pairs)
        a, b = box_muller_float(w[0::2], w[1::2])
    return np.stack([a, b], axis=1).reshape(-1)[:count].astype(dtype)


def truncated_normal(key: Key, counter: Counter, count: int, dtype: np.dtype) -> np.ndarray:
    """`count` standard normal values inside (-2, 2), by rejection.

    TF fills the output in groups (four values; two for float64); group g draws from its
    own stretch of the stream, starting 256 words per value (64 blocks) further than the
    previous group, and keeps the Box-Muller values whose magnitude is below 2, in order,
    until the group is full (float16 and bfloat16 test the float32 value, then round).
    Vectorised: every group draws a few blocks at once; the rare
    groups still short of values draw more.
    """
    dtype = np.dtype(dtype)
    wide = dtype == np.float64
    group = 2 if wide else 4
    groups = -(-count // group)
    out = np.empty((groups, group), np.float64 if wide else np.float32)
    filled = np.zeros(groups, np.int64)
    todo = np.arange(groups, dtype=np.int64)
    used = 0  # blocks already consumed by every group still short of values
    per_round = 1  # one block fills most groups (float32: all four values kept 83% of the time)
    while todo.size:
        index = (todo[:, None] * (64 * group) + used + np.arange(per_round)).reshape(-1)
        w = blocks_at(key, counter, index).reshape(todo.size, -1)
        if wide:
            a, b = box_muller_double(w[:, 0::4], w[:, 1::4], w[:, 2::4], w[:, 3::4])
        else:
            a, b = box_muller_float(w[:, 0::2], w[:, 1::2])
        values = np.stack([a, b], axis=2).reshape(todo.size, -1)
        keep = np.abs(values) < 2.0
        if used == 0:  # first block: exactly one group of candidates; most are all kept
            full = keep.all(axis=1)
            out[todo[full]] = values[full]
            filled[todo[full]] = group
            short = ~full
            todo, values, keep = todo[short], values[short], keep[short]
        rank = np.cumsum(keep, axis=1) + filled[todo, None]  # 1-based slot of each kept value
        take = keep & (rank <= group)
        rows, cols = np.nonzero(take)
        out[todo[rows], rank[rows, cols] - 1] = values[rows, cols]
        filled[todo] = np.minimum(rank[:, -1], group)
        todo = todo[filled[todo] < group]
        used += per_round
        per_round = 2
    return out.reshape(-1)[:count].astype(dtype)


def permutation(key: Key, counter: Counter, count: int) -> np.ndarray:
    """A permutation of range(count) as TF shuffles: for i = 0, 1, ..., swap item i with
    item i + (word i mod (count - i)). The swaps are sequential; the draws are not."""
    perm = list(range(int(count)))
    if count > 1:
        w = words(key, counter, count - 1).astype(np.int64)
        targets = (np.arange(count - 1) + w % np.arange(count, 1, -1)).tolist()
        for i, j in enumerate(targets):
            perm[i], perm[j] = perm[j], perm[i]
    return np.array(perm, np.int64)
