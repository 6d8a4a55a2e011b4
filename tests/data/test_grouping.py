"""group_by_window and bucket_by_sequence_length against TF's documented behaviour."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.data import Dataset


def values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


def test_group_by_window_documented_example():
    ds = Dataset.range(10).group_by_window(
        key_func=lambda x: x % 2, reduce_func=lambda key, window: window.batch(4),
        window_size=4)
    assert values(ds) == [[0, 2, 4, 6], [1, 3, 5, 7], [8], [9]]


def test_group_by_window_size_func_and_errors():
    ds = Dataset.range(9).group_by_window(
        lambda x: x % 3, lambda key, w: w.batch(10),
        window_size_func=lambda key: kf.cast(key, kf.int64) + 1)
    assert values(ds) == [[0], [3], [1, 4], [6], [2, 5, 8], [7]]
    with pytest.raises(ValueError):
        Dataset.range(3).group_by_window(lambda x: x, lambda k, w: w)
    with pytest.raises(ValueError, match="int64"):
        Dataset.range(3).group_by_window(lambda x: kf.cast(x, kf.int32), lambda k, w: w, 2)


def test_bucket_by_sequence_length():
    lengths = [1, 5, 2, 6, 3, 7, 1]
    ds = Dataset.from_generator(lambda: (np.full(n, n, np.int32) for n in lengths),
                                output_signature=kf.TensorSpec([None], kf.int32))
    buckets = ds.bucket_by_sequence_length(lambda x: kf.shape(x)[0], [4], [2, 2])
    assert values(buckets) == [[[1, 0], [2, 2]], [[5, 5, 5, 5, 5, 0], [6] * 6],
                               [[3, 3, 3], [1, 0, 0]], [[7] * 7]]
    padded = values(ds.bucket_by_sequence_length(lambda x: kf.shape(x)[0], [4, 10], [2, 2, 2],
                                                 pad_to_bucket_boundary=True))
    assert all(np.asarray(b).shape[1] in (3, 9) for b in padded)
