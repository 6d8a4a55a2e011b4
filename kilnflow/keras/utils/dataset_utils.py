"""keras.utils.PyDataset (alias Sequence): a dataset of batches by index, for fit."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np


class PyDataset:
    """Base class for a dataset of batches addressed by index: implement `__len__` (the
    batches per epoch) and `__getitem__(index)` (a batch: x, (x,), (x, y) or
    (x, y, sample_weight)); `on_epoch_end` runs after every epoch. fit shuffles the order of
    the batches when shuffle=True. The worker arguments are accepted; batches are read
    in the calling thread."""

    def __init__(self, workers: int = 1, use_multiprocessing: bool = False,
                 max_queue_size: int = 10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self) -> int:
        return self._workers

    @property
    def use_multiprocessing(self) -> bool:
        return self._use_multiprocessing

    @property
    def max_queue_size(self) -> int:
        return self._max_queue_size

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @property
    def num_batches(self) -> Any:
        return len(self)

    def on_epoch_begin(self) -> None:
        pass

    def on_epoch_end(self) -> None:
        pass


Sequence = PyDataset


def pack_x_y_sample_weight(x: Any, y: Any = None, sample_weight: Any = None) -> Any:
    """The batch as fit reads it: x alone (a tuple/list x as (x,)), (x, y) or
    (x, y, sample_weight)."""
    if y is None:
        return (x,) if isinstance(x, (tuple, list)) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def unpack_x_y_sample_weight(data: Any) -> tuple:
    """(x, y, sample_weight) of a batch given as x, (x,), (x, y) or (x, y, sample_weight)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return (data, None, None)
    if len(data) == 1:
        return (data[0], None, None)
    if len(data) == 2:
        return (data[0], data[1], None)
    if len(data) == 3:
        return (data[0], data[1], data[2])
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data}")


def timeseries_dataset_from_array(data: Any, targets: Any, sequence_length: int,
                                  sequence_stride: int = 1, sampling_rate: int = 1,
                                  batch_size: Optional[int] = 128, shuffle: bool = False,
                                  seed: Optional[int] = None, start_index: Optional[int] = None,
                                  end_index: Optional[int] = None) -> Any:
    """A kf.data.Dataset of sliding windows over `data` (batched): window i starts at
    start_index + i * sequence_stride and takes `sequence_length` steps `sampling_rate`
    apart; its target is targets[start of the window] (no targets: windows only)."""
    from kilnflow.data import Dataset
    data = np.asarray(data)
    start_index = start_index or 0
    end_index = len(data) if end_index is None else end_index
    for name, value in (("sequence_length", sequence_length),
                        ("sequence_stride", sequence_stride),
                        ("sampling_rate", sampling_rate)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
    if targets is not None and len(targets) != len(data):
        raise ValueError("`data` and `targets` to have the same number of samples. "
                         f"Received: len(data)={len(data)}, len(targets)={len(targets)}")
    if not 0 <= start_index < len(data):
        raise ValueError(f"`start_index` must be 0 or greater and lower than the number of "
                         f"samples. Received: start_index={start_index}")
    span = (sequence_length - 1) * sampling_rate
    starts = np.arange(start_index, end_index - span, sequence_stride)
    if shuffle:
        starts = np.random.default_rng(seed).permutation(starts)
    windows = data[starts[:, None] + np.arange(sequence_length) * sampling_rate] \
        if len(starts) else np.zeros((0, sequence_length) + data.shape[1:], data.dtype)
    elements: Any = windows
    if targets is not None:
        elements = (windows, np.asarray(targets)[starts])
    dataset = Dataset.from_tensor_slices(elements)
    return dataset.batch(batch_size) if batch_size is not None else dataset


def _split_sizes(total: int, left: Any, right: Any) -> tuple:
    def count(size: Any, name: str) -> Optional[int]:
        if size is None:
            return None
        if isinstance(size, float):
            if not 0 < size < 1:
                raise ValueError(f"`{name}` should be a float between 0 and 1 or a positive "
                                 f"integer. Received: {name}={size}")
            return int(size * total)
        if size <= 0 or size > total:
            raise ValueError(f"`{name}` should be smaller than the number of samples "
                             f"{total}. Received: {name}={size}")
        return int(size)
    left_n, right_n = count(left, "left_size"), count(right, "right_size")
    if left_n is None and right_n is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be "
                         "specified.")
    if left_n is None:
        left_n = total - right_n
    elif right_n is None:
        right_n = total - left_n
    if left_n + right_n > total:
        raise ValueError(f"The sum of `left_size` and `right_size` is greater than the total "
                         f"number of samples {total}.")
    return left_n, right_n


def split_dataset(dataset: Any, left_size: Any = None, right_size: Any = None,
                  shuffle: bool = False, seed: Optional[int] = None) -> tuple:
    """Split arrays (or a tuple of them), a list of samples or a finite kf.data.Dataset
    into two kf.data.Datasets of `left_size` and `right_size` samples (a float is a
    fraction; the missing size takes the rest)."""
    from kilnflow.data import Dataset
    if hasattr(dataset, "element_spec"):
        samples = list(dataset.as_numpy_iterator())
        columns: Any = [np.asarray(c) for c in zip(*samples)] \
            if samples and isinstance(samples[0], tuple) else np.asarray(samples)
    elif isinstance(dataset, (tuple, list)) and dataset and hasattr(dataset[0], "shape") \
            and np.ndim(dataset[0]) > 0:
        columns = [np.asarray(c) for c in dataset]
    else:
        columns = np.asarray(dataset)
    total = len(columns[0]) if isinstance(columns, list) else len(columns)
    left_n, right_n = _split_sizes(total, left_size, right_size)
    order = np.arange(total)
    if shuffle:
        order = np.random.default_rng(seed).permutation(total)

    def part(index: np.ndarray) -> Any:
        if isinstance(columns, list):
            return Dataset.from_tensor_slices(tuple(c[index] for c in columns))
        return Dataset.from_tensor_slices(columns[index])
    return part(order[:left_n]), part(order[left_n:left_n + right_n])
