"""flatten / pack_sequence_as / map_structure over lists, tuples, dicts and namedtuples.

Dicts flatten in sorted key order, like tf.nest. Imports nothing from kilnflow: with
`expand_composites=True` a composite tensor (anything whose `_type_spec` has
`_to_components`, see kilnflow/type_spec.py) and a composite's TypeSpec expand into their
components, found by duck typing.
"""
from __future__ import annotations

from typing import Any, Callable, List


def is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def _composite_spec(x: Any) -> Any:
    """The TypeSpec that expands `x` (a composite value or a composite spec), else None."""
    spec = getattr(x, "_type_spec", None)
    if spec is not None and hasattr(spec, "_to_components"):
        return spec
    if hasattr(x, "_component_specs") and hasattr(x, "_from_components"):
        return x
    return None


def _expands(x: Any, composites: bool) -> bool:
    return is_nested(x) or composites and _composite_spec(x) is not None


def _children(x: Any) -> list:
    if not is_nested(x):  # a composite (only asked for with expand_composites)
        spec = _composite_spec(x)
        return list(spec._component_specs if spec is x else spec._to_components(x))
    if isinstance(x, dict):
        return [x[k] for k in _sorted_keys(x)]
    return list(x)


def _sorted_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return sorted(d, key=repr)


def flatten(structure: Any, expand_composites: bool = False) -> List[Any]:
    """Leaves of a nested structure, depth first (dict values by sorted key)."""
    out: list = []
    stack = [structure]
    while stack:
        x = stack.pop()
        if _expands(x, expand_composites):
            stack.extend(reversed(_children(x)))
        else:
            out.append(x)
    return out


def _rebuild(template: Any, children: list) -> Any:
    if not is_nested(template):
        return _composite_spec(template)._from_components(children)
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


def _pack(x: Any, leaves: Any, composites: bool = False) -> Any:
    # module level, not a nested closure: a self-referencing closure would make a reference
    # cycle per call, keeping every packed output alive until the garbage collector runs
    if _expands(x, composites):
        return _rebuild(x, [_pack(c, leaves, composites) for c in _children(x)])
    return next(leaves)


_END = object()


def pack_sequence_as(structure: Any, flat: list, expand_composites: bool = False) -> Any:
    """Inverse of flatten: put `flat`'s items back into `structure`'s shape."""
    flat = list(flat)
    leaves = iter(flat)
    try:
        result = _pack(structure, leaves, expand_composites)
        complete = next(leaves, _END) is _END
    except StopIteration:
        complete = False
    if not complete:
        raise ValueError(f"Structure had {len(flatten(structure, expand_composites))} leaves, "
                         f"but flat sequence "
                         f"had {len(flat)}")
    return result


def map_structure(fn: Callable, *structures: Any, expand_composites: bool = False,
                  check_types: bool = True) -> Any:
    flats = [flatten(s, expand_composites) for s in structures]
    for f in flats[1:]:
        if len(f) != len(flats[0]):
            raise ValueError("The structures don't have the same number of elements")
    return pack_sequence_as(structures[0], [fn(*xs) for xs in zip(*flats)], expand_composites)


def assert_same_structure(a: Any, b: Any, check_types: bool = True,
                          expand_composites: bool = False) -> None:
    if expand_composites and len(flatten(a, True)) != len(flatten(b, True)):
        raise ValueError(f"The two structures don't have the same nested structure: {a} vs {b}")
    if structure_signature(a) != structure_signature(b):
        raise ValueError(f"The two structures don't have the same nested structure: {a} vs {b}")


def structure_signature(x: Any) -> Any:
    """A hashable description of the nesting only (leaves replaced by '.')."""
    if isinstance(x, dict):
        return ("dict", tuple((k, structure_signature(x[k])) for k in _sorted_keys(x)))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(structure_signature(c) for c in x))
    return "."
