"""Samples of the ops in kilnflow/ops/elementwise.py (see tests/ops/samples/__init__.py)."""
import math

import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, ints, pos, rand, rng

M = kf.math


def _inside(*shape):  # (-0.9, 0.9): inside the domains of asin, acos, atanh
    return rng.uniform(-0.9, 0.9, shape)


_UNARY = [  # op, public function, NumPy reference, inputs
    ("Tan", M.tan, np.tan, rand(2, 3)),
    ("Asin", M.asin, np.arcsin, _inside(2, 3)),
    ("Acos", M.acos, np.arccos, _inside(3)),
    ("Atan", M.atan, np.arctan, rand(2, 3) * 3),
    ("Sinh", M.sinh, np.sinh, rand(2, 3)),
    ("Cosh", M.cosh, np.cosh, rand(2, 3)),
    ("Asinh", M.asinh, np.arcsinh, rand(2, 3) * 3),
    ("Acosh", M.acosh, np.arccosh, pos(2, 3) + 1.0),
    ("Atanh", M.atanh, np.arctanh, _inside(4)),
    ("Erfc", M.erfc, np.vectorize(math.erfc), rand(2, 3) * 2),
    ("Softsign", M.softsign, lambda x: x / (1 + np.abs(x)), rand(2, 3) * 3),
]
for _op, _fn, _ref, _x in _UNARY:
    add(_op, lambda x, f=_fn: f(x), (_x,), _ref, differentiable=True, rtol=1e-6)
    add(_op, lambda x, f=_fn: f(x), (_x.astype(np.float32),),
        lambda x, r=_ref: np.asarray(r(x)).astype(np.float32),
        differentiable=True, name="float32", rtol=2e-6, atol=1e-6)

add("Rint", M.rint, (np.array([0.5, 1.5, 2.5, -0.5, -1.7, 3.2]),), np.rint)
add("NextAfter", M.nextafter, (rand(3), rand(3)), np.nextafter)
add("Atan2", M.atan2, (rand(2, 3), rand(3)), np.arctan2, differentiable=True)

_X = rand(5)
_X0 = np.array([0.0, 1.5, -0.7, 0.0, 2.0])  # zeros: TF's rule gives 0, and a 0 gradient in x
_Y = pos(5)
for _op, _fn, _ref in [
        ("Xlogy", M.xlogy, lambda x, y: np.where(x == 0, 0, x * np.log(y))),
        ("Xlog1py", M.xlog1py, lambda x, y: np.where(x == 0, 0, x * np.log1p(y))),
        ("Xdivy", M.xdivy, lambda x, y: np.where(x == 0, 0, x / y))]:
    add(_op, _fn, (_X, _Y), _ref, differentiable=True)
    add(_op, _fn, (_X0, _Y), _ref, differentiable=True, wrt=(1,), name="zero_x")
add("Xlogy", M.xlogy, (np.zeros(2), np.zeros(2)), lambda x, y: np.zeros(2),
    differentiable=True, wrt=(1,), name="zero_zero")

_div_ref = lambda x, y: np.where(y == 0, 0, x / np.where(y == 0, 1, y))  # noqa: E731
add("DivNoNan", M.divide_no_nan, (rand(2, 3), pos(3)), _div_ref, differentiable=True)
add("DivNoNan", M.divide_no_nan, (rand(2, 3), np.array([0.0, 1.5, -0.5])), _div_ref,
    differentiable=True, wrt=(0,), name="zero_y")
add("DivNoNan", M.divide_no_nan, (ints(3), np.array([0, 2, 4], np.int32)), _div_ref,
    name="int32")
add("DivNoNan", M.reciprocal_no_nan, (np.array([0.5, 2.0, -4.0]),), lambda x: 1 / x,
    differentiable=True, name="reciprocal")
add("MulNoNan", M.multiply_no_nan, (rand(3), pos(3)), lambda x, y: x * y, differentiable=True)
add("MulNoNan", M.multiply_no_nan, (rand(3), np.array([0.0, 2.0, -1.0])),
    lambda x, y: np.where(y == 0, 0, x * y), differentiable=True, wrt=(0,), name="zero_y")
add("MulNoNan", M.multiply_no_nan, (np.array([np.inf, np.nan]), np.zeros(2)),
    lambda x, y: np.zeros(2), differentiable=True, wrt=(0,), name="inf_times_zero")

ERRORS.extend([
    ErrorSample("Tan", M.tan, (ints(3),), errors.InvalidArgumentError, ("Tan", "int32")),
    ErrorSample("Atan2", M.atan2, (rand(3), rand(3).astype(np.float32)),
                errors.InvalidArgumentError, ("Atan2",)),
])
