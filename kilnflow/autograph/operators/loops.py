"""while_stmt and for_stmt: Python loops, or kf.while_loop for graph tensors.

    s, i = ag__.while_stmt(loop_test, loop_body, (s, i), ('s', 'i'))
    s = ag__.for_stmt(items, extra_test, loop_body, (s,), ('s',))

loop_test(*state) -> bool, loop_body(*state) -> new state, loop_body of a for
takes the item first; extra_test(*state) (or None) stops a for loop early (break,
return). `appended` names state variables that are lists only appended to.
A while loop is Python while its test is a Python value or an eager tensor; once
the test is a graph tensor, the remaining iterations become one while op. A for loop
is one while op over an int32 index when iterables.graph_rows can read its items by
index (graph tensors, tensor ranges, TensorArrays, enumerate / zip of those).
"""
from . import _dispatch
from kilnflow.shapes import TensorShape
from kilnflow.ops import cond as cond_ops
from kilnflow.ops import convert
from kilnflow.ops import iterator as iterator_ops
from kilnflow.ops import math as math_ops
from kilnflow.ops import while_loop as while_ops
from kilnflow.ops import array as array_ops
from kilnflow.ops import logging as logging_ops
from kilnflow import context
from kilnflow.graph import control_dependencies
from . import _tensor_state
from . import conditional
from . import iterables
from . import lists
from . import records
from . import special_values
from .conditional import as_tuple, from_tuple


def while_stmt(test, body, state, names, appended=(), loop_options=None):
    """`while test(*state): state = body(*state)`, or a while op."""
    location = _dispatch.user_location()
    count = len(names)
    state = tuple(state)
    outcome = "python"
    while True:
        with _dispatch.decision_scope():
            keep_going = test(*state)
        if _dispatch.is_symbolic(keep_going):
            records.record(location, "while", "graph")
            body = lists.guard_outer_lists(body, location, "loop")
            return from_tuple(tensor_while(test, body, state, names, appended, location,
                                           loop_options), count)
        if _dispatch.is_tensor(keep_going):
            outcome = "eager"
        if not keep_going:
            break
        state = as_tuple(body(*state), count)
    records.record(location, "while", outcome)
    return from_tuple(state, count)


def for_stmt(iterated, extra_test, body, state, names, appended=(), loop_options=None):
    """`for item in iterated: state = body(item, *state)` (stopping when extra_test
    fails), or a while op over a graph tensor's rows, a tensor range, a TensorArray
    or enumerate / zip of those (see iterables.graph_rows)."""
    location = _dispatch.user_location()
    count = len(names)
    state = tuple(state)
    if hasattr(iterated, "host_iterator") and _dispatch.building_graph():
        records.record(location, "for", "graph")  # a kf.data pipeline read by graph ops
        body = lists.guard_outer_lists(body, location, "loop")
        restart = not hasattr(iterated, "get_next")  # an iterator goes on where it is
        return from_tuple(dataset_for(iterated.host_iterator(), extra_test, body, state, names,
                                      appended, location, loop_options, restart), count)
    rows = iterables.graph_rows(iterated)
    if rows is not None:
        records.record(location, "for", "graph")
        body = lists.guard_outer_lists(body, location, "loop")
        return from_tuple(tensor_for(rows, extra_test, body, state, names, appended,
                                     location, loop_options), count)
    iterated = iterables.python_iterable(iterated)
    records.record(location, "for", records.outcome_of(iterated))
    iterator = iter(iterated)
    while True:
        if extra_test is not None:
            with _dispatch.decision_scope():
                keep_going = extra_test(*state)
            if _dispatch.is_symbolic(keep_going):
                state = _gated_iterations(iterator, keep_going, extra_test, body, state, names,
                                          location)
                break
            if not keep_going:
                break
        try:
            item = next(iterator)
        except StopIteration:
            break
        state = as_tuple(body(item, *state), count)
    return from_tuple(state, count)


def set_loop_options(parallel_iterations=None, swap_memory=None, maximum_iterations=None,
                     shape_invariants=None):
    """Options for the tensor loop whose body this call starts (shape_invariants: a list
    of (loop variable, shape) pairs; maximum_iterations). AutoGraph moves the call out
    of the loop body; called anywhere else it does nothing.

    >>> set_loop_options(shape_invariants=[])
    """
    del parallel_iterations, swap_memory, maximum_iterations, shape_invariants


