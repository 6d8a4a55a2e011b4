"""keras.utils pieces with no Keras recording: model_to_dot (Keras needs pydot), get_file on
local files (kilnflow never downloads), PyDataset in fit, serialization names re-exported."""
import hashlib
import os
import tarfile

import numpy as np
import pytest

from kilnflow import keras


def test_model_to_dot_lists_layers_and_edges():
    inputs = keras.Input((3,), name="x")
    a = keras.layers.Dense(2, name="a")(inputs)
    b = keras.layers.Dense(2, name="b")(inputs)
    model = keras.Model(inputs, keras.layers.Add(name="sum")([a, b]))
    text = keras.utils.model_to_dot(model).to_string()
    assert text.startswith("digraph G {") and text.rstrip().endswith("}")
    for name in ("x (InputLayer)", "a (Dense)", "b (Dense)", "sum (Add)"):
        assert name in text
    assert text.count("->") == 4


def test_get_file_copies_local_files_and_checks_hashes(tmp_path):
    source = tmp_path / "data.txt"
    source.write_bytes(b"hello")
    digest = hashlib.sha256(b"hello").hexdigest()
    path = keras.utils.get_file("copy.txt", "file://" + str(source), file_hash=digest,
                                cache_dir=str(tmp_path / "cache"))
    assert open(path, "rb").read() == b"hello"
    with pytest.raises(ValueError, match="hash"):
        keras.utils.get_file("copy2.txt", str(source), file_hash="0" * 64,
                             cache_dir=str(tmp_path / "cache"))
    with tarfile.open(tmp_path / "a.tar.gz", "w:gz") as archive:
        archive.add(source, arcname="inner.txt")
    out = keras.utils.get_file("a.tar.gz", str(tmp_path / "a.tar.gz"), extract=True,
                               cache_dir=str(tmp_path / "cache"))
    assert os.path.exists(os.path.join(out, "inner.txt"))
    with pytest.raises(NotImplementedError, match="does not download"):
        keras.utils.get_file("x", "https://example.com/x")


def test_pydataset_trains_and_calls_on_epoch_end():
    class Batches(keras.utils.PyDataset):
        def __init__(self):
            super().__init__()
            self.ends = 0

        def __len__(self):
            return 4

        def __getitem__(self, i):
            x = np.full((2, 3), i, "float32")
            return x, x.sum(1, keepdims=True)

        def on_epoch_end(self):
            self.ends += 1
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    data = Batches()
    history = model.fit(data, epochs=3, verbose=0)
    assert len(history.history["loss"]) == 3 and data.ends >= 3
    assert model.predict(Batches(), verbose=0).shape == (8, 1)
    with pytest.raises(ValueError, match="`y` should not be passed"):
        model.fit(data, np.zeros(8), verbose=0)


def test_interactive_logging_switch(capsys, caplog):
    assert keras.utils.is_interactive_logging_enabled()
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    keras.utils.disable_interactive_logging()
    try:
        assert not keras.utils.is_interactive_logging_enabled()
        with caplog.at_level("INFO", logger="kilnflow.keras"):
            model.fit(np.ones((4, 3)), np.ones((4, 1)), epochs=2, verbose=2)
    finally:
        keras.utils.enable_interactive_logging()
    assert capsys.readouterr().out == ""
    assert [r.getMessage()[:6] for r in caplog.records] == ["Epoch ", "1/1 - ", "Epoch ",
                                                            "1/1 - "]
    assert keras.utils.get_registered_name(keras.layers.Dense) == "Dense"
    assert keras.utils.standardize_dtype("float16") == "float16"


@pytest.mark.parametrize("run_eagerly", [True, False])
def test_loss_scale_optimizer_trains_like_its_inner_optimizer(run_eagerly):
    x = np.random.default_rng(0).random((16, 3)).astype("float32")
    y = x.sum(1, keepdims=True)
    histories = []
    for wrap in (False, True):
        keras.utils.set_random_seed(1)
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        opt = keras.optimizers.SGD(0.1)
        if wrap:
            opt = keras.optimizers.LossScaleOptimizer(opt, dynamic_growth_steps=2)
        model.compile(opt, "mse", run_eagerly=run_eagerly)
        histories.append(model.fit(x, y, batch_size=4, epochs=2, shuffle=False,
                                   verbose=0).history["loss"])
    np.testing.assert_allclose(histories[1], histories[0], rtol=1e-5)
    assert float(opt.dynamic_scale.numpy()) == 2.0 ** 15 * 2 ** 4  # 8 finite steps
    again = keras.optimizers.deserialize(keras.optimizers.serialize(opt))
    assert type(again.inner_optimizer).__name__ == "SGD" and again.dynamic_growth_steps == 2
