"""Distributed values: one value per replica (`PerReplica`), or the same value on every
replica (`Mirrored`), and the helpers that split and regroup nested structures of them.

A DistributedValues is a tuple subclass that kf.nest rebuilds by type, so a kf.function
takes and returns them as their component tensors (traced by spec, not captured). The
helpers here walk structures stopping AT DistributedValues (`map_values`).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from kilnflow import nest


class DistributedValues(tuple):
    """Base of the values a strategy holds once per replica (TF's
    tf.distribute.DistributedValues); built as `PerReplica(v0, v1, ...)`.

    `strategy.experimental_local_results(v)` gives the per-replica components as a tuple.
    """

    def __new__(cls, *values: Any) -> "DistributedValues":
        return super().__new__(cls, values)

    @property
    def _fields(self) -> tuple:
        """Names, as a namedtuple's: kf.nest and kf.function rebuild such tuples by type."""
        return tuple(f"replica_{i}" for i in range(len(self)))

    @property
    def values(self) -> tuple:
        return tuple(self)

    def __repr__(self) -> str:
        inner = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self))
        return f"{type(self).__name__}:{{\n{inner}\n}}"

    def __bool__(self) -> bool:
        raise TypeError(f"A {type(self).__name__} value has no truth value: reduce it with "
                        "strategy.reduce or read its components with "
                        "strategy.experimental_local_results")


class PerReplica(DistributedValues):
    """A different value on each replica: what `strategy.run` returns, and what a
    distributed dataset yields."""


class Mirrored(DistributedValues):
    """The same value on every replica (for example the result of an all-reduce)."""


def map_values(fn: Callable[[Any], Any], structure: Any) -> Any:
    """nest.map_structure that stops at DistributedValues (passed to fn whole)."""
    if isinstance(structure, DistributedValues) or not nest.is_nested(structure):
        return fn(structure)
    if isinstance(structure, dict):
        return type(structure)((k, map_values(fn, v)) for k, v in structure.items()) \
            if type(structure) is not dict else {k: map_values(fn, v)
                                                 for k, v in structure.items()}
    children = [map_values(fn, c) for c in structure]
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*children)
    return tuple(children) if isinstance(structure, tuple) else type(structure)(children)


def flatten_values(structure: Any) -> list:
    """nest.flatten that keeps DistributedValues whole."""
    out: list = []
    map_values(out.append, structure)
    return out


def pack_values(structure: Any, flat: Sequence[Any]) -> Any:
    """Inverse of flatten_values."""
    items = iter(flat)
    return map_values(lambda _: next(items), structure)


def select_replica(replica_id: int, structure: Any) -> Any:
    """The structure as replica `replica_id` sees it: each DistributedValues leaf replaced
    by its component."""
    def pick(x: Any) -> Any:
        if isinstance(x, DistributedValues):
            return x[replica_id]
        return x
    return map_values(pick, structure)


def regroup(per_replica: Sequence[Any], wrap: type = PerReplica) -> Any:
    """N structures of the same shape (one per replica) -> one structure whose leaves are
    `wrap(components)`, or the leaf itself where every replica holds the same object."""
    first = per_replica[0]
    if len(per_replica) == 1:
        return first
    flats = [flatten_values(s) for s in per_replica]
    for i, flat in enumerate(flats[1:], start=1):
        if len(flat) != len(flats[0]):
            raise ValueError(f"Replica {i} returned a structure with {len(flat)} values "
                             f"where replica 0 returned {len(flats[0])}: every replica must "
                             "return the same structure")
    leaves = []
    for components in zip(*flats):
        if all(c is components[0] for c in components[1:]):
            leaves.append(components[0])
        else:
            leaves.append(wrap(*components))
    return pack_values(first, leaves)


def local_results(value: Any) -> tuple:
    """The components of a DistributedValues (a 1-tuple of anything else)."""
    if isinstance(value, DistributedValues):
        return tuple(value)
    return (value,)
