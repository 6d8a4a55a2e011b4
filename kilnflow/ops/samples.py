"""Sample applications of every OpDef: the table behind tests/ops/test_generic.py.

A Sample names an OpDef, builds the public call from tensors (`lambda x, y: kf.add(x, y)`),
and gives small input arrays (float64 where gradients are checked, some broadcasting), a
NumPy reference and whether the call is differentiable. Helper ops that only graphs or
gradient rules reach are applied directly with bind(); control-flow ops, which exist only in
graphs, are marked graph_only. UNSAMPLED lists (with reasons) the stateful and random ops
tested elsewhere; ERRORS lists calls that must raise. Nothing in kilnflow imports this module.
"""
from __future__ import annotations

import importlib
import math as _pymath
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow import graph as _graph  # noqa: F401 - registers Placeholder and NoOp
from kilnflow import ops as _ops
from kilnflow.context import ctx
from kilnflow.ops import array as _array
from kilnflow.ops import sorting as _sorting

from kilnflow import nn as _nn
from kilnflow.ops import nn as _nn_ops  # kf.nn: the ops of kilnflow.ops.nn and .conv
from kilnflow.core.const import Literal
from kilnflow.core.opdef import REGISTRY, bind
from kilnflow.ops import reshaping as _reshaping


def _import_op_families() -> None:
    """Register every family's OpDefs, also those `import kilnflow` does not load yet."""
    for module in pkgutil.iter_modules(_ops.__path__):
        if module.name != "samples":
            importlib.import_module(f"kilnflow.ops.{module.name}")


_import_op_families()


@dataclass(frozen=True)
class Sample:
    """One application of op `op`: `fn(*tensors)` on `inputs` should equal `reference`."""
    op: str
    fn: Callable[..., Any]
    inputs: tuple
    reference: Callable[..., Any]
    differentiable: bool = False
    wrt: Optional[tuple] = None  # input positions to differentiate; None: every float input
    name: str = ""
    rtol: float = 1e-6
    atol: float = 1e-9
    eps: float = 1e-6            # finite-difference step
    static_shape: bool = True    # False: the output shape depends on input values
    graph_only: bool = False     # the op appears only when fn is traced into a graph

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}" if self.name else self.op

    def grad_positions(self) -> tuple:
        if not self.differentiable:
            return ()
        if self.wrt is not None:
            return self.wrt
        return tuple(i for i, a in enumerate(self.inputs) if a.dtype.kind == "f")


@dataclass(frozen=True)
class ErrorSample:
    """A call that must raise `error` with every string of `fragments` in its message."""
    op: str
    fn: Callable[..., Any]
    inputs: tuple
    error: type
    fragments: tuple = field(default_factory=tuple)
    name: str = ""
    known_bug: str = ""  # set while the call does not raise as it must (an xfail)

    @property
    def id(self) -> str:
        return f"{self.op}-{self.name}" if self.name else self.op


class Call:
    __slots__ = ("opdef", "inputs", "attrs", "result")

    def __init__(self, opdef: Any, inputs: tuple, attrs: dict, result: Any):
        self.opdef = opdef
        self.inputs = inputs
        self.attrs = attrs
        self.result = result


class Recorder:
    """Stands among the active tapes and keeps every (opdef, inputs, attrs, result) that
    bind() reports, so tests can see which ops a public call applied and with what attrs."""

    def __init__(self) -> None:
        self.calls: list = []

    def record(self, opdef: Any, inputs: Any, attrs: dict, result: Any) -> None:
        self.calls.append(Call(opdef, tuple(inputs), dict(attrs), result))

    def of(self, op_name: str) -> list:
        return [c for c in self.calls if c.opdef.name == op_name]

    def __enter__(self) -> "Recorder":
        ctx.tapes = ctx.tapes + [self]
        return self

    def __exit__(self, *exc: Any) -> None:
        ctx.tapes = [t for t in ctx.tapes if t is not self]


def recorded_attrs(op_name: str, thunk: Callable[[], Any]) -> dict:
    """The attrs the first application of `op_name` got while `thunk()` ran."""
    with Recorder() as recorder:
        thunk()
    return recorder.of(op_name)[0].attrs


# ---------------------------------------------------------------- inputs

_rng = np.random.default_rng(1234)


def _rand(*shape: int) -> np.ndarray:
    """float64 with |x| in [0.2, 1.5]: away from the kinks of abs, sign, relu, ..."""
    magnitude = _rng.uniform(0.2, 1.5, shape)
    return np.where(_rng.random(shape) < 0.5, -magnitude, magnitude)


def _pos(*shape: int) -> np.ndarray:
    return _rng.uniform(0.5, 2.0, shape)


def _ints(*shape: int, low: int = -5, high: int = 6, dtype: Any = np.int32) -> np.ndarray:
    return _rng.integers(low, high, shape).astype(dtype)


def _nonzero_ints(*shape: int, dtype: Any = np.int32) -> np.ndarray:
    values = _ints(*shape, dtype=dtype)
    return np.where(values == 0, 3, values).astype(dtype)


def _bools(*shape: int) -> np.ndarray:
    return _rng.random(shape) < 0.5


def _i32(values: Any) -> np.ndarray:
    return np.asarray(values, np.int32)


def _direct(op_name: str, **attrs: Any) -> Callable[..., Any]:
    """Apply a helper op the public API reaches only from graphs or gradient rules."""
    return lambda *xs: bind(REGISTRY[op_name], xs, attrs)


SAMPLES: list = []


def _add(op: str, fn: Callable, inputs: tuple, reference: Callable, **options: Any) -> None:
    SAMPLES.append(Sample(op, fn, tuple(np.asarray(a) for a in inputs), reference, **options))


# ---------------------------------------------------------------- math: binary arithmetic

_BINARY = [  # op, public function, NumPy reference, differentiable
    ("AddV2", kf.add, np.add, True),
    ("Sub", kf.subtract, np.subtract, True),
    ("Mul", kf.multiply, np.multiply, True),
    ("Maximum", kf.maximum, np.maximum, True),
    ("Minimum", kf.minimum, np.minimum, True),
    ("SquaredDifference", kf.squared_difference, lambda x, y: np.square(x - y), True),
]
for _op, _fn, _ref, _diff in _BINARY:
    _add(_op, lambda x, y, f=_fn: f(x, y), (_rand(2, 3), _rand(2, 3)), _ref,
         differentiable=_diff, name="same_shape")
    _add(_op, lambda x, y, f=_fn: f(x, y), (_rand(2, 1, 3), _rand(4, 1)), _ref,
         differentiable=_diff, name="broadcast")
    _add(_op, lambda x, y, f=_fn: f(x, y), (_ints(2, 3), _ints(3)), _ref, name="int32")
_add("AddV2", lambda x: x + 2.5, (_rand(3),), lambda x: x + 2.5, differentiable=True,
     name="python_scalar")
_add("AddV2", lambda x, y: x + y, (_ints(2, 2, dtype=np.int64), _ints(2, dtype=np.int64)),
     np.add, name="operator_int64")
_add("Mul", lambda x: 3 * x, (_ints(4, dtype=np.uint8, low=0),), lambda x: 3 * x,
     name="uint8_rmul")
_add("Maximum", lambda x: kf.clip_by_value(x, -0.5, 0.5), (_rand(2, 4),),
     lambda x: np.clip(x, -0.5, 0.5), differentiable=True, name="clip")

