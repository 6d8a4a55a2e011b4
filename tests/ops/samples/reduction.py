"""Samples of the ops in kilnflow/ops/reduction.py (see tests/ops/samples/__init__.py)."""
from typing import Any, Callable


import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, bools, ints, rand


def _reduction_reference(fn: Callable, axis: Any, keepdims: bool) -> Callable:
    def reference(x: np.ndarray) -> np.ndarray:
        return np.asarray(fn(x, axis=axis, keepdims=keepdims)).astype(x.dtype)
    return reference


_REDUCTIONS = [("Sum", kf.reduce_sum, np.sum), ("Mean", kf.reduce_mean, np.mean),
               ("Max", kf.reduce_max, np.max), ("Min", kf.reduce_min, np.min),
               ("Prod", kf.reduce_prod, np.prod)]


_AXES = [(None, False, "all"), (1, False, "axis1"), (-1, True, "last_keepdims"),
         ((0, 2), False, "two_axes"), ((0, 1, 2), True, "every_axis_keepdims")]


for _op, _fn, _ref in _REDUCTIONS:
    for _axis, _keep, _name in _AXES:
        add(_op, lambda x, f=_fn, a=_axis, k=_keep: f(x, axis=a, keepdims=k),
             (rand(2, 3, 2),), _reduction_reference(_ref, _axis, _keep), differentiable=True,
             name=_name)
    add(_op, lambda x, f=_fn: f(x, 0), (ints(3, 2, low=1, high=4),),
         _reduction_reference(_ref, 0, False), name="int32")


add("Mean", lambda x: kf.reduce_mean(x), (ints(7, low=0, high=9),),
     lambda x: np.asarray(np.mean(x)).astype(np.int32), name="int_mean_truncates")


add("Sum", lambda x: kf.reduce_sum(x, axis=kf.constant(1)), (rand(2, 3),),
     lambda x: np.sum(x, axis=1), differentiable=True, name="tensor_axis")


add("Any", lambda x: kf.reduce_any(x, axis=1), (bools(3, 4),),
     lambda x: np.any(x, axis=1))


add("Any", lambda x: kf.reduce_any(x), (np.zeros(3, bool),), np.any, name="all_false")


add("All", lambda x: kf.reduce_all(x, axis=0, keepdims=True), (bools(3, 4),),
     lambda x: np.all(x, axis=0, keepdims=True))


add("ArgMax", lambda x: kf.argmax(x, 1), (rand(3, 4),), lambda x: np.argmax(x, 1))


add("ArgMax", lambda x: kf.argmax(x, output_type=kf.int32), (ints(4, 2),),
     lambda x: np.argmax(x, 0).astype(np.int32), name="int32")


add("ArgMin", lambda x: kf.argmin(x, -1), (rand(2, 3, 4),), lambda x: np.argmin(x, -1))


add("Cumsum", lambda x: kf.cumsum(x, 1), (rand(2, 4),), lambda x: np.cumsum(x, 1),
     differentiable=True)


def _cumsum_exclusive_reverse(x: np.ndarray) -> np.ndarray:
    flipped = np.flip(x, 0)
    out = np.cumsum(flipped, 0) - flipped
    return np.flip(out, 0)


add("Cumsum", lambda x: kf.cumsum(x, 0, exclusive=True, reverse=True), (rand(4, 2),),
     _cumsum_exclusive_reverse, differentiable=True, name="exclusive_reverse")


add("Cumsum", lambda x: kf.cumsum(x, -1, exclusive=True), (ints(2, 3),),
     lambda x: (np.cumsum(x, -1) - x).astype(np.int32), name="int32")


ERRORS.extend([
    ErrorSample("Sum", lambda x: kf.reduce_sum(x, axis=2), (rand(2, 3),),
                errors.InvalidArgumentError, ("Sum", "2"), name="axis_out_of_range"),
    ErrorSample("Max", lambda x: kf.reduce_max(x, axis=-3), (rand(2, 3),),
                errors.InvalidArgumentError, ("Max",), name="negative_axis_out_of_range"),
])


add("HistogramFixedWidth", lambda v, r: kf.histogram_fixed_width(v, r, nbins=4),
    (np.array([-1.0, 0.0, 0.6, 1.9, 2.0, 3.5, 7.0]), np.array([0.0, 2.0])),
    lambda v, r: np.array([2, 1, 0, 4], np.int32))
