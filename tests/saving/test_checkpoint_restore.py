"""Restoring into objects that change after restore(): lists, dicts, variables and modules
attached later, unbuilt layers, and values read one tensor at a time from the mapped file."""
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.module import Module
from kilnflow.saving import checkpoint as ckpt_lib
from kilnflow.train import Checkpoint, load_checkpoint
from tests.saving.test_checkpoint import Net, _mlp, _x

L = keras.layers

# ---------------------------------------------------------------- attached after restore()

class Lazy(Module):
    """Creates nothing in __init__: its lists, dicts and variables come later."""


def test_lists_dicts_and_variables_attached_after_restore_get_their_values(tmp_path):
    saved = Lazy()
    saved.blocks = [Net(), Net()]
    saved.table = {"x": kf.Variable([1.0, 2.0]), "y": [kf.Variable(np.int32(7))]}
    saved.scale = kf.Variable(4.0)
    saved.blocks[1].w.assign(np.full((2, 3), 9.0))
    path = Checkpoint(model=saved).write(str(tmp_path / "c"))

    fresh = Lazy()
    status = Checkpoint(model=fresh).read(path)
    assert "model/scale" in status.unexpected and not status.matched
    with pytest.raises(AssertionError):
        status.assert_consumed()
    fresh.blocks = [Net(), Net()]
    fresh.table = {"x": kf.Variable([0.0, 0.0]), "y": [kf.Variable(np.int32(0))]}
    assert fresh.blocks[1].w.numpy().tolist() == [[9.0] * 3] * 2
    assert fresh.table["x"].numpy().tolist() == [1.0, 2.0]
    assert int(fresh.table["y"][0].numpy()) == 7
    assert status.unexpected == ["model/scale"]
    fresh.scale = kf.Variable(0.0)
    assert float(fresh.scale.numpy()) == 4.0
    status.assert_consumed()


def test_attached_later_under_the_checkpoint_and_into_unbuilt_layers(tmp_path):
    model = _mlp()
    x = _x()
    expected = model(x).numpy()
    v = kf.Variable(3.0)
    path = Checkpoint(model=model, v=v).write(str(tmp_path / "c"))
    ckpt = Checkpoint()
    status = ckpt.read(path)
    ckpt.v = kf.Variable(0.0)
    assert float(ckpt.v.numpy()) == 3.0
    holder = Lazy()
    ckpt.model = holder  # a module standing where the Sequential stood
    holder.layers = [L.Dense(6, activation="relu"), L.BatchNormalization(), L.Dense(2)]
    assert "model/layers/0/kernel" in status.deferred  # waits for the layer to build
    out = holder.layers[2](holder.layers[1](holder.layers[0](x), training=False))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    status.assert_consumed()


def test_a_shorter_list_leaves_the_rest_waiting(tmp_path):
    saved = Lazy()
    saved.parts = [kf.Variable(1.0), kf.Variable(2.0)]
    path = Checkpoint(m=saved).write(str(tmp_path / "c"))
    fresh = Lazy()
    status = Checkpoint(m=fresh).read(path)
    fresh.parts = [kf.Variable(0.0)]
    assert float(fresh.parts[0].numpy()) == 1.0
    assert status.unexpected == ["m/parts/1"]
    status.assert_existing_objects_matched()
    fresh.parts = [kf.Variable(0.0), kf.Variable(0.0)]  # assigned again: only the value
    assert [float(p.numpy()) for p in fresh.parts] == [0.0, 2.0]  # still waiting goes in
    assert status.unexpected == [] and status.missing == ["m/parts/0"]


def test_values_waiting_for_attributes_do_not_keep_objects_alive(tmp_path):
    import gc
    import weakref
    saved = Lazy()
    saved.w = kf.Variable(1.0)
    path = Checkpoint(m=saved).write(str(tmp_path / "c"))
    fresh = Lazy()
    status = Checkpoint(m=fresh).read(path)
    assert status.unexpected == ["m/w"]  # waits on `fresh` for its attribute w
    assert [k for k, _ in fresh._checkpoint_children()] == ["_name", "_scope"]
    assert fresh.variables == ()
    ref = weakref.ref(fresh)
    del status
    del fresh
    gc.collect()
    assert ref() is None


def test_initialize_or_restore_in_a_session_initializes_what_was_not_restored(tmp_path):
    path = Checkpoint(v=kf.Variable([1.0, 2.0])).write(str(tmp_path / "c"))
    with kf.Graph().as_default():
        v = kf.Variable([0.0, 0.0], name="v")
        extra = kf.Variable(5.0, name="extra")
        total = kf.reduce_sum(v) + extra
        status = Checkpoint(v=v, extra=extra).read(path)
        with kf.compat.v1.Session() as sess:
            status.initialize_or_restore(sess)
            assert sess.run(total) == 8.0
            status.run_restore_ops(sess)
            assert sess.run(v).tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- reading one tensor at a time

def _flip_byte_of(prefix, key):
    from kilnflow.saving import safetensors as st
    with st.safe_open(prefix + ".safetensors") as f:
        begin = f._start + f._header[key]["data_offsets"][0]
    raw = bytearray(open(prefix + ".safetensors", "rb").read())
    raw[begin] ^= 0xFF
    with open(prefix + ".safetensors", "wb") as f:
        f.write(bytes(raw))