_add("RealDiv", lambda x, y: x / y, (_rand(2, 3), _rand(3)), np.true_divide,
     differentiable=True)
_add("RealDiv", kf.divide, (_ints(2, 3), _nonzero_ints(2, 3)), np.true_divide, name="int32")
_add("RealDiv", lambda x, y: kf.truediv(x, y), (_rand(2, 1).astype(np.float32),
                                                _rand(3).astype(np.float32)),
     np.true_divide, differentiable=True, name="float32")
_add("FloorDiv", lambda x, y: x // y, (_ints(2, 3), _nonzero_ints(3)), np.floor_divide)
_add("FloorDiv", kf.floordiv, (_rand(2, 3) * 5, _rand(2, 3)), np.floor_divide, name="float")
_add("FloorMod", lambda x, y: x % y, (_ints(2, 3), _nonzero_ints(2, 3)), np.mod)
_add("FloorMod", kf.floormod, (_rand(3, 2) * 5, _pos(2)), np.mod, differentiable=True,
     name="float")
_add("Pow", kf.pow, (_pos(2, 3), _rand(2, 3)), np.power, differentiable=True)
_add("Pow", lambda x: x ** 3.0, (_rand(2, 3),), lambda x: x ** 3.0, differentiable=True,
     name="negative_base")
_add("Pow", lambda x, y: x ** y, (_ints(2, 3), _ints(3, low=0, high=4)), np.power,
     name="int32")

# ---------------------------------------------------------------- math: unary functions


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(_pymath.erf, otypes=[x.dtype])(x)


_UNARY = [  # op, public function, NumPy reference, input maker, differentiable
    ("Neg", kf.negative, np.negative, _rand, True),
    ("Abs", kf.abs, np.abs, _rand, True),
    ("Sign", kf.sign, np.sign, _rand, True),
    ("Square", kf.square, np.square, _rand, True),
    ("Sqrt", kf.sqrt, np.sqrt, _pos, True),
    ("Rsqrt", kf.math.rsqrt, lambda x: 1 / np.sqrt(x), _pos, True),
    ("Exp", kf.exp, np.exp, _rand, True),
    ("Log", kf.math.log, np.log, _pos, True),
    ("Log1p", kf.math.log1p, np.log1p, _pos, True),
    ("Expm1", kf.math.expm1, np.expm1, _rand, True),
    ("Sin", kf.sin, np.sin, _rand, True),
    ("Cos", kf.cos, np.cos, _rand, True),
    ("Tanh", kf.tanh, np.tanh, _rand, True),
    ("Sigmoid", kf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), _rand, True),
    ("Erf", kf.math.erf, _erf, _rand, True),
    ("Reciprocal", kf.math.reciprocal, np.reciprocal, _rand, True),
    ("Floor", kf.floor, np.floor, lambda *s: _rand(*s) * 3, False),
    ("Ceil", kf.math.ceil, np.ceil, lambda *s: _rand(*s) * 3, False),
]
for _op, _fn, _ref, _make, _diff in _UNARY:
    _add(_op, lambda x, f=_fn: f(x), (_make(2, 3),), _ref, differentiable=_diff)
    _add(_op, lambda x, f=_fn: f(x), (_make(4).astype(np.float32),), _ref, name="float32",
         differentiable=_diff, rtol=2e-6)
for _op, _fn, _ref in [("Neg", kf.negative, np.negative), ("Abs", kf.abs, np.abs),
                       ("Sign", kf.sign, np.sign), ("Square", kf.square, np.square)]:
    _add(_op, lambda x, f=_fn: f(x), (_ints(2, 3),), _ref, name="int32")
_add("Neg", lambda x: -x, (_rand(3),), np.negative, differentiable=True, name="operator")
_add("Abs", lambda x: abs(x), (_ints(3, dtype=np.int64),), np.abs, name="operator")
_add("Round", kf.round, (np.array([0.5, 1.5, 2.5, -0.5, -1.7, 1.2]),), np.round)
_add("Round", kf.round, (_ints(4),), np.round, name="int32")

# ---------------------------------------------------------------- comparisons and logic

_COMPARISONS = [("Less", kf.less, np.less), ("LessEqual", kf.less_equal, np.less_equal),
                ("Greater", kf.greater, np.greater),
                ("GreaterEqual", kf.greater_equal, np.greater_equal),
                ("Equal", kf.equal, np.equal), ("NotEqual", kf.not_equal, np.not_equal)]
for _op, _fn, _ref in _COMPARISONS:
    _add(_op, lambda x, y, f=_fn: f(x, y), (_ints(2, 3, low=-2, high=2), _ints(3, low=-2, high=2)),
         _ref)
    _add(_op, lambda x, y, f=_fn: f(x, y), (_rand(2, 1), _rand(3)), _ref, name="float")
_add("Less", lambda x: x < 0.5, (_rand(2, 3),), lambda x: x < 0.5, name="operator")
_add("Equal", lambda x, y: x == y, (_ints(3, low=0, high=2), _ints(3, low=0, high=2)),
     np.equal, name="operator")
_add("NotEqual", lambda x, y: x != y, (_bools(2, 2), _bools(2)), np.not_equal, name="bool")
_add("LogicalAnd", kf.logical_and, (_bools(2, 3), _bools(3)), np.logical_and)
_add("LogicalAnd", lambda x, y: x & y, (_bools(4), _bools(4)), np.logical_and,
     name="operator")
_add("LogicalOr", kf.logical_or, (_bools(2, 3), _bools(2, 1)), np.logical_or)
_add("LogicalOr", lambda x, y: x | y, (_bools(4), _bools(4)), np.logical_or, name="operator")
_add("LogicalAnd", kf.logical_xor, (_bools(2, 3), _bools(2, 3)), np.logical_xor, name="xor")
_add("LogicalNot", kf.logical_not, (_bools(2, 3),), np.logical_not)
_add("LogicalNot", lambda x: ~x, (_bools(4),), np.logical_not, name="operator")

# ---------------------------------------------------------------- bitwise

_BITWISE = [("BitwiseAnd", kf.bitwise.bitwise_and, np.bitwise_and),
            ("BitwiseOr", kf.bitwise.bitwise_or, np.bitwise_or),
            ("BitwiseXor", kf.bitwise.bitwise_xor, np.bitwise_xor)]
for _op, _fn, _ref in _BITWISE:
    _add(_op, lambda x, y, f=_fn: f(x, y), (_ints(2, 3, low=-8, high=8), _ints(3, low=0, high=8)),
         _ref)
    _add(_op, lambda x, y, f=_fn: f(x, y), (_ints(4, low=0, high=255, dtype=np.uint8),
                                            _ints(4, low=0, high=255, dtype=np.uint8)),
         _ref, name="uint8")
_add("BitwiseAnd", lambda x, y: x & y, (_ints(3), _ints(3)), np.bitwise_and, name="operator")
_add("BitwiseOr", lambda x, y: x | y, (_ints(3), _ints(3)), np.bitwise_or, name="operator")
_add("BitwiseXor", lambda x, y: x ^ y, (_ints(3), _ints(3)), np.bitwise_xor, name="operator")
_add("LeftShift", kf.bitwise.left_shift, (_ints(2, 3), _ints(3, low=0, high=5)), np.left_shift)
_add("RightShift", kf.bitwise.right_shift, (_ints(2, 3, low=-64, high=64),
                                            _ints(3, low=0, high=5)), np.right_shift)
