"""flat_map and interleave: the elements of the datasets map_func returns, in TF's cycle.

The cycle visits cycle_length slots in turn and takes up to block_length elements from
each; an exhausted slot is refilled from the next input element when the cycle comes back
to it. With num_parallel_calls, each open slot's next block is produced ahead on a thread
pool (I/O and GIL-releasing work overlap); the output order is the same as without
threads unless deterministic=False, which lets a slot whose block is ready go first.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator, List, Optional

from kilnflow import errors
from kilnflow.data import structure
from kilnflow.data.dataset import Dataset, as_count, as_dataset
from kilnflow.data.options import AUTOTUNE
from kilnflow.data.transforms import parallelism


class Interleave(Dataset):
    """map_func returns a Dataset, so it runs eagerly per input element; the element_spec
    comes from the first dataset it returns."""

    def __init__(self, source: Dataset, fn: Callable, cycle_length: Optional[int],
                 block_length: int, num_parallel_calls: Optional[int],
                 deterministic: Optional[bool]):
        what = "interleave" if cycle_length != 1 or num_parallel_calls else "flat_map"
        if not callable(fn):
            raise TypeError(f"{what}: expected a callable, got {fn!r}")
        self._fn, self._what = fn, what
        self._cycle = parallelism(AUTOTUNE if cycle_length is None else cycle_length, what)
        self._block = as_count(block_length, what, "block_length")
        if self._block < 1:
            raise errors.InvalidArgumentError(f"{what}: block_length must be positive")
        self._threads = 0 if num_parallel_calls is None else \
            parallelism(num_parallel_calls, what)
        if cycle_length not in (None, AUTOTUNE) and num_parallel_calls not in (None, AUTOTUNE) \
                and self._threads > self._cycle:
            raise errors.InvalidArgumentError(
                f"{what}: If `cycle_length` is set to a fixed value, `num_parallel_calls` "
                f"must be either `tf.data.AUTOTUNE` or a value less than or equal to "
                f"`cycle_length`. However, `num_parallel_calls` is {self._threads} and "
                f"`cycle_length` is {self._cycle}")
        self._threads = min(self._threads, self._cycle)
        self._deterministic = deterministic
        super().__init__([source], None)

    @property
    def element_spec(self) -> Any:
        if self._spec is None:
            first = next(self._inputs[0]._elements(), None)
            if first is not None:
                self._spec = self._dataset_for(first).element_spec
        return self._spec

    def _dataset_for(self, flat: list) -> Dataset:
        args = structure.to_tensors(self._inputs[0].element_spec, flat)
        args = args if type(args) is tuple else (args,)
        return as_dataset(self._fn(*args), f"{self._what}: map_func's result")

    def _in_order(self) -> bool:
        if self._deterministic is not None:
            return bool(self._deterministic)
        return self.pipeline_options().is_deterministic()

    def _elements(self) -> Iterator[list]:
        if self._threads:
            return self._parallel()
        return self._sequential()

    def _tolerant(self, log: bool) -> Iterator[list]:
        if self._threads:
            return Dataset._tolerant(self, log)
        return self._sequential(lambda ds: ds._tolerant(log), self._inputs[0]._tolerant(log))

    def _sequential(self, open_: Callable[[Dataset], Iterator] = lambda ds: ds._elements(),
                    sources: Optional[Iterator] = None) -> Iterator[list]:
        sources = self._inputs[0]._elements() if sources is None else sources
        slots: list = [None] * self._cycle
        index = taken = active = 0
        end_of_input = False
        while not end_of_input or active:
            current = slots[index]
            if current is None and not end_of_input:
                flat = next(sources, None)
                if flat is None:
                    end_of_input = True
                else:
                    slots[index] = open_(self._dataset_for(flat))
                    active += 1
                continue
            if current is not None:
                flat = next(current, None)
                if flat is not None:
                    yield flat
                    taken += 1
                    if taken < self._block:
                        continue
                else:
                    slots[index] = None
                    active -= 1
            index, taken = (index + 1) % self._cycle, 0

    def _parallel(self) -> Iterator[list]:
        """The same cycle, with each slot's next block (up to block_length elements; fewer
        means the slot ended) computed ahead on the pool while earlier slots are read."""
        block = self._block
        in_order = self._in_order()
        pool = ThreadPoolExecutor(max_workers=self._threads,
                                  thread_name_prefix="kf.data.interleave")

        def next_block(elements: Iterator[list]) -> List[list]:
            out = []
            for flat in elements:
                out.append(flat)
                if len(out) == block:
                    break
            return out

        sources = self._inputs[0]._elements()
        # per slot: [element iterator, future of its next block] or None
        slots: List[Optional[list]] = [None] * self._cycle
        index, end_of_input = 0, False
        try:
            while True:
                if slots[index] is None and not end_of_input:
                    flat = next(sources, None)
                    if flat is None:
                        end_of_input = True
                    else:
                        elements = self._dataset_for(flat)._elements()
                        slots[index] = [elements, pool.submit(next_block, elements)]
                if end_of_input and not any(slots):
                    return
                if not in_order and slots[index] is not None and \
                        not slots[index][1].done():
                    index = _ready_slot(slots, index)
                slot = slots[index]
                if slot is not None:
                    got = slot[1].result()
                    if len(got) == block:  # the slot may have more: read ahead now
                        slot[1] = pool.submit(next_block, slot[0])
                    else:
                        slots[index] = None
                    yield from got  # a short block ended the slot: refilled next visit
                index = (index + 1) % self._cycle
        finally:
            for slot in slots:
                if slot is not None:
                    slot[1].cancel()
            pool.shutdown(wait=False)


def _ready_slot(slots: List[Optional[list]], index: int) -> int:
    """deterministic=False: the first slot from `index` on whose next block is ready (or
    `index` when none is)."""
    n = len(slots)
    for step in range(n):
        slot = slots[(index + step) % n]
        if slot is not None and slot[1].done():
            return (index + step) % n
    return index
