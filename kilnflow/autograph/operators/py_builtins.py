"""len_, range_, enumerate_, zip_: the builtins, extended to tensors.

len_(x) is len(x) for Python values and eager tensors; for a graph tensor it is the
static first dimension when known, else kf.shape(x)[0]. range_(...) is Python's
range for Python ints and kf.range when any argument is a tensor. enumerate_ and
zip_ are the builtins, except over graph tensors (and tensor ranges, TensorArrays):
then they stay lazy so that a `for` loop over them becomes one while op.
overload_of(f) names the operator converted code calls instead of a framework
function (kf.range).
"""
import builtins
import sys

from . import _dispatch
from kilnflow.ops import array as array_ops
from . import iterables
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
        return array_ops.shape(value)[0]
    return len(value)


def range_(*args):
    if any(_dispatch.is_tensor(a) for a in args):
        return iterables.tensor_range(*args)
    return builtins.range(*args)


def enumerate_(iterable, start=0):
    if type(start) is int and iterables.is_graph_iterable(iterable):
        return iterables.GraphEnumerate(iterable, start)
    return builtins.enumerate(iterable, start)


def zip_(*iterables_, **kwargs):
    if iterables_ and not kwargs and all(iterables.is_graph_iterable(x) for x in iterables_):
        return iterables.GraphZip(iterables_)
    return builtins.zip(*iterables_, **kwargs)


def overload_of(f):
    """The operator to call instead of f, a framework function, or None."""
    kilnflow = sys.modules.get("kilnflow")  # never imported here: autograph works without
    if kilnflow is not None and f is getattr(kilnflow, "range", None):
        return iterables.tensor_range
    return None
