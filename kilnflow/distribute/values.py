"""Distributed values: one value per replica (`PerReplica`), or the same value on every
replica (`Mirrored`), and the helpers that split and regroup nested structures of them.

A DistributedValues is a leaf for kf.nest (it is not a list, tuple or dict), so nested
arguments are mapped with nest and the per-replica leaves picked out here.
"""
from __future__ import annotations

from typing import Any, Sequence

from kilnflow import nest


class DistributedValues:
    """Base of the values a strategy holds once per replica (TF's tf.distribute.DistributedValues).

    `strategy.experimental_local_results(v)` gives the per-replica components as a tuple.
    """

    def __init__(self, values: Sequence[Any]):
        self._values = tuple(values)

    @property
    def values(self) -> tuple:
        return self._values

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        inner = ",\n".join(f"  {i}: {v!r}" for i, v in enumerate(self._values))
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


def select_replica(replica_id: int, structure: Any) -> Any:
    """The structure as replica `replica_id` sees it: each DistributedValues leaf replaced
    by its component."""
    def pick(x: Any) -> Any:
        if isinstance(x, DistributedValues):
            return x.values[replica_id]
        return x
    return nest.map_structure(pick, structure)


def regroup(per_replica: Sequence[Any], wrap: type = PerReplica) -> Any:
    """N structures of the same shape (one per replica) -> one structure whose leaves are
    `wrap(components)`, or the leaf itself where every replica holds the same object."""
    first = per_replica[0]
    if len(per_replica) == 1:
        return first
    flats = [nest.flatten(s) for s in per_replica]
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
            leaves.append(wrap(components))
    return nest.pack_sequence_as(first, leaves)


def local_results(value: Any) -> tuple:
    """The components of a DistributedValues (a 1-tuple of anything else)."""
    if isinstance(value, DistributedValues):
        return value.values
    return (value,)
