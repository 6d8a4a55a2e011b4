"""kf.data.experimental: CSV, group_by_reducer, ignore_errors, at, pad_to_cardinality and
the apply() forms, against outputs recorded from TF 2.21 (recorded/tf_experimental.json)
where TF's output is specific, and against the Dataset methods they stand for otherwise."""
import json
import os
import sqlite3
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.data import Dataset

X = kf.data.experimental
RECORDED = json.load(open(os.path.join(os.path.dirname(__file__), "recorded",
                                       "tf_experimental.json")))


def plain(value):
    value = np.asarray(value)
    if value.dtype == object or value.dtype.kind == "S":
        return [v.decode() for v in value.reshape(-1)] if value.ndim else value.item().decode()
    return value.tolist()


@pytest.fixture
def csv_file(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('a,b,c,name\n1,2.5,7,"x, y"\n3,,8,z\n5,1e3,,"q""r"\n')
    return str(path)


def test_csv_dataset_as_tf(csv_file):
    ds = X.CsvDataset(csv_file, [kf.constant(0, kf.int32), kf.constant(-1.0),
                                 kf.constant(0, kf.int64), kf.constant("", kf.string)],
                      header=True)
    assert ds.element_spec == (kf.TensorSpec([], kf.int32), kf.TensorSpec([], kf.float32),
                               kf.TensorSpec([], kf.int64), kf.TensorSpec([], kf.string))
    assert [[plain(x) for x in e] for e in ds.as_numpy_iterator()] == RECORDED["csv_defaults"]
    ds = X.CsvDataset(csv_file, [kf.int32, kf.string], header=True, select_cols=[0, 3])
    assert [[plain(x) for x in e] for e in ds.as_numpy_iterator()] == RECORDED["csv_select"]
    required = X.CsvDataset(csv_file, [kf.int32, kf.float32, kf.int32, kf.string], header=True)
    with pytest.raises(kf.errors.InvalidArgumentError, match="Field 1 is required but missing"):
        list(required)
    assert len(list(required.ignore_errors())) == 1  # the two bad records skipped
    with pytest.raises(kf.errors.InvalidArgumentError, match="not a valid int32: x, y"):
        list(X.CsvDataset(csv_file, [0], header=True, select_cols=[3]))
    assert len(list(X.CsvDataset(csv_file, [0], header=True, exclude_cols=[1, 2, 3]))) == 3


def test_make_csv_dataset_as_tf(csv_file):
    ds = X.make_csv_dataset(csv_file, batch_size=2, label_name="c", shuffle=False,
                            num_epochs=1)
    features, label = ds.element_spec
    assert list(features) == RECORDED["make_csv_keys"]
    assert {k: s.dtype.name for k, s in features.items()} == RECORDED["make_csv_spec"]
    assert label == kf.TensorSpec([None], kf.int32)
    got = [[{k: plain(v) for k, v in f.items()}, plain(y)] for f, y in ds.as_numpy_iterator()]
    assert got == RECORDED["make_csv"]
    ds = X.make_csv_dataset(csv_file, batch_size=3, shuffle=False, num_epochs=1,
                            select_columns=["name", "a"], column_defaults=[0, ""])
    assert [{k: plain(v) for k, v in f.items()} for f in ds.as_numpy_iterator()] == \
        RECORDED["make_csv_select"]
    forever = X.make_csv_dataset(csv_file, batch_size=4, shuffle_seed=2)  # num_epochs None
    assert len(list(forever.take(5))) == 5  # it repeats
    assert sorted(plain(next(iter(forever))["a"])) in ([1, 1, 3, 5], [1, 3, 3, 5],
                                                       [1, 3, 5, 5])


def test_group_by_reducer_and_ignore_errors_as_tf():
    reducer = X.Reducer(lambda k: kf.constant(0, kf.int64), lambda s, x: s + x, lambda s: s)
    ds = Dataset.range(10).apply(X.group_by_reducer(lambda x: x % 3, reducer))
    assert plain(list(ds.as_numpy_iterator())) == RECORDED["group_by_reducer"]
    bad = Dataset.range(6).map(
        lambda x: kf.debugging.check_numerics(1.0 / kf.cast(x - 2, kf.float32), "bad"))
    with pytest.raises(kf.errors.InvalidArgumentError):
        list(bad)
    np.testing.assert_allclose(list(bad.apply(X.ignore_errors()).as_numpy_iterator()),
                               RECORDED["ignore_errors"], rtol=1e-6)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert len(list(bad.ignore_errors(log_warning=True).batch(2))) == 3
    assert any("dropped" in str(w.message) for w in caught)


def test_at_and_pad_to_cardinality_as_tf():
    assert int(X.at(Dataset.range(10), 3)) == RECORDED["at"]
    with pytest.raises(kf.errors.OutOfRangeError):
        X.at(Dataset.range(10), 30)
    padded = Dataset.from_tensor_slices({"x": [1, 2, 3]}).apply(X.pad_to_cardinality(5))
    assert [{k: plain(v) for k, v in e.items()} for e in padded.as_numpy_iterator()] == \
        RECORDED["pad_to_cardinality"]
    with pytest.raises(kf.errors.InvalidArgumentError, match="cardinality"):
        Dataset.from_tensor_slices({"x": [1, 2, 3]}).apply(X.pad_to_cardinality(2))


def test_apply_forms_match_the_methods():
    ds = Dataset.range(7)
    pairs = [
        (X.enumerate_dataset(2), lambda d: d.enumerate(2)),
        (X.scan(kf.constant(0, kf.int64), lambda s, x: (s + x, s)),
         lambda d: d.scan(kf.constant(0, kf.int64), lambda s, x: (s + x, s))),
        (X.take_while(lambda x: x < 4), lambda d: d.take_while(lambda x: x < 4)),
        (X.map_and_batch(lambda x: x * 2, 3), lambda d: d.map(lambda x: x * 2).batch(3)),
        (X.shuffle_and_repeat(4, 2, seed=1), lambda d: d.shuffle(4, seed=1).repeat(2)),
        (X.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2),
         lambda d: d.group_by_window(lambda x: x % 2, lambda k, w: w.batch(2), 2)),
        (X.parallel_interleave(lambda x: Dataset.range(x), cycle_length=2),
         lambda d: d.interleave(lambda x: Dataset.range(x), cycle_length=2)),
    ]
    for form, method in pairs:
        assert [plain(e) for e in ds.apply(form).as_numpy_iterator()] == \
            [plain(e) for e in method(ds).as_numpy_iterator()]
    batched = Dataset.from_tensor_slices([[1, 2], [3, 4]])
    assert plain(list(batched.apply(X.unbatch()).as_numpy_iterator())) == [1, 2, 3, 4]
    assert plain(list(Dataset.from_tensor_slices([1, 1, 2]).apply(X.unique())
                      .as_numpy_iterator())) == [1, 2]
    lengths = Dataset.from_tensor_slices([[1, 0], [1, 1]]).apply(X.bucket_by_sequence_length(
        lambda x: kf.reduce_sum(x), [2], [2, 2]))
    assert [plain(b) for b in lengths.as_numpy_iterator()] == [[[1, 0]], [[1, 1]]]


