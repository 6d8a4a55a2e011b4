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
    model = kf.keras.Sequential([kf.keras.layers.Dense(4, activation="relu"),
                                 kf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model


def test_fit_writes_keras_layout(tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 3)).astype("float32"), rng.standard_normal((32, 1))
    callback = kf.keras.callbacks.TensorBoard(str(tmp_path), histogram_freq=1,
                                              update_freq=2, profile_batch=(2, 3),
                                              write_steps_per_second=True)
    history = _model().fit(x, y.astype("float32"), batch_size=8, epochs=2, verbose=0,
                           validation_split=0.25, callbacks=[callback])
    train = _load(str(tmp_path / "train"))
    loss = [(e.step, float(tensor_util.make_ndarray(e.tensor_proto)))
            for e in train.Tensors("epoch_loss")]
    assert [s for s, _ in loss] == [0, 1]
    np.testing.assert_allclose([v for _, v in loss], history.history["loss"], rtol=1e-5)
    assert [e.step for e in train.Tensors("batch_loss")] == [2, 4, 6]    # 3 batches/epoch
    assert "epoch_learning_rate" in train.PluginTagToContent("scalars")
    assert "epoch_steps_per_second" in train.PluginTagToContent("scalars")
    histograms = train.PluginTagToContent("histograms")
    assert len(histograms) == 4 and all(t.endswith("/histogram") for t in histograms)
    assert any(n.op == "MatMul" for n in train.Graph().node)
    val = _load(str(tmp_path / "validation"))
    np.testing.assert_allclose(
        [float(tensor_util.make_ndarray(e.tensor_proto)) for e in val.Tensors("epoch_loss")],
        history.history["val_loss"], rtol=1e-5)
    traces = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.trace.json"))
    assert len(traces) == 1
    events = json.load(open(traces[0]))["traceEvents"]
    assert sum(e.get("cat") == "function" for e in events) == 2          # batches 2 and 3


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="update_freq"):
        kf.keras.callbacks.TensorBoard("logs", update_freq="often")
    with pytest.raises(ValueError, match="profile_batch"):
        kf.keras.callbacks.TensorBoard("logs", profile_batch=(5, 2))
    assert not os.path.exists("logs")
