"""Weights from TensorFlow: a TF 2 checkpoint (.index table + .data file) read without TF,
restored into kilnflow objects by object-graph key, listed by kf.train.load_checkpoint, and
every damaged byte caught. The files are made by tests/saving/tf_bundle.py, written from the
format's description."""
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.module import Module
from kilnflow.saving import checkpoint as ckpt_lib
from kilnflow.saving import tf_checkpoint
from kilnflow.train import Checkpoint, latest_checkpoint, list_variables, load_checkpoint
from tests.saving import tf_bundle

V = "/.ATTRIBUTES/VARIABLE_VALUE"


class Net(Module):
    def __init__(self):
        super().__init__()
        self.w = kf.Variable(np.zeros((2, 3), np.float32))
        self.layers = [kf.Variable(np.int64(0)), {"b.c": kf.Variable(np.zeros(4, np.float64))}]


def _tf_files(tmp_path, block_bytes=4096, extra=None):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    tensors = {"net/w" + V: w, "net/layers/0" + V: np.int64(7),
               "net/layers/1/b..c" + V: np.linspace(0, 1, 4), "save_counter" + V: np.int64(3),
               "_CHECKPOINTABLE_OBJECT_GRAPH": b"\x0a\x02opaque proto bytes"}
    tensors.update(extra or {})
    prefix = str(tmp_path / "ckpt-3")
    tf_bundle.write_bundle(prefix, tensors, block_bytes)
    return prefix, tensors


def test_crc32c_matches_the_standard_and_an_independent_implementation():
    assert tf_checkpoint.crc32c(b"123456789") == 0xE3069283
    data = np.random.default_rng(0).integers(0, 256, 300_001, dtype=np.uint8).tobytes()
    assert tf_checkpoint.masked_crc32c(data) == tf_bundle.masked(data)


@pytest.mark.parametrize("block_bytes", [4096, 40])  # one data block, or one per entry
def test_a_tf_checkpoint_restores_by_object_graph_key(tmp_path, block_bytes):
    prefix, tensors = _tf_files(tmp_path, block_bytes)
    net = Net()
    ckpt = Checkpoint(net=net)
    status = ckpt.restore(prefix + ".index")
    status.assert_consumed()
    np.testing.assert_array_equal(net.w.numpy(), tensors["net/w" + V])
    assert int(net.layers[0].numpy()) == 7 and int(ckpt.save_counter.numpy()) == 3
    np.testing.assert_array_equal(net.layers[1]["b.c"].numpy(), np.linspace(0, 1, 4))
    assert net.layers[1]["b.c"].dtype == kf.float64

    reader = load_checkpoint(prefix)
    assert reader.get_variable_to_shape_map()["net/w" + V] == [2, 3]
    assert reader.get_variable_to_shape_map()["_CHECKPOINTABLE_OBJECT_GRAPH"] == []
    assert reader.get_variable_to_dtype_map()["net/layers/0" + V] == kf.int64
    assert reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH") == b"\x0a\x02opaque proto bytes"
    np.testing.assert_array_equal(reader.get_tensor("net/w"), tensors["net/w" + V])
    assert [k for k, _ in list_variables(prefix)] == sorted(tensors)


def test_the_state_file_tensorflow_writes(tmp_path):
    prefix, _ = _tf_files(tmp_path)
    (tmp_path / "checkpoint").write_text(
        'model_checkpoint_path: "ckpt-3"\nall_model_checkpoint_paths: "ckpt-3"\n'
        "all_model_checkpoint_timestamps: 1700000000.5\nlast_preserved_timestamp: 1.0\n")
    assert latest_checkpoint(str(tmp_path)) == prefix
    assert float(load_checkpoint(str(tmp_path)).get_tensor("net/w" + V)[1, 2]) == 5.0
    (tmp_path / "checkpoint").write_text('model_checkpoint_path: "../../elsewhere"\n')
    assert latest_checkpoint(str(tmp_path)) is None


