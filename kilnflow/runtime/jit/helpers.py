"""numba helpers the generated jit modules call: row reductions, softmax, broadcasting.

Generated code brings any reduction to (rows, columns) form with static transposes and
reshapes, then calls a `rows_<kind>` helper, so one loop per kind serves every rank and
axis set. Sums accumulate in float64 (int64 for integers, wrapped back on store, as
NumPy's int32 sums wrap). Imported only by generated modules: it needs numba.
"""
from __future__ import annotations

import math

import numba
import numpy as np
from numba.core import types

from kilnflow.runtime.jit import blas

_OPTIONS = {"cache": True, "error_model": "numpy"}


# ---------------------------------------------------------------- matrix products

def _gemm_type(scalar):
    """cblas_?gemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    with 64-bit integers; pointers are passed as integers (the same in registers)."""
    i32, i64, ptr = types.int32, types.int64, types.intp
    return types.void(i32, i32, i32, i64, i64, i64, scalar, ptr, i64, ptr, i64, scalar, ptr, i64)


blas.register()  # before anything calling these is compiled or loaded from the disk cache
_SGEMM = types.ExternalFunction("kf_cblas_sgemm", _gemm_type(types.float32))
_DGEMM = types.ExternalFunction("kf_cblas_dgemm", _gemm_type(types.float64))
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


@numba.njit(**_OPTIONS)
def _product_shape(a, b, ta, tb):
    m, k = (a.shape[1], a.shape[0]) if ta else (a.shape[0], a.shape[1])
    k2, n = (b.shape[1], b.shape[0]) if tb else (b.shape[0], b.shape[1])
    if k != k2:
        raise ValueError("MatMul: Matrix size-incompatible (the inner dimensions differ)")
    return m, n, k


@numba.njit(**_OPTIONS)
def matmul_f32(a, b, ta, tb):
    """`a @ b` (a.T with ta, b.T with tb) of C-contiguous float32 matrices, through
    NumPy's cblas_sgemm (blas.py: only generated where `blas.available()`)."""
    m, n, k = _product_shape(a, b, ta, tb)
    out = np.empty((m, n), np.float32)
    if m and n:
        if k:
            _SGEMM(_ROW_MAJOR, _TRANS if ta else _NO_TRANS, _TRANS if tb else _NO_TRANS,
                   m, n, k, np.float32(1.0), a.ctypes.data, a.shape[1], b.ctypes.data,
                   b.shape[1], np.float32(0.0), out.ctypes.data, n)
        else:
            out[:] = 0
    return out


@numba.njit(**_OPTIONS)
def matmul_f64(a, b, ta, tb):
    """matmul_f32 for float64 (cblas_dgemm)."""
    m, n, k = _product_shape(a, b, ta, tb)
    out = np.empty((m, n), np.float64)
    if m and n:
        if k:
            _DGEMM(_ROW_MAJOR, _TRANS if ta else _NO_TRANS, _TRANS if tb else _NO_TRANS,
                   m, n, k, 1.0, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1], 0.0,
                   out.ctypes.data, n)
        else:
            out[:] = 0
    return out


@numba.njit(**_OPTIONS)
def _update_shape(a, b, ta, tb, c):
    m, n, k = _product_shape(a, b, ta, tb)
    if c.shape[0] != m or c.shape[1] != n:
        raise ValueError("AssignSubVariableOp: the product's shape differs from the variable's")
    return m, n, k


@numba.njit(**_OPTIONS)
def gemm_update_f32(a, b, ta, tb, alpha, c):
    """c += alpha * a @ b (transposed as flagged) in place: one cblas_sgemm with beta 1
    writing into c (a variable's C-contiguous array), rounded once where the separate
    product, scaling and update round three times."""
    m, n, k = _update_shape(a, b, ta, tb, c)
    if m and n and k:
        _SGEMM(_ROW_MAJOR, _TRANS if ta else _NO_TRANS, _TRANS if tb else _NO_TRANS,
               m, n, k, alpha, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1],
               np.float32(1.0), c.ctypes.data, n)


@numba.njit(**_OPTIONS)
def gemm_update_f64(a, b, ta, tb, alpha, c):
    """gemm_update_f32 for float64 (cblas_dgemm)."""
    m, n, k = _update_shape(a, b, ta, tb, c)
    if m and n and k:
        _DGEMM(_ROW_MAJOR, _TRANS if ta else _NO_TRANS, _TRANS if tb else _NO_TRANS,
               m, n, k, alpha, a.ctypes.data, a.shape[1], b.ctypes.data, b.shape[1], 1.0,
               c.ctypes.data, n)


@numba.njit(**_OPTIONS)
def bias_add(c, bias, relu, zero):
    """c += bias along the columns, then max(c, 0) with `relu`, in place over a GEMM's
    fresh output: the separate add's and max's roundings, without their arrays."""
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            t = c[i, j] + bias[j]
            c[i, j] = np.maximum(t, zero) if relu else t


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
def columns_sum(m):
    """Sums over the rows of a C-contiguous matrix, walking memory in order."""
    out = np.zeros(m.shape[1], m.dtype)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            out[j] += m[i, j]
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


# tanh for float32 as x * P(x^2) / Q(x^2) on [-9, 9] (beyond, tanh is +-1 in float32): a
# rational fit made for kilnflow (weighted least squares on relative error, iterated), max
# relative error 3.6e-7 in float32 against float64 tanh. Unlike libm's tanhf it has no call
# and no branch, so a fused loop calling it vectorizes. `contract` lets LLVM fuse its
# multiply-adds (FMA: fewer instructions, one rounding each); the flag is per instruction,
# so the ops around an inlined call keep their separate roundings. GELU on 16M float32 at
# one thread: 8.1 -> 6.6 ms, against a 3.6 ms copy (the loop is compute-bound).


