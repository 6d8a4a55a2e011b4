"""Element-wise and ordering transformations: map, filter, take_while,
scan, reduce, repeat, take, skip, shard, cache (shuffle, prefetch and interleave have
their files).

map and filter trace their function once (functions.py). A map or filter whose traced
graph is row-wise (rowwise.py) also runs on whole blocks of elements, which is how
`map(...).batch(...)` costs one call per block instead of one per element.
"""
from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator, Optional

from kilnflow import errors
from kilnflow.data import cache_file, rowwise, structure
from kilnflow.data.dataset import INFINITE, UNKNOWN, Dataset, as_count, skipped
from kilnflow.data.functions import StructuredFunction, scalar_bool, state_function
from kilnflow.data.options import AUTOTUNE
from kilnflow.shapes import TensorSpec


def parallelism(value: Optional[int], what: str) -> int:
    """Threads for num_parallel_calls: AUTOTUNE is the CPU count; None is 1 (sequential)."""
    if value is None:
        return 1
    n = as_count(value, what, "num_parallel_calls")
    if n == AUTOTUNE:
        return max(1, os.cpu_count() or 1)
    if n < 1:
        raise errors.InvalidArgumentError(
            f"{what}: num_parallel_calls must be positive or AUTOTUNE, got {n}")
    return n


class Identity(Dataset):
    """Passes elements through (carries options)."""

    def __init__(self, source: Dataset):
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        return self._inputs[0].native_blocks

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()

    def _elements(self) -> Iterator[list]:
        return self._inputs[0]._elements()

    def _tolerant(self, log: bool) -> Iterator[list]:
        return self._inputs[0]._tolerant(log)

    def _blocks(self) -> Iterator[list]:
        return self._inputs[0]._blocks()


class Map(Dataset):
    def __init__(self, source: Dataset, fn: Callable, num_parallel_calls: Optional[int],
                 deterministic: Optional[bool]):
        self._fn = StructuredFunction(fn, source.element_spec, "map")
        self._threads = parallelism(num_parallel_calls, "map")
        # blocks: AUTOTUNE runs them in order on this thread (a block already amortizes
        # the call; threads only add GIL hand-offs unless cores are idle); an explicit
        # num_parallel_calls still maps blocks on that many threads
        self._block_threads = 1 if num_parallel_calls == AUTOTUNE else self._threads
        self._deterministic = deterministic
        self._rowwise = rowwise.is_rowwise(self._fn)
        super().__init__([source], self._fn.output_spec)

    @property
    def native_blocks(self) -> bool:
        return self._rowwise and self._inputs[0].native_blocks and self._fused()

    def _fused(self) -> bool:
        return bool(self.pipeline_options().experimental_optimization.value("map_and_batch_fusion"))

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()

    def _blocks(self) -> Iterator[list]:
        if not self.native_blocks:
            yield from Dataset._blocks(self)
            return
        if self._block_threads > 1:  # NumPy releases the GIL in big ufuncs: blocks overlap
            yield from ordered_parallel(self._fn, self._inputs[0]._blocks(),
                                        self._block_threads)
            return
        fn = self._fn
        for block in self._inputs[0]._blocks():
            yield fn(block)

    def _elements(self) -> Iterator[list]:
        if self.native_blocks:  # a block per call, then its rows: far fewer calls
            yield from Dataset._elements(self)
        elif self._threads > 1:
            yield from ordered_parallel(self._fn, self._inputs[0]._elements(), self._threads)
        else:
            fn = self._fn
            for flat in self._inputs[0]._elements():
                yield fn(flat)

    def _tolerant(self, log: bool) -> Iterator[list]:
        fn = self._fn
        for flat in self._inputs[0]._tolerant(log):
            try:
                out = fn(flat)
            except errors.OpError as exc:
                skipped(exc, log)
                continue
            yield out


def ordered_parallel(fn: Callable, items: Iterator, threads: int) -> Iterator:
    """fn over items on a thread pool, results in input order, at most 2*threads ahead."""
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kf.data.map")
    pending: deque = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) >= 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=False)


