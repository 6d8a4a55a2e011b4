"""if_stmt and if_exp: a Python if, or kf.cond when the condition is a graph tensor.

    a, b = ag__.if_stmt(cond, if_true, if_false, (a, b), ('a', 'b'))

if_true / if_false take the state values as arguments and return the new ones
(one value for one name, a tuple for several, nothing for none). A Python value
or an eager tensor as condition runs exactly one branch, as Python would.
"""
from . import _dispatch
from kilnflow.ops import cond as cond_ops
from kilnflow.ops import math as math_ops
from . import _tensor_state
from . import lists
from . import records
from . import special_values


def as_tuple(result, count: int) -> tuple:
    """A body's return value as a tuple of `count` state values."""
    if count == 0:
        return ()
    if count == 1:
        return (result,)
    return tuple(result)


def from_tuple(state: tuple, count: int):
    """What the generated assignment expects: the value itself for one name."""
    return state[0] if count == 1 else tuple(state)


def if_stmt(cond, if_true, if_false, state, names):
    """Run the branch `cond` selects, or build a cond op for a graph tensor."""
    location = _dispatch.user_location()
    outcome = records.outcome_of(cond)
    records.record(location, "if", outcome)
    if outcome == "graph":
        return from_tuple(tensor_if(cond, if_true, if_false, tuple(state), names, location),
                          len(names))
    branch = if_true if cond else if_false
    return branch(*state)


def if_exp(cond, if_true, if_false):
    """`if_true() if cond else if_false()`, lazily; a cond op for a graph tensor."""
    if _dispatch.is_symbolic(cond):
        location = _dispatch.user_location()
        records.record(location, "ternary", "graph")
        result, = tensor_if(cond, if_true, if_false, (), ("<value>",), location)
        return result
    return if_true() if cond else if_false()


class _TraceOtherBranchFirst(Exception):
    """The first traced branch left retval_ undefined: the other must go first."""


def _fresh_containers(value):
    """`value` with its lists and dicts copied (leaves shared): a branch assigning
    `lst[0] = ...` must not change what the other branch is traced with."""
    if isinstance(value, list):
        return [_fresh_containers(v) for v in value]
    if isinstance(value, dict):
        return type(value)((k, _fresh_containers(v)) for k, v in value.items())
    return value


def _branch_runner(fn, state, names, location, label, other_label, first_outputs):
    """A no-argument function for kf.cond that runs one branch and flattens its state.

    The first branch traced stores its outputs in `first_outputs`; the second is
    checked against them, and an undefined retval_ in it becomes zeros shaped like
    the first branch's (do_return is False on that path, so they are never read).
    """
    def run():
        outputs = list(as_tuple(fn(*_fresh_containers(list(state))), len(names)))
        first = not first_outputs
        for index, (name, value) in enumerate(zip(names, outputs)):
            if isinstance(value, special_values.UndefinedReturnValue):
                if first:
                    raise _TraceOtherBranchFirst()
                outputs[index] = _tensor_state.placeholder_like(first_outputs[index])
            elif isinstance(value, special_values.Undefined):
                raise ValueError(f"'{name}' must also be initialized in the {label} branch: "
                                 f"it is set in the {other_label} branch of a tensor `if` and "
                                 "used after it" + _dispatch.where(location))
            if not first and not _tensor_state.same_structure(first_outputs[index],
                                                              outputs[index]):
                key = _new_key(first_outputs[index], outputs[index])
                if key is not None and not name.startswith("retval"):  # TF: new d['y']
                    raise ValueError(f"'{name}{key[0]}' must also be initialized in the "
                                     f"{(other_label, label)[key[1]]} branch"
                                     + _dispatch.where(location))
                raise TypeError(f"'{name}' has a different structure in the two branches of "
                                f"a tensor `if`" + _dispatch.where(location))
        leaves = []
        for index, (name, value) in enumerate(zip(names, outputs)):
            mine = [_tensor_state.to_tensor(leaf, name, location)
                    for leaf in _tensor_state.flatten(value, arrays_as_tensors=True)]
            if not first:
                _check_dtypes(name, _tensor_state.flatten(first_outputs[index]), mine,
                              other_label, label, location)
            leaves += mine
        if first:
            first_outputs.extend(_tensor_state.pack(outputs, leaves, arrays_as_tensors=True))
        return tuple(leaves)
    return run


def _new_key(a, b):
    """("['k']", 1 if only `a` has it else 0) for the first dict key one side lacks."""
    for key in (list(a) + list(b)) if isinstance(a, dict) and isinstance(b, dict) else ():
        if (key in a) != (key in b):
            return f"[{key!r}]", int(key in a)
        inner = _new_key(a[key], b[key])
        if inner is not None:
            return f"[{key!r}]{inner[0]}", inner[1]
    return None


def _check_dtypes(name, first, second, first_label, second_label, location) -> None:
    """A variable must have the same dtype after both branches (named, unlike cond's)."""
    for a, b in zip(first, second):
        a_dtype, b_dtype = getattr(a, "dtype", None), getattr(b, "dtype", None)
        if _tensor_state.is_array(a) or a_dtype is None or a_dtype == b_dtype:
            continue
        raise TypeError(f"'{name}' is {a_dtype.name} after the {first_label} branch of a "
                        f"tensor `if` but {b_dtype.name} after the {second_label} branch; "
                        "both branches must give it the same dtype (e.g. with kf.cast, or "
                        "1. instead of 1)" + _dispatch.where(location))


def tensor_if(pred, if_true, if_false, state: tuple, names, location) -> tuple:
    """Build kf.cond(pred, ...) over the branch functions; returns the new state tuple."""
    cond = cond_ops.cond
    if_true = lists.guard_outer_lists(if_true, location, "`if`")
    if_false = lists.guard_outer_lists(if_false, location, "`if`")
    for swapped in (False, True):
        first_outputs = []
        if swapped:
            pred = math_ops.logical_not(pred)
            if_true, if_false = if_false, if_true
        labels = ("else", "if") if swapped else ("if", "else")
        true_fn = _branch_runner(if_true, state, names, location, labels[0], labels[1],
                                 first_outputs)
        false_fn = _branch_runner(if_false, state, names, location, labels[1], labels[0],
                                  first_outputs)
        try:
            leaves = cond(pred, true_fn, false_fn)
        except _TraceOtherBranchFirst:
            if swapped:
                raise ValueError("a tensor `if` returns from the function in neither branch "
                                 "it traced first" + _dispatch.where(location)) from None
            continue
        if not isinstance(leaves, (tuple, list)):
            leaves = (leaves,)
        return tuple(_tensor_state.pack(first_outputs, leaves, arrays_as_tensors=True))
    raise AssertionError("unreachable")