def test_sources_and_structure_helpers(tmp_path):
    assert plain(list(X.Counter(3, 2).take(3).as_numpy_iterator())) == [3, 5, 7]
    assert X.RandomDataset(1).element_spec == kf.TensorSpec([], kf.int64)
    assert plain(list(X.from_list([1, 2]).as_numpy_iterator())) == [1, 2]
    assert int(X.get_single_element(Dataset.from_tensors(4))) == 4
    assert X.get_structure(Dataset.range(2)) == kf.TensorSpec([], kf.int64)
    assert X.get_structure(iter(Dataset.range(2))) == kf.TensorSpec([], kf.int64)
    assert bool(X.get_next_as_optional(iter(Dataset.range(1))).has_value())
    X.save(Dataset.range(3), str(tmp_path / "saved"))
    assert plain(list(X.load(str(tmp_path / "saved")).as_numpy_iterator())) == [0, 1, 2]
    calls = []

    def numbers():
        for i in range(3):
            calls.append(i)
            yield i
    source = Dataset.from_generator(numbers, output_signature=kf.TensorSpec([], kf.int64))
    snap = source.apply(X.snapshot(str(tmp_path / "snap")))
    assert plain(list(snap.as_numpy_iterator())) == [0, 1, 2]
    again = source.apply(X.snapshot(str(tmp_path / "snap")))
    assert plain(list(again.as_numpy_iterator())) == [0, 1, 2] and len(calls) == 3
    assert X.SHARD_HINT == -1 and X.AutotuneAlgorithm.HILL_CLIMB == 1


def test_sql_dataset(tmp_path):
    db = str(tmp_path / "t.db")
    with sqlite3.connect(db) as connection:
        connection.execute("create table t (name text, n integer)")
        connection.executemany("insert into t values (?, ?)", [("a", 1), ("b", 2)])
    ds = X.SqlDataset("sqlite", db, "select name, n from t order by n", (kf.string, kf.int32))
    assert list(ds.as_numpy_iterator()) == [(b"a", 1), (b"b", 2)]
    with pytest.raises(kf.errors.InvalidArgumentError, match="driver_name"):
        X.SqlDataset("mysql", db, "select 1", kf.int32)


def test_rejection_resample_moves_towards_the_target():
    labels = np.array([0] * 900 + [1] * 100)
    ds = Dataset.from_tensor_slices(labels).rejection_resample(
        lambda x: x, target_dist=[0.5, 0.5], initial_dist=[0.9, 0.1], seed=3)
    assert ds.element_spec == (kf.TensorSpec([], kf.int64), kf.TensorSpec([], kf.int64))
    classes = [int(c) for c, _ in ds.as_numpy_iterator()]
    assert classes.count(1) == 100 and 60 <= classes.count(0) <= 160
    np.random.default_rng(0).shuffle(labels)
    estimated = Dataset.from_tensor_slices(labels).apply(
        X.rejection_resample(lambda x: x, [0.5, 0.5], seed=3))
    assert 0.25 < np.mean([int(c) for c, _ in estimated.as_numpy_iterator()]) < 0.75
    with pytest.raises(kf.errors.InvalidArgumentError, match="target_dist"):
        Dataset.range(3).rejection_resample(lambda x: x, [-1.0, 2.0])
