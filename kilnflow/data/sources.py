"""Dataset sources: tensor slices, tensors, range, generators, zip, concatenate, sampling.

Sources that hold arrays yield blocks of rows (views, no copies) so batch and a row-wise
map can work on many elements at once; a generator's elements are checked one by one
against its output_signature.
"""
from __future__ import annotations

import itertools
from typing import Any, Iterator

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors, nest
from kilnflow.data import structure
from kilnflow.data.dataset import (BLOCK_ROWS, INFINITE, UNKNOWN, Dataset, as_count,
                                   as_dataset, rows_per_block)
from kilnflow.ops.random import get_seed
from kilnflow.shapes import TensorSpec


INDEX_ROWS = 16 * 1024  # row numbers per index block (128 KB of int64)


class TensorSlices(Dataset):
    native_blocks = True
    random_access = True

    def __init__(self, tensors: Any):
        what = "from_tensor_slices"
        value = structure.normalize(tensors, what)
        flat = structure.flatten(value)
        if not flat:
            raise ValueError(f"{what}: the structure {tensors!r} holds no tensors")
        for a in flat:
            if a.ndim == 0:
                raise errors.InvalidArgumentError(
                    f"{what}: every component needs a first dimension to slice, got a scalar "
                    f"in {structure.specs_of(value)}")
        rows = {a.shape[0] for a in flat}
        if len(rows) > 1:
            raise errors.InvalidArgumentError(
                f"{what}: all components must have the same size in the first dimension, "
                f"got {structure.specs_of(value)}")
        self._flat = flat
        self._rows = rows.pop()
        self.gather_rows = rows_per_block(sum(a[:1].nbytes for a in flat))
        super().__init__([], structure.unbatched(structure.specs_of(value), what))

    def _cardinality(self) -> int:
        return self._rows

    def _elements(self) -> Iterator[list]:
        flat = self._flat
        if len(flat) == 1:
            only = flat[0]
            for i in range(self._rows):
                yield [only[i, ...]]
            return
        for i in range(self._rows):
            yield [a[i, ...] for a in flat]

    def _blocks(self) -> Iterator[list]:
        for start in range(0, self._rows, BLOCK_ROWS * 4):
            yield [a[start:start + BLOCK_ROWS * 4] for a in self._flat]

    def index_blocks(self) -> Iterator[list]:
        # big: a shuffle draws a block of row numbers per call; the gathered blocks are
        # cut to gather_rows afterwards (small enough to stay in cache while map reads them)
        step = INDEX_ROWS
        for start in range(0, self._rows, step):
            yield [np.arange(start, min(start + step, self._rows))]

    def gather(self, rows: np.ndarray) -> list:
        return [np.take(a, rows, axis=0) for a in self._flat]  # faster than a[rows]


def from_list(elements: Any) -> Dataset:
    what = "from_list"
    if not isinstance(elements, (list, tuple)) or not elements:
        raise ValueError(f"{what}: expected a non-empty list of elements, got {elements!r}")
    items = [structure.normalize(e, what) for e in elements]
    first = structure.signature(items[0])
    for i, item in enumerate(items):
        if structure.signature(item) != first:
            raise ValueError(f"{what}: element {i} has the structure {elements[i]!r}, unlike "
                             f"element 0 ({elements[0]!r})")
    flat = [structure.flatten(item) for item in items]
    for c, parts in enumerate(zip(*flat)):
        if any(p.shape != parts[0].shape or p.dtype != parts[0].dtype for p in parts):
            raise ValueError(f"{what}: component {c} differs in shape or dtype between "
                             f"elements: {structure.describe(parts)}")
    stacked = [np.stack(parts) for parts in zip(*flat)]
    return TensorSlices(structure.pack(items[0], stacked))


class Tensors(Dataset):
    def __init__(self, tensors: Any):
        value = structure.normalize(tensors, "from_tensors")
        self._flat = structure.flatten(value)
        super().__init__([], structure.specs_of(value))

    def _cardinality(self) -> int:
        return 1

    def _elements(self) -> Iterator[list]:
        yield list(self._flat)


