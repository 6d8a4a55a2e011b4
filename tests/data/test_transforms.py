"""map/filter/take_while/flat_map/interleave/scan/reduce/enumerate/apply, with eager
(Python) expectations from TF's documented semantics and map traced once."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.data import Dataset


def values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


def test_map_unpacks_tuples_not_dicts():
    ds = Dataset.from_tensor_slices(([1, 2], [10, 20])).map(lambda a, b: a + b)
    assert values(ds) == [11, 22]
    ds = Dataset.from_tensor_slices({"a": [1, 2]}).map(lambda d: d["a"] * 3)
    assert values(ds) == [3, 6]


def test_map_traces_once_python_side_effects_at_trace_time():
    calls = []

    def f(x):
        calls.append(1)  # a trace-time side effect, as in TF
        return x * 2
    ds = Dataset.range(100).map(f)
    assert len(calls) == 1
    assert values(ds)[:3] == [0, 2, 4]
    assert len(values(ds)) == 100
    assert len(calls) == 1


def test_map_eager_vs_function_agree():
    x = np.random.default_rng(0).normal(size=(50, 4)).astype(np.float32)

    def f(row):
        if kf.reduce_sum(row) > 0:  # AutoGraph: a tensor condition becomes a cond
            return row * 2.0
        return -row
    from_map = np.stack(list(Dataset.from_tensor_slices(x).map(f).as_numpy_iterator()))
    eager = np.stack([f(kf.constant(r)).numpy() for r in x])
    traced = kf.function(f)
    function = np.stack([traced(kf.constant(r)).numpy() for r in x])
    np.testing.assert_allclose(from_map, eager)
    np.testing.assert_allclose(from_map, function)


def test_map_returns_structures_lists_become_tuples():
    ds = Dataset.range(3).map(lambda x: {"x": x, "pair": [x, x + 1]})
    assert ds.element_spec["pair"] == (kf.TensorSpec([], kf.int64),) * 2
    first = next(iter(ds))
    assert int(first["pair"][1]) == 1
    consts = Dataset.range(2).map(lambda x: (x, 7))
    assert [tuple(map(int, e)) for e in consts.as_numpy_iterator()] == [(0, 7), (1, 7)]


@pytest.mark.parametrize("calls", [2, kf.data.AUTOTUNE])
def test_parallel_map_keeps_order(calls):
    def f(x):
        return kf.reduce_sum(kf.fill([3, 3], x))  # not row-wise: runs per element
    ds = Dataset.range(200).map(f, num_parallel_calls=calls)
    assert values(ds) == [9 * i for i in range(200)]
    with pytest.raises(kf.errors.InvalidArgumentError):
        Dataset.range(3).map(f, num_parallel_calls=0)


def test_rowwise_map_runs_on_blocks_with_same_results():
    x = np.random.default_rng(1).integers(0, 255, size=(700, 5)).astype(np.uint8)
    y = np.arange(700, dtype=np.int32)

    def normalize(a, b):
        return kf.cast(a, kf.float32) / 255.0 - 0.5, b + 1
    ds = Dataset.from_tensor_slices((x, y)).map(normalize)
    assert ds.native_blocks
    batches = list(ds.batch(64).as_numpy_iterator())
    np.testing.assert_allclose(np.concatenate([b[0] for b in batches]),
                               x.astype(np.float32) / 255.0 - 0.5, rtol=1e-6)
    assert [len(b[1]) for b in batches][-1] == 700 - 64 * 10
    per_element = [e[0] for e in ds.as_numpy_iterator()]
    np.testing.assert_allclose(np.stack(per_element), x.astype(np.float32) / 255.0 - 0.5,
                               rtol=1e-6)
    options = kf.data.Options()
    options.experimental_optimization.map_and_batch_fusion = False
    assert not ds.with_options(options).native_blocks


def test_reducing_map_is_not_rowwise():
    ds = Dataset.from_tensor_slices(np.ones((10, 3), np.float32)).map(
        lambda r: r - kf.reduce_mean(r))
    assert not ds.native_blocks
    assert values(ds.batch(5))[0] == [[0.0] * 3] * 5


def test_map_runtime_error_raises_and_pipeline_stays_usable():
    ds = Dataset.from_tensor_slices([1.0, -1.0, 2.0]).map(
        lambda x: kf.debugging.check_numerics(kf.sqrt(x), "bad"))
    with pytest.raises(kf.errors.InvalidArgumentError):
        list(ds)
    assert len(list(ds.take(1))) == 1


def test_filter_and_empty_results():
    ds = Dataset.range(10).filter(lambda x: x % 3 == 0)
    assert values(ds) == [0, 3, 6, 9]
    assert values(Dataset.range(10).filter(lambda x: x > 100).batch(2)) == []
    with pytest.raises(ValueError, match="scalar bool"):
        Dataset.range(3).filter(lambda x: x)


def test_filter_on_blocks_matches_elements():
    x = np.arange(1000, dtype=np.int64)
    ds = Dataset.from_tensor_slices(x).filter(lambda v: kf.logical_or(v < 100, v > 900))
    assert ds.native_blocks
    expected = [v for v in range(1000) if v < 100 or v > 900]
    assert np.concatenate(values(ds.batch(10))).tolist() == expected
    assert values(ds) == expected


def test_take_while():
    assert values(Dataset.range(10).take_while(lambda x: x < 4)) == [0, 1, 2, 3]


def test_flat_map_and_interleave():
    ds = Dataset.from_tensor_slices([[1, 2], [3, 4]]).flat_map(Dataset.from_tensor_slices)
    assert values(ds) == [1, 2, 3, 4]
    assert ds.element_spec == kf.TensorSpec([], kf.int32)
    # TF's documented interleave example
    inter = Dataset.range(1, 6).interleave(
        lambda x: Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert values(inter) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
                             3, 3, 4, 4, 5, 5, 5, 5, 5, 5]


def test_scan_running_sum_and_reduce():
    ds = Dataset.range(5).scan(kf.constant(0, kf.int64), lambda s, x: (s + x, s + x))
    assert values(ds) == [0, 1, 3, 6, 10]
    total = Dataset.range(5).reduce(np.int64(0), lambda s, x: s + x)
    assert int(total) == 10
    count = Dataset.from_tensor_slices([[1, 2], [3, 4]]).reduce(
        (0, 0), lambda s, row: (s[0] + 1, s[1] + kf.reduce_sum(row)))
    assert tuple(int(v) for v in count) == (2, 10)
    with pytest.raises(TypeError):
        Dataset.range(3).reduce(0, lambda s, x: kf.cast(s, kf.float32))


def test_reduce_relaxes_a_growing_state():
    grown = Dataset.range(3).reduce(kf.zeros([0], kf.int64),
                                    lambda s, x: kf.concat([s, [x]], 0))
    assert grown.numpy().tolist() == [0, 1, 2]


def test_enumerate_and_apply():
    ds = Dataset.from_tensor_slices([7, 8]).enumerate(start=5)
    assert [(int(i), int(v)) for i, v in ds.as_numpy_iterator()] == [(5, 7), (6, 8)]
    assert ds.element_spec[0] == kf.TensorSpec([], kf.int64)
    assert len(ds) == 2
    assert values(Dataset.range(4).apply(lambda d: d.skip(2))) == [2, 3]
    with pytest.raises(TypeError):
        Dataset.range(2).apply(lambda d: 3)


def test_get_single_element():
    assert int(Dataset.from_tensors(5).get_single_element()) == 5
    with pytest.raises(kf.errors.InvalidArgumentError):
        Dataset.range(2).get_single_element()


def test_debug_mode_runs_python_per_element_and_checks_structure(monkeypatch):
    from kilnflow.data import functions
    monkeypatch.setitem(functions.DEBUG_MODE, "enabled", False)
    kf.data.experimental.enable_debug_mode()
    seen = []

    def f(x):
        seen.append(int(x))  # runs for every element in debug mode
        return x * 2
    assert values(Dataset.range(3).map(f)) == [0, 2, 4]
    assert seen[-3:] == [0, 1, 2]

    def changes(x):
        if int(x) == 1:  # Python control flow on values: only possible eagerly
            return x, x
        return x
    with pytest.raises(kf.errors.InvalidArgumentError, match="map.*does not match"):
        list(Dataset.range(1, 3).map(changes))
    monkeypatch.setitem(functions.DEBUG_MODE, "enabled", False)


def test_unique_random_and_assert_cardinality():
    assert values(Dataset.from_tensor_slices([1, 2, 1, 3, 2]).unique()) == [1, 2, 3]
    with pytest.raises(TypeError):
        Dataset.from_tensor_slices([[1.0]]).unique()
    first = values(Dataset.random(seed=4).take(5))
    assert first == values(Dataset.random(seed=4).take(5)) and len(set(first)) == 5
    checked = Dataset.from_generator(lambda: iter(range(3)), output_signature=kf.TensorSpec(
        [], kf.int32)).apply(kf.data.experimental.assert_cardinality(3))
    assert len(checked) == 3 and values(checked) == [0, 1, 2]
    wrong = Dataset.range(4).apply(kf.data.experimental.assert_cardinality(3))
    with pytest.raises(kf.errors.FailedPreconditionError, match="at least 4"):
        list(wrong)


def test_interleave_refills_an_exhausted_slot_in_place():
    lengths = Dataset.from_tensor_slices(np.array([1, 3, 2], np.int64))
    ds = lengths.interleave(lambda n: Dataset.range(n).map(lambda i: n * 10 + i),
                            cycle_length=2, block_length=1)
    # TF's cycle: slot 0 [10], slot 1 [30 31 32]; finding slot 0 exhausted moves the cycle
    # on (31), then slot 0 is refilled in place with [20 21], and the slots alternate
    assert values(ds) == [10, 30, 31, 20, 32, 21]
