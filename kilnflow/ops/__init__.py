"""The op families. Importing this package registers every OpDef and gives tensors their
Python operators (tensor.ops), named the way TF names operator nodes ('add', 'mul')."""
from __future__ import annotations

from types import SimpleNamespace

from kilnflow import tensor as _tensor
from kilnflow.ops import args, array, bitwise, convert, joining, math  # noqa: F401 - registers ops
from kilnflow.ops import checks, cond, conv, custom_gradient, decompositions  # noqa: F401
from kilnflow.ops import iterator, logging, nn  # noqa: F401
from kilnflow.ops import random, reshaping, slicing  # noqa: F401
from kilnflow.ops import linalg, scatter, segment, signal, sorting, state  # noqa: F401
from kilnflow.ops import subgraph, tensor_array, while_loop  # noqa: F401

_tensor.ops = SimpleNamespace(
    add=math.add, subtract=math.subtract, multiply=math.multiply, truediv=math.truediv,
    floordiv=math.floordiv, floormod=math.floormod, pow=math.pow, matmul=linalg.matmul,
    negative=math.negative, abs=math.abs, invert_=math.invert_, and_=math.and_,
    or_=math.or_, xor_=math.xor_, less=math.less, less_equal=math.less_equal,
    greater=math.greater, greater_equal=math.greater_equal,
    tensor_equals=math.tensor_equals, tensor_not_equals=math.tensor_not_equals,
    getitem=slicing.getitem,
)
