"""Samples of the ops in kilnflow/ops/math.py (see tests/ops/samples/__init__.py)."""

import math as _pymath

import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, bools, ints, nonzero_ints, pos, rand


_BINARY = [  # op, public function, NumPy reference, differentiable
    ("AddV2", kf.add, np.add, True),
    ("Sub", kf.subtract, np.subtract, True),
    ("Mul", kf.multiply, np.multiply, True),
    ("Maximum", kf.maximum, np.maximum, True),
    ("Minimum", kf.minimum, np.minimum, True),
    ("SquaredDifference", kf.squared_difference, lambda x, y: np.square(x - y), True),
]


for _op, _fn, _ref, _diff in _BINARY:
    add(_op, lambda x, y, f=_fn: f(x, y), (rand(2, 3), rand(2, 3)), _ref,
         differentiable=_diff, name="same_shape")
    add(_op, lambda x, y, f=_fn: f(x, y), (rand(2, 1, 3), rand(4, 1)), _ref,
         differentiable=_diff, name="broadcast")
    add(_op, lambda x, y, f=_fn: f(x, y), (ints(2, 3), ints(3)), _ref, name="int32")


add("AddV2", lambda x: x + 2.5, (rand(3),), lambda x: x + 2.5, differentiable=True,
     name="python_scalar")


add("AddV2", lambda x, y: x + y, (ints(2, 2, dtype=np.int64), ints(2, dtype=np.int64)),
     np.add, name="operator_int64")


add("AddV2", lambda x, y: x + y,
    (np.array([b"x", b"y"], dtype=object), np.array([b"1", b"2"], dtype=object)),
    lambda x, y: np.array([b"x1", b"y2"], dtype=object), name="string_concat")


add("Mul", lambda x: 3 * x, (ints(4, dtype=np.uint8, low=0),), lambda x: 3 * x,
     name="uint8_rmul")


add("Maximum", lambda x: kf.clip_by_value(x, -0.5, 0.5), (rand(2, 4),),
     lambda x: np.clip(x, -0.5, 0.5), differentiable=True, name="clip")


add("RealDiv", lambda x, y: x / y, (rand(2, 3), rand(3)), np.true_divide,
     differentiable=True)


add("RealDiv", kf.divide, (ints(2, 3), nonzero_ints(2, 3)), np.true_divide, name="int32")


add("RealDiv", lambda x, y: kf.truediv(x, y), (rand(2, 1).astype(np.float32),
                                                rand(3).astype(np.float32)),
     np.true_divide, differentiable=True, name="float32")


add("FloorDiv", lambda x, y: x // y, (ints(2, 3), nonzero_ints(3)), np.floor_divide)


add("FloorDiv", kf.floordiv, (rand(2, 3) * 5, rand(2, 3)), np.floor_divide, name="float")


add("FloorMod", lambda x, y: x % y, (ints(2, 3), nonzero_ints(2, 3)), np.mod)


add("FloorMod", kf.floormod, (rand(3, 2) * 5, pos(2)), np.mod, differentiable=True,
     name="float")


add("Pow", kf.pow, (pos(2, 3), rand(2, 3)), np.power, differentiable=True)


add("Pow", lambda x: x ** 3.0, (rand(2, 3),), lambda x: x ** 3.0, differentiable=True,
     name="negative_base")


add("Pow", lambda x, y: x ** y, (ints(2, 3), ints(3, low=0, high=4)), np.power,
     name="int32")


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(_pymath.erf, otypes=[x.dtype])(x)


_UNARY = [  # op, public function, NumPy reference, input maker, differentiable
    ("Neg", kf.negative, np.negative, rand, True),
    ("Abs", kf.abs, np.abs, rand, True),
    ("Sign", kf.sign, np.sign, rand, True),
    ("Square", kf.square, np.square, rand, True),
    ("Sqrt", kf.sqrt, np.sqrt, pos, True),
    ("Rsqrt", kf.math.rsqrt, lambda x: 1 / np.sqrt(x), pos, True),
    ("Exp", kf.exp, np.exp, rand, True),
    ("Log", kf.math.log, np.log, pos, True),
    ("Log1p", kf.math.log1p, np.log1p, pos, True),
    ("Expm1", kf.math.expm1, np.expm1, rand, True),
    ("Sin", kf.sin, np.sin, rand, True),
    ("Cos", kf.cos, np.cos, rand, True),
    ("Tanh", kf.tanh, np.tanh, rand, True),
    ("Sigmoid", kf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), rand, True),
    ("Erf", kf.math.erf, _erf, rand, True),
    ("Reciprocal", kf.math.reciprocal, np.reciprocal, rand, True),
    ("Floor", kf.floor, np.floor, lambda *s: rand(*s) * 3, False),
    ("Ceil", kf.math.ceil, np.ceil, lambda *s: rand(*s) * 3, False),
]


for _op, _fn, _ref, _make, _diff in _UNARY:
    add(_op, lambda x, f=_fn: f(x), (_make(2, 3),), _ref, differentiable=_diff)
    add(_op, lambda x, f=_fn: f(x), (_make(4).astype(np.float32),), _ref, name="float32",
         differentiable=_diff, rtol=2e-6)


for _op, _fn, _ref in [("Neg", kf.negative, np.negative), ("Abs", kf.abs, np.abs),
                       ("Sign", kf.sign, np.sign), ("Square", kf.square, np.square)]:
    add(_op, lambda x, f=_fn: f(x), (ints(2, 3),), _ref, name="int32")


