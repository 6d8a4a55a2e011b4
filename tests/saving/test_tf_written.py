"""A checkpoint written by TensorFlow 2.21 itself (tests/saving/data/tf_2_21, recorded by
scripts/record_tf_checkpoint.py): listed, read and restored without TF. The values are
TF's own reading of the same files (expected.json); the Keras model restored from it gives
TF's outputs, and one more Adam step from the restored optimizer state gives TF's too."""
import json
import os
import shutil

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import train
from kilnflow.saving import checkpoint as ckpt_lib

DATA = os.path.join(os.path.dirname(__file__), "data", "tf_2_21")
V = "/.ATTRIBUTES/VARIABLE_VALUE"


@pytest.fixture(scope="module")
def expected():
    with open(os.path.join(DATA, "expected.json")) as f:
        return json.load(f)


def _values(expected):
    return {k: v for k, v in expected.items() if not k.startswith("__")}


def test_tf_state_file_and_reader_maps(expected):
    latest = train.latest_checkpoint(DATA)
    assert latest == os.path.join(DATA, "ckpt-1")
    reader = train.load_checkpoint(DATA)
    shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    assert set(shapes) == set(_values(expected)) | {"_CHECKPOINTABLE_OBJECT_GRAPH"}
    for key, want in _values(expected).items():
        value = reader.get_tensor(key)
        assert shapes[key] == want["shape"] and list(value.shape) == want["shape"], key
        assert dtypes[key].name == want["dtype"], key
        np.testing.assert_array_equal(np.asarray(value, np.float64), want["value"], key)
        np.testing.assert_array_equal(train.load_variable(latest, key), value)
    assert [k for k, _ in train.list_variables(latest)] == sorted(shapes)


class Net(kf.Module):
    def __init__(self):
        super().__init__()
        self.w = kf.Variable(np.zeros((2, 3), np.float32))
        self.i = kf.Variable(np.int64(0))
        self.d = kf.Variable(np.zeros(4))
        self.h = kf.Variable(np.zeros(2, np.float16))
        self.b = kf.Variable(np.array([False, True]))
        self.layers = [kf.Variable(np.int32(0)), {"b.c/d": kf.Variable(np.zeros(2, np.float32))}]


def _model(named=True):
    # Values TF keys through the optimizer find their variables by Keras 3 variable path
    # when the layers carry the names TF gave them (the first model of a fresh process),
    # else by position among the model's weights
    if not named:  # (as a model built after others in the same process: dense_7, ...)
        return kf.keras.Sequential([kf.keras.Input((3,)), kf.keras.layers.Dense(2, name="a"),
                                    kf.keras.layers.Dense(1, name="b")], name="other")
    return kf.keras.Sequential([kf.keras.Input((3,)), kf.keras.layers.Dense(2, name="dense"),
                                kf.keras.layers.Dense(1, name="dense_1")], name="sequential")


@pytest.mark.parametrize("named", [True, False], ids=["tf_names", "other_names"])
def test_module_and_keras_model_restore_from_tf(expected, tmp_path, named):
    directory = str(tmp_path / "copy")
    shutil.copytree(DATA, directory)  # the mapped files stay open while slots wait
    kf.keras.optimizers.Adam()  # not the process's first Adam: TF's adam is our adam_1
    net, model, opt = Net(), _model(named), kf.keras.optimizers.Adam(0.1)
    assert opt.name != "adam"
    assert (model.weights[0].path == "sequential/dense/kernel") == named
    status = train.Checkpoint(net=net, model=model, optimizer=opt).restore(
        train.latest_checkpoint(directory))
    status.assert_existing_objects_matched()
    assert status.unexpected == []
    assert status.deferred == [f"optimizer/_variables/{i}" for i in range(2, 10)]  # slots
    np.testing.assert_array_equal(net.w.numpy(), np.arange(6).reshape(2, 3))
    assert net.w.dtype == kf.float32 and net.h.dtype == kf.float16 and int(net.i.numpy()) == 7
    assert net.b.numpy().tolist() == [True, False]
    assert net.layers[1]["b.c/d"].numpy().tolist() == [4.0, 4.0]
    assert int(opt.iterations.numpy()) == 2
    x = np.array(expected["__x__"], np.float32)
    np.testing.assert_allclose(model(x).numpy(), expected["__model_output__"], rtol=1e-6)
    with kf.GradientTape() as tape:
        loss = kf.reduce_mean((model(x) - np.ones((4, 1), np.float32)) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))  # builds the slots
    status.assert_consumed()
    np.testing.assert_allclose(model(x).numpy(),
                               expected["__model_output_after_one_more_step__"], rtol=1e-5)


def test_damaged_object_graph_never_escapes_as_a_bare_error(tmp_path):
    """Bytes all over the data file flipped in turn (the serialized object graph, a string
    tensor TF does not checksum, and the values, which it does): the restore succeeds or
    raises a CheckpointError naming the file, never another exception."""
    data = os.path.join(DATA, "ckpt-1.data-00000-of-00001")
    raw = open(data, "rb").read()
    directory = tmp_path / "bad"
    shutil.copytree(DATA, directory)
    target = directory / "ckpt-1.data-00000-of-00001"
    outcomes = set()
    for at in range(0, len(raw), 5):
        damaged = bytearray(raw)
        damaged[at] ^= 0x5A
        target.write_bytes(bytes(damaged))
        try:
            train.Checkpoint(net=Net(), model=_model()).restore(str(directory / "ckpt-1"))
            outcomes.add("restored")
        except ckpt_lib.CheckpointError as exc:
            assert "ckpt-1" in str(exc)
            outcomes.add("error")
    assert outcomes == {"restored", "error"}