def test_a_restore_reads_only_the_tensors_it_restores(tmp_path):
    path = Checkpoint(a=kf.Variable([1.0, 2.0]), b=kf.Variable([3.0])).write(str(tmp_path / "c"))
    _flip_byte_of(path, "b/.ATTRIBUTES/VARIABLE_VALUE")
    a = kf.Variable([0.0, 0.0])
    ckpt = Checkpoint(a=a)
    status = ckpt.read(path)  # b's damaged bytes are never read
    assert a.numpy().tolist() == [1.0, 2.0] and status.unexpected == ["b"]
    with pytest.raises(ckpt_lib.CheckpointError, match=r"c\.safetensors.*tensor 'b/\.ATTR.*sha256"):
        ckpt.b = kf.Variable([0.0])  # attached later: now b is read, and checked
    reader = load_checkpoint(path)  # lazy, as TF's: one tensor read (and checked) a call
    assert reader.get_tensor("a/.ATTRIBUTES/VARIABLE_VALUE").tolist() == [1.0, 2.0]
    assert reader.get_variable_to_shape_map()["b/.ATTRIBUTES/VARIABLE_VALUE"] == [1]
    with pytest.raises(ckpt_lib.CheckpointError, match="sha256"):
        reader.get_tensor("b/.ATTRIBUTES/VARIABLE_VALUE")


def test_restore_copies_from_the_mapped_file_into_the_variable(tmp_path):
    import tracemalloc
    value = np.random.default_rng(0).random(1 << 20).astype(np.float32)  # 4 MiB
    path = Checkpoint(v=kf.Variable(value)).write(str(tmp_path / "c"))
    target = kf.Variable(np.zeros_like(value))
    tracemalloc.start()
    try:
        Checkpoint(v=target).read(path).assert_consumed()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(target.numpy(), value)
    assert peak < value.nbytes // 4, peak  # no copy of the tensor on the heap


def test_waiting_values_come_from_the_file_as_it_was_at_restore(tmp_path):
    model = _mlp()
    x = _x()
    expected = model(x).numpy()
    path = Checkpoint(model=model).write(str(tmp_path / "c"))
    lazy = keras.Sequential([L.Dense(6, activation="relu"), L.BatchNormalization(), L.Dense(2)])
    status = Checkpoint(model=lazy).read(path)
    Checkpoint(model=_mlp()).write(path)  # replaced on disk before the layers build
    os.remove(path + ".safetensors")
    np.testing.assert_allclose(lazy(x).numpy(), expected, rtol=1e-6)
    status.assert_consumed()


def test_run_restore_ops_after_the_initializers_in_a_session(tmp_path):
    """TF1's pattern: restore while building the graph, run the initializers, then the
    restore ops: the checkpoint's values win (they were lost to the initializers before)."""
    prefix = Checkpoint(v=kf.Variable([5.0, 6.0])).write(str(tmp_path / "c"))
    v1 = kf.compat.v1
    with kf.Graph().as_default():
        v = kf.Variable([1.0, 2.0])
        status = Checkpoint(v=v).restore(prefix)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            status.run_restore_ops(sess)
            assert sess.run(v.read_value()).tolist() == [5.0, 6.0]
    eager = kf.Variable([1.0, 2.0])
    status = Checkpoint(v=eager).restore(prefix)
    eager.assign([7.0, 8.0])
    status.run_restore_ops()  # eagerly a no-op, as TF's: later assignments stay
    assert eager.numpy().tolist() == [7.0, 8.0]


_REWRITER = """
import sys, numpy as np
sys.path.insert(0, {root!r})
import kilnflow as kf
from kilnflow import train
a, b = kf.Variable(np.zeros(100_000, np.float32)), kf.Variable(np.zeros(10, np.int64))
root = train.Checkpoint(a=a, b=b)
print("ready", flush=True)
for i in range(150):
    a.assign(np.full(100_000, i % 2 + 1, np.float32))
    b.assign(np.full(10, i % 2 + 1, np.int64))
    root.write({prefix!r})
"""


def test_readers_while_a_prefix_is_rewritten_get_one_save_whole(tmp_path):
    """One process rewrites the same prefix again and again; every read here gets one save's
    values for both variables (the index and the tensors file carry the same save id, and a
    read that raced a rewrite starts again), never an error or a mix."""
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    prefix = str(tmp_path / "c")
    Checkpoint(a=kf.Variable(np.full(100_000, 1.0, np.float32)),
               b=kf.Variable(np.full(10, 1, np.int64))).write(prefix)
    writer = subprocess.Popen([sys.executable, "-c", _REWRITER.format(root=root, prefix=prefix)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert writer.stdout.readline().strip() == b"ready"
        reads = 0
        while writer.poll() is None:
            a, b = kf.Variable(np.zeros(100_000, np.float32)), kf.Variable(np.zeros(10, np.int64))
            Checkpoint(a=a, b=b).read(prefix).assert_consumed()
            values = {float(x) for x in np.unique(a.numpy())} | {float(x) for x in b.numpy()}
            assert values in ({1.0}, {2.0}), values
            reads += 1
        assert writer.returncode == 0, writer.stderr.read().decode()
        assert reads > 5
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
