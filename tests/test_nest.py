"""kf.nest.pack_sequence_as: inverse of flatten, no reference cycle per call (outputs of
multi-output functions are freed as soon as the caller drops them, GC or not)."""
import gc
import weakref

import pytest

import kilnflow as kf


class Leaf:
    pass


def test_pack_round_trips_and_checks_the_count():
    structure = [1, (2, {"a": 3, "b": [4]})]
    assert kf.nest.pack_sequence_as(structure, kf.nest.flatten(structure)) == structure
    with pytest.raises(ValueError, match="Structure had 4 leaves, but flat sequence had 3"):
        kf.nest.pack_sequence_as(structure, [1, 2, 3])
    with pytest.raises(ValueError, match="had 5"):
        kf.nest.pack_sequence_as(structure, [1, 2, 3, 4, 5])


def test_packing_makes_no_reference_cycle():
    gc.disable()
    try:
        leaf = Leaf()
        ref = weakref.ref(leaf)
        packed = kf.nest.pack_sequence_as([0, (0, {"a": 0})], [leaf, 1, 2])
        del packed, leaf
        assert ref() is None  # freed by reference counting alone
    finally:
        gc.enable()
