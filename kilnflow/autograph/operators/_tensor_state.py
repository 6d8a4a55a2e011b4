"""State of tensor conds and loops: flattening, conversion to tensors, checks.

Branch and loop state is a tuple of Python values: tensors, Python numbers,
nested tuples/lists/dicts of them, TensorLists. Graph ops take flat tuples of
tensors, so the state is flattened on the way in and packed on the way out;
Python numbers become tensors; errors name the variable and the user's line.
"""
from . import _dispatch
from kilnflow.ops import array as array_ops
from kilnflow.ops.convert import convert_to_tensor
from . import lists
from . import special_values


def flatten(value, arrays_as_tensors: bool = False) -> list:
    """The leaves of a nested tuple/list/dict structure. A TensorList's array is one
    leaf; with arrays_as_tensors (for cond outputs) its stacked tensor is."""
    if isinstance(value, lists.TensorList):
        return [value.array.stack() if arrays_as_tensors else value.array]
    if isinstance(value, lists.SpecRecorder):
        return []
    if arrays_as_tensors and is_array(value):  # a kf.TensorArray through a cond
        return [value.stack()]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in flatten(item, arrays_as_tensors)]
    if isinstance(value, dict):
        return [leaf for key in value for leaf in flatten(value[key], arrays_as_tensors)]
    return [value]


def pack(structure, leaves, arrays_as_tensors: bool = False) -> object:
    """Rebuild `structure` with its leaves taken, in order, from the list `leaves`."""
    leaves = list(leaves)

    def build(item):
        if isinstance(item, lists.TensorList):
            leaf = leaves.pop(0)
            return item.replace_array(item.array.unstack(leaf) if arrays_as_tensors else leaf)
        if isinstance(item, lists.SpecRecorder):
            return item
        if arrays_as_tensors and is_array(item):
            return item.unstack(leaves.pop(0))
        if isinstance(item, (tuple, list)):
            items = [build(x) for x in item]
            if hasattr(item, "_fields"):  # a namedtuple
                return type(item)(*items)
            return type(item)(items)
        if isinstance(item, dict):
            return type(item)((key, build(item[key])) for key in item)
        return leaves.pop(0)

    return build(structure)


def same_structure(a, b) -> bool:
    if isinstance(a, lists.TensorList) or isinstance(b, lists.TensorList):
        return type(a) is type(b)
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (isinstance(b, (tuple, list)) and isinstance(a, (tuple, list))
                and len(a) == len(b) and all(same_structure(x, y) for x, y in zip(a, b)))
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b)
                and all(same_structure(a[k], b[k]) for k in a))
    return True


def is_array(leaf) -> bool:
    """True for a TensorArray (duck-typed: autograph does not import the framework)."""
    return hasattr(leaf, "stack") and hasattr(leaf, "write") and not _dispatch.is_tensor(leaf)


def to_tensor(leaf, name: str, location: tuple, dtype=None):
    """A tensor for one leaf of a state variable (tensors and arrays pass through)."""
    if special_values.is_undefined(leaf):  # first: Undefined raises on attribute access
        raise ValueError(f"'{name}' has no value here, but a tensor cond or loop needs one"
                         + _dispatch.where(location))
    if _dispatch.is_tensor(leaf) or is_array(leaf):
        return leaf
    if leaf is None:  # TF's class for this case: ValueError
        raise ValueError(f"'{name}' is None in a tensor cond or loop; it must be a tensor "
                         "(or a value convertible to one) on every path"
                         + _dispatch.where(location))
    convert = convert_to_tensor
    try:
        if dtype is not None:
            try:
                return convert(leaf, dtype=dtype)
            except (TypeError, ValueError):
                pass
        return convert(leaf)
    except (TypeError, ValueError) as e:
        raise TypeError(f"'{name}' holds {type(leaf).__name__} {leaf!r}, which cannot be a "
                        f"tensor in a tensor cond or loop: {e}" + _dispatch.where(location)) \
            from None


def dims(shape) -> list:
    """A TensorShape (or tuple) as a list of ints and None; None for unknown rank."""
    if shape is None:
        return None
    if hasattr(shape, "as_list"):
        try:
            return list(shape.as_list())
        except ValueError:
            return None
    return list(shape)


def compatible(before, after) -> bool:
    if hasattr(before, "is_compatible_with"):
        return before.is_compatible_with(after)
    a, b = dims(before), dims(after)
    return a is None or b is None or (len(a) == len(b) and all(
        x is None or y is None or x == y for x, y in zip(a, b)))


def check_iteration(name: str, before, after, location: tuple, shape=None):
    """The loop variable's new leaf as a tensor, if its dtype did not change and its
    shape still fits `shape` (its shape invariant; by default its shape before)."""
    if is_array(before):
        return after
    shape = before.shape if shape is None else shape
    after = to_tensor(after, name, location, dtype=before.dtype)
    if after.dtype != before.dtype:
        raise TypeError(f"loop variable '{name}' has dtype {before.dtype.name} before the "
                        f"loop, but dtype {after.dtype.name} after one iteration; keep its "
                        f"dtype fixed (e.g. with kf.cast)" + _dispatch.where(location))
    if not compatible(shape, after.shape):
        raise ValueError(f"loop variable '{name}' has shape {shape} before the loop, but "
                         f"shape {after.shape} after one iteration; give it a fixed shape, or "
                         "allow the change with kf.autograph.experimental.set_loop_options("
                         "shape_invariants=[(var, shape)]) in the loop body"
                         + _dispatch.where(location))
    return after


def zeros_like_leaf(leaf):
    """A zero tensor with the dtype and (known dims of the) shape of a leaf."""
    shape = dims(leaf.shape) or []
    return array_ops.zeros([d if d is not None else 0 for d in shape], dtype=leaf.dtype)


def placeholder_like(value):
    """Zeros with the structure, dtypes and shapes of `value` (for unreturned retval_)."""
    return pack(value, [zeros_like_leaf(leaf) for leaf in flatten(value)])
