"""The function forms of tf.data.experimental: transformations for `dataset.apply(...)`
(each returns a function of a dataset) and a few sources, over the Dataset methods."""
from __future__ import annotations

import enum
import os
import sqlite3
from typing import Any, Callable, Iterator, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.data import structure
from kilnflow.data.dataset import Dataset, as_count, as_dataset
from kilnflow.data.grouping import GroupByReducer, Reducer
from kilnflow.data.readers import as_string
from kilnflow.data.transforms import AssertCardinality
from kilnflow.shapes import TensorSpec

SHARD_HINT = -1  # tf.data.experimental.SHARD_HINT: a shard count to be filled in later
Transformation = Callable[[Dataset], Dataset]


class AutotuneAlgorithm(enum.IntEnum):
    """Accepted in Options().autotune.autotune_algorithm (kilnflow has one tuner)."""
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


def cardinality(dataset: Dataset) -> Any:
    """tf.data.experimental.cardinality: dataset.cardinality()."""
    return as_dataset(dataset, "cardinality").cardinality()


def sample_from_datasets(datasets: List[Dataset], weights: Any = None,
                         seed: Optional[int] = None,
                         stop_on_empty_dataset: bool = False) -> Dataset:
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets: List[Dataset], choice_dataset: Dataset,
                         stop_on_empty_dataset: bool = True) -> Dataset:
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def assert_cardinality(expected_cardinality: int) -> Transformation:
    """A transformation for dataset.apply: FailedPreconditionError at iteration when the
    dataset's element count is not expected_cardinality (which cardinality() reports)."""
    return lambda dataset: AssertCardinality(dataset, expected_cardinality)


def Counter(start: int = 0, step: int = 1, dtype: Any = _dtypes.int64) -> Dataset:  # noqa: N802
    """start, start + step, ... forever."""
    return Dataset.counter(start, step, dtype)


def RandomDataset(seed: Optional[int] = None) -> Dataset:  # noqa: N802
    """Random int64 scalars forever (Dataset.random)."""
    return Dataset.random(seed)


def from_list(elements: List[Any]) -> Dataset:
    return Dataset.from_list(elements)


def get_single_element(dataset: Dataset) -> Any:
    return as_dataset(dataset, "get_single_element").get_single_element()


def get_structure(dataset_or_iterator: Any) -> Any:
    """The element_spec of a dataset or an iterator."""
    spec = getattr(dataset_or_iterator, "element_spec", None)
    if spec is None:
        raise TypeError(f"get_structure: expected a Dataset or an Iterator, got "
                        f"{dataset_or_iterator!r}")
    return spec


def get_next_as_optional(iterator: Any) -> Any:
    return iterator.get_next_as_optional()


def at(dataset: Dataset, index: int) -> Any:
    """The element at `index` (OutOfRangeError past the end)."""
    n = as_count(index, "at", "index")
    if n < 0:
        raise errors.InvalidArgumentError(f"at: index must be non-negative, got {n}")
    flat = next(as_dataset(dataset, "at").skip(n)._elements(), None)
    if flat is None:
        raise errors.OutOfRangeError(f"at: index {n} is out of range for the dataset")
    return structure.to_tensors(dataset.element_spec, flat)


def save(dataset: Dataset, path: str, compression: Optional[str] = None,
         shard_func: Any = None, checkpoint_args: Any = None) -> None:
    as_dataset(dataset, "save").save(path, compression, shard_func, checkpoint_args)


def load(path: str, element_spec: Any = None, compression: Optional[str] = None,
         reader_func: Any = None) -> Dataset:
    return Dataset.load(path, element_spec, compression, reader_func)


# ---------------------------------------------------------------- transformations


def enumerate_dataset(start: int = 0) -> Transformation:
    return lambda dataset: dataset.enumerate(start)


def ignore_errors(log_warning: bool = False) -> Transformation:
    return lambda dataset: dataset.ignore_errors(log_warning)


def unbatch() -> Transformation:
    return lambda dataset: dataset.unbatch()


def unique() -> Transformation:
    return lambda dataset: dataset.unique()


def take_while(predicate: Callable) -> Transformation:
    return lambda dataset: dataset.take_while(predicate)


def scan(initial_state: Any, scan_func: Callable) -> Transformation:
    return lambda dataset: dataset.scan(initial_state, scan_func)


def shuffle_and_repeat(buffer_size: int, count: Optional[int] = None,
                       seed: Optional[int] = None) -> Transformation:
    return lambda dataset: dataset.shuffle(buffer_size, seed).repeat(count)


def map_and_batch(map_func: Callable, batch_size: int,
                  num_parallel_batches: Optional[int] = None, drop_remainder: bool = False,
                  num_parallel_calls: Optional[int] = None) -> Transformation:
    """map then batch (kilnflow fuses them itself when map_func is row-wise)."""
    calls = num_parallel_calls if num_parallel_calls is not None else num_parallel_batches
    return lambda dataset: dataset.map(map_func, calls).batch(batch_size, drop_remainder)