_add("RightShift", kf.bitwise.right_shift, (_ints(3, low=0, high=255, dtype=np.uint8),
                                            _ints(3, low=0, high=8, dtype=np.uint8)),
     np.right_shift, name="uint8")
_add("Invert", kf.bitwise.invert, (_ints(2, 3),), np.invert)
_add("Invert", lambda x: ~x, (_ints(3, low=0, high=255, dtype=np.uint8),), np.invert,
     name="operator_uint8")

# ---------------------------------------------------------------- cast, add_n

_add("Cast", lambda x: kf.cast(x, kf.int32), (np.array([1.7, -1.7, 0.2, -3.0]),),
     lambda x: x.astype(np.int32), name="float_to_int")
_add("Cast", lambda x: kf.cast(x, kf.float64), (_ints(2, 3),), lambda x: x.astype(np.float64),
     name="int_to_float")
_add("Cast", lambda x: kf.cast(x, "bool"), (_ints(5, low=0, high=2),),
     lambda x: x.astype(bool), name="int_to_bool")
# A float32 round trip: differentiable, but float32 rounding needs a coarse step.
_add("Cast", lambda x: kf.cast(kf.cast(x, kf.float32), kf.float64), (_rand(2, 3),),
     lambda x: x.astype(np.float32).astype(np.float64), differentiable=True,
     name="float_round_trip", eps=1e-2, rtol=1e-4, atol=1e-6)
_add("AddN", lambda x, y, z: kf.add_n([x, y, z]), (_rand(2, 3), _rand(2, 3), _rand(2, 3)),
     lambda x, y, z: x + y + z, differentiable=True)
_add("AddN", lambda x, y: kf.add_n([x, y]), (_ints(4), _ints(4)), np.add, name="int32")

# ---------------------------------------------------------------- reductions


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
        _add(_op, lambda x, f=_fn, a=_axis, k=_keep: f(x, axis=a, keepdims=k),
             (_rand(2, 3, 2),), _reduction_reference(_ref, _axis, _keep), differentiable=True,
             name=_name)
    _add(_op, lambda x, f=_fn: f(x, 0), (_ints(3, 2, low=1, high=4),),
         _reduction_reference(_ref, 0, False), name="int32")
_add("Mean", lambda x: kf.reduce_mean(x), (_ints(7, low=0, high=9),),
     lambda x: np.asarray(np.mean(x)).astype(np.int32), name="int_mean_truncates")
_add("Sum", lambda x: kf.reduce_sum(x, axis=kf.constant(1)), (_rand(2, 3),),
     lambda x: np.sum(x, axis=1), differentiable=True, name="tensor_axis")
_add("Any", lambda x: kf.reduce_any(x, axis=1), (_bools(3, 4),),
     lambda x: np.any(x, axis=1))
_add("Any", lambda x: kf.reduce_any(x), (np.zeros(3, bool),), np.any, name="all_false")
_add("All", lambda x: kf.reduce_all(x, axis=0, keepdims=True), (_bools(3, 4),),
     lambda x: np.all(x, axis=0, keepdims=True))
_add("ArgMax", lambda x: kf.argmax(x, 1), (_rand(3, 4),), lambda x: np.argmax(x, 1))
_add("ArgMax", lambda x: kf.argmax(x, output_type=kf.int32), (_ints(4, 2),),
     lambda x: np.argmax(x, 0).astype(np.int32), name="int32")
_add("ArgMin", lambda x: kf.argmin(x, -1), (_rand(2, 3, 4),), lambda x: np.argmin(x, -1))
_add("Cumsum", lambda x: kf.cumsum(x, 1), (_rand(2, 4),), lambda x: np.cumsum(x, 1),
     differentiable=True)


def _cumsum_exclusive_reverse(x: np.ndarray) -> np.ndarray:
    flipped = np.flip(x, 0)
    out = np.cumsum(flipped, 0) - flipped
    return np.flip(out, 0)


_add("Cumsum", lambda x: kf.cumsum(x, 0, exclusive=True, reverse=True), (_rand(4, 2),),
     _cumsum_exclusive_reverse, differentiable=True, name="exclusive_reverse")
_add("Cumsum", lambda x: kf.cumsum(x, -1, exclusive=True), (_ints(2, 3),),
     lambda x: (np.cumsum(x, -1) - x).astype(np.int32), name="int32")

# ---------------------------------------------------------------- matmul, einsum

_add("MatMul", kf.matmul, (_rand(2, 3), _rand(3, 4)), np.matmul, differentiable=True)
_add("MatMul", lambda a, b: a @ b, (_rand(2, 2, 3), _rand(3, 2)), np.matmul,
     differentiable=True, name="batched_broadcast")
_add("MatMul", lambda a, b: kf.matmul(a, b, transpose_a=True), (_rand(3, 2), _rand(3, 4)),
     lambda a, b: a.T @ b, differentiable=True, name="transpose_a")
_add("MatMul", lambda a, b: kf.matmul(a, b, transpose_b=True), (_rand(2, 3), _rand(4, 3)),
     lambda a, b: a @ b.T, differentiable=True, name="transpose_b")
_add("MatMul", lambda a, b: kf.matmul(a, b, transpose_a=True, transpose_b=True),
     (_rand(3, 2), _rand(4, 3)), lambda a, b: a.T @ b.T, differentiable=True,
     name="transpose_both")
_add("MatMul", kf.matmul, (_ints(2, 3), _ints(3, 2)), np.matmul, name="int32")
_add("Einsum", lambda a, b: kf.einsum("ij,jk->ik", a, b), (_rand(2, 3), _rand(3, 4)),
     lambda a, b: np.einsum("ij,jk->ik", a, b), differentiable=True)
_add("Einsum", lambda a, b: kf.einsum("bij,bjk->bik", a, b), (_rand(2, 2, 3), _rand(2, 3, 2)),
     lambda a, b: np.einsum("bij,bjk->bik", a, b), differentiable=True, name="batched")
_add("Einsum", lambda a: kf.einsum("ij->j", a), (_rand(3, 4),), lambda a: a.sum(0),
     differentiable=True, name="sum")
_add("Einsum", lambda a, b: kf.einsum("ij,kj", a, b), (_rand(2, 3), _rand(4, 3)),
     lambda a, b: np.einsum("ij,kj", a, b), differentiable=True, name="implicit_output")
_add("Einsum", lambda a, b: kf.einsum("i,j->ij", a, b), (_rand(3), _rand(2)), np.outer,
     differentiable=True, name="outer")
_add("MatMul", lambda a, b: kf.tensordot(a, b, 1), (_rand(2, 3), _rand(3, 2)),
     lambda a, b: np.tensordot(a, b, 1), differentiable=True, name="tensordot")

# ---------------------------------------------------------------- shape, size, rank, identity

_add("Shape", kf.shape, (_rand(2, 3, 1),), lambda x: np.array(x.shape, np.int32))
_add("Shape", lambda x: kf.shape(x, out_type=kf.int64), (_ints(4),),
     lambda x: np.array(x.shape, np.int64), name="int64")
