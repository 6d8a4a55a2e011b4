"""kf.data.Dataset: the public class, whose methods build a lazy pipeline of nodes.

Each method returns a new Dataset node (sources.py, transforms.py, batching.py); nothing
runs until the dataset is iterated. A node yields flat lists of NumPy arrays
(`_elements`), and nodes that can also yield blocks of consecutive elements stacked along
a new first axis (`_blocks`, when `native_blocks`) let batch, shuffle and a row-wise map
work on whole blocks. Iterators (iterator.py) pack elements into the element_spec.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, List, Optional

import warnings

import numpy as np

from kilnflow import errors
from kilnflow.context import ctx
from kilnflow.data import structure
from kilnflow.data.options import Options
from kilnflow.ops.convert import convert_to_tensor

_warned: set = set()  # warnings given once per process
INFINITE = -1  # tf.data.INFINITE_CARDINALITY
UNKNOWN = -2   # tf.data.UNKNOWN_CARDINALITY
BLOCK_ROWS = 512  # rows per block: big enough to amortize a call, small enough for cache
BLOCK_BYTES = 1024 * 1024  # measured (data_pipeline, CPU time): 1 MB beat 0.25-2 MB; a
# gathered block, map's temporary and its output then stay within a 2 MB L2 cache


def rows_per_block(row_bytes: int) -> int:
    """Rows in a gathered block: about BLOCK_BYTES (per-block work is amortized, the block
    stays within L2), a multiple of 64 (common batch sizes never straddle two blocks)."""
    rows = BLOCK_BYTES // max(1, row_bytes)
    return int(min(8 * BLOCK_ROWS, max(64, rows - rows % 64)))


class Dataset:
    """A sequence of elements (nested structures of tensors), built lazily from sources and
    transformations, iterated eagerly with `for`, `iter()`/`next()` or as NumPy.

    >>> import kilnflow as kf
    >>> ds = kf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5])
    >>> [int(v) for v in ds.map(lambda x: x * 2).filter(lambda x: x > 4)]
    [6, 8, 10]
    >>> [b.tolist() for b in ds.batch(2).as_numpy_iterator()]
    [[1, 2], [3, 4], [5]]
    """

    native_blocks = False  # True when _blocks() is the node's own (cheap) block stream
    random_access = False  # True when the node has index_blocks() and gather(rows)

    def __init__(self, inputs: List["Dataset"], spec: Any):
        self._inputs = inputs
        self._spec = spec
        self._own_options: Optional[Options] = None
        self._later_options: List[Options] = []  # set by with_options further down

    # ---------------------------------------------------------------- node protocol

    def _elements(self) -> Iterator[list]:
        """Flat elements (lists of arrays). Nodes override this or _blocks."""
        for block in self._blocks():
            rows = len(block[0]) if block else 0
            for i in range(rows):
                yield [a[i, ...] for a in block]

    def _blocks(self) -> Iterator[list]:
        """Consecutive elements stacked along a new first axis (only uniform shapes)."""
        pending: list = []
        for flat in self._elements():
            pending.append(flat)
            if len(pending) == BLOCK_ROWS:
                yield [np.stack(parts) for parts in zip(*pending)]
                pending = []
        if pending:
            yield [np.stack(parts) for parts in zip(*pending)]

    def _cardinality(self) -> int:
        return UNKNOWN

    def _tolerant(self, log: bool) -> Iterator[list]:
        """Elements for ignore_errors: nodes that can go on after a failed element (map,
        filter, the file readers) override this to skip it; here an error ends the
        stream (its generator cannot resume), as if it were the last element."""
        elements = self._elements()
        while True:
            try:
                flat = next(elements)
            except StopIteration:
                return
            except errors.OpError as exc:
                skipped(exc, log)
                return
            yield flat

    def index_blocks(self) -> Iterator[list]:
        """Random-access nodes: the row numbers 0..n-1, as blocks of one int64 column."""
        raise NotImplementedError

    def gather(self, rows: np.ndarray) -> list:
        """Random-access nodes: the elements numbered `rows`, stacked (a block)."""
        raise NotImplementedError

    # ---------------------------------------------------------------- describing

    @property
    def element_spec(self) -> Any:
        """The structure of one element, with TensorSpec leaves."""
        return self._spec

    def cardinality(self) -> Any:
        """The number of elements as an int64 scalar tensor; INFINITE_CARDINALITY (-1) or
        UNKNOWN_CARDINALITY (-2) when it is infinite or not known without iterating."""
        return convert_to_tensor(np.int64(self._cardinality()))

    def __len__(self) -> int:
        n = self._cardinality()
        if n == INFINITE:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self) -> bool:
        return True  # a dataset is a pipeline, never falsy (and never iterated to check)

    def __repr__(self) -> str:
        kind = type(self).__name__
        return f"<{kind}{'' if kind.endswith('Dataset') else 'Dataset'} " \
               f"element_spec={self._spec}>"

    def options(self) -> Options:
        """The options of this pipeline: its inputs' options, then its own."""
        merged = Options()
        for source in self._inputs:
            merged.merge(source.options())
        if self._own_options is not None:
            merged.merge(self._own_options)
        return merged

    def with_options(self, options: Options, name: Optional[str] = None) -> "Dataset":
        """This dataset with `options` set (later settings win over earlier ones)."""
        if not isinstance(options, Options):
            raise TypeError(f"with_options: expected kf.data.Options, got {options!r}")
        result = transforms.Identity(self)
        result._own_options = options
        pending, seen = [self], set()
        while pending:  # options apply to the whole pipeline, as in TF
            node = pending.pop()
            if id(node) not in seen:
                seen.add(id(node))
                node._later_options.append(options)
                pending.extend(node._inputs)
        return result

    def pipeline_options(self) -> Options:
        """The options in force when this node runs: options() plus any set by
        with_options further down the pipeline."""
        merged = self.options()
        for later in self._later_options:
            merged.merge(later)
        return merged

    # ---------------------------------------------------------------- iterating

    def __iter__(self) -> "iterator.OwnedIterator":
        if ctx.graph is not None and "traced" not in _warned:
            _warned.add("traced")
            warnings.warn(errors.with_location(
                "Iterating a kf.data.Dataset while a graph is being built runs the pipeline "
                "now, at trace time: every element becomes a constant of the traced graph "
                "(the loop is unrolled). Iterate it outside kf.function, or pass batches in "
                "as arguments."), stacklevel=2)
        return iterator.OwnedIterator(self)

    def as_numpy_iterator(self) -> "iterator.NumpyIterator":
        """An iterator of elements as NumPy values (arrays; NumPy scalars for rank 0)."""
        return iterator.NumpyIterator(self)

    def host_iterator(self) -> "iterator.HostIterator":
        """A host-side iterator over flat NumPy elements, for running this pipeline from
        inside a traced function (see HostIterator)."""
        return iterator.HostIterator(self)

    def reduce(self, initial_state: Any, reduce_func: Callable,
               name: Optional[str] = None) -> Any:
        """Folds every element into a state: reduce_func(state, element) -> new state.

        >>> import kilnflow as kf
        >>> int(kf.data.Dataset.range(5).reduce(kf.constant(0, kf.int64),
        ...                                     lambda s, x: s + x))
        10
        """
        return transforms.reduce_dataset(self, initial_state, reduce_func)

    def get_single_element(self, name: Optional[str] = None) -> Any:
        """The only element of a one-element dataset (InvalidArgumentError otherwise)."""
        elements = self._elements()
        first = next(elements, None)
        if first is None:
            raise errors.InvalidArgumentError("get_single_element: the dataset was empty")
        if next(elements, None) is not None:
            raise errors.InvalidArgumentError(
                "get_single_element: the dataset had more than one element")
        return structure.to_tensors(self._spec, first)

    def save(self, path: str, compression: Optional[str] = None, shard_func: Any = None,
             checkpoint_args: Any = None) -> None:
        """Writes every element to the directory `path` (a safetensors file, written
        atomically); Dataset.load(path) reads it back."""
        if compression is not None or shard_func is not None:
            raise errors.UnimplementedError("save: compression and shard_func are not "
                                            "supported")
        cache_file.save(path, self._spec, list(self._elements()))

    @staticmethod
    def load(path: str, element_spec: Any = None, compression: Optional[str] = None,
             reader_func: Any = None) -> "Dataset":
        """The dataset `save` wrote to `path` (namedtuples come back as tuples unless
        element_spec is given)."""
        spec, elements = cache_file.load(path, element_spec)
        return batching.Elements(elements, spec)

    def apply(self, transformation_func: Callable[["Dataset"], "Dataset"]) -> "Dataset":
        """transformation_func(self), which must return a Dataset."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError(f"apply: the transformation must return a Dataset, got "
                            f"{type(result).__name__}")
        return result

    # ---------------------------------------------------------------- sources

    @staticmethod
    def from_tensor_slices(tensors: Any, name: Optional[str] = None) -> "Dataset":
        """One element per row of `tensors` (every component must have the same first
        dimension)."""
        return sources.TensorSlices(tensors)

    @staticmethod
    def from_list(elements: List[Any], name: Optional[str] = None) -> "Dataset":
        """One element per item of `elements` (all of the same structure, shapes and
        dtypes): from_tensor_slices of the stacked items."""
        return sources.from_list(elements)

    @staticmethod
    def list_files(file_pattern: Any, shuffle: Optional[bool] = None,
                   seed: Optional[int] = None, name: Optional[str] = None) -> "Dataset":
        """The paths matching the glob pattern(s) (string scalars): sorted, then shuffled
        (with `seed`) unless shuffle=False. No match is an InvalidArgumentError."""
        return readers.list_files(file_pattern, shuffle, seed)

    @staticmethod
    def from_tensors(tensors: Any, name: Optional[str] = None) -> "Dataset":
        """A dataset holding `tensors` as its single element."""
        return sources.Tensors(tensors)

    @staticmethod
    def range(*args: Any, output_type: Any = None, name: Optional[str] = None) -> "Dataset":
        """Like Python's range (start, stop, step); int64 elements by default."""
        return sources.Range(args, output_type)

    @staticmethod
    def from_generator(generator: Callable, output_types: Any = None,
                       output_shapes: Any = None, args: Any = None,
                       output_signature: Any = None, name: Optional[str] = None) -> "Dataset":
        """Elements yielded by `generator(*args)` (called anew for every iteration), each
        checked against `output_signature` (a structure of kf.TensorSpec)."""
        return sources.Generator(generator, output_types, output_shapes, args,
                                 output_signature)

    @staticmethod
    def counter(start: int = 0, step: int = 1, dtype: Any = None,
                name: Optional[str] = None) -> "Dataset":
        """start, start + step, ... forever (int64 by default)."""
        return sources.Range((start, None, step), dtype)

    @staticmethod
    def random(seed: Optional[int] = None, rerandomize_each_iteration: Optional[bool] = None,
               name: Optional[str] = None) -> "Dataset":
        """Random int64 scalars in [0, 2**63), forever."""
        return sources.Random(seed, bool(rerandomize_each_iteration))

    @staticmethod
    def zip(*datasets: Any, name: Optional[str] = None, **kwargs: Any) -> "Dataset":
        """Elements of several datasets side by side, until the shortest one ends:
        `Dataset.zip(a, b)` or `Dataset.zip((a, b))` (any nesting of datasets)."""
        if "datasets" in kwargs:  # TF's keyword form: Dataset.zip(datasets=(a, b))
            if datasets:
                raise TypeError("zip: give the datasets positionally or as datasets=, not both")
            datasets = (kwargs.pop("datasets"),)
        if kwargs:
            raise TypeError(f"zip: unexpected keyword arguments {sorted(kwargs)}")
        return sources.Zip(datasets[0] if len(datasets) == 1 else datasets)

    @staticmethod
    def sample_from_datasets(datasets: List["Dataset"], weights: Any = None,
                             seed: Optional[int] = None,
                             stop_on_empty_dataset: bool = False,
                             rerandomize_each_iteration: Optional[bool] = None) -> "Dataset":
        """Elements drawn at random from `datasets` with probabilities `weights`."""
        return sources.Sample(datasets, weights, seed, stop_on_empty_dataset)

    @staticmethod
    def choose_from_datasets(datasets: List["Dataset"], choice_dataset: "Dataset",
                             stop_on_empty_dataset: bool = True) -> "Dataset":
        """Element i comes from datasets[choice_dataset[i]]."""
        return sources.Choose(datasets, choice_dataset, stop_on_empty_dataset)

    # ---------------------------------------------------------------- transformations

    def map(self, map_func: Callable, num_parallel_calls: Optional[int] = None,
            deterministic: Optional[bool] = None, synchronous: Optional[bool] = None,
            use_unbounded_threadpool: bool = False, name: Optional[str] = None) -> "Dataset":
        """map_func applied to every element (a tuple element is unpacked into arguments).
        map_func is traced once, as a kf.function over element_spec; with
        num_parallel_calls (or AUTOTUNE) elements run on a thread pool, in order."""
        return transforms.Map(self, map_func, num_parallel_calls, deterministic)

    def filter(self, predicate: Callable, name: Optional[str] = None) -> "Dataset":
        """The elements for which predicate(element) is True (a scalar bool tensor)."""
        return transforms.Filter(self, predicate)

    def take_while(self, predicate: Callable, name: Optional[str] = None) -> "Dataset":
        """Elements up to (not including) the first for which predicate is False."""
        return transforms.TakeWhile(self, predicate)

    def flat_map(self, map_func: Callable, name: Optional[str] = None) -> "Dataset":
        """map_func(element) returns a Dataset; their elements follow one another."""
        return interleave.Interleave(self, map_func, 1, 1, None, None)

    def interleave(self, map_func: Callable, cycle_length: Optional[int] = None,
                   block_length: Optional[int] = None, num_parallel_calls: Optional[int] = None,
                   deterministic: Optional[bool] = None, name: Optional[str] = None) -> "Dataset":
        """Elements of the datasets map_func returns, taken `block_length` at a time from
        `cycle_length` of them in turn (TF's order); with num_parallel_calls the open
        datasets are read ahead on a thread pool, in the same order unless
        deterministic=False."""
        return interleave.Interleave(self, map_func, cycle_length,
                                     1 if block_length is None else block_length,
                                     num_parallel_calls, deterministic)

    def scan(self, initial_state: Any, scan_func: Callable, name: Optional[str] = None) -> "Dataset":
        """scan_func(state, element) -> (new_state, output): the outputs, in order."""
        return transforms.Scan(self, initial_state, scan_func)

    def ignore_errors(self, log_warning: bool = False, name: Optional[str] = None) -> "Dataset":
        """The elements whose computation raised no error: an element a map, filter or
        file reader fails on is dropped (with a warning when log_warning)."""
        return transforms.IgnoreErrors(self, log_warning)

    def rejection_resample(self, class_func: Callable, target_dist: Any,
                           initial_dist: Any = None, seed: Optional[int] = None,
                           name: Optional[str] = None) -> "Dataset":
        """(class, element) pairs, elements dropped at random so that the classes
        (class_func(element)) follow target_dist."""
        return grouping.RejectionResample(self, class_func, target_dist, initial_dist, seed)

    def unique(self, name: Optional[str] = None) -> "Dataset":
        """Each distinct (integer scalar) element once, in first-seen order."""
        return transforms.Unique(self)

    def enumerate(self, start: int = 0, name: Optional[str] = None) -> "Dataset":
        """(index, element) pairs; the index is int64 and counts from `start`."""
        return sources.Zip((sources.Range((start, None, 1), None), self))

    def batch(self, batch_size: int, drop_remainder: bool = False,
              num_parallel_calls: Optional[int] = None, deterministic: Optional[bool] = None,
              name: Optional[str] = None) -> "Dataset":
        """Consecutive elements stacked into batches; the last one may be shorter unless
        drop_remainder."""
        return batching.Batch(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size: int, padded_shapes: Any = None,
                     padding_values: Any = None, drop_remainder: bool = False,
                     name: Optional[str] = None) -> "Dataset":
        """Batches whose components are padded to `padded_shapes` (None dims: the longest
        in the batch) with `padding_values` (default 0)."""
        return batching.PaddedBatch(self, batch_size, padded_shapes, padding_values,
                                    drop_remainder)

    def unbatch(self, name: Optional[str] = None) -> "Dataset":
        """The rows of every element, one element each."""
        return batching.Unbatch(self)

    def rebatch(self, batch_size: int, drop_remainder: bool = False,
                name: Optional[str] = None) -> "Dataset":
        """The same rows regrouped into batches of `batch_size`."""
        return batching.Batch(batching.Unbatch(self), batch_size, drop_remainder)

    def group_by_window(self, key_func: Callable, reduce_func: Callable,
                        window_size: Optional[int] = None,
                        window_size_func: Optional[Callable] = None,
                        name: Optional[str] = None) -> "Dataset":
        """Groups elements by key_func(element) (an int64 scalar) into windows of
        window_size (or window_size_func(key)); reduce_func(key, window_dataset) returns
        the dataset each full window (and, at the end, each partial one) becomes."""
        return grouping.GroupByWindow(self, key_func, reduce_func, window_size,
                                      window_size_func)

    def bucket_by_sequence_length(self, element_length_func: Callable,
                                  bucket_boundaries: List[int],
                                  bucket_batch_sizes: List[int], padded_shapes: Any = None,
                                  padding_values: Any = None,
                                  pad_to_bucket_boundary: bool = False,
                                  no_padding: bool = False, drop_remainder: bool = False,
                                  name: Optional[str] = None) -> "Dataset":
        """Batches elements of similar length together: bucket i holds lengths in
        [boundaries[i-1], boundaries[i]) and is padded-batched by bucket_batch_sizes[i]."""
        return grouping.bucket_by_sequence_length(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
            padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)

    def window(self, size: int, shift: Optional[int] = None, stride: int = 1,
               drop_remainder: bool = False, name: Optional[str] = None) -> "Dataset":
        """Windows of `size` elements, each a structure of Datasets (one per component)."""
        return batching.Window(self, size, shift, stride, drop_remainder)

    def shuffle(self, buffer_size: int, seed: Optional[int] = None,
                reshuffle_each_iteration: Optional[bool] = None,
                name: Optional[str] = None) -> "Dataset":
        """Elements in random order, drawn from a buffer of `buffer_size` elements; a new
        order every iteration unless reshuffle_each_iteration=False."""
        return shuffle.Shuffle(self, buffer_size, seed, reshuffle_each_iteration is not False)

    def repeat(self, count: Optional[int] = None, name: Optional[str] = None) -> "Dataset":
        """The dataset `count` times over (forever when count is None or -1)."""
        return transforms.Repeat(self, count)

    def take(self, count: int, name: Optional[str] = None) -> "Dataset":
        """The first `count` elements (all when count is -1)."""
        return transforms.Take(self, count)

    def skip(self, count: int, name: Optional[str] = None) -> "Dataset":
        """All but the first `count` elements (none when count is -1)."""
        return transforms.Skip(self, count)

    def shard(self, num_shards: int, index: int, name: Optional[str] = None) -> "Dataset":
        """Every num_shards-th element, starting at `index`."""
        return transforms.Shard(self, num_shards, index)

    def cache(self, filename: str = "", name: Optional[str] = None) -> "Dataset":
        """Elements kept after the first complete pass: in memory, and in
        `filename.safetensors` when a filename is given (read by later pipelines)."""
        return transforms.Cache(self, filename)

    def prefetch(self, buffer_size: int, name: Optional[str] = None) -> "Dataset":
        """Produces up to `buffer_size` elements ahead, on a background thread."""
        return prefetch.Prefetch(self, buffer_size)

    def concatenate(self, dataset: "Dataset", name: Optional[str] = None) -> "Dataset":
        """This dataset's elements, then `dataset`'s."""
        return sources.Concatenate(self, dataset)


def skipped(exc: Exception, log: bool) -> None:
    """ignore_errors dropped an element because of `exc`."""
    if log:
        warnings.warn(f"ignore_errors: an element was dropped: {exc}", stacklevel=3)


def as_dataset(value: Any, what: str) -> Dataset:
    if not isinstance(value, Dataset):
        raise TypeError(f"{what}: expected a kf.data.Dataset, got {type(value).__name__}")
    return value


def as_count(value: Any, what: str, name: str) -> int:
    """A Python int from an int or an integer scalar tensor."""
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - any unconvertible value is a bad argument
        array = None
    if array is None or array.ndim != 0 or array.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(f"{what}: `{name}` must be an integer scalar, got "
                                          f"{value!r}")
    return int(array)


# the node modules subclass Dataset: imported after it exists
from kilnflow.data import (batching, cache_file, grouping, interleave, iterator,  # noqa: E402
                           prefetch, readers, shuffle, sources, transforms)
