"""list_append: Python lists appended to inside loops, TensorArrays in tensor loops.

Generated code writes `lst = ag__.list_append(lst, v)`. For a Python list this is
`lst.append(v)` (the same object, so aliases see the append). When a loop turns
out to be a tensor loop, the loop operator replaces the list by a TensorList: a
TensorArray the loop writes into, stacked into one tensor after the loop.
"""
from . import _dispatch


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
        return _dispatch.op("concat")([_dispatch.op("stack")(self.prefix), stacked], 0)

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
            self.first = _dispatch.op("convert_to_tensor")(value)
        return self


def new_tensor_list(name: str, items: list, location: tuple, first=None) -> TensorList:
    """A TensorList continuing the Python list `items`; `first` is a sample element
    when the list is still empty."""
    convert = _dispatch.op("convert_to_tensor")
    prefix = [convert(item) for item in items]
    sample = prefix[0] if prefix else first
    if sample is None:
        raise ValueError(f"list '{name}' is appended to in a tensor loop, but no element "
                         "type could be found for it" + _dispatch.where(location))
    array = _dispatch.op("TensorArray")(sample.dtype, size=0, dynamic_size=True,
                                        element_shape=sample.shape)
    return TensorList(name, prefix, array, location)


def list_append(target, value):
    """`target.append(value)`, returning the (possibly new) list value."""
    if isinstance(target, (TensorList, SpecRecorder)):
        return target.append(value)
    target.append(value)
    return target