add("Neg", lambda x: -x, (rand(3),), np.negative, differentiable=True, name="operator")


add("Abs", lambda x: abs(x), (ints(3, dtype=np.int64),), np.abs, name="operator")


add("Round", kf.round, (np.array([0.5, 1.5, 2.5, -0.5, -1.7, 1.2]),), np.round)


add("Round", kf.round, (ints(4),), np.round, name="int32")


_COMPARISONS = [("Less", kf.less, np.less), ("LessEqual", kf.less_equal, np.less_equal),
                ("Greater", kf.greater, np.greater),
                ("GreaterEqual", kf.greater_equal, np.greater_equal),
                ("Equal", kf.equal, np.equal), ("NotEqual", kf.not_equal, np.not_equal)]


for _op, _fn, _ref in _COMPARISONS:
    add(_op, lambda x, y, f=_fn: f(x, y), (ints(2, 3, low=-2, high=2), ints(3, low=-2, high=2)),
         _ref)
    add(_op, lambda x, y, f=_fn: f(x, y), (rand(2, 1), rand(3)), _ref, name="float")


add("Less", lambda x: x < 0.5, (rand(2, 3),), lambda x: x < 0.5, name="operator")


add("Equal", lambda x, y: x == y, (ints(3, low=0, high=2), ints(3, low=0, high=2)),
     np.equal, name="operator")


add("NotEqual", lambda x, y: x != y, (bools(2, 2), bools(2)), np.not_equal, name="bool")


add("LogicalAnd", kf.logical_and, (bools(2, 3), bools(3)), np.logical_and)


add("LogicalAnd", lambda x, y: x & y, (bools(4), bools(4)), np.logical_and,
     name="operator")


add("LogicalOr", kf.logical_or, (bools(2, 3), bools(2, 1)), np.logical_or)


add("LogicalOr", lambda x, y: x | y, (bools(4), bools(4)), np.logical_or, name="operator")


add("LogicalAnd", kf.logical_xor, (bools(2, 3), bools(2, 3)), np.logical_xor, name="xor")


add("LogicalNot", kf.logical_not, (bools(2, 3),), np.logical_not)


add("LogicalNot", lambda x: ~x, (bools(4),), np.logical_not, name="operator")


add("Cast", lambda x: kf.cast(x, kf.int32), (np.array([1.7, -1.7, 0.2, -3.0]),),
     lambda x: x.astype(np.int32), name="float_to_int")


add("Cast", lambda x: kf.cast(x, kf.float64), (ints(2, 3),), lambda x: x.astype(np.float64),
     name="int_to_float")


add("Cast", lambda x: kf.cast(x, "bool"), (ints(5, low=0, high=2),),
     lambda x: x.astype(bool), name="int_to_bool")


# A float32 round trip: differentiable, but float32 rounding needs a coarse step.
add("Cast", lambda x: kf.cast(kf.cast(x, kf.float32), kf.float64), (rand(2, 3),),
     lambda x: x.astype(np.float32).astype(np.float64), differentiable=True,
     name="float_round_trip", eps=1e-2, rtol=1e-4, atol=1e-6)


add("AddN", lambda x, y, z: kf.add_n([x, y, z]), (rand(2, 3), rand(2, 3), rand(2, 3)),
     lambda x, y, z: x + y + z, differentiable=True)


add("AddN", lambda x, y: kf.add_n([x, y]), (ints(4), ints(4)), np.add, name="int32")


ERRORS.extend([
    ErrorSample("AddV2", kf.add, (ints(2), np.ones(2, np.float32)),
                errors.InvalidArgumentError, ("AddV2", "int32", "float32"),
                name="int32_plus_float32"),
    ErrorSample("AddV2", lambda x, y: x + y, (np.ones(2, np.float64), np.ones(2, np.float32)),
                errors.InvalidArgumentError, ("AddV2", "float64", "float32"),
                name="operator_float64_plus_float32"),
    ErrorSample("AddV2", lambda x: x + 1.5, (ints(2),), TypeError, ("1.5", "int32"),
                name="int_plus_python_float"),
    ErrorSample("Mul", kf.multiply, (ints(2, 3), ints(2, 2)), errors.InvalidArgumentError,
                ("Mul",), name="incompatible_shapes"),
    ErrorSample("Sqrt", kf.sqrt, (ints(3),), errors.InvalidArgumentError, ("Sqrt", "int32"),
                name="int32"),
    ErrorSample("Exp", kf.exp, (bools(3),), errors.InvalidArgumentError, ("Exp", "bool"),
                name="bool"),
    ErrorSample("LogicalAnd", kf.logical_and, (ints(2), ints(2)),
                errors.InvalidArgumentError, ("LogicalAnd", "int32"), name="int32"),
    ErrorSample("FloorDiv", kf.floordiv, (ints(2), np.zeros(2, np.int32)),
                errors.InvalidArgumentError, ("FloorDiv",), name="integer_division_by_zero"),
])


_SPECIAL = np.array([1.0, -np.inf, np.nan, np.inf, 0.0, -2.5])
add("IsNan", kf.math.is_nan, (_SPECIAL,), np.isnan)
add("IsInf", kf.math.is_inf, (_SPECIAL.astype(np.float32),), np.isinf)
add("IsFinite", kf.math.is_finite, (_SPECIAL,), np.isfinite)
