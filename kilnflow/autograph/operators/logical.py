"""and_, or_, not_: Python's lazy boolean operators, or logical ops on graph tensors.

    ag__.and_(lambda: a, lambda: b)

The right operand is a function, evaluated only when Python would evaluate it;
for a graph tensor on the left it goes into a cond branch, so `i < n and x[i] > 0`
never indexes out of range in the graph either.
"""
from . import _dispatch
from kilnflow.ops import cond as cond_ops
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import math as math_ops
from . import records


def _lazy(kind: str, left, right_fn, on_true: bool):
    location = _dispatch.user_location()
    records.record(location, kind, "graph")
    convert = convert_to_tensor

    def right():
        return convert(right_fn())

    def keep_left():
        return left

    true_fn, false_fn = (right, keep_left) if on_true else (keep_left, right)
    return cond_ops.cond(left, true_fn, false_fn)


def and_(left_fn, right_fn):
    """`left and right`, evaluating right only if left is true."""
    left = left_fn()
    if _dispatch.is_symbolic(left):
        return _lazy("and", left, right_fn, on_true=True)
    return left and right_fn()


def or_(left_fn, right_fn):
    """`left or right`, evaluating right only if left is false."""
    left = left_fn()
    if _dispatch.is_symbolic(left):
        return _lazy("or", left, right_fn, on_true=False)
    return left or right_fn()


def not_(value):
    """`not value`; logical_not for a graph tensor."""
    if _dispatch.is_symbolic(value):
        return math_ops.logical_not(value)
    return not value
