"""Dataset sources against TF's documented results: slices, tensors, range, generators,
zip, concatenate, sampling; nested element specs."""
import collections

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.data import Dataset

Point = collections.namedtuple("Point", ["x", "y"])


def values(ds):
    return [np.asarray(v).tolist() if not isinstance(v, (tuple, dict)) else v
            for v in ds.as_numpy_iterator()]


def test_from_tensor_slices_scalars_and_rows():
    assert values(Dataset.from_tensor_slices([1, 2, 3])) == [1, 2, 3]
    rows = Dataset.from_tensor_slices(np.arange(6).reshape(3, 2))
    assert values(rows) == [[0, 1], [2, 3], [4, 5]]
    assert rows.element_spec == kf.TensorSpec([2], kf.int64)
    assert int(rows.cardinality()) == 3 and len(rows) == 3


def test_python_floats_are_float32_and_lists_are_tensors():
    ds = Dataset.from_tensor_slices([[1.0, 2.0], [3.0, 4.0]])
    assert ds.element_spec == kf.TensorSpec([2], kf.float32)


def test_nested_tuple_dict_namedtuple_specs():
    ds = Dataset.from_tensor_slices(({"a": np.zeros((4, 3), np.float32), "b": [1, 2, 3, 4]},
                                     Point(np.arange(4), np.ones(4, np.float32))))
    spec = ds.element_spec
    assert spec[0] == {"a": kf.TensorSpec([3], kf.float32), "b": kf.TensorSpec([], kf.int32)}
    assert isinstance(spec[1], Point) and spec[1].x == kf.TensorSpec([], kf.int64)
    first = next(iter(ds))
    assert isinstance(first[1], Point) and isinstance(first[0]["a"], kf.Tensor)
    assert first[0]["a"].shape == [3]


def test_mismatched_first_dimension_raises_and_names_spec():
    with pytest.raises(kf.errors.InvalidArgumentError, match="from_tensor_slices.*first"):
        Dataset.from_tensor_slices((np.zeros(3), np.zeros(4)))
    with pytest.raises(kf.errors.InvalidArgumentError):
        Dataset.from_tensor_slices(np.float32(1.0))


def test_elements_are_read_only_and_copied():
    source = np.arange(3)
    ds = Dataset.from_tensor_slices(source)
    source[0] = 100
    assert values(ds) == [0, 1, 2]
    element = next(ds.as_numpy_iterator())
    assert element == 0


def test_from_tensors():
    ds = Dataset.from_tensors(([1, 2], 3.0))
    assert ds.element_spec == (kf.TensorSpec([2], kf.int32), kf.TensorSpec([], kf.float32))
    assert len(ds) == 1


def test_range_forms():
    assert values(Dataset.range(5)) == [0, 1, 2, 3, 4]
    assert values(Dataset.range(2, 5)) == [2, 3, 4]
    assert values(Dataset.range(1, 5, 2)) == [1, 3]
    assert values(Dataset.range(5, 1, -2)) == [5, 3]
    assert values(Dataset.range(0)) == []
    assert Dataset.range(3).element_spec == kf.TensorSpec([], kf.int64)
    assert Dataset.range(3, output_type=kf.int32).element_spec.dtype == kf.int32
    assert len(Dataset.range(1, 10, 3)) == 3
    with pytest.raises(kf.errors.InvalidArgumentError):
        Dataset.range(0, 5, 0)


def test_range_blocks_match_elements():
    ds = Dataset.range(3, 1000, 7)
    from_blocks = np.concatenate([b[0] for b in ds._blocks()]).tolist()
    assert from_blocks == list(range(3, 1000, 7))
    ds = Dataset.range(1000, 3, -7)
    assert np.concatenate([b[0] for b in ds._blocks()]).tolist() == list(range(1000, 3, -7))


