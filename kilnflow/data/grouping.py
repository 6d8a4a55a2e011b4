"""group_by_window, bucket_by_sequence_length and group_by_reducer: elements grouped by a
traced key; rejection_resample (elements kept by their class).

key_func is traced once (functions.py); each key gathers its own window of elements, and a
full window (or, at the end, every unfinished one, oldest first) is handed to reduce_func
as a Dataset, whose elements are emitted. Bucketing pads each bucket's batch.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors, nest
from kilnflow.data import structure
from kilnflow.data.batching import Elements
from kilnflow.data.dataset import Dataset, as_count, as_dataset
from kilnflow.data.functions import StructuredFunction, state_function
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import cast
from kilnflow.ops.random import get_seed
from kilnflow.ops.sorting import searchsorted
from kilnflow.shapes import TensorSpec


def _int64_scalar(spec: Any, what: str) -> None:
    if not isinstance(spec, TensorSpec) or spec.dtype is not _dtypes.int64 or \
            spec.shape.rank not in (0, None):
        raise ValueError(f"{what}: key_func must return an int64 scalar tensor, got {spec}")


class GroupByWindow(Dataset):
    def __init__(self, source: Dataset, key_func: Callable, reduce_func: Callable,
                 window_size: Optional[int], window_size_func: Optional[Callable]):
        what = "group_by_window"
        if (window_size is None) == (window_size_func is None):
            raise ValueError(f"{what}: give exactly one of window_size and window_size_func")
        self._key = StructuredFunction(key_func, source.element_spec, what)
        _int64_scalar(self._key.output_spec, what)
        self._reduce = reduce_func
        if window_size is not None:
            size = as_count(window_size, what, "window_size")
            if size < 1:
                raise errors.InvalidArgumentError(f"{what}: window_size must be positive")
            self._size_of: Callable[[int], int] = lambda key: size
        else:
            self._size_of = lambda key: as_count(
                window_size_func(convert_to_tensor(np.int64(key))), what, "window size")
        # the output spec: what reduce_func makes of a window (traced on an empty one)
        probe = self._reduced(0, [], source.element_spec)
        super().__init__([source], probe.element_spec)

    def _reduced(self, key: int, elements: List[list], spec: Any) -> Dataset:
        window = Elements(elements, spec)
        result = self._reduce(convert_to_tensor(np.int64(key)), window)
        return as_dataset(result, "group_by_window: reduce_func's result")

    def _elements(self) -> Iterator[list]:
        spec = self._inputs[0].element_spec
        windows: Dict[int, list] = {}
        sizes: Dict[int, int] = {}
        for flat in self._inputs[0]._elements():
            key = int(self._key(flat)[0])
            if key not in windows:
                windows[key], sizes[key] = [], self._size_of(key)
            windows[key].append(flat)
            if len(windows[key]) >= sizes[key]:
                yield from self._reduced(key, windows.pop(key), spec)._elements()
        for key, elements in windows.items():  # unfinished windows, oldest key first
            yield from self._reduced(key, elements, spec)._elements()


def bucket_by_sequence_length(source: Dataset, element_length_func: Callable,
                              bucket_boundaries: List[int], bucket_batch_sizes: List[int],
                              padded_shapes: Any = None, padding_values: Any = None,
                              pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                              drop_remainder: bool = False) -> Dataset:
    what = "bucket_by_sequence_length"
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"{what}: len(bucket_batch_sizes) must equal "
                         f"len(bucket_boundaries) + 1, got {len(sizes)} and {len(boundaries)}")
    if boundaries != sorted(boundaries):
        raise ValueError(f"{what}: bucket_boundaries must be sorted, got {boundaries}")
    edges = np.asarray(boundaries, np.int64)

    def bucket(*element: Any) -> Any:
        length = element_length_func(*element)
        index = searchsorted(edges, [cast(length, _dtypes.int64)], side="right")[0]
        return cast(index, _dtypes.int64)

    def batch(key: Any, window: Dataset) -> Dataset:
        size = sizes[int(key)]
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            if int(key) == len(boundaries):
                raise errors.InvalidArgumentError(
                    f"{what}: an element is longer than the last bucket boundary "
                    f"{boundaries[-1]} and pad_to_bucket_boundary is set")
            shapes = nest.pack_sequence_as(window.element_spec, [
                [boundaries[int(key)] - 1] + [None] * (s.shape.rank - 1)
                for s in structure.flat_specs(window.element_spec)])
        return window.padded_batch(size, shapes, padding_values, drop_remainder)

    return GroupByWindow(source, bucket, batch, None, lambda key: sizes[int(key)])


class Reducer:
    """tf.data.experimental.Reducer: init_func(key) -> state, reduce_func(state, element)
    -> state, finalize_func(state) -> the output element of a group."""

    def __init__(self, init_func: Callable, reduce_func: Callable, finalize_func: Callable):
        self.init_func, self.reduce_func = init_func, reduce_func
        self.finalize_func = finalize_func


class GroupByReducer(Dataset):
    """Folds the elements of each key (key_func, an int64 scalar) with a Reducer; at the
    end, one finalized element per key, in the order keys were first seen."""

    def __init__(self, source: Dataset, key_func: Callable, reducer: Reducer):
        what = "group_by_reducer"
        if not isinstance(reducer, Reducer):
            raise TypeError(f"{what}: expected a kf.data.experimental.Reducer, got {reducer!r}")
        self._key = StructuredFunction(key_func, source.element_spec, what)
        _int64_scalar(self._key.output_spec, what)
        self._init = StructuredFunction(reducer.init_func, TensorSpec([], _dtypes.int64), what)
        self._reduce, state_spec = state_function(
            reducer.reduce_func, self._init.output_spec, source.element_spec, what,
            has_output=False)
        self._finalize = StructuredFunction(reducer.finalize_func, state_spec, what)
        super().__init__([source], self._finalize.output_spec)

    def _elements(self) -> Iterator[list]:
        states: Dict[int, list] = {}
        for flat in self._inputs[0]._elements():
            key = self._key(flat)[0]
            state = states.get(int(key))
            if state is None:
                state = self._init([key])
            states[int(key)] = self._reduce(list(state) + list(flat))
        for state in states.values():
            yield self._finalize(state)


class RejectionResample(Dataset):
    """(class, element) pairs, elements kept with a probability that turns the class
    distribution `initial` (estimated from the classes seen so far when not given) into
    `target`."""

    def __init__(self, source: Dataset, class_func: Callable, target_dist: Any,
                 initial_dist: Any, seed: Optional[int]):
        what = "rejection_resample"
        self._class = StructuredFunction(class_func, source.element_spec, what)
        spec = self._class.output_spec
        if not isinstance(spec, TensorSpec) or not spec.dtype.is_integer or \
                spec.shape.rank not in (0, None):
            raise ValueError(f"{what}: class_func must return an integer scalar, got {spec}")
        self._target = _distribution(target_dist, what, "target_dist")
        self._initial = None if initial_dist is None else \
            _distribution(initial_dist, what, "initial_dist")
        self._seeds = get_seed(seed)
        super().__init__([source], (TensorSpec([], spec.dtype), source.element_spec))

    def _elements(self) -> Iterator[list]:
        rng = np.random.default_rng(None if self._seeds is None else list(self._seeds))
        counts = np.zeros(len(self._target))
        for flat in self._inputs[0]._elements():
            label = self._class(flat)[0]
            c = int(label)
            if not 0 <= c < len(self._target):
                raise errors.InvalidArgumentError(
                    f"rejection_resample: class {c} is out of range [0, {len(self._target)})")
            counts[c] += 1
            initial = self._initial if self._initial is not None else counts / counts.sum()
            ratio = np.divide(self._target, initial, out=np.zeros_like(initial),
                              where=initial > 0)
            if ratio.max() > 0 and rng.random() < ratio[c] / ratio.max():
                yield [label] + list(flat)


def _distribution(value: Any, what: str, name: str) -> np.ndarray:
    dist = np.asarray(value.numpy() if hasattr(value, "numpy") else value, np.float64)
    if dist.ndim != 1 or not len(dist) or (dist < 0).any() or dist.sum() <= 0:
        raise errors.InvalidArgumentError(f"{what}: {name} must be a vector of non-negative "
                                          f"probabilities, got {value!r}")
    return dist / dist.sum()
