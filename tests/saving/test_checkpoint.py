"""kf.train.Checkpoint / CheckpointManager and model.save_weights: round trips by object
path, restore status, deferred restoration (more in test_checkpoint_restore.py), eager <->
compat.v1 graph (seed E25), TF's layout in the file, and corrupt, truncated or tampered
files."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow import keras
from kilnflow.module import Module
from kilnflow.saving import checkpoint as ckpt_lib
from kilnflow.train import Checkpoint, CheckpointManager, latest_checkpoint, list_variables, \
    load_variable

L = keras.layers


class Net(Module):
    def __init__(self):
        super().__init__()
        self.w = kf.Variable(np.arange(6.0).reshape(2, 3), name="w")
        self.parts = [kf.Variable(1.0, name="a"), {"b": kf.Variable(np.int64(3), name="b")}]


def _mlp():
    return keras.Sequential([keras.Input(shape=(4,)), L.Dense(6, activation="relu"),
                             L.BatchNormalization(), L.Dense(2)])


def _x():
    return np.random.default_rng(0).random((5, 4)).astype("float32")


def test_module_round_trip_by_path(tmp_path):
    net = Net()
    path = Checkpoint(net=net).save(str(tmp_path / "ckpt"))
    assert path.endswith("ckpt-1") and os.path.exists(path + ".json")
    assert os.path.exists(path + ".safetensors")
    assert sorted(p for p, _ in list_variables(path)) == ["_CHECKPOINTABLE_OBJECT_GRAPH"] + [
        k + "/.ATTRIBUTES/VARIABLE_VALUE"
        for k in ["net/parts/0", "net/parts/1/b", "net/w", "save_counter"]]
    other = Net()
    other.w.assign(np.zeros((2, 3)))
    other.parts[1]["b"].assign(np.int64(0))
    status = Checkpoint(net=other).restore(path)
    status.assert_consumed()
    np.testing.assert_array_equal(other.w.numpy(), net.w.numpy())
    assert int(other.parts[1]["b"].numpy()) == 3
    np.testing.assert_array_equal(load_variable(path, "net/w"), net.w.numpy())


def test_save_counts_and_records_the_latest(tmp_path):
    v = kf.Variable(1.0)
    ckpt = Checkpoint(v=v)
    first = ckpt.save(str(tmp_path / "c"))
    v.assign(2.0)
    second = ckpt.save(str(tmp_path / "c"))
    assert (os.path.basename(first), os.path.basename(second)) == ("c-1", "c-2")
    assert latest_checkpoint(str(tmp_path)) == second
    v.assign(0.0)
    restored = Checkpoint(v=v)
    restored.restore(first)
    assert float(v.numpy()) == 1.0 and int(restored.save_counter.numpy()) == 1
    assert ckpt.write(str(tmp_path / "plain")) == str(tmp_path / "plain")
    assert Checkpoint(v=kf.Variable(0.0)).restore(None).expect_partial() is not None


def test_status_reports_missing_and_unexpected(tmp_path):
    path = Checkpoint(v=kf.Variable(1.0), u=kf.Variable(2.0)).write(str(tmp_path / "c"))
    status = Checkpoint(v=kf.Variable(0.0), extra=kf.Variable(5.0)).read(path)
    assert status.matched == ["v"] and status.unexpected == ["u"]
    assert status.missing == ["extra"]
    with pytest.raises(AssertionError, match="extra"):
        status.assert_existing_objects_matched()
    with pytest.raises(AssertionError):
        status.assert_consumed()
    status.expect_partial()
    status.assert_nontrivial_match()


def test_shape_or_dtype_mismatch_names_the_file(tmp_path):
    path = Checkpoint(v=kf.Variable([1.0, 2.0])).write(str(tmp_path / "c"))
    with pytest.raises(ValueError, match=r"c.*shape \[2\].*shape \(3,\)"):
        Checkpoint(v=kf.Variable([1.0, 2.0, 3.0])).read(path)
    with pytest.raises(ValueError, match="dtype float32 but variable"):
        Checkpoint(v=kf.Variable([1, 2])).read(path)


def test_trackable_arguments_are_checked():
    with pytest.raises(ValueError, match="trackable"):
        Checkpoint(x=3)


def test_keras_model_and_optimizer_round_trip(tmp_path):
    keras.utils.set_random_seed(1)
    model = _mlp()
    model.compile(keras.optimizers.Adam(0.01), "mse")
    x, y = _x(), np.ones((5, 2), "float32")
    model.fit(x, y, epochs=2, verbose=0)
    path = Checkpoint(model=model, optimizer=model.optimizer).save(str(tmp_path / "ck"))
    expected = model.predict(x, verbose=0)
    keys = [p for p, _ in list_variables(path)]
    value = "/.ATTRIBUTES/VARIABLE_VALUE"
    assert "model/layers/1/moving_mean" + value in keys and "optimizer/iterations" + value in keys
    assert any(".OPTIMIZER_SLOT/optimizer/m/" in k for k in keys)

    fresh = _mlp()
    fresh.compile(keras.optimizers.Adam(0.01), "mse")
    status = Checkpoint(model=fresh, optimizer=fresh.optimizer).restore(path)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), expected, rtol=1e-6)
    assert status.deferred  # the slots wait for the optimizer's first step
    fresh.fit(x, y, epochs=1, verbose=0)
    model.fit(x, y, epochs=1, verbose=0)
    status.assert_consumed()
    np.testing.assert_allclose(fresh.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5)


def test_unbuilt_layers_get_their_values_when_built(tmp_path):
    model = _mlp()
    x = _x()
    expected = model(x).numpy()
    path = Checkpoint(model=model).write(str(tmp_path / "c"))
    lazy = keras.Sequential([L.Dense(6, activation="relu"), L.BatchNormalization(), L.Dense(2)])
    status = Checkpoint(model=lazy).read(path)
    assert "model/layers/0/kernel" in status.deferred
    np.testing.assert_allclose(lazy(x).numpy(), expected, rtol=1e-6)
    status.assert_consumed()


def test_eager_to_graph_and_back(tmp_path):
    """Seed E25: a model built eagerly restores in a compat.v1 graph, and the other way."""
    model = _mlp()
    x = _x()
    expected = model(x).numpy()
    path = Checkpoint(model=model).save(str(tmp_path / "eager"))
    with kf.Graph().as_default():
        graph_model = _mlp()
        feed = kf.compat.v1.placeholder(kf.float32, [None, 4])
        out = graph_model(feed)
        Checkpoint(model=graph_model).restore(path).assert_existing_objects_matched()
        with kf.compat.v1.Session() as sess:
            np.testing.assert_allclose(sess.run(out, feed_dict={feed: x}), expected, rtol=1e-6)
            sess.run(kf.compat.v1.global_variables_initializer())  # fresh random values
            expected_graph = sess.run(out, feed_dict={feed: x})
            back = Checkpoint(model=graph_model).write(str(tmp_path / "graph"))
    eager_model = _mlp()
    Checkpoint(model=eager_model).read(back).assert_consumed()
    np.testing.assert_allclose(eager_model(x).numpy(), expected_graph, rtol=1e-6)


def test_saving_an_uninitialized_graph_variable_is_an_error(tmp_path):
    with kf.Graph().as_default():
        v = kf.Variable(1.0, name="never_run")
        with pytest.raises(errors.FailedPreconditionError, match="not initialized"):
            Checkpoint(v=v).write(str(tmp_path / "c"))


def test_save_and_load_weights(tmp_path):
    model = _mlp()
    x = _x()
    model.save_weights(str(tmp_path / "w"))
    assert sorted(os.listdir(tmp_path)) == ["w.json", "w.safetensors"]
    other = _mlp()
    other.load_weights(str(tmp_path / "w.safetensors")).assert_consumed()
    np.testing.assert_allclose(other(x).numpy(), model(x).numpy(), rtol=1e-6)
    with pytest.raises(FileExistsError):
        model.save_weights(str(tmp_path / "w"), overwrite=False)


def test_manager_keeps_the_newest(tmp_path):
    v = kf.Variable(0.0)
    ckpt = Checkpoint(v=v)
    manager = CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.restore_or_initialize() is None
    for i in range(4):
        v.assign(float(i))
        manager.save()
    names = sorted(os.listdir(tmp_path))
    assert names == ["checkpoint", "ckpt-3.json", "ckpt-3.safetensors", "ckpt-4.json",
                     "ckpt-4.safetensors"]
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3", "ckpt-4"]
    again = CheckpointManager(Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    assert again.checkpoints == manager.checkpoints
    v.assign(-1.0)
    assert again.restore_or_initialize() == manager.latest_checkpoint
    assert float(v.numpy()) == 3.0
    assert os.path.basename(manager.save(checkpoint_number=10)) == "ckpt-10"


# ---------------------------------------------------------------- damaged files

def _saved(tmp_path):
    return Checkpoint(v=kf.Variable([1.0, 2.0])).write(str(tmp_path / "c"))


def _edit_index(path, change):
    index = json.loads(open(path + ".json").read())
    change(index)
    with open(path + ".json", "w") as f:
        json.dump(index, f)


@pytest.mark.parametrize("change, problem", [
    (lambda i: i.update(version=99), "version 99 is not supported"),
    (lambda i: i.update(format="other"), "format is 'other'"),
    (lambda i: i.update(tensors="../elsewhere.safetensors"), "plain file name"),
    (lambda i: i["variables"][0].update(sha256="0" * 64), "do not match the sha256"),
    (lambda i: i["variables"][0].update(sha256="xyz"), "64 lowercase hex"),
    (lambda i: i["variables"][0].update(dtype="float99"), "unknown dtype"),
    (lambda i: i["variables"][0].update(shape=[3]), "says float32\\[3\\]"),
    (lambda i: i["variables"][0].update(path="w"), "has no tensor 'w/.ATTRIBUTES"),
    (lambda i: i["variables"].append(dict(i["variables"][0])), "listed twice"),
    (lambda i: i.pop("slots"), "field 'slots'"),
    (lambda i: i["variables"][0].update(extra=1), "expected an object with the fields"),
])
def test_tampered_index_is_rejected(tmp_path, change, problem):
    path = _saved(tmp_path)
    _edit_index(path, change)
    with pytest.raises((ckpt_lib.CheckpointError, errors.NotFoundError), match=problem) as info:
        Checkpoint(v=kf.Variable([0.0, 0.0])).read(path)
    assert "c.json" in str(info.value) or "c.safetensors" in str(info.value)


def test_truncated_index_and_tensors(tmp_path):
    path = _saved(tmp_path)
    raw = open(path + ".json", "rb").read()
    with open(path + ".json", "wb") as f:
        f.write(raw[: len(raw) // 2])
    with pytest.raises(ckpt_lib.CheckpointError, match=r"c\.json.*not valid JSON"):
        Checkpoint(v=kf.Variable([0.0, 0.0])).read(path)
    path = Checkpoint(v=kf.Variable([1.0, 2.0])).write(str(tmp_path / "d"))
    raw = open(path + ".safetensors", "rb").read()
    with open(path + ".safetensors", "wb") as f:
        f.write(raw[:-3])
    with pytest.raises((ckpt_lib.CheckpointError, errors.DataLossError),
                       match=r"d\.safetensors.*truncated"):
        Checkpoint(v=kf.Variable([0.0, 0.0])).read(path)


def test_tampered_tensor_bytes_are_detected(tmp_path):
    path = _saved(tmp_path)
    raw = bytearray(open(path + ".safetensors", "rb").read())
    raw[-1] ^= 1
    with open(path + ".safetensors", "wb") as f:
        f.write(bytes(raw))
    with pytest.raises(ckpt_lib.CheckpointError, match="sha256"):
        Checkpoint(v=kf.Variable([0.0, 0.0])).read(path)


def test_missing_files(tmp_path):
    with pytest.raises(errors.NotFoundError, match="no checkpoint found"):
        Checkpoint(v=kf.Variable(0.0)).read(str(tmp_path / "none"))
    with pytest.raises(errors.NotFoundError, match="is a directory"):
        Checkpoint(v=kf.Variable(0.0)).read(str(tmp_path))
    path = _saved(tmp_path)
    os.remove(path + ".safetensors")
    with pytest.raises(errors.NotFoundError, match="tensors file is missing"):
        Checkpoint(v=kf.Variable([0.0, 0.0])).read(path)


def test_corrupt_state_file(tmp_path):
    (tmp_path / "checkpoint").write_text("{not json")
    with pytest.raises(ckpt_lib.CheckpointError, match="checkpoint"):
        latest_checkpoint(str(tmp_path))
    (tmp_path / "checkpoint").write_text('{"model_checkpoint_path": 3}')
    with pytest.raises(ckpt_lib.CheckpointError, match="not a valid checkpoint state"):
        latest_checkpoint(str(tmp_path))


def test_checkpoint_reader_uses_tf_keys(tmp_path):
    from kilnflow.train import CheckpointReader, load_checkpoint
    v = kf.Variable(np.arange(6, dtype=np.float64).reshape(2, 3))
    path = Checkpoint(net=Module(), v=v).write(str(tmp_path / "c"))
    reader = load_checkpoint(path)
    assert isinstance(reader, CheckpointReader)
    key = "v/.ATTRIBUTES/VARIABLE_VALUE"
    graph_key = "_CHECKPOINTABLE_OBJECT_GRAPH"  # as TF lists an object-based checkpoint
    assert reader.get_variable_to_shape_map() == {key: [2, 3], graph_key: []}
    assert reader.get_variable_to_dtype_map() == {key: kf.float64, graph_key: kf.string}
    assert isinstance(reader.get_tensor(graph_key), bytes)
    assert reader.has_tensor(key) and reader.has_tensor("v") and not reader.has_tensor("w")
    np.testing.assert_array_equal(reader.get_tensor(key), v.numpy())
    np.testing.assert_array_equal(load_variable(path, key), v.numpy())
    with pytest.raises(kf.errors.NotFoundError, match="Key w"):
        reader.get_tensor("w")


def test_load_checkpoint_of_a_directory_reads_the_latest(tmp_path):
    from kilnflow.train import load_checkpoint
    v = kf.Variable(1.0)
    manager = CheckpointManager(Checkpoint(v=v), str(tmp_path), max_to_keep=2)
    manager.save()
    v.assign(5.0)
    manager.save()
    assert float(load_checkpoint(str(tmp_path)).get_tensor("v")) == 5.0


def test_restore_writes_in_place_and_keeps_the_dtype(tmp_path):
    v = kf.Variable(np.arange(4, dtype=np.float16))
    path = Checkpoint(v=v).write(str(tmp_path / "c"))
    target = kf.Variable(np.zeros(4, np.float16))
    buffer = target.handle.value
    Checkpoint(v=target).read(path).assert_consumed()
    assert target.dtype == kf.float16
    assert target.handle.value is buffer
    np.testing.assert_array_equal(buffer, np.arange(4, dtype=np.float16))


# ---------------------------------------------------------------- TF's layout in the file

def test_tensors_file_is_keyed_as_tf_keys_it(tmp_path):
    from kilnflow.saving import safetensors as st
    keras.utils.set_random_seed(0)
    model = _mlp()
    model.compile(keras.optimizers.Adam(0.01), "mse")
    model.fit(_x(), np.ones((5, 2), "float32"), epochs=1, verbose=0)
    path = Checkpoint(model=model, optimizer=model.optimizer).write(str(tmp_path / "c"))
    with st.safe_open(path + ".safetensors") as f:
        keys = set(f.keys())
        assert st.CHECKSUM_KEY not in f.metadata()  # hashed per tensor in the index instead
    value = "/.ATTRIBUTES/VARIABLE_VALUE"
    assert "model/layers/0/kernel" + value in keys and "optimizer/iterations" + value in keys
    assert "model/layers/0/kernel/.OPTIMIZER_SLOT/optimizer/m" + value in keys
    assert all(k.endswith(value) for k in keys)
    assert keys | {"_CHECKPOINTABLE_OBJECT_GRAPH"} == {k for k, _ in list_variables(path)}


def test_names_are_escaped_as_tf_escapes_them(tmp_path):
    from kilnflow.saving import safetensors as st

    class Odd(Module):
        def __init__(self):
            super().__init__()
            self.table = {"a/b": kf.Variable(1.0), "c.d": kf.Variable(2.0),
                          ".ATTRIBUTES": kf.Variable(3.0)}

    path = Checkpoint(m=Odd()).write(str(tmp_path / "c"))
    with st.safe_open(path + ".safetensors") as f:
        keys = sorted(f.keys())
    value = "/.ATTRIBUTES/VARIABLE_VALUE"
    assert keys == ["m/table/..ATTRIBUTES" + value, "m/table/a.Sb" + value,
                    "m/table/c..d" + value]
    fresh = Odd()
    for v in fresh.table.values():
        v.assign(0.0)
    Checkpoint(m=fresh).read(path).assert_consumed()
    assert [float(fresh.table[k].numpy()) for k in ("a/b", "c.d", ".ATTRIBUTES")] == [1, 2, 3]


def test_version_1_files_keyed_by_object_path_still_load(tmp_path):
    import hashlib
    from kilnflow.saving import safetensors as st
    prefix = str(tmp_path / "old")
    st.save_file({"v": np.array([1.0, 2.0], np.float32)}, prefix + ".safetensors",
                 metadata={"format": "kilnflow-checkpoint"})
    digest = hashlib.sha256(open(prefix + ".safetensors", "rb").read()).hexdigest()
    index = {"format": "kilnflow-checkpoint", "version": 1, "tensors": "old.safetensors",
             "sha256": digest, "variables": [{"path": "v", "dtype": "float32", "shape": [2]}],
             "slots": [], "objects": {"": "Checkpoint"}}
    with open(prefix + ".json", "w") as f:
        json.dump(index, f)
    v = kf.Variable([0.0, 0.0])
    Checkpoint(v=v).read(prefix).assert_consumed()
    assert v.numpy().tolist() == [1.0, 2.0]
    assert load_variable(prefix, "v/.ATTRIBUTES/VARIABLE_VALUE").tolist() == [1.0, 2.0]


# ---------------------------------------------------------------- CheckpointManager options

def test_manager_checkpoint_interval_counts_steps(tmp_path):
    step = kf.Variable(np.int64(0), trainable=False)
    ckpt = Checkpoint(step=step)
    with pytest.raises(ValueError, match="step_counter"):
        CheckpointManager(ckpt, str(tmp_path), max_to_keep=3, checkpoint_interval=5)
    manager = CheckpointManager(ckpt, str(tmp_path), max_to_keep=None, step_counter=step,
                                checkpoint_interval=5)
    saved = []
    for s in range(12):
        step.assign(np.int64(s))
        saved.append(manager.save() is not None)
    assert [s for s, ok in enumerate(saved) if ok] == [0, 5, 10]
    step.assign(np.int64(11))
    assert manager.save(check_interval=False) is not None  # forced
    again = CheckpointManager(Checkpoint(step=step), str(tmp_path), max_to_keep=None,
                              step_counter=step, checkpoint_interval=5)
    assert again.restore_or_initialize() == manager.latest_checkpoint
    assert int(step.numpy()) == 11
    step.assign(np.int64(14))
    assert again.save() is None  # 14 < 11 + 5
    step.assign(np.int64(16))
    assert again.save() is not None


def test_manager_keeps_one_checkpoint_every_n_hours(tmp_path, monkeypatch):
    import kilnflow.train as train_module
    clock = [1000.0]
    monkeypatch.setattr(train_module.time, "time", lambda: clock[0])
    manager = CheckpointManager(Checkpoint(v=kf.Variable(0.0)), str(tmp_path), max_to_keep=1,
                                keep_checkpoint_every_n_hours=1.0)
    for minutes in (10, 40, 70, 100, 130):  # saved at these minutes after start
        clock[0] = 1000.0 + 60 * minutes
        manager.save()
    on_disk = sorted(int(n[5:-5]) for n in os.listdir(tmp_path) if n.endswith(".json"))
    # ckpt-3 (70 min) is the first saved an hour after the start; ckpt-5 is the managed one
    assert on_disk == [3, 5] and [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-5"]


def test_restore_or_initialize_runs_init_fn_only_without_a_checkpoint(tmp_path):
    v = kf.Variable(0.0)
    calls = []
    manager = CheckpointManager(Checkpoint(v=v), str(tmp_path), max_to_keep=1,
                                init_fn=lambda: calls.append(v.assign(42.0)))
    assert manager.restore_or_initialize() is None and len(calls) == 1
    manager.save()
    v.assign(0.0)
    assert manager.restore_or_initialize() is not None and len(calls) == 1
    assert float(v.numpy()) == 42.0