class Range(Dataset):
    """Python's range; stop=None counts forever (enumerate's index)."""

    native_blocks = True

    def __init__(self, args: tuple, output_type: Any):
        what = "range"
        if not 1 <= len(args) <= 3:
            raise errors.InvalidArgumentError(f"{what}: expected 1 to 3 arguments (start, "
                                              f"stop, step), got {len(args)}")
        ints = [as_count(a, what, n) if a is not None else None
                for a, n in zip(args, ("start", "stop", "step"))]  # stop None: forever
        if len(ints) == 1:
            ints = [0] + ints
        start, stop, step = (ints + [1])[:3]
        if step == 0:
            raise errors.InvalidArgumentError(f"{what}: step must not be 0")
        self.start, self.stop, self.step = start, stop, step
        dtype = _dtypes.as_dtype(output_type) if output_type is not None else _dtypes.int64
        self._np = dtype.as_numpy_dtype
        super().__init__([], TensorSpec([], dtype))

    def _cardinality(self) -> int:
        if self.stop is None:
            return INFINITE
        return len(range(self.start, self.stop, self.step))

    def _elements(self) -> Iterator[list]:
        numbers = itertools.count(self.start, self.step) if self.stop is None else \
            range(self.start, self.stop, self.step)
        make = self._np
        for n in numbers:
            yield [np.array(n, make)]

    def _blocks(self) -> Iterator[list]:
        chunk = BLOCK_ROWS * self.step
        position = self.start
        while True:
            end = position + chunk
            if self.stop is not None:
                end = min(end, self.stop) if self.step > 0 else max(end, self.stop)
            block = np.arange(position, end, self.step, dtype=self._np)
            if not len(block):
                return
            yield [block]
            position = end


def _signature(output_types: Any, output_shapes: Any, output_signature: Any) -> Any:
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("from_generator: give output_signature or output_types/"
                            "output_shapes, not both")
        for leaf in nest.flatten(output_signature):
            if not isinstance(leaf, TensorSpec):
                raise TypeError(f"from_generator: output_signature must hold kf.TensorSpec "
                                f"leaves, got {leaf!r}")
        return output_signature
    if output_types is None:
        raise TypeError("from_generator: output_signature (or output_types) is required")
    types = structure.flatten(output_types)
    shapes = [None] * len(types) if output_shapes is None else \
        structure.flatten_up_to(output_types, output_shapes, "from_generator")
    return nest.pack_sequence_as(output_types, [TensorSpec(s, t) for s, t in zip(shapes, types)])


class Generator(Dataset):
    def __init__(self, generator: Any, output_types: Any, output_shapes: Any, args: Any,
                 output_signature: Any):
        if not callable(generator):
            raise TypeError(f"from_generator: `generator` must be callable, got {generator!r}")
        self._generator = generator
        self._args = tuple(np.asarray(a) for a in (args or ()))
        spec = _signature(output_types, output_shapes, output_signature)
        self._specs = structure.flat_specs(spec)
        super().__init__([], spec)

    def _convert(self, value: Any) -> list:
        what = "from_generator"
        if not structure.same_structure(self._spec, value):
            raise errors.InvalidArgumentError(
                f"{what}: `generator` yielded an element that did not match the expected "
                f"structure. The expected structure was {self._spec}, but the yielded "
                f"element was {value!r}.")
        flat = []
        for leaf, spec in zip(structure.flatten(value), self._specs):
            try:
                array = np.asarray(leaf, dtype=spec.dtype.as_numpy_dtype)
            except (TypeError, ValueError) as exc:
                raise errors.InvalidArgumentError(
                    f"{what}: `generator` yielded an element that could not be converted "
                    f"to the expected type {spec}: {exc}") from None
            if not spec.shape.is_compatible_with(array.shape):
                raise errors.InvalidArgumentError(
                    f"{what}: `generator` yielded an element of shape {array.shape} where an "
                    f"element of shape {spec.shape} was expected (element_spec {self._spec})")
            flat.append(array)
        return flat

    def _elements(self) -> Iterator[list]:
        for value in self._generator(*self._args):
            yield self._convert(value)


class Zip(Dataset):
    def __init__(self, datasets: Any):
        leaves = nest.flatten(datasets)
        if not leaves:
            raise ValueError("zip: expected at least one dataset")
        self._datasets = [as_dataset(d, "zip") for d in leaves]
        super().__init__(self._datasets,
                         nest.pack_sequence_as(datasets, [d.element_spec for d in leaves])
                         if nest.is_nested(datasets) else leaves[0].element_spec)

    def _cardinality(self) -> int:
        counts = [d._cardinality() for d in self._datasets]
        finite = [c for c in counts if c >= 0]
        if finite:
            return min(finite) if UNKNOWN not in counts or min(finite) == 0 else UNKNOWN
        return UNKNOWN if UNKNOWN in counts else INFINITE

    def _elements(self) -> Iterator[list]:
        for parts in zip(*[d._elements() for d in self._datasets]):
            yield [a for part in parts for a in part]


