"""Iterator ops: a kf.data pipeline read from inside a graph.

The pipeline runs on the host; these stateful ops hold it as an attr (anything with
`reset()`, `next_flat()` and `flat_specs`: kf.data's HostIterator, which this layer does
not import). AutoGraph lowers `for x in dataset` in a traced function to MakeIterator and
a while loop over IteratorGetNextAsOptional; a call starts the data from the beginning.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.shapes import TensorSpec


def _make_iterator_kernel(*, iterator: Any) -> Any:
    iterator.reset()
    return np.bool_(True)


MAKE_ITERATOR = defop("MakeIterator", shape=lambda *, iterator: TensorSpec([], _dtypes.bool),
                      kernel=_make_iterator_kernel, stateful=True)


def _get_next_rule(*after: Any, iterator: Any, specs: tuple) -> list:
    return [TensorSpec([], _dtypes.bool)] + list(specs)


def _get_next_kernel(*after: Any, iterator: Any, specs: tuple) -> tuple:
    has_value, flat = iterator.next_flat()
    return (np.bool_(has_value),) + tuple(flat)


GET_NEXT = defop("IteratorGetNextAsOptional", shape=_get_next_rule, kernel=_get_next_kernel,
                 stateful=True, multi_output=True, same_dtype=False)


def make_iterator(iterator: Any) -> Any:
    """Start `iterator`'s data over (a bool token)."""
    return bind(MAKE_ITERATOR, (), {"iterator": iterator})


def get_next_as_optional(iterator: Any, after: Any = None) -> tuple:
    """(has_value, *flat element): at the end has_value is False and the element zeros.
    `after` (MakeIterator's token) is read as an input, so a Session running this op runs
    the restart first even though nothing else orders them in a compat.v1 graph."""
    inputs = () if after is None else (after,)
    return tuple(bind(GET_NEXT, inputs, {"iterator": iterator,
                                         "specs": tuple(iterator.flat_specs)}))


def _get_next_strict_kernel(*, iterator: Any, specs: tuple) -> tuple:
    has_value, flat = iterator.next_flat()
    if not has_value:
        raise errors.OutOfRangeError("End of sequence [Op:IteratorGetNext]")
    return tuple(flat)


GET_NEXT_STRICT = defop("IteratorGetNext", shape=lambda *, iterator, specs: list(specs),
                        kernel=_get_next_strict_kernel, stateful=True, multi_output=True,
                        same_dtype=False)


def get_next(iterator: Any) -> tuple:
    """The flat next element; OutOfRangeError when the graph runs past the end."""
    return tuple(bind(GET_NEXT_STRICT, (), {"iterator": iterator,
                                            "specs": tuple(iterator.flat_specs)}))
