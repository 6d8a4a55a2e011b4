"""What a `for` loop iterates as a while op: items read by loop index, not by Python.

graph_rows(iterated) gives (length, item_at) for a graph tensor (its rows), a range
over tensors (kf.range, or range() of a tensor), a graph TensorArray (its elements),
and enumerate() / zip() of those; None means the loop runs in Python. An integer
range's items are computed as start + index * delta: slicing the range tensor would
cost a StridedSlice per iteration, and the range tensor then feeds nothing.
"""
import builtins
import weakref

from . import _dispatch
from kilnflow import dtypes
from kilnflow.ops import array as array_ops
from kilnflow.ops import math as math_ops
from . import _tensor_state

_RANGES = {}  # id(range tensor) -> (weak reference to it, start, limit, delta)


class GraphEnumerate:
    """enumerate() of something a while op can iterate; for_stmt reads it by index.
    Iterated any other way it is Python's enumerate of the same iterable."""

    def __init__(self, iterable, start: int):
        self.iterable = iterable
        self.start = start

    def __iter__(self):
        return builtins.enumerate(self.iterable, self.start)


class GraphZip:
    """zip() of things a while op can iterate (see GraphEnumerate)."""

    def __init__(self, iterables: tuple):
        self.iterables = iterables

    def __iter__(self):
        return builtins.zip(*self.iterables)


def _range_bounds(start, limit=None, delta=1, dtype=None, name=None) -> tuple:
    """(start, limit, delta) as kf.range and range() read their arguments."""
    del dtype, name
    return (0, start, delta) if limit is None else (start, limit, delta)


def tensor_range(*args, **kwargs):
    """kf.range(*args, **kwargs), remembered so a for loop over it can compute its items."""
    with _dispatch.quiet():  # unused once a loop computes the items from its index
        result = array_ops.range(*args, **kwargs)
    if _dispatch.is_symbolic(result):
        key = id(result)
        reference = weakref.ref(result, lambda _: _RANGES.pop(key, None))
        _RANGES[key] = (reference,) + _range_bounds(*args, **kwargs)
    return result


def _is_graph_array(value) -> bool:
    if not _tensor_state.is_array(value):
        return False
    with _dispatch.quiet():
        return _dispatch.is_symbolic(value.size())


def is_graph_iterable(value) -> bool:
    return (isinstance(value, (GraphEnumerate, GraphZip)) or _dispatch.is_symbolic(value)
            or _is_graph_array(value))


def _minimum(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return builtins.min(a, b)
    return math_ops.minimum(a, b)


def _integer_bound(value, dtype):
    """A range bound usable in index arithmetic: a Python int, or a tensor of `dtype`."""
    if type(value) is int:
        return value
    if _dispatch.is_tensor(value) and value.dtype.is_integer:
        return value if value.dtype == dtype else math_ops.cast(value, dtype)
    return None


def _range_rows(tensor):
    """(length, item_at) computing an integer range's items from the index, else None."""
    entry = _RANGES.get(id(tensor))
    if entry is None or entry[0]() is not tensor or not tensor.dtype.is_integer:
        return None
    _, start, limit, delta = entry
    dtype = tensor.dtype
    start, limit = _integer_bound(start, dtype), _integer_bound(limit, dtype)
    if start is None or limit is None or type(delta) is not int or delta == 0:
        return None  # a tensor delta may be 0 or change sign: keep kf.range's checks
    length = _tensor_state.dims(tensor.shape)[0]
    if length is None:
        # ceil((limit - start) / delta), at least 0; no ops for range(n)'s 0 and 1
        span = limit if type(start) is int and start == 0 else limit - start
        step_back = delta - 1 if delta > 0 else delta + 1
        if step_back:
            span = span + step_back
        length = math_ops.maximum(span if delta == 1 else span // delta, 0)
        if dtype.name != "int32":
            length = math_ops.cast(length, dtypes.int32)

    def item_at(index):
        value = index if dtype.name == "int32" else math_ops.cast(index, dtype)
        if delta != 1:
            value = value * delta
        if not (type(start) is int and start == 0):
            value = value + start
        return value

    return length, item_at


def _row_count(tensor):
    """The first dimension of a graph tensor: static when known, else kf.shape(x)[0]."""
    shape = _tensor_state.dims(tensor.shape)
    if shape == []:
        raise TypeError(f"a for loop cannot iterate over a scalar tensor: {tensor}")
    if shape is not None and shape[0] is not None:
        return shape[0]
    return array_ops.shape(tensor)[0]


def graph_rows(iterated):
    """(length, item_at(index)) to iterate `iterated` in a while op, or None.

    length is a Python int or an int32 scalar tensor; index is an int32 scalar tensor."""
    if isinstance(iterated, GraphEnumerate):
        length, item_at = graph_rows(iterated.iterable)
        start = iterated.start
        return length, lambda index: (index + start, item_at(index))
    if isinstance(iterated, GraphZip):
        parts = [graph_rows(item) for item in iterated.iterables]
        length = parts[0][0]
        for other, _ in parts[1:]:
            length = _minimum(length, other)
        return length, lambda index: tuple(item_at(index) for _, item_at in parts)
    if _is_graph_array(iterated):
        return iterated.size(), iterated.read
    if not _dispatch.is_symbolic(iterated):
        return None
    return _range_rows(iterated) or (_row_count(iterated), lambda index: iterated[index])


def python_iterable(iterated):
    """What a Python for loop iterates: an eager TensorArray's elements are its rows."""
    if _tensor_state.is_array(iterated):
        return iterated.stack()
    return iterated
