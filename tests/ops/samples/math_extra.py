"""Samples of the ops in kilnflow/ops/math_extra.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32, ints, pos, rand

M = kf.math


def _scan(x, axis, exclusive, reverse, accumulate, identity):
    if reverse:
        x = np.flip(x, axis)
    out = accumulate(x, axis=axis)
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full_like(out[:1], identity), out[:-1]])
        out = np.moveaxis(out, 0, axis)
    return np.flip(out, axis) if reverse else out


add("Cumprod", M.cumprod, (pos(2, 4),), lambda x: np.cumprod(x, 0), differentiable=True)
add("Cumprod", lambda x: M.cumprod(x, axis=1, exclusive=True, reverse=True), (pos(2, 4),),
    lambda x: _scan(x, 1, True, True, np.multiply.accumulate, 1), differentiable=True,
    name="exclusive_reverse")
add("Cumprod", M.cumprod, (ints(5),), lambda x: np.cumprod(x).astype(np.int32), name="int32")
add("CumulativeLogsumexp", lambda x: M.cumulative_logsumexp(x, axis=1), (rand(2, 4) * 3,),
    lambda x: np.logaddexp.accumulate(x, axis=1), differentiable=True)
add("CumulativeLogsumexp", lambda x: M.cumulative_logsumexp(x, reverse=True), (rand(4, 2) * 3,),
    lambda x: _scan(x, 0, False, True, np.logaddexp.accumulate, -np.inf), differentiable=True,
    name="reverse")  # exclusive scans start at -inf: tests/ops/test_math_extra.py
add("DenseBincount", M.bincount, (i32([1, 1, 3, 0, 3, 3]),),
    lambda x: np.bincount(x).astype(np.int32), static_shape=False)
add("DenseBincount", lambda x, w: M.bincount(x, w, minlength=6, maxlength=7),
    (i32([1, 1, 3, 7]), rand(4)), lambda x, w: np.bincount(x[:3], w[:3], 7),
    static_shape=False, name="weights_minlength_maxlength")
add("DenseBincount", lambda x: M.bincount(x, axis=-1, binary_output=True),
    (i32([[1, 1, 2], [0, 0, 0]]),), lambda x: np.array([[0, 1, 1], [1, 0, 0]], np.int32),
    static_shape=False, name="rows_binary")
add("InTopKV2", lambda p, t: M.in_top_k(t, p, 2),
    (np.array([[0.1, 0.5, 0.3], [0.2, 0.2, 0.2], [0.9, 0.8, 0.7]]), i32([2, 0, 2])),
    lambda p, t: np.array([True, True, False]))
add("InvertPermutation", M.invert_permutation, (i32([3, 4, 0, 2, 1]),),
    lambda x: np.argsort(x).astype(np.int32))

# composites: samples of the ops they apply, checked against their NumPy meaning
add("Mean", M.reduce_variance, (rand(3, 4),), lambda x: np.var(x), differentiable=True,
    name="reduce_variance")
add("Sqrt", lambda x: M.reduce_std(x, axis=1, keepdims=True), (rand(3, 4),),
    lambda x: np.std(x, axis=1, keepdims=True), differentiable=True, name="reduce_std")
add("Sqrt", lambda x: M.reduce_euclidean_norm(x, 0), (rand(3, 2),),
    lambda x: np.sqrt(np.sum(x * x, 0)), differentiable=True, name="euclidean_norm")
add("Sum", lambda x: M.count_nonzero(x, 1), (i32([[0, 1, 2], [0, 0, 3]]),),
    lambda x: np.count_nonzero(x, 1).astype(np.int64), name="count_nonzero")
add("Softplus", M.log_sigmoid, (rand(5) * 10,), lambda x: -np.logaddexp(0, -x),
    differentiable=True, name="log_sigmoid")
add("AddV2", lambda c0, c1, x: M.polyval([c0, c1, 2.0], x), (rand(), rand(), rand(3)),
    lambda c0, c1, x: (c0 * x + c1) * x + 2.0, differentiable=True, name="polyval")
add("RealDiv", lambda d: M.unsorted_segment_sqrt_n(d, [0, 0, 2], 3), (rand(3, 2),),
    lambda d: np.stack([(d[0] + d[1]) / np.sqrt(2), np.zeros(2), d[2]]),
    differentiable=True, name="unsorted_segment_sqrt_n")

ERRORS.extend([
    ErrorSample("InvertPermutation", M.invert_permutation, (i32([0, 0, 1]),),
                errors.InvalidArgumentError, ("not a permutation",)),
    ErrorSample("DenseBincount", M.bincount, (i32([1, -1]),), errors.InvalidArgumentError,
                ("non-negative",)),
    ErrorSample("InTopKV2", lambda p, t: M.in_top_k(t, p, 1), (rand(2, 3), i32([0, 3])),
                errors.InvalidArgumentError, ("targets must be in",)),
    ErrorSample("Cumprod", lambda x: M.cumprod(x, axis=2), (rand(2, 2),),
                errors.InvalidArgumentError, ("axis",)),
])