class Filter(Dataset):
    def __init__(self, source: Dataset, predicate: Callable, what: str = "filter"):
        self._fn = StructuredFunction(predicate, source.element_spec, what)
        scalar_bool(self._fn.output_spec, what)
        self._rowwise = rowwise.is_rowwise(self._fn)
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        return self._rowwise and self._inputs[0].native_blocks

    def _blocks(self) -> Iterator[list]:
        if not self.native_blocks:
            yield from Dataset._blocks(self)
            return
        for block in self._inputs[0]._blocks():
            mask = self._fn(block)[0]
            if mask.all():
                yield block
            elif mask.any():
                yield [a[mask] for a in block]

    def _elements(self) -> Iterator[list]:
        if self.native_blocks:
            yield from Dataset._elements(self)
            return
        fn = self._fn
        for flat in self._inputs[0]._elements():
            if fn(flat)[0]:
                yield flat

    def _tolerant(self, log: bool) -> Iterator[list]:
        fn = self._fn
        for flat in self._inputs[0]._tolerant(log):
            try:
                keep = fn(flat)[0]
            except errors.OpError as exc:
                skipped(exc, log)
                continue
            if keep:
                yield flat


class TakeWhile(Filter):
    def __init__(self, source: Dataset, predicate: Callable):
        super().__init__(source, predicate, "take_while")
        self._rowwise = False  # stops at the first False: no block shortcut

    def _elements(self) -> Iterator[list]:
        fn = self._fn
        for flat in self._inputs[0]._elements():
            if not fn(flat)[0]:
                return
            yield flat


class Scan(Dataset):
    def __init__(self, source: Dataset, initial_state: Any, fn: Callable):
        state = structure.normalize(initial_state, "scan")
        state_spec = structure.specs_of(state)
        self._fn, self._state_spec = state_function(fn, state_spec, source.element_spec,
                                                    "scan", has_output=True)
        self._state = structure.flatten(state)
        super().__init__([source], self._fn.output_spec[1])

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()

    def _elements(self) -> Iterator[list]:
        state = list(self._state)
        k = len(state)
        for flat in self._inputs[0]._elements():
            out = self._fn(state + flat)
            state = out[:k]
            yield out[k:]


def reduce_dataset(source: Dataset, initial_state: Any, fn: Callable) -> Any:
    state = structure.normalize(initial_state, "reduce")
    traced, state_spec = state_function(fn, structure.specs_of(state), source.element_spec,
                                        "reduce", has_output=False)
    flat = structure.flatten(state)
    for element in source._elements():
        flat = traced(flat + element)
    return structure.to_tensors(state_spec, flat)


class Repeat(Dataset):
    def __init__(self, source: Dataset, count: Optional[int]):
        self._count = -1 if count is None else as_count(count, "repeat", "count")
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        return self._inputs[0].native_blocks

    def _cardinality(self) -> int:
        n = self._inputs[0]._cardinality()
        if self._count < 0:
            return 0 if n == 0 else (UNKNOWN if n == UNKNOWN else INFINITE)
        return n * self._count if n >= 0 else n

    def _epochs(self, blocks: bool) -> Iterator[list]:
        epoch = 0
        while self._count < 0 or epoch < self._count:
            produced = False
            source = self._inputs[0]
            for item in (source._blocks() if blocks else source._elements()):
                produced = True
                yield item
            if not produced:
                return  # an empty epoch: repeating it forever would never yield
            epoch += 1

    def _elements(self) -> Iterator[list]:
        return self._epochs(False)

    def _blocks(self) -> Iterator[list]:
        return self._epochs(True)


class Take(Dataset):
    def __init__(self, source: Dataset, count: int):
        self._count = as_count(count, "take", "count")
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        return self._inputs[0].native_blocks

    def _cardinality(self) -> int:
        n = self._inputs[0]._cardinality()
        if self._count < 0:
            return n
        return min(n, self._count) if n >= 0 else (self._count if n == INFINITE else n)

    def _elements(self) -> Iterator[list]:
        left = self._count
        if left == 0:
            return
        for flat in self._inputs[0]._elements():
            yield flat
            left -= 1
            if left == 0:
                return

    def _blocks(self) -> Iterator[list]:
        left = self._count
        if left == 0:
            return
        for block in self._inputs[0]._blocks():
            rows = len(block[0])
            if 0 <= left <= rows:
                yield [a[:left] for a in block]
                return
            yield block
            left -= rows


class Skip(Dataset):
    def __init__(self, source: Dataset, count: int):
        self._count = as_count(count, "skip", "count")
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        return self._inputs[0].native_blocks

    def _cardinality(self) -> int:
        n = self._inputs[0]._cardinality()
        if self._count < 0:
            return 0 if n >= 0 else (0 if n == INFINITE else UNKNOWN)
        return max(0, n - self._count) if n >= 0 else n

    def _elements(self) -> Iterator[list]:
        left = self._count
        for flat in self._inputs[0]._elements():
            if left != 0:
                left -= 1
                continue
            yield flat

    def _blocks(self) -> Iterator[list]:
        left = self._count
        for block in self._inputs[0]._blocks():
            rows = len(block[0])
            if left < 0 or left >= rows:
                left -= rows if left > 0 else 0
                continue
            yield [a[left:] for a in block] if left else block
            left = 0