def _gated_iterations(iterator, keep_going, extra_test, body, state, names, location):
    """The rest of a Python loop after a break/return that depends on a graph tensor:
    still unrolled, but each iteration runs inside a cond on "not stopped yet"."""
    records.record(location, "for", "graph")
    count = len(names)
    for item in iterator:
        state = conditional.tensor_if(
            keep_going, lambda *values: body(item, *values),
            lambda *values: from_tuple(values, count), state, names, location)
        with _dispatch.decision_scope():
            keep_going = extra_test(*state)
        if not _dispatch.is_symbolic(keep_going) and not keep_going:
            break
    return state


def tensor_for(rows, extra_test, body, state, names, appended, location,
               loop_options=None) -> tuple:
    """A while op over an int32 index: rows = (length, item_at) from graph_rows."""
    length, item_at = rows
    count = len(names)

    def test(index, *values):
        more = index < length
        if extra_test is None:
            return more
        return math_ops.logical_and(more, extra_test(*values))

    def step(index, *values):
        new = as_tuple(body(item_at(index), *values), count)
        return from_tuple((index + 1,) + new, count + 1)

    start = convert.constant(0)
    result = tensor_while(test, step, (start,) + tuple(state), ("<iteration>",) + tuple(names),
                          appended, location, loop_options)
    return result[1:]


def dataset_for(host, extra_test, body, state, names, appended, location,
                loop_options=None, restart=True) -> tuple:
    """A while op over a dataset's elements: MakeIterator starts the data over (for a
    dataset; an iterator continues), each iteration's IteratorGetNextAsOptional gives
    (has_value, *flat element)."""
    count = len(names)
    width = len(host.flat_specs)
    started = iterator_ops.make_iterator(host) if restart else None

    def test(has_value, *rest):
        if extra_test is None:
            return has_value
        return math_ops.logical_and(has_value, extra_test(*rest[width:]))

    def step(has_value, *rest):
        element = host.pack(list(rest[:width]))
        new = as_tuple(body(element, *rest[width:]), count)
        return from_tuple(iterator_ops.get_next_as_optional(host) + new, count + 1 + width)

    first = iterator_ops.get_next_as_optional(host, after=started)
    labels = ("<has_value>",) + ("<element>",) * width + tuple(names)
    result = tensor_while(test, step, first + tuple(state), labels, appended, location,
                          loop_options)
    return result[1 + width:]


def _needs_defining(value) -> bool:
    """A loop variable with no value before the loop (unbound, or None as TF counts it)."""
    return value is None or isinstance(value, special_values.Undefined)


def _initial_values(state, names, appended, location) -> tuple:
    """Loop state ready for a while op, and whether a dry run must fill some of it."""
    values = []
    needs_dry_run = False
    for name, value in zip(names, state):
        if name in appended and isinstance(value, list):
            if value:
                value = lists.new_tensor_list(name, value, location)
            else:
                value = lists.SpecRecorder()
                needs_dry_run = True
        elif isinstance(value, special_values.UndefinedReturnValue) or _needs_defining(value):
            needs_dry_run = True
        else:
            value = _tensor_state.pack(value, [_tensor_state.to_tensor(leaf, name, location)
                                               for leaf in _tensor_state.flatten(value)])
        values.append(value)
    return values, needs_dry_run


def _not_defined(name, value, location, cause=None) -> ValueError:
    """TF's error for a variable a tensor loop assigns but cannot give a value before it."""
    text = (f"'{name}' is not allowed to be None before the loop" if value is None else
            f"'{name}' must be defined before the loop")
    text += ": it is assigned in a tensor loop and used after it" + (
        ", but not on every path of one iteration" if cause is None else "")
    if cause is not None:
        text += (f". Note: AutoGraph tried to define it automatically, but ran into a "
                 f"{type(cause).__name__}: {cause}")
    return ValueError(text + _dispatch.where(location))