class Random(Dataset):
    native_blocks = True

    def __init__(self, seed: Any, rerandomize: bool):
        seeds = get_seed(None if seed is None else as_count(seed, "random", "seed"))
        self._seeds = list(seeds) if seeds is not None else \
            [int(x) for x in np.random.SeedSequence().generate_state(2)]
        self._rerandomize = rerandomize
        self._epoch = 0
        super().__init__([], TensorSpec([], _dtypes.int64))

    def _cardinality(self) -> int:
        return INFINITE

    def _blocks(self) -> Iterator[list]:
        epoch = self._epoch
        self._epoch += 1 if self._rerandomize else 0
        rng = np.random.default_rng(self._seeds + [epoch])
        while True:
            yield [rng.integers(0, np.iinfo(np.int64).max, BLOCK_ROWS, dtype=np.int64)]


class Concatenate(Dataset):
    def __init__(self, first: Dataset, second: Dataset):
        second = as_dataset(second, "concatenate")
        spec = structure.common_spec(first.element_spec, second.element_spec, "concatenate")
        super().__init__([first, second], spec)

    def _cardinality(self) -> int:
        a, b = (d._cardinality() for d in self._inputs)
        if INFINITE in (a, b):
            return INFINITE
        return UNKNOWN if UNKNOWN in (a, b) else a + b

    def _elements(self) -> Iterator[list]:
        for d in self._inputs:
            yield from d._elements()


def _common(datasets: list, what: str) -> Any:
    spec = datasets[0].element_spec
    for d in datasets[1:]:
        spec = structure.common_spec(spec, d.element_spec, what)
    return spec


class Sample(Dataset):
    def __init__(self, datasets: list, weights: Any, seed: Any, stop_on_empty: bool):
        datasets = [as_dataset(d, "sample_from_datasets") for d in datasets]
        if not datasets:
            raise ValueError("sample_from_datasets: expected at least one dataset")
        w = np.ones(len(datasets)) if weights is None else np.asarray(weights, np.float64)
        if w.shape != (len(datasets),) or (w < 0).any() or w.sum() <= 0:
            raise errors.InvalidArgumentError(
                f"sample_from_datasets: weights must be {len(datasets)} non-negative numbers "
                f"with a positive sum, got {weights!r}")
        self._weights = w / w.sum()
        self._seeds = get_seed(seed)
        self._stop = stop_on_empty
        super().__init__(datasets, _common(datasets, "sample_from_datasets"))

    def _elements(self) -> Iterator[list]:
        rng = np.random.default_rng(None if self._seeds is None else list(self._seeds))
        sources = [d._elements() for d in self._inputs]
        weights = self._weights.copy()
        while weights.sum() > 0:
            i = int(rng.choice(len(sources), p=weights / weights.sum()))
            flat = next(sources[i], None)
            if flat is not None:
                yield flat
            elif self._stop:
                return
            else:
                weights[i] = 0.0


class Choose(Dataset):
    def __init__(self, datasets: list, choice: Dataset, stop_on_empty: bool):
        what = "choose_from_datasets"
        datasets = [as_dataset(d, what) for d in datasets]
        choice = as_dataset(choice, what)
        spec = choice.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype is not _dtypes.int64 or \
                spec.shape.rank not in (0, None):
            raise TypeError(f"{what}: choice_dataset must hold int64 scalars, got {spec}")
        self._stop = stop_on_empty
        super().__init__(datasets + [choice], _common(datasets, what))

    def _elements(self) -> Iterator[list]:
        sources = [d._elements() for d in self._inputs[:-1]]
        for (index,) in self._inputs[-1]._elements():
            i = int(index)
            if not 0 <= i < len(sources):
                raise errors.InvalidArgumentError(
                    f"choose_from_datasets: choice {i} is out of range [0, {len(sources)})")
            flat = next(sources[i], None)
            if flat is not None:
                yield flat
            elif self._stop:
                return

