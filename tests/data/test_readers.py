"""TextLineDataset, TFRecordDataset, FixedLengthRecordDataset, list_files, TFRecordWriter and
interleave's cycle (sequential and parallel), against outputs recorded from TF 2.21
(recorded/tf_readers_interleave.json, made by running the same inputs through tf.data)."""
import gzip
import json
import os
import threading
import time
import zlib

import pytest

import kilnflow as kf
from kilnflow.data import Dataset

RECORDED = json.load(open(os.path.join(os.path.dirname(__file__), "recorded",
                                       "tf_readers_interleave.json")))


@pytest.fixture
def files(tmp_path):
    """The files TF read when the outputs were recorded."""
    d = str(tmp_path)
    for name, data in [("a.txt", b"a1\nb2\r\n\nc3"), ("b.txt", b"x\n\ny\n"), ("empty.txt", b""),
                       ("c.gz", gzip.compress(b"g1\ng2\n")), ("c.zlib", zlib.compress(b"z1\nz2")),
                       ("r.tfrecord", bytes.fromhex(RECORDED["tfrecord_hex"])),
                       ("fixed.bin", bytes(range(23)))]:
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    return d


def strings(ds):
    return [v.decode("latin1") for v in ds.as_numpy_iterator()]


def test_text_lines_as_tf(files):
    one = kf.data.TextLineDataset(f"{files}/a.txt")
    assert one.element_spec == kf.TensorSpec([], kf.string)
    assert int(one.cardinality()) == kf.data.UNKNOWN_CARDINALITY
    assert strings(one) == RECORDED["text_a"]
    names = [f"{files}/a.txt", f"{files}/b.txt", f"{files}/empty.txt"]
    assert strings(kf.data.TextLineDataset(names)) == RECORDED["text_ab"]
    assert strings(kf.data.TextLineDataset(kf.constant(names))) == RECORDED["text_ab"]
    assert strings(kf.data.TextLineDataset(names, buffer_size=3)) == RECORDED["text_ab"]
    assert strings(kf.data.TextLineDataset(f"{files}/c.gz", compression_type="GZIP")) == \
        RECORDED["text_gz"]
    assert strings(kf.data.TextLineDataset(f"{files}/c.zlib", "ZLIB")) == RECORDED["text_zlib"]
    parallel = kf.data.TextLineDataset(names[:2], num_parallel_reads=2)
    assert strings(parallel) == RECORDED["text_par"]


def test_text_lines_feed_string_ops(files):
    ds = kf.data.TextLineDataset(f"{files}/b.txt").map(kf.strings.length).batch(8)
    assert [b.tolist() for b in ds.as_numpy_iterator()] == [[1, 0, 1]]


def test_reader_errors(files):
    with pytest.raises(kf.errors.NotFoundError, match="missing.txt"):
        list(kf.data.TextLineDataset(f"{files}/missing.txt"))
    with pytest.raises(kf.errors.InvalidArgumentError, match="compression_type"):
        kf.data.TextLineDataset(f"{files}/a.txt", compression_type="LZ4")
    with pytest.raises(kf.errors.DataLossError, match="cannot decompress"):
        list(kf.data.TextLineDataset(f"{files}/a.txt", compression_type="GZIP"))
    with pytest.raises(TypeError, match="string"):
        kf.data.TextLineDataset(Dataset.range(3))


def test_tfrecords_as_tf(files, tmp_path):
    path = f"{files}/r.tfrecord"
    assert list(kf.data.TFRecordDataset(path).as_numpy_iterator()) == [b"one", b"", b"three33"]
    # the writer produces TF's bytes exactly (then read back, compressed too)
    kf.data.experimental.TFRecordWriter(str(tmp_path / "w.tfrecord")).write(
        Dataset.from_tensor_slices([b"one", b"", b"three33"]))
    assert (tmp_path / "w.tfrecord").read_bytes().hex() == RECORDED["tfrecord_hex"]
    kf.data.experimental.TFRecordWriter(str(tmp_path / "w.gz"), "GZIP").write(
        Dataset.from_tensors(b"gz"))
    assert strings(kf.data.TFRecordDataset(str(tmp_path / "w.gz"), "GZIP")) == \
        RECORDED["tfrecord_gz"]
    damaged = bytes.fromhex(RECORDED["tfrecord_hex"])[:18]
    (tmp_path / "bad.tfrecord").write_bytes(damaged)
    with pytest.raises(kf.errors.DataLossError, match="corrupted record at 12"):
        list(kf.data.TFRecordDataset(str(tmp_path / "bad.tfrecord")))


def test_fixed_length_records_as_tf(files):
    ds = kf.data.FixedLengthRecordDataset(f"{files}/fixed.bin", 4, header_bytes=2,
                                          footer_bytes=1)
    assert [v.hex() for v in ds.as_numpy_iterator()] == RECORDED["fixed"]
    with pytest.raises(kf.errors.InvalidArgumentError, match="body length 23 bytes"):
        list(kf.data.FixedLengthRecordDataset(f"{files}/fixed.bin", 5))