def _dry_run(body, values, names, location) -> tuple:
    """Learn what an undefined retval_, an empty list or a variable first assigned in the
    loop (TF: "defined automatically") becomes by tracing the body in a cond branch that
    never runs; returns (values before the loop, {defined name: its leaves' shapes})."""
    seen = []
    kf_constant = convert.constant
    defining = [n for n, v in zip(names, values) if _needs_defining(v)]

    def trace_body():
        # Loop variables vary: hide the constant values of their initial tensors, so a
        # shape that depends on them (kf.zeros([i])) comes out unknown, as in the loop.
        inputs = values if not defining else [_tensor_state.pack(v, [
            array_ops.identity(leaf) if _dispatch.is_tensor(leaf) else leaf
            for leaf in _tensor_state.flatten(v)]) for v in values]
        seen.extend(as_tuple(body(*inputs), len(names)))
        return kf_constant(0)

    with _dispatch.decision_scope():
        try:
            cond_ops.cond(kf_constant(False), trace_body, lambda: kf_constant(0))
        except (UnboundLocalError, TypeError, ValueError, KeyError) as e:
            if not defining:  # errors of the body itself are the user's, as they are
                raise
            first = defining[0]
            raise _not_defined(first, values[names.index(first)], location, e) from e
    filled = []
    invariants = {}
    for name, value, after in zip(names, values, seen):
        if isinstance(value, lists.SpecRecorder):
            value = lists.new_tensor_list(name, [], location, first=value.first)
        elif isinstance(value, special_values.UndefinedReturnValue):
            if special_values.is_undefined(after):
                raise ValueError("a return inside a tensor loop could not be given a value "
                                 "before the loop" + _dispatch.where(location))
            value = _tensor_state.placeholder_like(after)
        elif name in defining:
            leaves = _tensor_state.flatten(after)
            if special_values.is_undefined(after) or any(leaf is None for leaf in leaves):
                raise _not_defined(name, value, location)
            try:
                leaves = [_tensor_state.to_tensor(leaf, name, location) for leaf in leaves]
                if any(_tensor_state.is_array(leaf) for leaf in leaves):  # as TF
                    raise TypeError("a TensorArray cannot be given a placeholder value")
            except TypeError as e:
                raise _not_defined(name, value, location, e) from e
            # The value is never read before the first iteration replaces it (the dry run
            # proved it): zeros of its dtype, with a free shape where a dimension may vary.
            invariants[name] = [leaf.shape for leaf in leaves]
            value = _tensor_state.pack(after, [_tensor_state.zeros_like_leaf(leaf)
                                               for leaf in leaves])
        filled.append(value)
    return filled, invariants


def _shape_invariants(state, values, invariants) -> list:
    """Per loop-variable leaf: the shape set_loop_options gave its value, else None."""
    wanted = [(value, shape) for value, shape in invariants]
    result = []
    for raw, value in zip(state, values):
        raw_leaves = _tensor_state.flatten(raw)
        leaves = _tensor_state.flatten(value)
        if len(raw_leaves) != len(leaves):
            raw_leaves = [None] * len(leaves)
        for leaf in raw_leaves:
            shape = next((s for v, s in wanted if v is leaf and leaf is not None), None)
            result.append(None if shape is None else TensorShape(shape))
    return result


class _Grown(Exception):
    """args (index, grown): a state dict gained keys (TF: new composite names d['new'])."""


def _grow(old, new):
    """`old` plus the dict keys `new` adds, or None if `new` differs in another way."""
    if not (isinstance(old, dict) and isinstance(new, dict)) or not set(old) <= set(new):
        return None
    grown = type(old)()
    for key in new:  # in the body's key order: the loop's leaves follow it
        same = key not in old or _tensor_state.same_structure(old[key], new[key])
        grown[key] = (new[key] if key not in old else old[key]) if same else \
            _grow(old[key], new[key])
        if grown[key] is None:
            return None
    return grown