_add("Size", kf.size, (_rand(2, 3),), lambda x: np.int32(x.size))
_add("Rank", kf.rank, (_rand(2, 3, 1),), lambda x: np.int32(x.ndim))
_add("Identity", kf.identity, (_rand(2, 3),), lambda x: x, differentiable=True)
_add("Identity", kf.identity, (_bools(3),), lambda x: x, name="bool")
_add("StopGradient", kf.stop_gradient, (_rand(2, 3),), lambda x: x)

# ---------------------------------------------------------------- reshaping

_add("Reshape", lambda x: kf.reshape(x, [3, -1]), (_rand(2, 3, 2),),
     lambda x: x.reshape(3, -1), differentiable=True)
_add("Reshape", lambda x: kf.reshape(x, []), (_rand(1, 1),), lambda x: x.reshape(()),
     differentiable=True, name="to_scalar")
_add("Reshape", lambda x: kf.reshape(x, kf.constant([2, 2])), (_ints(4),),
     lambda x: x.reshape(2, 2), name="tensor_shape")
_add("DynamicReshape", _direct("DynamicReshape"), (_rand(2, 3), _i32([3, 2])),
     lambda x, s: x.reshape(s), differentiable=True, wrt=(0,), static_shape=False)
_add("BroadcastTo", lambda x: kf.broadcast_to(x, [2, 3, 4]), (_rand(3, 1),),
     lambda x: np.broadcast_to(x, (2, 3, 4)), differentiable=True)
_add("BroadcastTo", lambda x: kf.broadcast_to(x, [2, 2]), (_ints(2),),
     lambda x: np.broadcast_to(x, (2, 2)), name="int32")
_add("DynamicBroadcastTo", _direct("DynamicBroadcastTo"), (_rand(3), _i32([2, 3])),
     lambda x, s: np.broadcast_to(x, s), differentiable=True, wrt=(0,), static_shape=False)
_add("SumToShape", _direct("SumToShape"), (_rand(2, 3, 4), _i32([3, 1])),
     lambda dy, s: dy.sum(axis=(0, 2)).reshape(3, 1), differentiable=True, wrt=(0,),
     static_shape=False)
_add("ExpandDims", lambda x: kf.expand_dims(x, 0), (_rand(2, 3),), lambda x: x[None],
     differentiable=True)
_add("ExpandDims", lambda x: kf.expand_dims(x, -1), (_rand(2, 3),), lambda x: x[..., None],
     differentiable=True, name="last")
_add("ExpandDims", lambda x: kf.expand_dims(x, 1), (_ints(2, 2),), lambda x: x[:, None],
     name="int32")
_add("Transpose", kf.transpose, (_rand(2, 3),), np.transpose, differentiable=True)
_add("Transpose", lambda x: kf.transpose(x, [1, 2, 0]), (_rand(2, 3, 4),),
     lambda x: np.transpose(x, (1, 2, 0)), differentiable=True, name="perm")

# ---------------------------------------------------------------- filling, constants

_add("Fill", lambda: kf.fill([2, 3], 5.0), (), lambda: np.full((2, 3), 5.0, np.float32))
_add("Fill", lambda: kf.zeros([2, 1]), (), lambda: np.zeros((2, 1), np.float32), name="zeros")
_add("Fill", lambda: kf.ones([3], kf.int32), (), lambda: np.ones(3, np.int32), name="ones")
_add("Fill", lambda x: kf.zeros_like(x), (_rand(2, 3),), np.zeros_like, name="zeros_like")
_add("Fill", lambda x: kf.ones_like(x, dtype=kf.float32), (_ints(2),),
     lambda x: np.ones(2, np.float32), name="ones_like")
_add("DynamicFill", _direct("DynamicFill", value=7, dtype=kf.int64), (_i32([2, 2]),),
     lambda s: np.full(s, 7, np.int64), static_shape=False)
_add("Const", _direct("Const", value=Literal(np.arange(6.0).reshape(2, 3))), (),
     lambda: np.arange(6.0).reshape(2, 3))
_add("Range", lambda: kf.range(0, 10, 3), (), lambda: np.arange(0, 10, 3, dtype=np.int32))
_add("Range", lambda: kf.range(5.0), (), lambda: np.arange(5.0, dtype=np.float32),
     name="float")
_add("Range", lambda: kf.range(7, -1, -2), (), lambda: np.arange(7, -1, -2, dtype=np.int32),
     name="negative_delta")
_add("DynamicRange", _direct("DynamicRange"), (_i32(1), _i32(9), _i32(3)),
     lambda s, l, d: np.arange(s, l, d, dtype=np.int32), static_shape=False)
_add("DynamicRange", _direct("DynamicRange"), (np.float64(0.5), np.float64(2.0),
                                               np.float64(0.5)),
     lambda s, l, d: np.arange(s, l, d), name="float", static_shape=False)

# ---------------------------------------------------------------- selection, joining

_add("SelectV2", kf.where, (_bools(2, 1), _rand(2, 3), _rand(3)), np.where,
     differentiable=True)
_add("SelectV2", lambda c, x: kf.where(c, x, 0), (_bools(3), _ints(3)),
     lambda c, x: np.where(c, x, 0), name="int32_scalar")
_add("Where", kf.where, (_bools(3, 2),), lambda c: np.argwhere(c).astype(np.int64),
     static_shape=False)
_add("Where", kf.where, (_ints(4, low=0, high=2),), lambda c: np.argwhere(c).astype(np.int64),
     name="int32", static_shape=False)
_add("ConcatV2", lambda x, y: kf.concat([x, y], 1), (_rand(2, 3), _rand(2, 1)),
     lambda x, y: np.concatenate([x, y], 1), differentiable=True)
_add("ConcatV2", lambda x, y, z: kf.concat([x, y, z], -1), (_ints(2), _ints(3), _ints(1)),
     lambda x, y, z: np.concatenate([x, y, z], -1), name="int32")
_add("Pack", lambda x, y: kf.stack([x, y], axis=1), (_rand(2, 3), _rand(2, 3)),
     lambda x, y: np.stack([x, y], 1), differentiable=True)
_add("Pack", lambda x, y: kf.stack([x, y]), (_ints(2), _ints(2)),
     lambda x, y: np.stack([x, y]), name="int32")
_add("Pack", lambda x, y: kf.convert_to_tensor([x, y]), (_rand(3), _rand(3)),
     lambda x, y: np.stack([x, y]), differentiable=True, name="list_of_tensors")
_add("Unpack", lambda x: kf.unstack(x, axis=1), (_rand(2, 3),),
     lambda x: list(np.moveaxis(x, 1, 0)), differentiable=True)
_add("SplitV", lambda x: kf.split(x, 2, axis=1), (_rand(3, 4),),
     lambda x: np.split(x, 2, 1), differentiable=True)
_add("SplitV", lambda x: kf.split(x, [1, 2], axis=0), (_rand(3, 2),),
     lambda x: np.split(x, [1], 0), differentiable=True, name="sizes")
_add("SplitV", lambda x: kf.split(x, [2, -1]), (_ints(5),), lambda x: np.split(x, [2]),
     name="inferred_size")

# ---------------------------------------------------------------- slicing, gather

