"""shuffle / repeat / take / skip / shard / cache / prefetch: TF's semantics, seeds,
cardinalities and laziness."""
import threading

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.data import Dataset


def values(ds):
    return [np.asarray(v).tolist() for v in ds.as_numpy_iterator()]


@pytest.mark.parametrize("blocks", [True, False])
def test_shuffle_is_a_permutation_reproducible_with_seed(blocks):
    source = Dataset.range(1000) if blocks else Dataset.range(1000).map(
        lambda x: kf.reduce_sum(kf.reshape(x, [1])))  # per-element path
    ds = source.shuffle(100, seed=7)
    first, second = values(ds), values(ds)
    assert sorted(first) == list(range(1000))
    assert first != list(range(1000))
    assert first != second  # reshuffled each iteration
    assert values(source.shuffle(100, seed=7)) == first  # reproducible
    fixed = source.shuffle(100, seed=7, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)


def test_shuffle_small_buffer_keeps_locality():
    # with a buffer of 10, element i can't come out before position i - 10
    got = values(Dataset.range(500).shuffle(10, seed=1))
    assert sorted(got) == list(range(500))
    assert all(position >= value - 10 for position, value in enumerate(got))
    assert values(Dataset.range(5).shuffle(1)) == [0, 1, 2, 3, 4]


def test_shuffle_global_seed_makes_it_reproducible():
    kf.random.set_seed(3)
    a = values(Dataset.range(50).shuffle(50))
    kf.random.set_seed(3)
    b = values(Dataset.range(50).shuffle(50))
    kf.random.set_seed(None)
    assert a == b


def test_shuffle_then_repeat_reshuffles_each_epoch():
    got = values(Dataset.range(20).shuffle(20, seed=2).repeat(2))
    assert sorted(got[:20]) == sorted(got[20:]) == list(range(20))
    assert got[:20] != got[20:]