@numba.njit(fastmath={"contract"}, **_OPTIONS)
def tanh_f32(x):
    x = min(max(x, np.float32(-9.0)), np.float32(9.0))
    z = x * x
    p = np.float32(-8.661366918736379e-14)
    p = p * z + np.float32(5.347353840623249e-11)
    p = p * z + np.float32(-2.0373850363459435e-08)
    p = p * z + np.float32(1.1191908378774874e-05)
    p = p * z + np.float32(0.0031076122919273005)
    p = p * z + np.float32(0.1308730368384849)
    p = p * z + np.float32(0.9999999966844682)
    q = np.float32(0.0002551431653621463)
    q = q * z + np.float32(0.024509800945651947)
    q = q * z + np.float32(0.46420632292301667)
    q = q * z + np.float32(1.0)
    r = x * p / q
    return min(max(r, np.float32(-1.0)), np.float32(1.0))


@numba.njit(**_OPTIONS)
def erf(x):
    """erf elementwise through numba's math.erf, in float64 as the Python kernel computes it,
    stored in x's dtype."""
    flat = np.ascontiguousarray(x).ravel()
    out = np.empty(flat.size, x.dtype)
    for i in range(flat.size):
        out[i] = math.erf(np.float64(flat[i]))
    return out.reshape(x.shape)


@numba.njit(**_OPTIONS)
def erf_scalar(x):
    return math.erf(np.float64(x))


# ---------------------------------------------------------------- indexing (indexing.py)

@numba.njit(**_OPTIONS)
def checked_index(i, n):
    """`i` as an index into a dimension of size n, negative from the end as in Python;
    compiled code has no bounds checks, so a bad index raises here instead of reading
    memory outside the array."""
    if i < -n or i >= n:
        raise IndexError("slice index out of bounds for the dimension it indexes")
    return i + n if i < 0 else i


@numba.njit(**_OPTIONS)
def gather(cube, idx):
    """cube (outer, n, inner) -> (outer, idx.size, inner): GatherV2 along n. TF rejects
    indices outside [0, n) (no wrapping)."""
    outer, n, inner = cube.shape
    out = np.empty((outer, idx.size, inner), cube.dtype)
    for j in range(idx.size):
        k = idx[j]
        if k < 0 or k >= n:
            raise IndexError("gather: an index is not in [0, params.shape[axis])")
        out[:, j, :] = cube[:, k, :]
    return out


@numba.njit(**_OPTIONS)
def gather_grad(slices, idx, n):
    """GatherV2's gradient: (outer, idx.size, inner) slices added into zeros (outer, n,
    inner) at their indices (repeats accumulate)."""
    outer, count, inner = slices.shape
    out = np.zeros((outer, n, inner), slices.dtype)
    for j in range(count):
        k = idx[j]
        if k < 0 or k >= n:
            raise IndexError("gather: an index is not in [0, params.shape[axis])")
        out[:, k, :] += slices[:, j, :]
    return out


@numba.njit(**_OPTIONS)
def check_write_index(i, limit):
    """A TensorArray write's index: not negative, and below a fixed-size array's size
    (limit < 0: the array may grow)."""
    if i < 0:
        raise IndexError("TensorArray index is negative")
    if limit >= 0 and i >= limit:
        raise IndexError("Tried to write to an index past a non-resizeable TensorArray's size")


@numba.njit(**_OPTIONS)
def set_item(buffer, i, value, limit):
    """TensorArray.write (TensorListSetItem): a new buffer with row i = value, grown as the
    Python kernel grows it (values are immutable, so the buffer is copied); limit < 0: none."""
    n = buffer.shape[0]
    check_write_index(i, limit)
    if buffer.size == 0 or buffer.shape[1:] != value.shape:
        if buffer.size and buffer.shape[1:] != value.shape:
            raise ValueError("TensorArray: cannot write an element of another shape")
        grown = np.zeros((max(n, i + 1),) + value.shape, value.dtype)
        if buffer.size:
            grown[:n] = buffer
    elif i >= n:
        grown = np.zeros((i + 1,) + value.shape, value.dtype)
        grown[:n] = buffer
    else:
        grown = buffer.copy()
    grown[i] = value
    return grown


@numba.njit(**_OPTIONS)
def set_item_scalar(buffer, i, value, limit):
    """set_item for a rank-0 element (a numba scalar)."""
    n = buffer.shape[0]
    check_write_index(i, limit)
    grown = np.zeros(max(n, i + 1), buffer.dtype)
    grown[:n] = buffer
    grown[i] = value
    return grown


@numba.njit(**_OPTIONS)
def scaled_update(var, s, g, subtract):
    """var -= s * g (or +=) in place, one pass: each product rounded to var's dtype
    before the update, as the separate Mul and AssignSub give."""
    if var.flags.c_contiguous and g.flags.c_contiguous and var.shape == g.shape:
        v = var.reshape(var.size)
        f = g.reshape(g.size)
        if subtract:
            for i in range(v.size):
                v[i] = v[i] - s * f[i]
        else:
            for i in range(v.size):
                v[i] = v[i] + s * f[i]
    elif subtract:
        np.subtract(var, s * g, var)
    else:
        np.add(var, s * g, var)