def _define_grown(state, values, error, names, location) -> tuple:
    """The state with zeros for the keys the loop adds, and their leaves' shapes."""
    index, grown = error.args
    kept = {id(leaf) for leaf in _tensor_state.flatten(values[index])}
    leaves, shapes = [], []
    for leaf in _tensor_state.flatten(grown):
        fresh = id(leaf) not in kept
        leaf = _tensor_state.to_tensor(leaf, names[index], location) if fresh else leaf
        leaves.append(_tensor_state.zeros_like_leaf(leaf) if fresh else leaf)
        shapes.append(leaf.shape if fresh else None)
    state = list(state)
    state[index] = _tensor_state.pack(grown, leaves)
    return tuple(state), shapes


def tensor_while(test, body, state, names, appended, location, loop_options=None,
                 grown=None) -> tuple:
    """Build kf.while_loop over the flattened state; returns the state after the loop.

    A variable or dict key first set in the loop (or None before it) gets a placeholder
    value and, as in TF, an Assert that the loop ran at least once to give it one."""
    loop_options = loop_options or {}
    values, needs_dry_run = _initial_values(state, names, appended, location)
    defined = dict(grown or {})
    if needs_dry_run:
        values, found = _dry_run(body, values, names, location)
        defined.update(found)
    before = [_tensor_state.flatten(v) for v in values]
    invariants = _shape_invariants(state, values, loop_options.get("shape_invariants", ()))
    relaxed = iter(invariants)
    before_shapes = [[next(relaxed) for _ in group] for group in before]
    for i, name in enumerate(names):
        if name in defined:
            before_shapes[i] = [None if not _tensor_state.dims(s) or None not in
                                _tensor_state.dims(s) else s for s in defined[name]]
    invariants = [shape for group in before_shapes for shape in group]
    count = len(names)
    counted = 1 if defined else 0  # a leading iteration counter for the Assert

    def unflatten(leaves):
        return _tensor_state.pack(values, leaves)

    def loop_test(*leaves):
        keep_going = test(*unflatten(leaves[counted:]))
        return _tensor_state.to_tensor(keep_going, "<loop condition>", location)

    def loop_body(*leaves):
        new = as_tuple(body(*unflatten(leaves[counted:])), count)
        result = [leaves[0] + 1] if counted else []
        for name, old, value, old_leaves, shapes in zip(names, values, new, before,
                                                        before_shapes):
            if not _tensor_state.same_structure(old, value):
                if _grow(old, value) is not None:
                    raise _Grown(names.index(name), _grow(old, value))
                raise TypeError(f"loop variable '{name}' changes its structure in the loop: "
                                f"{old!r} before, {value!r} after one iteration"
                                + _dispatch.where(location))
            result += [_tensor_state.check_iteration(name, b, a, location, shape)
                       for b, a, shape in zip(old_leaves, _tensor_state.flatten(value), shapes)]
        return tuple(result)

    leaves = [leaf for group in before for leaf in group]
    if counted:
        leaves = [convert.constant(0)] + leaves
        invariants = [None] + invariants
    extra = {}
    if any(shape is not None for shape in invariants):
        extra["shape_invariants"] = invariants
    if loop_options.get("maximum_iterations") is not None:
        extra["maximum_iterations"] = loop_options["maximum_iterations"]
    try:
        out = while_ops.while_loop(loop_test, loop_body, tuple(leaves), **extra)
    except _Grown as error:  # trace again with the new keys defined before the loop
        state, shapes = _define_grown(state, values, error, names, location)
        return tensor_while(test, body, state, names, appended, location, loop_options,
                            {**defined, names[error.args[0]]: shapes})
    if not isinstance(out, (tuple, list)):
        out = (out,)
    if counted:
        out = _after_one_iteration(out[0], out[1:], [n for n in names if n in defined],
                                   location)
    final = unflatten(out)
    return tuple(v.stack() if isinstance(v, lists.TensorList) else v for v in final)


def _after_one_iteration(iterations, leaves, names, location) -> list:
    """The loop's outputs, waiting for TF's check that the loop gave its variables values."""
    logging_ops.Assert(math_ops.greater(iterations, 0),
                       [f"loop must iterate at least once to initialize {', '.join(names)}"
                        + _dispatch.where(location)])
    check = context.ctx.graph.operations[-1]
    with control_dependencies([check]):
        return [array_ops.identity(leaf) if _dispatch.is_tensor(leaf) else leaf
                for leaf in leaves]
