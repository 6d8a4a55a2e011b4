"""list_append: Python lists appended to inside loops, TensorArrays in tensor loops.

Generated code writes `lst = ag__.list_append(lst, v)`. For a Python list this is
`lst.append(v)` (the same object, so aliases see the append). When a loop turns
out to be a tensor loop, the loop operator replaces the list by a TensorList: a
TensorArray the loop writes into, stacked into one tensor after the loop.
"""
from . import _dispatch
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import joining
from kilnflow.ops import tensor_array


class TensorList:
    """A list under construction in a tensor loop: `prefix` (items from before the
    loop) followed by the items written into the TensorArray `array`."""

    def __init__(self, name: str, prefix: list, array, location: tuple):
        self.name = name
        self.prefix = prefix
        self.array = array
        self.location = location

    def replace_array(self, array) -> "TensorList":
        return TensorList(self.name, self.prefix, array, self.location)

    def append(self, value) -> "TensorList":
        return self.replace_array(self.array.write(self.array.size(), value))

    def stack(self):
        """The items as one tensor, stacked along a new first axis."""
        stacked = self.array.stack()
        if not self.prefix:
            return stacked
        return joining.concat([joining.stack(self.prefix), stacked], 0)

    def __getattr__(self, name):
        raise TypeError(f"inside a tensor loop, list '{self.name}' can only be appended to "
                        f"(it becomes a TensorArray); `.{name}` is not supported"
                        + _dispatch.where(self.location))


class SpecRecorder:
    """Stands in for an empty list while a loop body is dry-run: records the first
    appended value, whose dtype and shape the TensorArray then takes."""

    def __init__(self):
        self.first = None

    def append(self, value) -> "SpecRecorder":
        if self.first is None:
            self.first = convert_to_tensor(value)
        return self


def new_tensor_list(name: str, items: list, location: tuple, first=None) -> TensorList:
    """A TensorList continuing the Python list `items`; `first` is a sample element
    when the list is still empty."""
    convert = convert_to_tensor
    prefix = [convert(item) for item in items]
    sample = prefix[0] if prefix else first
    if sample is None:
        raise ValueError(f"list '{name}' is appended to in a tensor loop, but no element "
                         "type could be found for it" + _dispatch.where(location))
    array = tensor_array.TensorArray(sample.dtype, size=0, dynamic_size=True,
                                        element_shape=sample.shape)
    return TensorList(name, prefix, array, location)


def list_append(target, value):
    """`target.append(value)`, returning the (possibly new) list value."""
    if isinstance(target, (TensorList, SpecRecorder)):
        return target.append(value)
    target.append(value)
    return target


def _outer_lists(fn) -> list:
    """(name, list) for each Python list fn reads from an enclosing function's scope."""
    found = []
    for name, cell in zip(fn.__code__.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell: the name is not bound yet
            continue
        if type(value) is list:
            found.append((name, value))
    return found


_HINTS = {
    "loop": "AutoGraph turns a list into a TensorArray only when the loop does nothing "
            "with it but `.append`; otherwise accumulate in a kf.TensorArray",
    "`if`": "A Python list's length cannot depend on a tensor condition: append a value "
            "chosen by the condition (`lst.append(x if c else 0.)`), or use a kf.TensorArray",
}


def guard_outer_lists(fn, location: tuple, construct: str):
    """fn, checked while it is traced into a tensor loop body or cond branch: graph
    tensors appended to a Python list from outside would outlive the graph they belong
    to (and the append would happen once, at trace time), so that is an error naming
    the list and the user's line. Lists only appended to in a loop never get here: they
    are loop state, turned into TensorArrays."""
    watched = _outer_lists(fn) if hasattr(fn, "__code__") else []
    if not watched:
        return fn

    def guarded(*args):
        sizes = [len(items) for _, items in watched]
        result = fn(*args)
        for (name, items), size in zip(watched, sizes):
            if any(_dispatch.is_symbolic(item) for item in items[size:]):
                raise ValueError(
                    f"list '{name}' is a Python list from outside a tensor {construct} that "
                    f"gets a tensor appended inside it: the append runs once, while tracing, "
                    f"and the tensor cannot leave the {construct}'s graph. {_HINTS[construct]}"
                    + _dispatch.where(location))
        return result
    return guarded