class Shard(Dataset):
    def __init__(self, source: Dataset, num_shards: int, index: int):
        self._n = as_count(num_shards, "shard", "num_shards")
        self._index = as_count(index, "shard", "index")
        if self._n < 1 or not 0 <= self._index < self._n:
            raise errors.InvalidArgumentError(
                f"shard: need num_shards >= 1 and 0 <= index < num_shards, got "
                f"num_shards={self._n}, index={self._index}")
        super().__init__([source], source.element_spec)

    def _cardinality(self) -> int:
        n = self._inputs[0]._cardinality()
        return n if n < 0 else len(range(self._index, n, self._n))

    def _elements(self) -> Iterator[list]:
        for i, flat in enumerate(self._inputs[0]._elements()):
            if i % self._n == self._index:
                yield flat


class Cache(Dataset):
    """The first complete pass is recorded; later passes replay it (an incomplete pass
    records nothing, so a partly read first epoch is simply recomputed). With a filename
    the recording is also written (atomically, as safetensors) to `filename.safetensors`,
    which later pipelines, in this process or another, read instead of their input."""

    def __init__(self, source: Dataset, filename: str):
        self._path = f"{filename}.safetensors" if filename else None
        self._stored: Optional[list] = None
        self._stored_blocks: Optional[bool] = None
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        return self._path is None and self._inputs[0].native_blocks

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()

    def _replay(self, blocks: bool) -> Iterator[list]:
        if self._stored is None and self._path is not None and os.path.exists(self._path):
            self._stored, self._stored_blocks = cache_file.read(self._path, self._spec), False
        if self._stored is not None and self._stored_blocks == blocks:
            yield from self._stored
            return
        source = self._inputs[0]
        recorded = []
        for item in (source._blocks() if blocks else source._elements()):
            recorded.append(item)
            yield item
        self._stored, self._stored_blocks = recorded, blocks
        if self._path is not None:
            cache_file.write(self._path, self._spec, recorded)

    def _elements(self) -> Iterator[list]:
        return self._replay(False)

    def _blocks(self) -> Iterator[list]:
        return self._replay(True)


class Unique(Dataset):
    """Each distinct element once, in first-seen order (integer scalars, as in TF)."""

    def __init__(self, source: Dataset):
        spec = source.element_spec
        if not isinstance(spec, TensorSpec) or spec.shape.rank != 0 or \
                not spec.dtype.is_integer:
            raise TypeError(f"unique: elements must be integer scalars, got {spec}")
        super().__init__([source], spec)

    def _elements(self) -> Iterator[list]:
        seen: set = set()
        for flat in self._inputs[0]._elements():
            value = int(flat[0])
            if value not in seen:
                seen.add(value)
                yield flat


class AssertCardinality(Identity):
    """Passes elements through; FailedPreconditionError when their count differs."""

    def __init__(self, source: Dataset, expected: int):
        super().__init__(source)
        self._expected = as_count(expected, "assert_cardinality", "expected_cardinality")

    @property
    def native_blocks(self) -> bool:
        return False

    def _cardinality(self) -> int:
        return self._expected

    def _elements(self) -> Iterator[list]:
        count = 0
        for flat in self._inputs[0]._elements():
            count += 1
            if 0 <= self._expected < count:
                raise errors.FailedPreconditionError(
                    f"assert_cardinality: input dataset was expected to contain "
                    f"{self._expected} elements but contained at least {count} elements.")
            yield flat
        if count != self._expected:
            raise errors.FailedPreconditionError(
                f"assert_cardinality: input dataset was expected to contain "
                f"{self._expected} elements but contained only {count} elements.")


class IgnoreErrors(Identity):
    """Elements whose computation raised no error (see Dataset._tolerant)."""

    def __init__(self, source: Dataset, log_warning: bool):
        super().__init__(source)
        self._log = bool(log_warning)

    @property
    def native_blocks(self) -> bool:
        return False

    def _cardinality(self) -> int:
        n = self._inputs[0]._cardinality()
        return INFINITE if n == INFINITE else UNKNOWN

    def _elements(self) -> Iterator[list]:
        return self._inputs[0]._tolerant(self._log)
