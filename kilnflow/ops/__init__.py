"""The op families. Importing this package registers every OpDef and gives tensors their
Python operators (tensor.ops), named the way TF names operator nodes ('add', 'mul')."""
from __future__ import annotations

from types import SimpleNamespace

from kilnflow import tensor as _tensor
from kilnflow.ops import array, bitwise, convert, math  # noqa: F401 - registers the OpDefs
from kilnflow.ops import control_flow, logging, nn, random, state  # noqa: F401

_tensor.ops = SimpleNamespace(
    add=lambda x, y: math.add(x, y, name="add"),
    subtract=lambda x, y: math.subtract(x, y, name="sub"),
    multiply=lambda x, y: math.multiply(x, y, name="mul"),
    truediv=lambda x, y: math.truediv(x, y, name="truediv"),
    floordiv=lambda x, y: math.floordiv(x, y, name="floordiv"),
    floormod=lambda x, y: math.floormod(x, y, name="mod"),
    pow=lambda x, y: math.pow(x, y, name="pow"),
    matmul=lambda x, y: math.matmul(x, y, name="matmul"),
    negative=lambda x: math.negative(x, name="Neg"),
    abs=lambda x: math.abs(x, name="Abs"),
    invert_=math.invert_, and_=math.and_, or_=math.or_, xor_=math.xor_,
    less=lambda x, y: math.less(x, y, name="Less"),
    less_equal=lambda x, y: math.less_equal(x, y, name="LessEqual"),
    greater=lambda x, y: math.greater(x, y, name="Greater"),
    greater_equal=lambda x, y: math.greater_equal(x, y, name="GreaterEqual"),
    tensor_equals=math.tensor_equals, tensor_not_equals=math.tensor_not_equals,
    getitem=array.getitem,
)
