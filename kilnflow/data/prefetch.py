"""prefetch: elements produced ahead on a background thread.

With an explicit buffer size a thread always runs ahead. With AUTOTUNE the pipeline first
runs in the consumer's thread and measures: a background thread only pays when the
consumer spends time between elements (a training step) that the producer can overlap;
for a consumer that asks as fast as elements come, a thread would only add hand-offs.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable, Iterator

from kilnflow import errors
from kilnflow.data.dataset import Dataset, as_count
from kilnflow.data.options import AUTOTUNE
from kilnflow.runtime import profile


class Prefetch(Dataset):
    def __init__(self, source: Dataset, buffer_size: int):
        n = as_count(buffer_size, "prefetch", "buffer_size")
        if n < 0 and n != AUTOTUNE:
            raise errors.InvalidArgumentError(
                f"prefetch: buffer_size must be >= 0 or AUTOTUNE, got {n}")
        self._autotune = n == AUTOTUNE
        self._size = 16 if self._autotune else n
        super().__init__([source], source.element_spec)

    @property
    def native_blocks(self) -> bool:
        return self._inputs[0].native_blocks

    def _cardinality(self) -> int:
        return self._inputs[0]._cardinality()

    def _elements(self) -> Iterator[list]:
        return self._run(self._inputs[0]._elements(), self._size)

    def _blocks(self) -> Iterator[list]:
        return self._run(self._inputs[0]._blocks(), min(self._size, 2))

    def _run(self, items: Iterator, size: int) -> Iterator:
        if self._autotune:
            return autotuned(items, size)
        return background(items, size)


PROBE = 8            # elements timed before AUTOTUNE decides
WORTH_IT = 0.25      # a thread pays when the consumer's time is this share of production
MIN_WORK_S = 50e-6   # ... and an element takes this long to produce (a hand-off costs ~10us)


def autotuned(items: Iterator, size: int) -> Iterator:
    """Runs `items` in the consumer's thread while timing both sides; moves production to
    a background thread once the consumer's own time between elements could hide it.
    Each window of PROBE elements is judged by its median times: on a busy machine the
    OS may preempt either side for milliseconds, which a sum would count as work."""
    produced: list = []
    consumed: list = []
    while True:
        start = time.perf_counter()
        try:
            item = next(items)
        except StopIteration:
            return
        handed = time.perf_counter()
        produced.append(handed - start)
        yield item
        consumed.append(time.perf_counter() - handed)
        if len(produced) == PROBE:
            produce = sorted(produced)[PROBE // 2]
            if sorted(consumed)[PROBE // 2] >= WORTH_IT * produce and produce >= MIN_WORK_S:
                yield from background(items, size)
                return
            produced.clear()
            consumed.clear()


def background(items: Iterator, size: int) -> Iterator:
    """`items` produced on a background thread, up to `size` ahead. The consumer
    takes everything ready at once (fewer thread hand-offs); closing it stops the
    producer; an error in the producer is raised in the consumer."""
    if size == 0:
        yield from items
        return
    ready: deque = deque()
    cond = threading.Condition()
    # the consumer is woken when half the buffer is ready: a wake-up per item would cost
    # two thread switches per element when the consumer is faster than the producer
    enough = max(1, size // 2)
    state = {"stop": False, "end": None}  # end: (None,) when done, (exc,) on error

    def produce() -> None:
        end: Any = (None,)
        try:
            for item in profile.timed_items(items, "Prefetch::produce"):
                with cond:
                    while len(ready) >= size and not state["stop"]:
                        cond.wait()
                    if state["stop"]:
                        return
                    ready.append(item)
                    if len(ready) >= enough:
                        cond.notify()
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer thread
            end = (exc,)
        with cond:
            state["end"] = end
            cond.notify()

    thread = threading.Thread(target=produce, name="kf.data.prefetch", daemon=True)
    thread.start()
    try:
        while True:
            with cond:
                while len(ready) < enough and state["end"] is None:
                    cond.wait()
                batch = list(ready)
                ready.clear()
                end = state["end"]
                cond.notify()
            yield from batch
            if end is not None and not batch:
                if end[0] is not None:
                    raise end[0]
                return
    finally:
        with cond:
            state["stop"] = True
            cond.notify()