def test_list_files(files):
    found = Dataset.list_files(f"{files}/*.txt", shuffle=False)
    assert [os.path.basename(os.fsdecode(p)) for p in found.as_numpy_iterator()] == \
        ["a.txt", "b.txt", "empty.txt"]
    a = list(Dataset.list_files(f"{files}/*.txt", seed=3).as_numpy_iterator())
    b = list(Dataset.list_files(f"{files}/*.txt", seed=3).as_numpy_iterator())
    assert a == b and sorted(a) == sorted(found.as_numpy_iterator())
    both = Dataset.list_files([f"{files}/*.gz", f"{files}/*.zlib"], shuffle=False)
    assert [os.path.basename(os.fsdecode(p)) for p in both.as_numpy_iterator()] == \
        ["c.gz", "c.zlib"]
    with pytest.raises(kf.errors.InvalidArgumentError, match="No files matched pattern"):
        Dataset.list_files(f"{files}/*.nope")
    lines = Dataset.list_files(f"{files}/[ab].txt", shuffle=False).interleave(
        kf.data.TextLineDataset, cycle_length=2)
    assert strings(lines) == RECORDED["text_par"]


def _repeats(n, cycle, block, **kw):
    ds = Dataset.range(1, n + 1).interleave(
        lambda x: Dataset.from_tensors(x).repeat(x), cycle_length=cycle, block_length=block,
        **kw)
    return [int(v) for v in ds.as_numpy_iterator()]


@pytest.mark.parametrize("case", RECORDED["interleave"],
                         ids=lambda c: f"n{c['n']}-c{c['cycle_length']}-b{c['block_length']}")
def test_interleave_cycle_as_tf(case):
    n, cycle, block = case["n"], case["cycle_length"], case["block_length"]
    assert _repeats(n, cycle, block) == case["out"]
    assert _repeats(n, cycle, block, num_parallel_calls=min(2, cycle)) == case["par"]
    assert _repeats(n, cycle, block, num_parallel_calls=kf.data.AUTOTUNE) == case["autotune"]


def test_interleave_parallel_runs_slots_at_once_and_keeps_order():
    active, most = [0], [0]
    lock = threading.Lock()

    def inner(x):
        def slow():
            for i in range(3):
                with lock:
                    active[0] += 1
                    most[0] = max(most[0], active[0])
                time.sleep(0.02)  # I/O-like: releases the GIL
                with lock:
                    active[0] -= 1
                yield int(x) * 10 + i
        return Dataset.from_generator(slow, output_signature=kf.TensorSpec([], kf.int64))
    ds = Dataset.range(4).interleave(inner, cycle_length=4, num_parallel_calls=4)
    assert [int(v) for v in ds] == [0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32]
    assert most[0] > 1
    unordered = Dataset.range(4).interleave(inner, cycle_length=4, num_parallel_calls=4,
                                            deterministic=False)
    assert sorted(int(v) for v in unordered) == [0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32]


def test_interleave_arguments():
    assert _repeats(5, None, 1, num_parallel_calls=2)[:3] == [1, 2, 2] or \
        os.cpu_count() != 2
    assert [int(v) for v in Dataset.range(1, 4).interleave(
        lambda x: Dataset.range(x * 10, x * 10 + x), cycle_length=2, block_length=2,
        num_parallel_calls=2)] == RECORDED["interleave_dyn"]
    with pytest.raises(kf.errors.InvalidArgumentError, match="num_parallel_calls"):
        Dataset.range(3).interleave(Dataset.from_tensors, cycle_length=1, num_parallel_calls=2)
    with pytest.raises(kf.errors.InvalidArgumentError, match="block_length"):
        Dataset.range(3).interleave(Dataset.from_tensors, block_length=0)


def test_interleave_parallel_error_reaches_the_consumer():
    def inner(x):
        return Dataset.from_tensors(x).map(
            lambda v: kf.debugging.check_numerics(1.0 / kf.cast(v - 2, kf.float32), "bad"))
    ds = Dataset.range(4).interleave(inner, cycle_length=2, num_parallel_calls=2)
    with pytest.raises(kf.errors.InvalidArgumentError, match="bad"):
        list(ds)
    assert len(list(ds.ignore_errors())) in (1, 2, 3)  # an error ends a parallel cycle


def test_from_list():
    ds = Dataset.from_list([(1, "a"), (2, "b")])
    assert [(int(a), b) for a, b in ds.as_numpy_iterator()] == [(1, b"a"), (2, b"b")]
    assert ds.element_spec == (kf.TensorSpec([], kf.int32), kf.TensorSpec([], kf.string))
    with pytest.raises(ValueError, match="structure"):
        Dataset.from_list([(1, 2), 3])
    with pytest.raises(ValueError, match="component 0"):
        Dataset.from_list([[1, 2], [3]])
