"""flatten / pack_sequence_as / map_structure over lists, tuples, dicts and namedtuples.

Dicts flatten in sorted key order, like tf.nest. Imports nothing from kilnflow.
"""
from __future__ import annotations

from typing import Any, Callable, List


def is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def _children(x: Any) -> list:
    if isinstance(x, dict):
        return [x[k] for k in _sorted_keys(x)]
    return list(x)


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


def flatten(structure: Any) -> List[Any]:
    """Leaves of a nested structure, depth first (dict values by sorted key)."""
    out: list = []
    stack = [structure]
    while stack:
        x = stack.pop()
        if is_nested(x):
            stack.extend(reversed(_children(x)))
        else:
            out.append(x)
    return out


def _rebuild(template: Any, children: list) -> Any:
    if isinstance(template, dict):
        keys = _sorted_keys(template)
        rebuilt = dict(zip(keys, children))
        return type(template)((k, rebuilt[k]) for k in template) if type(template) is not dict \
            else {k: rebuilt[k] for k in template}
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*children)
    if isinstance(template, tuple):
        return tuple(children)
    return list(children) if type(template) is list else type(template)(children)


def _pack(x: Any, leaves: Any) -> Any:
    # module level, not a nested closure: a self-referencing closure would make a reference
    # cycle per call, keeping every packed output alive until the garbage collector runs
    if is_nested(x):
        return _rebuild(x, [_pack(c, leaves) for c in _children(x)])
    return next(leaves)


_END = object()


def pack_sequence_as(structure: Any, flat: list) -> Any:
    """Inverse of flatten: put `flat`'s items back into `structure`'s shape."""
    flat = list(flat)
    leaves = iter(flat)
    try:
        result = _pack(structure, leaves)
        complete = next(leaves, _END) is _END
    except StopIteration:
        complete = False
    if not complete:
        raise ValueError(f"Structure had {len(flatten(structure))} leaves, but flat sequence "
                         f"had {len(flat)}")
    return result


def map_structure(fn: Callable, *structures: Any) -> Any:
    flats = [flatten(s) for s in structures]
    for f in flats[1:]:
        if len(f) != len(flats[0]):
            raise ValueError("The structures don't have the same number of elements")
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)])


def assert_same_structure(a: Any, b: Any) -> None:
    if structure_signature(a) != structure_signature(b):
        raise ValueError(f"The two structures don't have the same nested structure: {a} vs {b}")


def structure_signature(x: Any) -> Any:
    """A hashable description of the nesting only (leaves replaced by '.')."""
    if isinstance(x, dict):
        return ("dict", tuple((k, structure_signature(x[k])) for k in _sorted_keys(x)))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(structure_signature(c) for c in x))
    return "."
