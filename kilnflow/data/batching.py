"""batch, padded_batch, unbatch and window, plus DatasetSpec (a window's components).

batch reads blocks when its input has them (rows are sliced and joined, never stacked one
by one); otherwise it stacks elements and names the first component whose shapes differ.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Iterator, List, Optional

import numpy as np

from kilnflow import errors, nest
from kilnflow.data import structure
from kilnflow.data.dataset import INFINITE, UNKNOWN, Dataset, as_count
from kilnflow.shapes import TensorShape, TensorSpec


def _batch_size(value: Any, what: str) -> int:
    n = as_count(value, what, "batch_size")
    if n < 1:
        raise errors.InvalidArgumentError(f"{what}: batch_size must be positive, got {n}")
    return n


def _batched_count(n: int, size: int, drop: bool) -> int:
    if n < 0:
        return n
    return n // size if drop else -(-n // size)


def stack(elements: List[list], what: str, spec: Any) -> list:
    """Stacks elements component by component, with TF's error for differing shapes."""
    out = []
    for c, parts in enumerate(zip(*elements)):
        first = parts[0].shape
        # rows copied into one preallocated batch: np.stack would make a view per row
        batch = np.empty((len(parts),) + first, parts[0].dtype)
        for i, p in enumerate(parts):
            if p.shape != first:
                raise errors.InvalidArgumentError(
                    f"{what}: Cannot batch tensors with different shapes in component {c}. "
                    f"First element had shape {list(first)} and element {i} had shape "
                    f"{list(p.shape)} (element_spec {spec}). Use padded_batch for elements "
                    f"of different shapes.")
            batch[i, ...] = p  # (not batch[i]: a 0-d object array would be nested)
        out.append(batch)
    return out


class Batch(Dataset):
    def __init__(self, source: Dataset, batch_size: int, drop_remainder: bool):
        self._size = _batch_size(batch_size, "batch")
        self._drop = bool(drop_remainder)
        spec = structure.batched(source.element_spec, self._size if self._drop else None)
        super().__init__([source], spec)

    def _cardinality(self) -> int:
        return _batched_count(self._inputs[0]._cardinality(), self._size, self._drop)

    def _elements(self) -> Iterator[list]:
        source = self._inputs[0]
        if source.native_blocks and all(  # blocks of differing shapes can't be joined
                s.shape.is_fully_defined() for s in structure.flat_specs(source.element_spec)):
            yield from self._from_blocks(source._blocks())
            return
        pending: list = []
        for flat in source._elements():
            pending.append(flat)
            if len(pending) == self._size:
                yield stack(pending, "batch", source.element_spec)
                pending = []
        if pending and not self._drop:
            yield stack(pending, "batch", source.element_spec)

    def _from_blocks(self, blocks: Iterator[list]) -> Iterator[list]:
        """Batches cut from blocks: a batch inside one block is a view; one that spans
        blocks joins just the rows it needs."""
        size = self._size
        pending: deque = deque()  # blocks (lists of arrays) not yet in a batch
        count = 0
        for block in blocks:
            rows = len(block[0])
            if not rows:
                continue
            pending.append(block)
            count += rows
            while count >= size:
                yield _take_rows(pending, size)
                count -= size
        if count and not self._drop:
            yield _take_rows(pending, count)


def _take_rows(pending: deque, n: int) -> list:
    """The first n rows of the queued blocks, removed from the queue."""
    first = pending[0]
    if len(first[0]) >= n:
        if len(first[0]) == n:
            pending.popleft()
        else:
            pending[0] = [a[n:] for a in first]
        return [a[:n] for a in first]
    parts = []
    while n:
        block = pending.popleft()
        rows = len(block[0])
        if rows > n:
            pending.appendleft([a[n:] for a in block])
            block = [a[:n] for a in block]
            rows = n
        parts.append(block)
        n -= rows
    return [np.concatenate(columns) for columns in zip(*parts)]


