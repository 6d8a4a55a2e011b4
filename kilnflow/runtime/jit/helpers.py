"""numba helpers the generated jit modules call: row reductions, softmax, broadcasting.

Generated code brings any reduction to (rows, columns) form with static transposes and
reshapes, then calls a `rows_<kind>` helper, so one loop per kind serves every rank and
axis set. Sums accumulate in float64 (int64 for integers, wrapped back on store, as
NumPy's int32 sums wrap). Imported only by generated modules: it needs numba.
"""
from __future__ import annotations

import numba
import numpy as np

_OPTIONS = {"cache": True, "error_model": "numpy"}


@numba.njit(**_OPTIONS)
def flat(a, shape):
    """`a` broadcast to `shape` (same rank), C-contiguous and flat."""
    if a.shape != shape:
        return np.ascontiguousarray(np.broadcast_to(a, shape)).ravel()
    return np.ascontiguousarray(a).ravel()


@numba.njit(**_OPTIONS)
def flat_broadcast(a, shape):
    """`a` of a lower rank broadcast to `shape`, C-contiguous and flat."""
    return np.ascontiguousarray(np.broadcast_to(a, shape)).ravel()


@numba.njit(**_OPTIONS)
def rows_sum(m):
    out = np.empty(m.shape[0], m.dtype)
    for i in range(m.shape[0]):
        acc = 0
        for j in range(m.shape[1]):
            acc += m[i, j]
        out[i] = acc
    return out


@numba.njit(**_OPTIONS)
def rows_mean(m):
    """The row means in float64 (the caller casts: integer means truncate, as TF's)."""
    out = np.empty(m.shape[0], np.float64)
    for i in range(m.shape[0]):
        acc = 0
        for j in range(m.shape[1]):
            acc += m[i, j]
        out[i] = acc / m.shape[1] if m.shape[1] else np.nan
    return out


@numba.njit(**_OPTIONS)
def rows_prod(m):
    out = np.empty(m.shape[0], m.dtype)
    for i in range(m.shape[0]):
        acc = 1
        for j in range(m.shape[1]):
            acc *= m[i, j]
        out[i] = acc
    return out


@numba.njit(**_OPTIONS)
def rows_max(m):
    out = np.empty(m.shape[0], m.dtype)
    if m.shape[1] == 0:
        raise ValueError("Max of an empty dimension")
    for i in range(m.shape[0]):
        acc = m[i, 0]
        for j in range(1, m.shape[1]):
            v = m[i, j]
            if v > acc or v != v:  # NaN wins, as in NumPy and TF
                acc = v
            if acc != acc:
                break
        out[i] = acc
    return out


@numba.njit(**_OPTIONS)
def rows_min(m):
    out = np.empty(m.shape[0], m.dtype)
    if m.shape[1] == 0:
        raise ValueError("Min of an empty dimension")
    for i in range(m.shape[0]):
        acc = m[i, 0]
        for j in range(1, m.shape[1]):
            v = m[i, j]
            if v < acc or v != v:
                acc = v
            if acc != acc:
                break
        out[i] = acc
    return out


@numba.njit(**_OPTIONS)
def rows_any(m):
    out = np.zeros(m.shape[0], np.bool_)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if m[i, j]:
                out[i] = True
                break
    return out


@numba.njit(**_OPTIONS)
def rows_all(m):
    out = np.ones(m.shape[0], np.bool_)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if not m[i, j]:
                out[i] = False
                break
    return out


@numba.njit(**_OPTIONS)
def softmax_rows(m):
    """Softmax over the last axis of a C-contiguous (rows, columns) matrix."""
    out = np.empty_like(m)
    for i in range(m.shape[0]):
        top = m[i, 0]
        for j in range(1, m.shape[1]):
            top = max(top, m[i, j])
        total = 0.0
        for j in range(m.shape[1]):
            e = np.exp(m[i, j] - top)
            out[i, j] = e
            total += e
        for j in range(m.shape[1]):
            out[i, j] = out[i, j] / total
    return out


@numba.njit(**_OPTIONS)
def sparse_softmax_cross_entropy(logits, labels):
    """(loss per row, its gradient wrt the logits) for int labels, as TF's kernel."""
    rows, classes = logits.shape
    loss = np.empty(rows, logits.dtype)
    grad = np.empty_like(logits)
    for i in range(rows):
        label = labels[i]
        if label < 0 or label >= classes:
            raise ValueError("SparseSoftmaxCrossEntropyWithLogits: a label is out of range")
        top = logits[i, 0]
        for j in range(1, classes):
            top = max(top, logits[i, j])
        total = 0.0
        for j in range(classes):
            e = np.exp(logits[i, j] - top)
            grad[i, j] = e
            total += e
        for j in range(classes):
            grad[i, j] = grad[i, j] / total
        loss[i] = np.log(total) - (logits[i, label] - top)
        grad[i, label] -= 1
    return loss, grad