def test_repeat_take_skip_and_cardinalities():
    assert values(Dataset.range(3).repeat(2)) == [0, 1, 2, 0, 1, 2]
    forever = Dataset.range(3).repeat()
    assert int(forever.cardinality()) == kf.data.INFINITE_CARDINALITY
    assert values(forever.take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert len(forever.take(7)) == 7
    with pytest.raises(TypeError, match="infinite"):
        len(forever)
    assert values(Dataset.range(5).skip(2)) == [2, 3, 4]
    assert values(Dataset.range(5).skip(-1)) == []
    assert values(Dataset.range(5).take(-1)) == [0, 1, 2, 3, 4]
    assert values(Dataset.range(0).repeat()) == []  # an empty epoch ends repeat()
    assert len(Dataset.range(10).skip(3).take(4)) == 4


def test_take_skip_on_blocks():
    x = np.arange(5000)
    ds = Dataset.from_tensor_slices(x)
    assert np.concatenate(values(ds.skip(1500).take(1200).batch(100))).tolist() == \
        list(range(1500, 2700))
    assert np.concatenate(values(ds.repeat(2).skip(4990).take(20).batch(7))).tolist() == \
        list(range(4990, 5000)) + list(range(10))


def test_shard():
    assert values(Dataset.range(10).shard(3, 1)) == [1, 4, 7]
    assert len(Dataset.range(10).shard(3, 1)) == 3
    with pytest.raises(kf.errors.InvalidArgumentError):
        Dataset.range(10).shard(3, 3)


def test_cache_replays_after_a_complete_pass():
    calls = []

    def gen():
        calls.append(1)
        yield from range(3)
    ds = Dataset.from_generator(gen, output_signature=kf.TensorSpec([], kf.int32)).cache()
    assert values(ds.take(1)) == [0]  # partial: nothing recorded
    assert values(ds) == [0, 1, 2]
    assert values(ds) == [0, 1, 2]
    assert len(calls) == 2


def test_file_cache_survives_the_pipeline(tmp_path):
    prefix = str(tmp_path / "cache")
    calls = []

    def gen():
        calls.append(1)
        for i in range(1, 4):
            yield np.full(i, i, np.int32), np.float32(i)
    spec = (kf.TensorSpec([None], kf.int32), kf.TensorSpec([], kf.float32))
    first = Dataset.from_generator(gen, output_signature=spec).cache(prefix)
    expected = [([1], 1.0), ([2, 2], 2.0), ([3, 3, 3], 3.0)]
    assert [(a.tolist(), float(b)) for a, b in first.as_numpy_iterator()] == expected
    again = Dataset.from_generator(gen, output_signature=spec).cache(prefix)  # a new pipeline
    assert [(a.tolist(), float(b)) for a, b in again.as_numpy_iterator()] == expected
    assert len(calls) == 1
    other = Dataset.range(3).cache(prefix)
    with pytest.raises(kf.errors.InvalidArgumentError, match="element_spec"):
        list(other)


def test_prefetch_runs_ahead_on_a_thread_and_propagates_errors():
    names = []

    def f(x):
        return x
    ds = Dataset.from_generator(lambda: (names.append(threading.current_thread().name) or i
                                         for i in range(5)),
                                output_signature=kf.TensorSpec([], kf.int64)).prefetch(2)
    assert values(ds) == [0, 1, 2, 3, 4]
    assert all(n == "kf.data.prefetch" for n in names)
    assert values(Dataset.range(2000).prefetch(kf.data.AUTOTUNE).batch(1000))[1][-1] == 1999

    def bad():
        yield 1
        raise RuntimeError("boom")
    failing = Dataset.from_generator(bad, output_signature=kf.TensorSpec([], kf.int32))
    with pytest.raises(RuntimeError, match="boom"):
        list(failing.prefetch(1))


def test_abandoned_prefetch_iterator_stops_its_thread():
    before = threading.active_count()
    for _ in range(3):
        it = iter(Dataset.range(10**9).prefetch(4))
        next(it)
        del it
    import gc
    gc.collect()
    import time
    deadline = time.time() + 2
    while threading.active_count() > before and time.time() < deadline:
        time.sleep(0.05)
    assert threading.active_count() <= before


def test_huge_lazy_pipeline_stays_small():
    import tracemalloc
    ds = Dataset.range(10**9).map(lambda x: x * 2).batch(32).take(100)
    tracemalloc.start()
    try:
        got = values(ds)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20  # a few blocks, never the 8 GB of a materialized range
    assert len(got) == 100 and got[-1][-1] == 2 * (100 * 32 - 1)
    assert int(ds.cardinality()) == 100


def test_autotuned_prefetch_moves_to_a_thread_only_for_a_slow_consumer():
    import time
    names = []

    def gen():
        for i in range(40):
            names.append(threading.current_thread().name)
            time.sleep(0.0005)  # real work per element
            yield i
    ds = Dataset.from_generator(gen, output_signature=kf.TensorSpec([], kf.int64)).prefetch(
        kf.data.AUTOTUNE)
    assert values(ds) == list(range(40))
    assert "kf.data.prefetch" not in names  # a consumer that only asks: no hand-offs
    names.clear()
    got = []
    for x in ds:
        time.sleep(0.002)  # a consumer with work of its own (a training step)
        got.append(int(x))
    assert got == list(range(40))
    assert "kf.data.prefetch" in names


def test_parallel_rowwise_map_over_blocks_keeps_order():
    x = np.arange(20_000, dtype=np.float32)
    ds = Dataset.from_tensor_slices(x).map(lambda v: v * 2.0 + 1.0, num_parallel_calls=2)
    assert ds.native_blocks
    np.testing.assert_array_equal(np.concatenate(values(ds.batch(1000))), x * 2 + 1)


def test_save_and_load(tmp_path):
    import collections
    Pair = collections.namedtuple("Pair", ["a", "b"])
    ds = Dataset.from_tensor_slices({"x": np.arange(6.0).reshape(3, 2),
                                     "p": Pair(np.arange(3), np.ones(3, np.float32))})
    ds.save(str(tmp_path / "saved"))
    back = Dataset.load(str(tmp_path / "saved"))
    assert back.element_spec["x"] == ds.element_spec["x"]
    assert type(back.element_spec["p"]) is tuple
    got = list(back.as_numpy_iterator())
    assert got[2]["x"].tolist() == [4.0, 5.0] and int(got[2]["p"][0]) == 2
    typed = Dataset.load(str(tmp_path / "saved"), element_spec=ds.element_spec)
    assert isinstance(next(iter(typed))["p"], Pair)
    with pytest.raises(kf.errors.NotFoundError):
        Dataset.load(str(tmp_path / "missing"))


@pytest.mark.parametrize("rows,buffer", [(40_000, 1000), (80_000, 70_000), (300, 7)])
def test_block_shuffle_is_tf_buffer_algorithm_draw_for_draw(rows, buffer):
    """The vectorized block shuffle (a stable radix sort of each block's slot draws) yields
    exactly what TF's one-at-a-time buffer algorithm yields for the same draws."""
    from kilnflow.data.sources import INDEX_ROWS
    ds = Dataset.from_tensor_slices(np.arange(rows)).shuffle(buffer, seed=5)
    got = np.concatenate(list(ds.batch(4096).as_numpy_iterator())).tolist()
    rng = np.random.default_rng(ds._seeds + [0])  # the first epoch's generator
    slots, expected = [], []
    for start in range(0, rows, INDEX_ROWS):  # the draws of one index block per call
        block = list(range(start, min(rows, start + INDEX_ROWS)))
        fill = min(buffer - len(slots), len(block))
        slots += block[:fill]
        rest = block[fill:]
        if not rest:
            continue
        for new, slot in zip(rest, rng.integers(buffer, size=len(rest))):
            expected.append(slots[slot])
            slots[slot] = new
    expected += [slots[i] for i in rng.permutation(len(slots))]
    assert got == expected