_INDEXING = [  # name, index applied both to the tensor and to the NumPy array
    ("int", lambda x: x[1]),
    ("negative_int", lambda x: x[-1, -2]),
    ("slices_with_steps", lambda x: x[1:, ::2]),
    ("negative_step", lambda x: x[::-1, 2:0:-1]),
    ("ellipsis", lambda x: x[..., 1]),
    ("newaxis", lambda x: x[None, :, None, 0]),
    ("out_of_range_slice", lambda x: x[1:100, -100:2]),
]
for _name, _index in _INDEXING:
    _add("StridedSlice", _index, (_rand(3, 4, 2),), _index, differentiable=True, name=_name)
_add("StridedSlice", lambda x: list(x), (_rand(3, 2),), list, differentiable=True,
     name="iteration")
_add("StridedSlice", lambda x: x[kf.constant(1), 1:], (_ints(3, 4),), lambda x: x[1, 1:],
     name="tensor_index")
_SLICE_SPEC = recorded_attrs("StridedSlice", lambda: kf.zeros([3, 4])[1:, ::-2])["spec"]
_add("StridedSliceGrad", _direct("StridedSliceGrad", spec=_SLICE_SPEC),
     (_rand(2, 2), _i32([3, 4])), lambda dy, s: _scatter_slice(dy, s, (slice(1, None),
                                                                        slice(None, None, -2))),
     differentiable=True, wrt=(0,), static_shape=False)


def _scatter_slice(dy: np.ndarray, shape: Any, index: tuple) -> np.ndarray:
    out = np.zeros(tuple(shape), dy.dtype)
    out[index] = dy
    return out


_add("GatherV2", lambda p, i: kf.gather(p, i), (_rand(4, 2), _i32([3, 0, 3])),
     lambda p, i: np.take(p, i, 0), differentiable=True, wrt=(0,))
_add("GatherV2", lambda p, i: kf.gather(p, i, axis=1), (_rand(2, 3), _i32([[2, 0], [1, 1]])),
     lambda p, i: np.take(p, i, 1), differentiable=True, wrt=(0,), name="axis1_2d_indices")
_add("GatherV2", lambda p, i: kf.gather(p, i), (_ints(5), np.array([4, 0], np.int64)),
     lambda p, i: np.take(p, i), name="int64_indices")


def _gather_grad_reference(dy: np.ndarray, indices: np.ndarray, shape: Any) -> np.ndarray:
    out = np.zeros(tuple(shape), dy.dtype)
    np.add.at(out, indices, dy)
    return out


_add("GatherGrad", _direct("GatherGrad", axis=0), (_rand(3, 2), _i32([1, 0, 1]), _i32([4, 2])),
     _gather_grad_reference, differentiable=True, wrt=(0,), static_shape=False)

# ---------------------------------------------------------------- more array ops

def _linear_vjp(f: Callable, shape: tuple, dy: np.ndarray) -> np.ndarray:
    """The gradient of sum(f(x) * dy) for a linear f, one basis vector at a time."""
    out = np.zeros(shape)
    for i in np.ndindex(shape):
        basis = np.zeros(shape)
        basis[i] = 1.0
        out[i] = np.sum(f(basis) * dy)
    return out


def _scatter_along(updates: np.ndarray, indices: np.ndarray, shape: Any,
                   axis: int) -> np.ndarray:
    out = np.zeros(tuple(shape), updates.dtype)
    for position in np.ndindex(indices.shape):
        target = list(position)
        target[axis] = indices[position]
        out[tuple(target)] += updates[position]
    return out


_add("Squeeze", _reshaping.squeeze, (_rand(1, 3, 1, 2),), np.squeeze, differentiable=True)
_add("Squeeze", lambda x: _reshaping.squeeze(x, axis=[-2]), (_ints(2, 1, 1),),
     lambda x: np.squeeze(x, -2), name="axis")
_add("ConjugateTranspose", lambda x: kf.transpose(x, conjugate=True),
     (_rand(2, 3) + 1j * _rand(2, 3),), lambda x: np.conj(x.T), differentiable=True)
_add("Tile", lambda x: _reshaping.tile(x, [2, 1, 3]), (_rand(2, 1, 2),),
     lambda x: np.tile(x, (2, 1, 3)), differentiable=True)
_add("Tile", lambda x: _reshaping.tile(x, [0, 2]), (_ints(2, 2),), lambda x: np.tile(x, (0, 2)),
     name="zero_multiple")
_add("DynamicTile", _direct("DynamicTile"), (_rand(2, 3), _i32([2, 1])),
     lambda x, m: np.tile(x, m), differentiable=True, wrt=(0,), static_shape=False)
_add("PadV2", lambda x: _reshaping.pad(x, [[1, 0], [2, 1]], constant_values=1.5), (_rand(2, 3),),
     lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=1.5), differentiable=True)
_add("PadV2", lambda x: _reshaping.pad(x, [[0, 2]]), (_ints(3),), lambda x: np.pad(x, (0, 2)),
     name="int32")
for _mode in ("REFLECT", "SYMMETRIC"):
    _add("MirrorPad", lambda x, m=_mode: _reshaping.pad(x, [[1, 2], [2, 0]], m), (_rand(3, 3),),
         lambda x, m=_mode: np.pad(x, ((1, 2), (2, 0)), m.lower()), differentiable=True,
         name=_mode.lower())
_MIRROR_ATTRS = recorded_attrs("MirrorPad", lambda: _reshaping.pad(kf.zeros([3, 4]),
                                                                [[1, 1], [2, 0]], "REFLECT"))
_add("MirrorPadGrad", _direct("MirrorPadGrad", **_MIRROR_ATTRS), (_rand(5, 6),),
     lambda dy: _linear_vjp(lambda x: np.pad(x, ((1, 1), (2, 0)), "reflect"), (3, 4), dy),
     differentiable=True)
_add("ReverseV2", lambda x: _reshaping.reverse(x, [0, -1]), (_rand(2, 3, 2),),
     lambda x: np.flip(x, (0, 2)), differentiable=True)
_add("Eye", lambda: _array.eye(2, 3, dtype=kf.int32), (), lambda: np.eye(2, 3, dtype=np.int32))
_add("Eye", lambda: _array.eye(2, batch_shape=[3]), (),
     lambda: np.broadcast_to(np.eye(2, dtype=np.float32), (3, 2, 2)), name="batch")
_add("LinSpace", lambda a, b: _array.linspace(a, b, 4), (_rand(2), _rand(2)),
     lambda a, b: np.linspace(a, b, 4), differentiable=True)
_add("LinSpace", lambda a, b: _array.linspace(a, b, 3, axis=-1), (_rand(2, 1), _rand(3)),
     lambda a, b: np.linspace(a, b, 3, axis=-1), differentiable=True, name="broadcast_axis")
_add("OneHot", lambda i: _array.one_hot(i, 3), (_i32([0, 2, 5, -1]),),
     lambda i: (i[:, None] == np.arange(3)).astype(np.float32))
_add("OneHot", lambda i: _array.one_hot(i, 2, on_value=5, off_value=-1, axis=0),
     (_i32([[1, 0], [0, 0]]),),
     lambda i: np.where(np.arange(2)[:, None, None] == i, 5, -1).astype(np.int32),
     name="values_axis0")
_add("ArgSort", _sorting.argsort, (_rand(2, 5),), lambda x: np.argsort(x, -1).astype(np.int32))
_add("ArgSort", lambda x: _sorting.argsort(x, axis=0, direction="DESCENDING"),
     (_i32([[3, 1], [3, 2], [1, 2]]),), lambda x: _i32([[0, 1], [1, 2], [2, 0]]),
     name="descending_ties")