def parallel_interleave(map_func: Callable, cycle_length: int, block_length: int = 1,
                        sloppy: Optional[bool] = False,
                        buffer_output_elements: Optional[int] = None,
                        prefetch_input_elements: Optional[int] = None) -> Transformation:
    """interleave with cycle_length files read at once; sloppy allows any order."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length,
                                              num_parallel_calls=cycle_length,
                                              deterministic=not sloppy)


def group_by_window(key_func: Callable, reduce_func: Callable,
                    window_size: Optional[int] = None,
                    window_size_func: Optional[Callable] = None) -> Transformation:
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size,
                                                   window_size_func)


def group_by_reducer(key_func: Callable, reducer: Reducer) -> Transformation:
    return lambda dataset: GroupByReducer(dataset, key_func, reducer)


def bucket_by_sequence_length(element_length_func: Callable, bucket_boundaries: List[int],
                              bucket_batch_sizes: List[int], padded_shapes: Any = None,
                              padding_values: Any = None,
                              pad_to_bucket_boundary: bool = False, no_padding: bool = False,
                              drop_remainder: bool = False) -> Transformation:
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
        padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)


def rejection_resample(class_func: Callable, target_dist: Any, initial_dist: Any = None,
                       seed: Optional[int] = None) -> Transformation:
    return lambda dataset: dataset.rejection_resample(class_func, target_dist, initial_dist,
                                                      seed)


def snapshot(path: str, compression: Optional[str] = "AUTO", reader_func: Any = None,
             shard_func: Any = None) -> Transformation:
    """The first complete pass is written under `path` (atomically); later pipelines read
    it instead of recomputing (dataset.cache to a file)."""
    def apply(dataset: Dataset) -> Dataset:
        os.makedirs(path, exist_ok=True)
        return dataset.cache(os.path.join(path, "snapshot"))
    return apply


def pad_to_cardinality(cardinality: int, mask_key: str = "valid") -> Transformation:
    """Dict elements padded with all-zero elements up to `cardinality`; `mask_key` is True
    for the real elements and False for the padding."""
    target = as_count(cardinality, "pad_to_cardinality", "cardinality")

    def apply(dataset: Dataset) -> Dataset:
        what = "pad_to_cardinality"
        spec = dataset.element_spec
        if not isinstance(spec, dict) or mask_key in spec:
            raise errors.InvalidArgumentError(
                f"{what}: the elements must be dicts without a '{mask_key}' key, got {spec}")
        n = dataset._cardinality()
        if n < 0 or n > target:
            raise errors.InvalidArgumentError(
                f"{what}: the dataset's cardinality ({n}) must be known and at most {target}")
        if any(not s.shape.is_fully_defined() for s in structure.flat_specs(spec)):
            raise errors.InvalidArgumentError(f"{what}: the element shapes must be fully "
                                              f"defined, got {spec}")
        zeros = {k: np.zeros(s.shape.as_list(), s.dtype.as_numpy_dtype) for k, s in
                 spec.items()}
        padding = Dataset.from_tensors({**zeros, mask_key: False}).repeat(target - n)
        return dataset.map(lambda e: {**e, mask_key: True}).concatenate(padding)
    return apply


class SqlDataset(Dataset):
    """Rows of an SQL query (driver_name "sqlite", the standard library's sqlite3), one
    tuple of scalars of `output_types` per row."""

    def __init__(self, driver_name: str, data_source_name: str, query: str,
                 output_types: Any):
        if driver_name != "sqlite":
            raise errors.InvalidArgumentError(f"SqlDataset: driver_name must be 'sqlite', got "
                                              f"{driver_name!r}")
        self._source, self._query = str(data_source_name), str(query)
        types = [_dtypes.as_dtype(t) for t in structure.flatten(output_types)]
        self._types = types
        super().__init__([], structure.pack(output_types, [TensorSpec([], t) for t in types]))

    def _elements(self) -> Iterator[list]:
        try:
            connection = sqlite3.connect(self._source)
        except sqlite3.Error as exc:
            raise errors.NotFoundError(f"SqlDataset: {self._source}: {exc}") from None
        try:
            for row in connection.execute(self._query):
                if len(row) != len(self._types):
                    raise errors.InvalidArgumentError(
                        f"SqlDataset: the query returned {len(row)} columns for "
                        f"{len(self._types)} output_types")
                yield [as_string(v.encode() if isinstance(v, str) else v)
                       if t is _dtypes.string else np.array(v, t.as_numpy_dtype)
                       for v, t in zip(row, self._types)]
        except sqlite3.Error as exc:
            raise errors.InvalidArgumentError(f"SqlDataset: {exc}") from None
        finally:
            connection.close()