def test_from_generator_with_signature_and_args():
    def gen(n):
        for i in range(int(n)):
            yield i, [i] * i
    ds = Dataset.from_generator(gen, args=(3,), output_signature=(
        kf.TensorSpec([], kf.int32), kf.TensorSpec([None], kf.int32)))
    got = [(int(a), b.tolist()) for a, b in ds.as_numpy_iterator()]
    assert got == [(0, []), (1, [1]), (2, [2, 2])]
    assert got == [(int(a), b.tolist()) for a, b in ds.as_numpy_iterator()]  # called anew
    assert int(ds.cardinality()) == kf.data.UNKNOWN_CARDINALITY


def test_from_generator_bad_elements_raise_and_pipeline_stays_usable():
    calls = {"n": 0}

    def gen():
        calls["n"] += 1
        yield np.zeros(2, np.float32)
        if calls["n"] == 1:
            yield np.zeros(3, np.float32)
    ds = Dataset.from_generator(gen, output_signature=kf.TensorSpec([2], kf.float32))
    it = iter(ds)
    next(it)
    with pytest.raises(kf.errors.InvalidArgumentError, match="shape"):
        next(it)
    assert len(list(ds)) == 1
    bad = Dataset.from_generator(lambda: iter([(1, 2)]),
                                 output_signature=kf.TensorSpec([], kf.int32))
    with pytest.raises(kf.errors.InvalidArgumentError, match="structure"):
        list(bad)


def test_from_generator_output_types_and_shapes():
    ds = Dataset.from_generator(lambda: iter([1, 2]), output_types=kf.int64,
                                output_shapes=[])
    assert ds.element_spec == kf.TensorSpec([], kf.int64)
    assert values(ds) == [1, 2]
    with pytest.raises(TypeError):
        Dataset.from_generator(lambda: iter([1]))


def test_zip_forms_and_shortest():
    a, b = Dataset.range(3), Dataset.range(10, 15)
    assert [tuple(map(int, x)) for x in Dataset.zip(a, b).as_numpy_iterator()] == \
        [(0, 10), (1, 11), (2, 12)]
    assert len(Dataset.zip((a, b))) == 3
    nested = Dataset.zip({"a": a, "b": (b, a)})
    assert set(nested.element_spec) == {"a", "b"}
    first = next(iter(nested))
    assert int(first["b"][0]) == 10


def test_concatenate_relaxes_shapes_and_checks_types():
    a = Dataset.from_tensor_slices(np.zeros((2, 3), np.float32))
    b = Dataset.from_tensor_slices(np.ones((1, 4), np.float32))
    c = a.concatenate(b)
    assert c.element_spec == kf.TensorSpec([None], kf.float32)
    assert [x.shape[0] for x in c.as_numpy_iterator()] == [3, 3, 4]
    assert len(c) == 3
    with pytest.raises(TypeError):
        a.concatenate(Dataset.range(3))


def test_sample_and_choose_from_datasets():
    a = Dataset.from_tensors(1).repeat(5)
    b = Dataset.from_tensors(2).repeat(5)
    mixed = values(Dataset.sample_from_datasets([a, b], weights=[0.5, 0.5], seed=3))
    assert sorted(mixed) == [1] * 5 + [2] * 5
    assert mixed == values(Dataset.sample_from_datasets([a, b], [0.5, 0.5], seed=3))
    choice = Dataset.from_tensor_slices(np.array([0, 1, 1, 0], np.int64))
    assert values(Dataset.choose_from_datasets([a, b], choice)) == [1, 2, 2, 1]
    assert values(kf.data.experimental.choose_from_datasets([a, b], choice)) == [1, 2, 2, 1]


def test_tf_keyword_forms():
    a, b = Dataset.range(2), Dataset.range(3)
    assert len(Dataset.zip(datasets=(a, b))) == 2
    with pytest.raises(TypeError):
        Dataset.zip(a, datasets=(a, b))
    reshuffled = Dataset.range(30).shuffle(30, seed=1, reshuffle_each_iteration=None)
    assert values(reshuffled) != values(reshuffled)
    assert values(Dataset.range(2).interleave(lambda x: Dataset.from_tensors(x),
                                              cycle_length=1, block_length=None)) == [0, 1]