_add("TakeAlongAxis", _sorting.sort, (_rand(3, 4),), lambda x: np.sort(x, -1),
     differentiable=True)
_add("TakeAlongAxis", lambda x: _sorting.sort(x, axis=0, direction="DESCENDING"), (_ints(4, 2),),
     lambda x: -np.sort(-x, 0), name="descending")
_add("ScatterAlongAxis", _direct("ScatterAlongAxis", axis=1),
     (_rand(2, 2), _i32([[2, 0], [1, 1]]), _i32([2, 3])),
     lambda u, i, s: _scatter_along(u, i, s, 1), differentiable=True, wrt=(0,),
     static_shape=False)
_add("TopKV2", lambda x: _sorting.top_k(x, k=2), (_rand(3, 4),),
     lambda x: [np.take_along_axis(x, np.argsort(-x, -1)[:, :2], -1),
                np.argsort(-x, -1)[:, :2].astype(np.int32)], differentiable=True)
_add("TopKV2", lambda x: _sorting.top_k(x, k=3), (_i32([1, 5, 3, 5]),),
     lambda x: [_i32([5, 5, 3]), _i32([1, 3, 2])], name="ties")


# ---------------------------------------------------------------- nn: activations, losses

def _softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    shifted = x - x.max(axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis, keepdims=True))


_ACTIVATIONS = [  # op, public function, NumPy reference
    ("Relu", _nn.relu, lambda x: np.maximum(x, 0)),
    ("Relu6", _nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("Elu", _nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    ("Softplus", _nn.softplus, lambda x: np.logaddexp(x, 0)),
    ("LeakyRelu", lambda x: _nn.leaky_relu(x, alpha=0.3), lambda x: np.where(x > 0, x, 0.3 * x)),
    ("Softmax", _nn.softmax, _softmax),
    ("LogSoftmax", _nn.log_softmax, _log_softmax),
]
for _op, _fn, _ref in _ACTIVATIONS:
    _add(_op, lambda x, f=_fn: f(x), (_rand(2, 3) * 4,), _ref, differentiable=True)
    _add(_op, lambda x, f=_fn: f(x), (_rand(4).astype(np.float32) * 4,), _ref,
         differentiable=True, name="float32", rtol=2e-6)
_add("Relu", _nn.relu, (_ints(2, 3),), lambda x: np.maximum(x, 0), name="int32")
_add("ReluGrad", lambda dy, y: _nn_ops.relu_grad(dy, y),
     (_rand(2, 3), _rand(2, 3) * 3), lambda dy, y: np.where(y > 0, dy, 0), differentiable=True,
     wrt=(0,))
_add("Softmax", lambda x: _nn.softmax(x, axis=0), (_rand(3, 2) * 3,),
     lambda x: _softmax(x, 0), differentiable=True, name="axis0")
_add("LogSoftmax", lambda x: _nn.log_softmax(x, axis=1), (_rand(2, 3, 2) * 3,),
     lambda x: _log_softmax(x, 1), differentiable=True, name="middle_axis")
_add("SigmoidCrossEntropyWithLogits",
     lambda z, x: _nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
     (_rng.uniform(0, 1, (2, 3)), _rand(2, 3) * 4),
     lambda z, x: np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))), differentiable=True)
_LABELS = _softmax(_rand(3, 4))
_add("SoftmaxCrossEntropyWithLogits", _nn.softmax_cross_entropy_with_logits,
     (_LABELS, _rand(3, 4) * 3), lambda z, x: -np.sum(z * _log_softmax(x), -1),
     differentiable=True)
_add("SoftmaxCrossEntropyWithLogits",
     lambda z, x: _nn.softmax_cross_entropy_with_logits(z, x, axis=0),
     (_LABELS.T, _rand(4, 3)), lambda z, x: -np.sum(z * _log_softmax(x, 0), 0),
     differentiable=True, name="axis0")
_add("SparseSoftmaxCrossEntropyWithLogits",
     lambda i, x: _nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x),
     (_i32([0, 3, 1]), _rand(3, 4) * 3),
     lambda i, x: -_log_softmax(x)[np.arange(3), i], differentiable=True)
_add("BiasAdd", _nn.bias_add, (_rand(2, 3, 4), _rand(4)), np.add, differentiable=True)
_add("BiasAdd", _nn.bias_add, (_ints(2, 3), _ints(3)), np.add, name="int32")

# ---------------------------------------------------------------- nn: convolution, pooling


def _pair(value: Any) -> tuple:
    return (value, value) if isinstance(value, int) else tuple(value)


