"""numba helpers for TensorArray code the jit generates (`kf_lists.<name>` in the source).

Imported only by generated modules: it needs numba.
"""
from __future__ import annotations

import numba
import numpy as np

from kilnflow.runtime.jit import helpers

_OPTIONS = {"cache": True, "error_model": "numpy"}


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
    helpers.check_write_index(i, limit)
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
    helpers.check_write_index(i, limit)
    if i >= n:
        grown = np.zeros(i + 1, buffer.dtype)
        grown[:n] = buffer
        grown[i] = value
        return grown
    buffer[i] = value
    return buffer
