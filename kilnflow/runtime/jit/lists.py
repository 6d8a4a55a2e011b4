"""numba helpers for TensorArray code the jit generates (`kf_lists.<name>` in the source).

Imported only by generated modules: it needs numba.
"""
from __future__ import annotations

import numba
import numpy as np

_OPTIONS = {"cache": True, "error_model": "numpy"}


@numba.njit(**_OPTIONS)
def arange(start, limit, delta):
    """DynamicRange (`kf.range` with tensor bounds, a TensorArray gradient's row numbers)
    with the Python kernel's checks: a bad delta raises instead of giving an empty range."""
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError("Requires start <= limit when delta > 0")
    if delta < 0 and start < limit:
        raise ValueError("Requires start >= limit when delta < 0")
    return np.arange(start, limit, delta)


@numba.njit(**_OPTIONS)
def sum_to(cube, t):
    """(outer, n, inner) summed to (outer, t, inner): kept when t == n, the middle axis
    summed when t == 1 (undoing a broadcast; float64 sums, as the row helpers')."""
    outer, n, inner = cube.shape
    if t == n:
        return cube
    if t != 1:
        raise ValueError("SumToShape: a dimension is neither the target's nor 1")
    acc = np.zeros((outer, 1, inner), np.float64)
    for a in range(outer):
        for b in range(n):
            for c in range(inner):
                acc[a, 0, c] += cube[a, b, c]
    return acc.astype(cube.dtype)


@numba.njit(**_OPTIONS)
def place(out, index, value):
    """`out[index] = value; out` (index: a tuple of ints and slices): StridedSliceGrad."""
    out[index] = value
    return out


@numba.njit(**_OPTIONS)
def set_item_in_place(buffer, i, value, limit):
    """TensorArray.write into a buffer the loop owns: stored in place unless the buffer
    must grow (then helpers.set_item's new buffer)."""
    n = buffer.shape[0]
    if i < 0:
        raise IndexError("TensorArray index is negative")
    if limit >= 0 and i >= limit:
        raise IndexError("Tried to write to an index past a non-resizeable TensorArray's size")
    if i >= n or buffer.size == 0 or buffer.shape[1:] != value.shape:
        if buffer.size and buffer.shape[1:] != value.shape:
            raise ValueError("TensorArray: cannot write an element of another shape")
        grown = np.zeros((max(n, i + 1),) + value.shape, value.dtype)
        if buffer.size:
            grown[:n] = buffer
        grown[i] = value
        return grown
    buffer[i] = value
    return buffer


@numba.njit(**_OPTIONS)
def set_item_scalar_in_place(buffer, i, value, limit):
    """set_item_in_place for a rank-0 element (a numba scalar)."""
    n = buffer.shape[0]
    if i < 0:
        raise IndexError("TensorArray index is negative")
    if limit >= 0 and i >= limit:
        raise IndexError("Tried to write to an index past a non-resizeable TensorArray's size")
    if i >= n:
        grown = np.zeros(i + 1, buffer.dtype)
        grown[:n] = buffer
        grown[i] = value
        return grown
    buffer[i] = value
    return buffer
