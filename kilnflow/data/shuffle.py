"""shuffle: TF's buffer algorithm, run a block of draws at a time.

Over a random-access source (from_tensor_slices) only row numbers are shuffled and each
block of rows is gathered once; otherwise blocks (or single elements) pass through the
buffer. Seeds follow TF's rules (kf.random.set_seed and the op seed); each iteration
draws a new order unless reshuffle_each_iteration=False.
"""
from __future__ import annotations

import threading
from typing import Iterator, Optional

import numpy as np

from kilnflow import errors
from kilnflow.data import structure
from kilnflow.data.dataset import BLOCK_ROWS, Dataset, as_count
from kilnflow.data.options import AUTOTUNE
from kilnflow.ops.random import get_seed


class Shuffle(Dataset):
    def __init__(self, source: Dataset, buffer_size: int, seed: Optional[int],
                 reshuffle_each_iteration: bool):
        self._buffer = as_count(buffer_size, "shuffle", "buffer_size")
        if self._buffer == AUTOTUNE:
            self._buffer = 1024
        if self._buffer < 1:
            raise errors.InvalidArgumentError(
                f"shuffle: buffer_size must be positive, got {buffer_size}")
        seeds = get_seed(None if seed is None else as_count(seed, "shuffle", "seed"))
        # no seed anywhere: fresh entropy, fixed for this dataset (one order per epoch)
        self._seeds = list(seeds) if seeds is not None else \
            [int(x) for x in np.random.SeedSequence().generate_state(2)]
        self._reshuffle = bool(reshuffle_each_iteration)
        self._epoch = 0
        self._lock = threading.Lock()
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        source = self._inputs[0]
        return source.random_access or source.native_blocks and all(
            s.shape.is_fully_defined() for s in structure.flat_specs(self._spec))

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()

    def _rng(self) -> np.random.Generator:
        with self._lock:  # each iteration (epoch) draws its own order when reshuffling
            epoch = self._epoch
            self._epoch += 1 if self._reshuffle else 0
        return np.random.default_rng(self._seeds + [epoch])

    def _elements(self) -> Iterator[list]:
        if self.native_blocks:
            yield from Dataset._elements(self)
            return
        rng = self._rng()
        buffer: list = []
        for flat in self._inputs[0]._elements():
            if len(buffer) < self._buffer:
                buffer.append(flat)
                continue
            j = int(rng.integers(len(buffer)))
            yield buffer[j]
            buffer[j] = flat
        for j in rng.permutation(len(buffer)):
            yield buffer[j]

    def _blocks(self) -> Iterator[list]:
        if not self.native_blocks:
            yield from Dataset._blocks(self)
            return
        source = self._inputs[0]
        if source.random_access:  # shuffle row numbers, then gather each block once
            for rows in _rechunk(self._shuffled(source.index_blocks()), source.gather_rows):
                yield source.gather(rows)
        else:
            yield from self._shuffled(source._blocks())

    def _shuffled(self, blocks: Iterator[list]) -> Iterator[list]:
        """TF's algorithm (output a random buffer slot, refill it with the next element)
        for a whole block of draws at once: a draw outputs the slot's original element,
        or the newest element an earlier draw in the same block wrote there."""
        rng, size = self._rng(), self._buffer
        buffer: Optional[list] = None
        filled = 0
        for block in blocks:
            rows = len(block[0])
            if buffer is None:
                buffer = [np.empty((size,) + a.shape[1:], a.dtype) for a in block]
            take = min(size - filled, rows)
            if take:
                for b, a in zip(buffer, block):
                    b[filled:filled + take] = a[:take]
                filled += take
                if take == rows:
                    continue
                block = [a[take:] for a in block]
                rows -= take
            yield _shuffle_block(rng, buffer, block, rows, size)
        if buffer is not None and filled:
            order = rng.permutation(filled)
            for start in range(0, filled, BLOCK_ROWS):
                chunk = order[start:start + BLOCK_ROWS]
                yield [b[chunk] for b in buffer]


def _rechunk(blocks: Iterator[list], size: int) -> Iterator[np.ndarray]:
    """One-column blocks regrouped into arrays of exactly `size` (the last may be short),
    so that batches of a size dividing it never straddle two gathered blocks."""
    pending: list = []
    count = 0
    for (column,) in blocks:
        pending.append(column)
        count += len(column)
        if count >= size:
            joined = np.concatenate(pending)
            whole = len(joined) - len(joined) % size
            for start in range(0, whole, size):
                yield joined[start:start + size]
            pending = [joined[whole:]]
            count = len(pending[0])
    if count:
        yield np.concatenate(pending)


def _shuffle_block(rng: np.random.Generator, buffer: list, block: list, rows: int,
                   size: int) -> list:
    slots = rng.integers(size, size=rows)
    # by slot, then by time: a stable sort (a radix sort on 16-bit keys, ~50x lexsort)
    order = np.argsort(slots.astype(np.uint16) if size <= 1 << 16 else slots, kind="stable")
    sorted_slots = slots[order]
    same = np.empty(rows, bool)
    same[0] = False
    same[1:] = sorted_slots[1:] == sorted_slots[:-1]
    previous = np.full(rows, -1)
    previous[order[same]] = order[np.flatnonzero(same) - 1]
    newest = np.ones(rows, bool)
    newest[:-1] = ~same[1:]  # the last write to each slot in this block
    hit = previous >= 0
    out = []
    for b, a in zip(buffer, block):
        values = b[slots]
        values[hit] = a[previous[hit]]
        b[sorted_slots[newest]] = a[order[newest]]
        out.append(values)
    return out