def test_keras_weights_and_optimizer_slots_from_tf_keys(tmp_path):
    keras.utils.set_random_seed(0)

    def make():
        model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(2)])
        model.compile(keras.optimizers.Adam(0.1), "mse")
        return model
    x, y = np.ones((4, 3), np.float32), np.zeros((4, 2), np.float32)
    trained = make()
    trained.fit(x, y, epochs=2, verbose=0)
    path = Checkpoint(model=trained, optimizer=trained.optimizer).write(str(tmp_path / "kf"))
    reader = load_checkpoint(path)
    tensors = {k: reader.get_tensor(k) for k in reader.get_variable_to_shape_map()}
    assert any(".OPTIMIZER_SLOT/optimizer/m/" in k for k in tensors)
    prefix = str(tmp_path / "tf")
    tf_bundle.write_bundle(prefix, tensors)  # the same values, as TF's files
    fresh = make()
    status = Checkpoint(model=fresh, optimizer=fresh.optimizer).read(prefix)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), trained.predict(x, verbose=0))
    fresh.fit(x, y, epochs=1, verbose=0)
    trained.fit(x, y, epochs=1, verbose=0)
    status.assert_consumed()
    np.testing.assert_allclose(fresh.predict(x, verbose=0), trained.predict(x, verbose=0),
                               rtol=1e-6)


def _flip(path, at):
    raw = bytearray(open(path, "rb").read())
    raw[at] ^= 0x40
    open(path, "wb").write(bytes(raw))


def test_damaged_files_raise_errors_naming_the_file(tmp_path):
    prefix, _ = _tf_files(tmp_path)
    _flip(prefix + ".data-00000-of-00001", 0)
    net = Net()
    with pytest.raises(ckpt_lib.CheckpointError, match=r"data-00000-of-00001.*CRC-32C"):
        Checkpoint(net=net).restore(prefix)

    prefix, _ = _tf_files(tmp_path)
    _flip(prefix + ".index", 10)
    with pytest.raises(ckpt_lib.CheckpointError, match=r"ckpt-3\.index.*CRC-32C"):
        Checkpoint(net=Net()).restore(prefix)

    prefix, _ = _tf_files(tmp_path)
    raw = open(prefix + ".index", "rb").read()
    open(prefix + ".index", "wb").write(raw[:-5])
    with pytest.raises(ckpt_lib.CheckpointError, match=r"ckpt-3\.index.*footer"):
        load_checkpoint(prefix)

    prefix, _ = _tf_files(tmp_path)
    data = prefix + ".data-00000-of-00001"
    open(data, "wb").write(open(data, "rb").read()[:10])
    with pytest.raises(ckpt_lib.CheckpointError, match="truncated"):
        Checkpoint(net=Net()).restore(prefix)


def test_inconsistent_entries_are_rejected(tmp_path):
    prefix = str(tmp_path / "bad")
    entry = tf_bundle.entry_proto("float32", [1 << 40, 1 << 40], 0, 16, 0)
    tf_bundle.write_table(prefix + ".index", [(b"", b""), (b"w" + V.encode(), entry)])
    open(prefix + ".data-00000-of-00001", "wb").write(b"\0" * 16)
    with pytest.raises(ckpt_lib.CheckpointError, match="16 bytes for shape"):
        load_checkpoint(prefix)
    entry = tf_bundle.entry_proto("float32", [4], 1 << 50, 16, 0)
    tf_bundle.write_table(prefix + ".index", [(b"", b""), (b"w" + V.encode(), entry)])
    with pytest.raises(ckpt_lib.CheckpointError, match="truncated"):
        Checkpoint(w=kf.Variable(np.zeros(4, np.float32))).restore(prefix)
    tf_bundle.write_table(prefix + ".index", [(b"", b""), (b"w" + V.encode(), b"\xff")])
    with pytest.raises(ckpt_lib.CheckpointError, match="varint"):
        load_checkpoint(prefix)
    assert os.path.getsize(prefix + ".data-00000-of-00001") == 16


def test_an_index_naming_one_block_twice_is_rejected(tmp_path):
    import struct
    prefix, _ = _tf_files(tmp_path)
    raw = open(prefix + ".index", "rb").read()
    footer = tf_checkpoint._Reader(raw[-48:-8], "x", "footer")
    meta = tf_bundle.varint(footer.varint()) + tf_bundle.varint(footer.varint())
    index_offset, index_size = footer.varint(), footer.varint()
    index_block = raw[index_offset:index_offset + index_size]
    (key, handle), = list(tf_checkpoint._entries(index_block, "x", "index"))
    doubled = tf_bundle._block([(key, handle), (key + b"z", handle)], restart_interval=1)
    handles = meta + tf_bundle.varint(index_offset) + tf_bundle.varint(len(doubled))
    open(prefix + ".index", "wb").write(
        raw[:index_offset] + tf_bundle._with_trailer(doubled) + handles
        + b"\0" * (40 - len(handles)) + struct.pack("<Q", tf_checkpoint.TABLE_MAGIC))
    with pytest.raises(ckpt_lib.CheckpointError, match="name the block at offset 0"):
        load_checkpoint(prefix)
