"""Keras 3's epoch iteration (its TF backend) for fit / evaluate / predict.

`epoch()` yields step numbers; the loop calls the batch-begin callback, then `next_batches()`,
which gives None when the data ran out. So, as in Keras's TF backend, a source that runs out
gets one `on_*_batch_begin` without its `_end`, Keras's warning ("Your input ran out of
data; interrupting training...") and the end of the epoch; fit goes on to the next epoch
(which may have no batch at all: its logs are the reset metrics, 0.0).

Without `steps_per_epoch` every epoch walks the whole data from a fresh iterator. With it, one
iterator carries on across epochs (epoch 2 continues where epoch 1 stopped), so an infinite
`kf.data` pipeline (`.repeat()`) trains `steps_per_epoch` batches per epoch; a source of known
size starts over once all its batches were seen. A source of unknown size learns its size
when it first runs out (Keras counts the failed step too).
"""
from __future__ import annotations

import warnings
from typing import Any, Iterator, Optional

OUT_OF_DATA = ("Your input ran out of data; interrupting training. Make sure that your "
               "dataset or generator can generate at least `steps_per_epoch * epochs` "
               "batches. You may need to use the `.repeat()` function when building your "
               "dataset.")


def known_batches(source: Any) -> Optional[int]:
    """How many batches one pass over `source` gives, or None when unknown or infinite:
    kf.data cardinality (negative = infinite/unknown), else len(), else None."""
    cardinality = getattr(source, "cardinality", None)
    if callable(cardinality) and hasattr(source, "element_spec"):
        value = int(cardinality())
        return value if value >= 0 else None
    try:
        return len(source)
    except TypeError:
        return None


class EpochIterator:
    """Steps and batches per epoch from `data` (re-iterable once per pass, with a `steps`
    attribute: the batches of one pass, or None)."""

    def __init__(self, data: Any, steps_per_epoch: Optional[int],
                 steps_per_execution: int = 1):
        self.data = data
        self.steps_per_epoch = steps_per_epoch
        self.per_execution = max(int(steps_per_execution), 1)
        self.num_batches = data.steps
        self._iterator: Optional[Iterator] = None
        self._seen = 0

    @property
    def steps(self) -> Optional[int]:
        """The progress bar's target: steps_per_epoch, else the batches of one pass."""
        return self.steps_per_epoch or self.num_batches

    def reset(self) -> None:
        """Start over (evaluate does, each time it runs)."""
        self._iterator, self._seen = None, 0
        self.num_batches = self.data.steps
        self._on_epoch_end()

    def _on_epoch_end(self) -> None:
        hook = getattr(self.data, "on_epoch_end", None)  # a PyDataset's hook
        if hook is not None:
            hook()

    def epoch(self) -> Iterator[int]:
        limit = self.steps_per_epoch or self.num_batches
        if limit:
            if self._iterator is None or self.steps_per_epoch is None:
                self._iterator, self._seen = iter(self.data), 0
            for step in range(0, limit, self.per_execution):
                if self.num_batches and self._seen >= self.num_batches:
                    if self.steps_per_epoch:
                        warnings.warn(OUT_OF_DATA, stacklevel=3)
                    break
                self._seen += self.per_execution
                yield step
            if self.num_batches and self._seen >= self.num_batches:
                self._iterator, self._seen = iter(self.data), 0
            self._on_epoch_end()
        else:  # size unknown: until the data runs out
            self._iterator = iter(self.data)
            step = 0
            while True:
                self._seen = step + self.per_execution
                yield step
                step += self.per_execution

    def last_step(self, step: int) -> int:
        """The step number the batch-end callback reports for the group starting at step
        (Keras reports the group's nominal end, even when the data ran out within it)."""
        return step + self.per_execution - 1

    def next_batches(self) -> Optional[list]:
        """The step's batches (steps_per_execution of them, fewer at the end of the data),
        or None (with Keras's warning) when the data ran out."""
        batches = []
        for _ in range(self.per_execution):
            try:
                batches.append(next(self._iterator))
            except StopIteration:
                if batches:
                    return batches
                if self.num_batches is None:
                    self.num_batches = self._seen
                warnings.warn(OUT_OF_DATA, stacklevel=3)
                self._iterator = None
                return None
        return batches
