"""len_ and range_: the builtins, extended to tensors.

len_(x) is len(x) for Python values and eager tensors; for a graph tensor it is the
static first dimension when known, else kf.shape(x)[0]. range_(...) is Python's
range for Python ints and kf.range when any argument is a tensor.
"""
import builtins

from . import _dispatch
from . import lists


def len_(value):
    if isinstance(value, lists.TensorList):
        return len(value.prefix) + value.array.size()
    if _dispatch.is_symbolic(value):
        shape = value.shape
        rank = getattr(shape, "rank", None)
        if rank == 0:
            raise ValueError(f"len() of a scalar tensor: {value}")
        if rank is not None and shape[0] is not None:
            return shape[0]
        return _dispatch.op("shape")(value)[0]
    return len(value)


def range_(*args):
    if any(_dispatch.is_tensor(a) for a in args):
        return _dispatch.op("range")(*args)
    return builtins.range(*args)