def _np_windows(x: np.ndarray, k: tuple, s: tuple, padding: Any, d: tuple = (1, 1),
                fill: float = 0.0) -> tuple:
    """The padded input and its (kh, kw) taps: tap (i, j) is an (N, OH, OW, C) array."""
    sizes = []
    for axis in (0, 1):
        size, extent = x.shape[1 + axis], (k[axis] - 1) * d[axis] + 1
        if padding == "VALID":
            out, before = (size - extent) // s[axis] + 1, 0
        elif padding == "SAME":
            out = -(-size // s[axis])
            before = max((out - 1) * s[axis] + extent - size, 0) // 2
        else:
            before = padding[axis][0]
            out = (size + sum(padding[axis]) - extent) // s[axis] + 1
        sizes.append((out, before, max((out - 1) * s[axis] + extent - size - before, 0)))
    xp = np.pad(x, ((0, 0), sizes[0][1:], sizes[1][1:], (0, 0)), constant_values=fill)
    (oh, _, _), (ow, _, _) = sizes
    taps = {(i, j): xp[:, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0],
                       j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
            for i in range(k[0]) for j in range(k[1])}
    return xp, taps


def _np_conv2d(x: np.ndarray, w: np.ndarray, s: tuple, padding: Any,
               d: tuple = (1, 1)) -> np.ndarray:
    _, taps = _np_windows(x, w.shape[:2], s, padding, d)
    return sum(taps[i, j] @ w[i, j] for (i, j) in taps)


def _np_max_pool(x: np.ndarray, k: tuple, s: tuple, padding: str) -> np.ndarray:
    lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    _, taps = _np_windows(x, k, s, padding, fill=lowest)
    return np.max(np.stack(list(taps.values())), 0)


def _np_avg_pool(x: np.ndarray, k: tuple, s: tuple, padding: str) -> np.ndarray:
    _, taps = _np_windows(x, k, s, padding)
    _, counts = _np_windows(np.ones_like(x), k, s, padding)  # padding is not averaged
    return sum(taps.values()) / sum(counts.values())


def _numeric_vjp(f: Callable, x: np.ndarray, dy: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        out[i] = np.sum((f(up) - f(down)) * dy) / (2 * eps)
    return out


_CONVS = [  # name, strides, padding, dilations, input shape
    ("same", 1, "SAME", 1, (1, 5, 5, 2)), ("valid_stride2", 2, "VALID", 1, (2, 5, 6, 2)),
    ("dilated", 1, "SAME", 2, (1, 5, 5, 2)),
    ("explicit", (2, 1), [[0, 0], [1, 0], [2, 1], [0, 0]], 1, (1, 4, 5, 2))]
for _name, _s, _p, _d, _shape in _CONVS:
    _pads = _p if isinstance(_p, str) else (tuple(_p[1]), tuple(_p[2]))
    _add("Conv2D", lambda x, w, s=_s, p=_p, d=_d: _nn.conv2d(x, w, s, p, dilations=d),
         (_rand(*_shape), _rand(3, 2, 2, 3)),
         lambda x, w, s=_s, p=_pads, d=_d: _np_conv2d(x, w, _pair(s), p, _pair(d)),
         differentiable=True, name=_name)
_CONV_ATTRS = recorded_attrs("Conv2D", lambda: _nn.conv2d(kf.zeros([1, 5, 5, 2]),
                                                          kf.zeros([3, 2, 2, 3]), 2, "SAME"))
_CX, _CW = _rand(1, 5, 5, 2), _rand(3, 2, 2, 3)
_add("Conv2DBackpropInput", _direct("Conv2DBackpropInput", **_CONV_ATTRS),
     (_i32([1, 5, 5, 2]), _CW, _rand(1, 3, 3, 3)),
     lambda s, w, dy: _linear_vjp(lambda x: _np_conv2d(x, w, (2, 2), "SAME"), tuple(s), dy),
     differentiable=True, wrt=(1, 2))
_add("Conv2DBackpropFilter", _direct("Conv2DBackpropFilter", **_CONV_ATTRS),
     (_CX, _i32([3, 2, 2, 3]), _rand(1, 3, 3, 3)),
     lambda x, s, dy: _linear_vjp(lambda w: _np_conv2d(x, w, (2, 2), "SAME"), tuple(s), dy),
     differentiable=True, wrt=(0, 2))
for _op, _fn, _ref in [("MaxPool", _nn.max_pool2d, _np_max_pool),
                       ("AvgPool", _nn.avg_pool2d, _np_avg_pool)]:
    _add(_op, lambda x, f=_fn: f(x, 2, 2, "VALID"), (_rand(2, 4, 4, 3),),
         lambda x, r=_ref: r(x, (2, 2), (2, 2), "VALID"), differentiable=True)
    _add(_op, lambda x, f=_fn: f(x, [3, 2], [2, 1], "SAME"), (_rand(1, 5, 4, 2),),
         lambda x, r=_ref: r(x, (3, 2), (2, 1), "SAME"), differentiable=True, name="same")
_add("MaxPool", lambda x: _nn.max_pool2d(x, 2, 1, "VALID"), (_ints(1, 3, 3, 1),),
     lambda x: _np_max_pool(x, (2, 2), (1, 1), "VALID").astype(np.int32), name="int32")
_POOL_ATTRS = recorded_attrs("MaxPool", lambda: _nn.max_pool2d(kf.zeros([1, 5, 4, 2]), [3, 2],
                                                               [2, 1], "SAME"))
_PX = _rand(1, 5, 4, 2)
_add("MaxPoolGrad", _direct("MaxPoolGrad", **_POOL_ATTRS), (_PX, _rand(1, 3, 4, 2)),
     lambda x, dy: _numeric_vjp(lambda v: _np_max_pool(v, (3, 2), (2, 1), "SAME"), x, dy),
     differentiable=True, wrt=(1,), rtol=1e-5, atol=1e-8)
_add("MaxPoolGradGrad", _direct("MaxPoolGradGrad", **_POOL_ATTRS), (_PX, _rand(1, 5, 4, 2)),
     lambda x, g: (_np_max_pool(x + 1e-6 * g, (3, 2), (2, 1), "SAME") -
                   _np_max_pool(x - 1e-6 * g, (3, 2), (2, 1), "SAME")) / 2e-6,
     differentiable=True, wrt=(1,), rtol=1e-5, atol=1e-8)
_add("AvgPoolGrad", _direct("AvgPoolGrad", **_POOL_ATTRS), (_i32([1, 5, 4, 2]), _rand(1, 3, 4, 2)),
     lambda s, dy: _linear_vjp(lambda x: _np_avg_pool(x, (3, 2), (2, 1), "SAME"), tuple(s), dy),
     differentiable=True, wrt=(1,), static_shape=False)

# ---------------------------------------------------------------- control flow, TensorArray
# Eagerly cond and while_loop are Python; their ops exist only in graphs (graph_only).


def _power_loop(x: Any) -> Any:
    return kf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [kf.constant(0), x])[1]


def _power_loop_gradient(x: Any) -> Any:
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = _power_loop(x)
    return tape.gradient(y, x)


_add("StatelessIf", lambda x: kf.cond(kf.reduce_sum(x) > 0, lambda: x * x, lambda: -x),
     (_rand(2, 3),), lambda x: x * x if x.sum() > 0 else -x, differentiable=True,
     graph_only=True)
_add("StatelessIf", lambda x, y: kf.cond(kf.reduce_sum(x) < 0, lambda: x * y, lambda: x + y),
     (_rand(3), _rand(3)), lambda x, y: x * y if x.sum() < 0 else x + y, differentiable=True,
     name="captures", graph_only=True)
_add("StatelessWhile", _power_loop, (_rand(2, 2),), lambda x: x ** 4, differentiable=True,
     graph_only=True)
_add("WhileGrad", _power_loop_gradient, (_rand(3),), lambda x: 4 * x ** 3, differentiable=True,
     graph_only=True)
_add("TensorListSetItem",
     lambda x: kf.TensorArray(kf.float64, size=0, dynamic_size=True).write(0, x).write(
         1, x * 2).stack(),
     (_rand(3),), lambda x: np.stack([x, 2 * x]), differentiable=True, static_shape=False)
_add("NoOp", _direct("NoOp"), (), lambda: [])

# ---------------------------------------------------------------- ops that graph passes create


def _fused(templates: list, n_inputs: int, reduce: Optional[tuple] = None) -> Callable:
    """Apply a FusedElementwise program chaining `templates` (each over the previous
    result and the next input), as passes/fuse_elementwise.py would build it."""
    def apply(*xs: Any) -> Any:
        from kilnflow.ops import fused  # built at call time: the engine's API may move
        builder = fused.ProgramBuilder()
        refs = [builder.input(i, np.float64) for i in range(n_inputs)]
        result, unused = refs[0], iter(refs[1:])
        for template in templates:
            operands = [result, next(unused)] if "{1}" in template else [result]
            result = builder.add_op(template, operands, {}, np.float64)
        program, _ = builder.build(result, reduce, np.float64, quiet=True)
        return bind(REGISTRY["FusedElementwise"], xs, {"program": program, "into": None})
    return apply


_add("FusedElementwise", _fused(["({0} * {1})", "tanh({0})", "({0} - {1})"], 3),
     (_rand(2, 1), _rand(3), _rand(2, 3)), lambda x, y, z: np.tanh(x * y) - z)
_add("FusedElementwise", _fused(["exp({0})"], 1, ("sum", (1,), False)), (_rand(2, 3),),
     lambda x: np.exp(x).sum(1), name="sum")

# ---------------------------------------------------------------- ops with no sample, on purpose

# Ops whose behaviour is not a pure function of their inputs: each is tested where it lives.
UNSAMPLED = {
    "ReadVariableOp": "stateful: reads a variable; tests/test_variables.py",
    "AssignVariableOp": "stateful: tests/test_variables.py",
    "AssignAddVariableOp": "stateful: tests/test_variables.py",
    "AssignSubVariableOp": "stateful: tests/test_variables.py",
    "RandomStandardNormal": "random: tests/ops/test_random.py",
    "RandomUniform": "random: tests/ops/test_random.py",
    "RandomUniformInt": "random: tests/ops/test_random.py",
    "TruncatedNormal": "random: tests/ops/test_random.py",
    "PrintV2": "stateful (prints): tests/ops/test_logging.py",
    "Assert": "stateful (raises): tests of kf.debugging / autograph asserts",
    "If": "StatelessIf with a stateful branch: same rule, kernel and gradient as StatelessIf",
    "While": "StatelessWhile with a stateful body: same rule, kernel and gradient",
    "Placeholder": "a graph input: fed, never run; every graph test traces some",
}


def ops_without_samples() -> list:
    """Registered ops that have neither a sample nor an UNSAMPLED entry."""
    covered = {s.op for s in SAMPLES} | set(UNSAMPLED)
    return sorted(name for name in REGISTRY if name not in covered)


# ---------------------------------------------------------------- calls that must fail

ERRORS = [
    ErrorSample("AddV2", kf.add, (_ints(2), np.ones(2, np.float32)),
                errors.InvalidArgumentError, ("AddV2", "int32", "float32"),
                name="int32_plus_float32"),
    ErrorSample("AddV2", lambda x, y: x + y, (np.ones(2, np.float64), np.ones(2, np.float32)),
                errors.InvalidArgumentError, ("AddV2", "float64", "float32"),
                name="operator_float64_plus_float32"),
    ErrorSample("AddV2", lambda x: x + 1.5, (_ints(2),), TypeError, ("1.5", "int32"),
                name="int_plus_python_float"),
    ErrorSample("Mul", kf.multiply, (_ints(2, 3), _ints(2, 2)), errors.InvalidArgumentError,
                ("Mul",), name="incompatible_shapes"),
    ErrorSample("Sqrt", kf.sqrt, (_ints(3),), errors.InvalidArgumentError, ("Sqrt", "int32"),
                name="int32"),
    ErrorSample("Exp", kf.exp, (_bools(3),), errors.InvalidArgumentError, ("Exp", "bool"),
                name="bool"),
    ErrorSample("MatMul", kf.matmul, (_rand(2, 3), _rand(2, 3)), errors.InvalidArgumentError,
                ("MatMul",), name="inner_dims_differ"),
    ErrorSample("MatMul", kf.matmul, (_rand(3), _rand(3, 2)), errors.InvalidArgumentError,
                ("MatMul",), name="rank_1"),
    ErrorSample("Sum", lambda x: kf.reduce_sum(x, axis=2), (_rand(2, 3),),
                errors.InvalidArgumentError, ("Sum", "2"), name="axis_out_of_range"),
    ErrorSample("Max", lambda x: kf.reduce_max(x, axis=-3), (_rand(2, 3),),
                errors.InvalidArgumentError, ("Max",), name="negative_axis_out_of_range"),
    ErrorSample("LogicalAnd", kf.logical_and, (_ints(2), _ints(2)),
                errors.InvalidArgumentError, ("LogicalAnd", "int32"), name="int32"),
    ErrorSample("BitwiseAnd", kf.bitwise.bitwise_and, (_rand(2), _rand(2)),
                errors.InvalidArgumentError, ("BitwiseAnd", "float64"), name="float64"),
    ErrorSample("Reshape", lambda x: kf.reshape(x, [4, 2]), (_rand(2, 3),),
                errors.InvalidArgumentError, ("Reshape", "6"), name="element_count"),
    ErrorSample("ConcatV2", lambda x, y: kf.concat([x, y], 0), (_rand(2, 3), _rand(2, 2)),
                errors.InvalidArgumentError, ("ConcatV2",), name="shapes_differ"),
    ErrorSample("ConcatV2", lambda x, y: kf.concat([x, y], 0), (_rand(2), _ints(2)),
                errors.InvalidArgumentError, ("ConcatV2", "float64", "int32"),
                name="dtypes_differ"),
    ErrorSample("GatherV2", lambda p, i: kf.gather(p, i), (_rand(3), _i32([3])),
                errors.InvalidArgumentError, ("GatherV2", "3"), name="index_out_of_range"),
    ErrorSample("StridedSlice", lambda x: x[2], (_rand(2, 3),), errors.InvalidArgumentError,
                ("StridedSlice",), name="index_out_of_range"),
    ErrorSample("StridedSlice", lambda x: x[0, 0, 0], (_rand(2, 3),),
                errors.InvalidArgumentError, ("StridedSlice",), name="too_many_indices"),
    ErrorSample("Transpose", lambda x: kf.transpose(x, [0, 0]), (_rand(2, 3),),
                errors.InvalidArgumentError, ("Transpose",), name="bad_perm"),
    ErrorSample("FloorDiv", kf.floordiv, (_ints(2), np.zeros(2, np.int32)),
                errors.InvalidArgumentError, ("FloorDiv",), name="integer_division_by_zero"),
    ErrorSample("SelectV2", kf.where, (_bools(2), _rand(2), _ints(2)),
                errors.InvalidArgumentError, ("SelectV2", "float64", "int32"),
                name="branch_dtypes_differ"),
    ErrorSample("Tile", lambda x: _reshaping.tile(x, [2]), (_rand(1, 2),),
                errors.InvalidArgumentError, ("Tile", "length"), name="multiples_length"),
    ErrorSample("OneHot", lambda i: _array.one_hot(i, 3), (_rand(2),),
                errors.InvalidArgumentError, ("OneHot", "float64"), name="float_indices"),
    ErrorSample("TopKV2", lambda x: _sorting.top_k(x, k=3), (_rand(2),),
                errors.InvalidArgumentError, ("TopKV2", "3"), name="k_too_large"),
    ErrorSample("Squeeze", lambda x: _reshaping.squeeze(x, axis=[0]), (_rand(2, 1),),
                errors.InvalidArgumentError, ("Squeeze",), name="not_size_1"),
    ErrorSample("Softmax", _nn.softmax, (_ints(3),), errors.InvalidArgumentError,
                ("Softmax", "int32"), name="int32"),
    ErrorSample("Conv2D", lambda x, w: _nn.conv2d(x, w, 1, "SAME"),
                (_rand(1, 4, 4, 2), _rand(3, 3, 3, 1)), errors.InvalidArgumentError,
                ("Conv2D", "depth"), name="depth_mismatch"),
    ErrorSample("MaxPool", lambda x: _nn.max_pool2d(x, 2, 2, "VALID"), (_rand(4, 4),),
                errors.InvalidArgumentError, ("MaxPool", "4-dimensional"), name="rank_2"),
    ErrorSample("SparseSoftmaxCrossEntropyWithLogits",
                lambda i, x: _nn.sparse_softmax_cross_entropy_with_logits(labels=i, logits=x),
                (_i32([3]), _rand(1, 3)), errors.InvalidArgumentError,
                ("SparseSoftmaxCrossEntropyWithLogits", "3"), name="label_out_of_range"),
    ErrorSample("BiasAdd", _nn.bias_add, (_rand(2, 3), _rand(4)), errors.InvalidArgumentError,
                ("BiasAdd",), name="bias_length"),
]
