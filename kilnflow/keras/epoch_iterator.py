"""Keras 3's epoch iteration for fit: which batches each epoch sees.

Without `steps_per_epoch` every epoch walks the whole data from a fresh iterator. With it,
one iterator carries on across epochs (epoch 2 continues where epoch 1 stopped), so an
infinite `kf.data` pipeline (`.repeat()`) trains `steps_per_epoch` batches per epoch. When
the data runs out first, Keras's warning is issued ("Your input ran out of data;
interrupting training...") and the epoch ends early; a data source of known size then starts
over next epoch, while a source that gives nothing more (an exhausted generator) ends fit.
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
    """Yields (step, batch) per epoch from `data` (an iterable re-iterable per pass, with
    a `steps` attribute: the batches of one pass, or None)."""

    def __init__(self, data: Any, steps_per_epoch: Optional[int]):
        self.data = data
        self.steps_per_epoch = steps_per_epoch
        self.num_batches = data.steps
        self._iterator: Optional[Iterator] = None
        self._seen = 0
        self.exhausted = False  # the last epoch got no batch at all: fit stops

    @property
    def steps(self) -> Optional[int]:
        """The progress bar's target: steps_per_epoch, else the batches of one pass."""
        return self.steps_per_epoch or self.num_batches

    def epoch(self) -> Iterator[tuple]:
        if self.steps_per_epoch is None or self._iterator is None:
            self._iterator, self._seen = iter(self.data), 0
        limit = self.steps_per_epoch
        step = 0
        while limit is None or step < limit:
            if limit is not None and self.num_batches and self._seen >= self.num_batches:
                warnings.warn(OUT_OF_DATA, stacklevel=3)
                break
            try:
                batch = next(self._iterator)
            except StopIteration:
                if limit is not None:
                    if self.num_batches is None:  # now we know how long one pass is
                        self.num_batches = self._seen
                    warnings.warn(OUT_OF_DATA, stacklevel=3)
                    self._iterator = None
                break
            self._seen += 1
            yield step, batch
            step += 1
        self.exhausted = step == 0
        if limit is not None and self.num_batches and self._seen >= self.num_batches:
            self._iterator, self._seen = None, 0  # a source of known size starts over
