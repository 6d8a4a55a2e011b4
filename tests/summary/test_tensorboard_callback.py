"""keras.callbacks.TensorBoard: epoch and batch scalars, validation, weight histograms,
the train graph and a profiled batch range, read back with TensorBoard's loader."""
import glob
import json
import os

import numpy as np
import pytest

import kilnflow as kf

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing import plugin_event_accumulator as pea  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402


def _load(logdir):
    acc = pea.EventAccumulator(logdir, size_guidance={pea.TENSORS: 0})
    acc.Reload()
    return acc


def _model():
    # names as a fresh Keras session gives them (the recorded TF run was one)
    model = kf.keras.Sequential([kf.keras.layers.Dense(4, activation="relu", name="dense"),
                                 kf.keras.layers.Dense(1, name="dense_1")],
                                name="sequential")
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_fit_writes_keras_layout(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 3)).astype("float32"), rng.standard_normal((32, 1))
    callback = kf.keras.callbacks.TensorBoard(str(tmp_path), histogram_freq=1,
                                              update_freq=3, profile_batch=(2, 3),
                                              write_steps_per_second=True)
    history = _model().fit(x, y.astype("float32"), batch_size=8, epochs=2, verbose=0,
                           validation_split=0.25, callbacks=[callback])
    train = _load(str(tmp_path / "train"))
    loss = [(e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
            for e in train.Tensors("epoch_loss")]
    assert [s for s, _ in loss] == [0, 1]
    np.testing.assert_allclose([v for _, v in loss], history.history["loss"], rtol=1e-5)
    assert [e.step for e in train.Tensors("batch_loss")] == [3, 6]    # 3 batches/epoch
    assert [e.step for e in train.Tensors("batch_steps_per_second")] == [3, 6]
    assert "epoch_learning_rate" in train.PluginTagToContent("scalars")
    assert "epoch_steps_per_second" in train.PluginTagToContent("scalars")
    histograms = train.PluginTagToContent("histograms")
    assert sorted(histograms) == ["sequential/dense/bias/histogram",
                                  "sequential/dense/kernel/histogram",
                                  "sequential/dense_1/bias/histogram",
                                  "sequential/dense_1/kernel/histogram"]
    assert any(n.op == "MatMul" for n in train.Graph().node)
    val = _load(str(tmp_path / "validation"))
    np.testing.assert_allclose(
        [float(tensor_util.make_ndarray(e.tensor_proto)) for e in val.Tensors("epoch_loss")],
        history.history["val_loss"], rtol=1e-5)
    assert [e.step for e in val.Tensors("evaluation_loss_vs_iterations")] == [3, 6]
    traces = glob.glob(str(tmp_path / "train" / "plugins" / "profile" / "*" / "*.trace.json"))
    assert len(traces) == 1
    events = json.load(open(traces[0]))["traceEvents"]
    assert sum(e.get("cat") == "function" for e in events) == 2          # batches 2 and 3


def _events(logdir):
    """[step, tag, plugin] of every summary value in `logdir`'s event files, in order."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    found = []
    for path in sorted(glob.glob(os.path.join(logdir, "events*"))):
        for event in EventFileLoader(path).Load():
            for value in event.summary.value:
                if value.tag != "__run_graph__":   # our GraphDef event (Keras 3 writes none)
                    found.append([event.step, value.tag,
                                  value.metadata.plugin_data.plugin_name])
    return found


RECORDED = json.load(open(os.path.join(os.path.dirname(__file__), "data",
                                       "tensorboard_callback_tf.json")))


@pytest.mark.parametrize("run", RECORDED["runs"], ids=lambda r: json.dumps(r["kwargs"]))
def test_files_tags_and_steps_as_keras_3_writes_them(tmp_path, run):
    """Same event files, tags, plugins and steps, in the same order, as TF 2.21's Keras 3
    (recorded in data/tensorboard_callback_tf.json); e.g. with update_freq=2 the epoch
    summaries of epochs ending on an odd batch count are not written, as in Keras."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 3)).astype("float32"), rng.standard_normal((32, 1))
    model = _model()
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    model.fit(x, y.astype("float32"), batch_size=8, epochs=3, verbose=0,
              validation_split=0.25,
              callbacks=[kf.keras.callbacks.TensorBoard(str(tmp_path), **run["kwargs"])])
    assert sorted(os.listdir(tmp_path)) == run["dirs"]
    for sub in ("train", "validation"):
        assert _events(str(tmp_path / sub)) == run[sub], sub
    config = json.loads(tensor_util.make_ndarray(
        _load(str(tmp_path / "train")).Tensors("keras")[0].tensor_proto).item()) \
        if run["kwargs"].get("write_graph", True) else None
    assert config is None or config["class_name"] == "Sequential"
    if run["kwargs"].get("write_images"):   # a [3, 4] kernel: 1 image 4 wide, 3 high
        kernel = _load(str(tmp_path / "train")).Tensors("sequential/dense/kernel/image")[0]
        assert tensor_util.make_ndarray(kernel.tensor_proto)[:2].tolist() == [b"4", b"3"]


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="update_freq"):
        kf.keras.callbacks.TensorBoard("logs", update_freq="often")
    with pytest.raises(ValueError, match="profile_batch"):
        kf.keras.callbacks.TensorBoard("logs", profile_batch=(5, 2))
    assert not os.path.exists("logs")
