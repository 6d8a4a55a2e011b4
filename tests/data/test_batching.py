"""batch / padded_batch / unbatch / rebatch / window against TF's documented results."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.data import Dataset


def values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


def test_batch_last_partial_and_drop_remainder():
    assert values(Dataset.range(8).batch(3)) == [[0, 1, 2], [3, 4, 5], [6, 7]]
    assert values(Dataset.range(8).batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert Dataset.range(8).batch(3).element_spec == kf.TensorSpec([None], kf.int64)
    assert Dataset.range(8).batch(3, True).element_spec == kf.TensorSpec([3], kf.int64)
    assert len(Dataset.range(8).batch(3)) == 3
    assert len(Dataset.range(8).batch(3, drop_remainder=True)) == 2


def test_batch_from_blocks_equals_batch_from_elements():
    x = np.arange(3000).reshape(1000, 3)
    gen = Dataset.from_generator(lambda: iter(x), output_signature=kf.TensorSpec([3], kf.int64))
    for size in (1, 7, 64, 1000, 1500):
        fast = values(Dataset.from_tensor_slices(x).batch(size))
        slow = values(gen.batch(size))
        assert fast == slow


def test_batch_nested_and_ragged_error():
    ds = Dataset.from_tensor_slices(({"a": np.arange(4)}, np.ones((4, 2))))
    first = next(iter(ds.batch(3)))
    assert first[0]["a"].numpy().tolist() == [0, 1, 2]
    assert first[1].shape == [3, 2]
    ragged = Dataset.range(1, 4).map(lambda n: kf.range(n))
    with pytest.raises(kf.errors.InvalidArgumentError, match="different shapes in component 0"):
        list(ragged.batch(2))
    assert len(list(ragged.batch(1))) == 3  # the pipeline is still usable


def test_padded_batch():
    ds = Dataset.range(1, 5).map(lambda n: kf.fill([n], n))
    got = values(ds.padded_batch(2))
    assert got == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    fixed = values(ds.padded_batch(2, padded_shapes=[5], padding_values=np.int64(-1)))
    assert fixed[0] == [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]]
    assert ds.padded_batch(2, padded_shapes=[5]).element_spec == \
        kf.TensorSpec([None, 5], kf.int64)
    with pytest.raises(kf.errors.InvalidArgumentError):
        list(ds.padded_batch(2, padded_shapes=[3]))
    pairs = Dataset.zip((ds, Dataset.range(4)))
    out = next(iter(pairs.padded_batch(2, padded_shapes=([None], []))))
    assert out[0].shape == [2, 2] and out[1].numpy().tolist() == [0, 1]


def test_rebatch_of_ragged_rows_names_the_shapes():
    ragged = Dataset.range(1, 4).map(lambda n: kf.fill([2, n], n)).unbatch()
    assert ragged.element_spec == kf.TensorSpec([None], kf.int64)
    with pytest.raises(kf.errors.InvalidArgumentError, match="different shapes"):
        list(ragged.batch(3))
    assert values(ragged.batch(2))[0] == [[1], [1]]


def test_unbatch_and_rebatch():
    ds = Dataset.from_tensor_slices(np.arange(10)).batch(4)
    assert values(ds.unbatch()) == list(range(10))
    assert ds.unbatch().element_spec == kf.TensorSpec([], kf.int64)
    assert values(ds.rebatch(3)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    bad = Dataset.from_tensors((np.zeros(2), np.zeros(3)))
    with pytest.raises(kf.errors.InvalidArgumentError, match="unbatch"):
        list(bad.unbatch())


def test_window_documented_examples():
    def windows(ds):
        return [values(w) for w in ds]
    assert windows(Dataset.range(7).window(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert windows(Dataset.range(7).window(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert windows(Dataset.range(7).window(3, 2, 1, True)) == \
        [[0, 1, 2], [2, 3, 4], [4, 5, 6]]
    assert windows(Dataset.range(7).window(3, 1, 2, True)) == \
        [[0, 2, 4], [1, 3, 5], [2, 4, 6]]
    flat = Dataset.range(6).window(2).flat_map(lambda w: w.batch(2))
    assert values(flat) == [[0, 1], [2, 3], [4, 5]]


def test_window_of_nested_elements():
    ds = Dataset.from_tensor_slices(({"a": [1, 2, 3]}, [4, 5, 6])).window(2)
    assert isinstance(ds.element_spec[0]["a"], kf.data.DatasetSpec)
    first = next(iter(ds))
    assert values(first[0]["a"]) == [1, 2] and values(first[1]) == [4, 5]


def test_map_over_windows_points_to_flat_map():
    with pytest.raises(TypeError, match="flat_map"):
        Dataset.range(4).window(2).map(lambda w: w)
