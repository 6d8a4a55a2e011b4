"""Iterators: OwnedIterator (what `iter(dataset)` returns: `next()`, `get_next()`,
`get_next_as_optional()`), Optional, and HostIterator, the flat NumPy interface a graph op
can call to run a pipeline from inside a traced function.
"""
from __future__ import annotations

import threading
from typing import Any, List, Optional as _Opt, Tuple

import numpy as np

from kilnflow import errors
from kilnflow.context import ctx
from kilnflow.data import structure
from kilnflow.ops import iterator as iterator_ops
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.runtime import profile
from kilnflow.shapes import TensorSpec


class Optional:
    """tf.experimental.Optional: a value that may be missing (get_next_as_optional)."""

    def __init__(self, spec: Any, flat: _Opt[list]):
        self.element_spec = spec
        self._flat = flat

    def has_value(self) -> Any:
        return convert_to_tensor(self._flat is not None)

    def get_value(self) -> Any:
        if self._flat is None:
            raise errors.InvalidArgumentError("Optional.get_value: the optional has no value")
        return structure.to_tensors(self.element_spec, self._flat)


class OwnedIterator:
    """Iterates a dataset eagerly, yielding elements as EagerTensor structures.

    >>> import kilnflow as kf
    >>> it = iter(kf.data.Dataset.range(2))
    >>> int(next(it)), int(it.get_next())
    (0, 1)
    >>> bool(it.get_next_as_optional().has_value())
    False
    """

    def __init__(self, dataset: Any):
        self._spec = dataset.element_spec
        self._host = HostIterator(dataset)  # the state a graph op would share
        self._pack = structure.tensor_packer(self._spec)
        # made while a graph is being built (`for x in ds` that AutoGraph did not convert):
        # read now, at trace time, so the unrolled loop ends with the data; an iterator
        # made eagerly and used in a graph reads when the graph runs (IteratorGetNext)
        self._at_trace_time = ctx.graph is not None

    @property
    def element_spec(self) -> Any:
        return self._spec

    def __iter__(self) -> "OwnedIterator":
        return self

    def _next_flat(self) -> _Opt[list]:
        return self._host.next_or_none()

    def _next_in_graph(self) -> Any:
        """Inside a traced function: an IteratorGetNext op reading this iterator's stream
        when the graph runs (OutOfRangeError there at the end), not an element read now."""
        return self._host.pack(list(iterator_ops.get_next(self._host)))

    def host_iterator(self) -> "HostIterator":
        """This iterator's state as a HostIterator: a graph op reading it advances the
        same stream that next() reads."""
        return self._host

    def __next__(self) -> Any:
        if ctx.graph is not None and not self._at_trace_time:
            return self._next_in_graph()
        flat = self._next_flat()
        if flat is None:
            raise StopIteration
        return self._pack(flat)

    def get_next(self, name: _Opt[str] = None) -> Any:
        """The next element; OutOfRangeError at the end of the dataset."""
        if ctx.graph is not None and not self._at_trace_time:
            return self._next_in_graph()
        flat = self._next_flat()
        if flat is None:
            raise errors.OutOfRangeError("End of sequence")
        return self._pack(flat)

    def get_next_as_optional(self) -> Optional:
        return Optional(self._spec, self._next_flat())

    def __repr__(self) -> str:
        return f"<OwnedIterator element_spec={self._spec}>"


class HostIterator:
    """A pipeline seen as flat NumPy arrays, for a stateful graph op's kernel.

    Made by `dataset.host_iterator()`. `flat_specs` lists one TensorSpec per component
    (the op's outputs), `pack(flat)` rebuilds the element structure from them.
    `next_flat()` returns (has_value, arrays): at the end of the data has_value is False
    and the arrays are zeros of the specs' shapes (unknown dims 0), so a while loop built
    on it can test has_value and never reads them. `reset()` starts over, as a new
    iterator would (a `for` over a dataset inside a function starts from the beginning on
    every call).

    >>> import kilnflow as kf
    >>> host = kf.data.Dataset.range(2).host_iterator()
    >>> host.next_flat()
    (True, [array(0)])
    >>> host.next_flat()[0], host.next_flat()[0]
    (True, False)
    """

    def __init__(self, dataset: Any):
        self._dataset = dataset
        self.element_spec = dataset.element_spec
        self.flat_specs: List[TensorSpec] = structure.flat_specs(self.element_spec)
        self._lock = threading.Lock()
        self._source = dataset._elements()

    def reset(self) -> None:
        with self._lock:
            self._source = self._dataset._elements()

    def next_or_none(self) -> _Opt[list]:
        """The next flat element, or None at the end."""
        with self._lock:  # one consumer at a time: generators are not reentrant
            if not profile.recording():
                return next(self._source, None)
            start = profile.clock()   # a profile records: tf.data shows on its timeline
            flat = next(self._source, None)
            profile.host_range("Iterator::GetNext", "tf.data", start)
            return flat

    def next_flat(self) -> Tuple[bool, list]:
        flat = self.next_or_none()
        if flat is None:
            return False, [np.zeros([d or 0 for d in s.shape.as_list()] if s.shape.rank
                                    is not None else [], s.dtype.as_numpy_dtype)
                           for s in self.flat_specs]
        return True, list(flat)

    def pack(self, flat: list) -> Any:
        return structure.pack(self.element_spec, flat)


class NumpyIterator:
    """tf.data.NumpyIterator: what `dataset.as_numpy_iterator()` returns; yields elements
    as NumPy values (arrays; NumPy scalars for rank 0) in the element structure."""

    def __init__(self, dataset: Any):
        self.element_spec = dataset.element_spec
        self._source = dataset._elements()

    def __iter__(self) -> "NumpyIterator":
        return self

    def __next__(self) -> Any:
        return structure.to_numpy(self.element_spec, next(self._source))

    def next(self) -> Any:
        return self.__next__()

    def __repr__(self) -> str:
        return f"<NumpyIterator element_spec={self.element_spec}>"


class IteratorSpec:
    """tf.data.IteratorSpec: the type of an iterator over elements of `element_spec`."""

    def __init__(self, element_spec: Any):
        self.element_spec = element_spec

    @staticmethod
    def from_value(value: Any) -> "IteratorSpec":
        return IteratorSpec(value.element_spec)

    def is_compatible_with(self, other: Any) -> bool:
        """True for an IteratorSpec or an iterator of the same element_spec."""
        return getattr(other, "element_spec", None) == self.element_spec

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, IteratorSpec) and other.element_spec == self.element_spec

    def __hash__(self) -> int:
        return hash(repr(self.element_spec))

    def __repr__(self) -> str:
        return f"IteratorSpec({self.element_spec})"