class PaddedBatch(Dataset):
    def __init__(self, source: Dataset, batch_size: int, padded_shapes: Any,
                 padding_values: Any, drop_remainder: bool):
        what = "padded_batch"
        self._size = _batch_size(batch_size, what)
        self._drop = bool(drop_remainder)
        spec = source.element_spec
        specs = structure.flat_specs(spec)
        if padded_shapes is None:
            shapes = [s.shape for s in specs]
        else:
            shapes = [TensorShape(s) for s in structure.flatten_up_to(spec, padded_shapes, what)]
        for s, shape in zip(specs, shapes):
            too_small = shape.rank is not None and s.shape.rank == shape.rank and any(
                d is not None and p is not None and d > p
                for d, p in zip(s.shape.as_list(), shape.as_list()))
            if shape.rank is None or s.shape.rank != shape.rank or too_small:
                raise errors.InvalidArgumentError(
                    f"{what}: padded shape {shape} does not fit component {s} (element_spec "
                    f"{spec})")
        self._shapes = [s.as_list() for s in shapes]
        if padding_values is None:
            values = [np.zeros((), s.dtype.as_numpy_dtype) for s in specs]
        else:
            values = [np.asarray(v, s.dtype.as_numpy_dtype) for v, s in
                      zip(structure.flatten_up_to(spec, padding_values, what), specs)]
        self._values = values
        out = nest.pack_sequence_as(spec, [TensorSpec(shape, s.dtype) for shape, s in
                                           zip(shapes, specs)]) if nest.is_nested(spec) \
            else TensorSpec(shapes[0], specs[0].dtype)
        super().__init__([source], structure.batched(out, self._size if self._drop else None))

    def _cardinality(self) -> int:
        return _batched_count(self._inputs[0]._cardinality(), self._size, self._drop)

    def _pad(self, elements: List[list]) -> list:
        out = []
        for c, parts in enumerate(zip(*elements)):
            wanted = self._shapes[c]
            longest = [max(p.shape[d] for p in parts) for d in range(len(wanted))]
            target = [w if w is not None else m for w, m in zip(wanted, longest)]
            for p in parts:
                if any(n > t for n, t in zip(p.shape, target)):
                    raise errors.InvalidArgumentError(
                        f"padded_batch: component {c} has shape {list(p.shape)}, larger than "
                        f"the padded shape {target}")
            batch = np.full([len(parts)] + target, self._values[c], dtype=parts[0].dtype)
            for i, p in enumerate(parts):
                batch[(i,) + tuple(slice(0, n) for n in p.shape)] = p
            out.append(batch)
        return out

    def _elements(self) -> Iterator[list]:
        pending: list = []
        for flat in self._inputs[0]._elements():
            pending.append(flat)
            if len(pending) == self._size:
                yield self._pad(pending)
                pending = []
        if pending and not self._drop:
            yield self._pad(pending)


class Unbatch(Dataset):
    """Each element's rows; every input element becomes one block."""

    native_blocks = True

    def __init__(self, source: Dataset):
        super().__init__([source], structure.unbatched(source.element_spec, "unbatch"))

    def _cardinality(self) -> int:
        n = self._inputs[0]._cardinality()
        return INFINITE if n == INFINITE else (0 if n == 0 else UNKNOWN)

    def _blocks(self) -> Iterator[list]:
        for flat in self._inputs[0]._elements():
            rows = {a.shape[0] for a in flat}
            if len(rows) != 1:
                raise errors.InvalidArgumentError(
                    f"unbatch: the components of an element have different first dimensions "
                    f"({structure.describe(flat)}); element_spec {self._inputs[0].element_spec}")
            if rows.pop():
                yield flat


class DatasetSpec:
    """The spec of a component that is itself a Dataset (window's elements)."""

    def __init__(self, element_spec: Any, dataset_shape: Any = ()):
        self.element_spec = element_spec
        self.shape = TensorShape(dataset_shape)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, DatasetSpec) and self.element_spec == other.element_spec

    def __hash__(self) -> int:
        return hash(repr(self.element_spec))

    def __repr__(self) -> str:
        return f"DatasetSpec({self.element_spec}, TensorShape([]))"


class Elements(Dataset):
    """A dataset over a list of flat elements (one window component)."""

    def __init__(self, elements: List[list], spec: Any):
        self._items = elements
        super().__init__([], spec)

    def _cardinality(self) -> int:
        return len(self._items)

    def _elements(self) -> Iterator[list]:
        return iter(list(self._items))


class Window(Dataset):
    def __init__(self, source: Dataset, size: int, shift: Optional[int], stride: int,
                 drop_remainder: bool):
        what = "window"
        self._size = as_count(size, what, "size")
        self._shift = self._size if shift is None else as_count(shift, what, "shift")
        self._stride = as_count(stride, what, "stride")
        if min(self._size, self._shift, self._stride) < 1:
            raise errors.InvalidArgumentError(
                f"{what}: size, shift and stride must be positive, got {self._size}, "
                f"{self._shift}, {self._stride}")
        self._drop = bool(drop_remainder)
        spec = source.element_spec
        self._component_specs = structure.flat_specs(spec)
        window_spec = nest.map_structure(DatasetSpec, spec) if nest.is_nested(spec) \
            else DatasetSpec(spec)
        super().__init__([source], window_spec)

    def _window(self, rows: List[list]) -> list:
        return [Elements([[row[c]] for row in rows], s)
                for c, s in enumerate(self._component_specs)]

    def _elements(self) -> Iterator[list]:
        span = (self._size - 1) * self._stride + 1
        buffer: list = []  # elements from position `first` on
        first = 0
        start = 0  # where the next window begins
        for position, flat in enumerate(self._inputs[0]._elements()):
            buffer.append(flat)
            if position == start + span - 1:
                yield self._window(buffer[start - first:start - first + span:self._stride])
                start += self._shift
                drop = min(start - first, len(buffer))
                del buffer[:drop]
                first += drop
        while not self._drop and start - first < len(buffer):
            yield self._window(buffer[start - first::self._stride][:self._size])
            start += self._shift
