"""ConvLSTM1D/2D/3D, RNN(StackedRNNCells), SpectralNormalization, GroupQueryAttention,
ReversibleEmbedding and MelSpectrogram against outputs recorded
from TF 2.21's Keras with the same weights (tests/keras/data/keras_rnn_layers.json, from
scripts/record_keras_rnn_layers.py), eager and inside kf.function; configs round-trip;
gradients against finite differences."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from tests.keras import rnn_layer_cases as cases

with open(os.path.join(os.path.dirname(__file__), "data", "keras_rnn_layers.json")) as _f:
    RECORDED = json.load(_f)["cases"]


def _built(name, build, x):
    layer = build(keras.layers)
    x = cases.inputs(x) if isinstance(x, tuple) else [cases.inputs(x)]
    layer.build(*[a.shape for a in x])
    entry = RECORDED[name]
    assert [list(w.shape) for w in layer.weights] == entry["weight_shapes"]
    layer.set_weights(cases.weights_for([tuple(s) for s in entry["weight_shapes"]]))
    return layer, x, entry


def _compare(got, records, atol=2e-5):
    got = kf.nest.flatten(got)
    assert len(got) == len(records)
    for g, r in zip(got, records):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r["value"]).reshape(r["shape"]),
                                   atol=atol, rtol=1e-4)


@pytest.mark.parametrize("name,build,x,kwargs", cases.CASES, ids=[c[0] for c in cases.CASES])
@pytest.mark.parametrize("mode", ["eager", "function"])
def test_matches_keras(name, build, x, kwargs, mode):
    layer, x, entry = _built(name, build, x)
    kwargs = cases.call_kwargs(kwargs)
    if mode == "eager":
        out = layer(*x, **kwargs)
    else:
        out = kf.function(lambda *t: layer(*t, **kwargs))(*[kf.constant(a) for a in x])
    _compare(out, entry["outputs"])
    _compare([w.numpy() for w in layer.weights], entry["weights_after"])
    if mode == "eager":
        shapes = layer.compute_output_shape(x[0].shape)
        if not isinstance(layer, (keras.layers.RNN, keras.layers.GroupQueryAttention,
                                  keras.layers.ReversibleEmbedding)):
            shapes = shapes if isinstance(shapes, list) else [shapes]
            assert [list(s) for s in shapes] == [r["shape"] for r in entry["outputs"]]
        clone = type(layer).from_config(layer.get_config())
        clone.build(*[a.shape for a in x])
        clone.set_weights(cases.weights_for([tuple(s) for s in entry["weight_shapes"]]))
        _compare(clone(*x, **kwargs), entry["outputs"])


def test_convlstm_unknown_time_in_function_and_functional_model():
    layer = keras.layers.ConvLSTM2D(3, 2)
    layer.build(cases.SEQ2D.shape)
    fn = kf.function(lambda t: layer(t), input_signature=[kf.TensorSpec([None, None, 5, 4, 3])])
    np.testing.assert_allclose(fn(cases.SEQ2D).numpy(), layer(cases.SEQ2D).numpy(), atol=1e-6)
    inp = keras.Input((None, 5, 4, 3))
    model = keras.Model(inp, keras.layers.ConvLSTM2D(2, 2, return_sequences=True)(inp))
    assert model.output_shape == (None, None, 4, 3, 2)
    assert model.predict(cases.SEQ2D, verbose=0).shape == (2, 4, 4, 3, 2)


def test_convlstm_gradients_match_finite_differences():
    layer = keras.layers.ConvLSTM1D(2, 2, return_sequences=True)
    x = cases.SEQ1D[:1, :3].astype(np.float64)
    layer.build(x.shape)
    weights = [w.numpy() for w in layer.weights]
    kernel = layer.weights[0]

    def loss(k):
        kernel.assign(k)
        return float(np.sum(layer(x.astype(np.float32)).numpy().astype(np.float64) ** 2))

    with kf.GradientTape() as tape:
        y = kf.reduce_sum(layer(x.astype(np.float32)) ** 2)
    grad = tape.gradient(y, kernel).numpy()
    eps, k0 = 1e-3, weights[0].astype(np.float64)
    for idx in [(0, 0, 0), (1, 1, 3), (0, 1, 7), (1, 0, 5)]:
        d = np.zeros_like(k0)
        d[idx] = eps
        numeric = (loss((k0 + d).astype(np.float32)) - loss((k0 - d).astype(np.float32))) / (
            2 * eps)
        np.testing.assert_allclose(grad[idx], numeric, rtol=2e-2, atol=2e-3)


def test_convlstm_dropout_only_in_training():
    layer = keras.layers.ConvLSTM2D(2, 2, dropout=0.5, recurrent_dropout=0.5, seed=1)
    base = layer(cases.SEQ2D).numpy()
    np.testing.assert_allclose(layer(cases.SEQ2D, training=False).numpy(), base)
    assert not np.allclose(layer(cases.SEQ2D, training=True).numpy(), base)


def test_stacked_cells_config_and_model():
    cells = keras.layers.StackedRNNCells([keras.layers.LSTMCell(3), keras.layers.GRUCell(2)])
    assert cells.state_size == [3, 3, 2]
    again = keras.layers.StackedRNNCells.from_config(cells.get_config())
    assert [type(c).__name__ for c in again.cells] == ["LSTMCell", "GRUCell"]
    inp = keras.Input((6, 3))
    model = keras.Model(inp, keras.layers.RNN(cells)(inp))
    assert model.predict(cases.SEQ, verbose=0).shape == (2, 2)
    rnn = keras.layers.RNN.from_config(keras.layers.RNN(again).get_config())
    assert isinstance(rnn.cell, keras.layers.StackedRNNCells)


def test_spectral_normalization_gradient_and_errors():
    sn = keras.layers.SpectralNormalization(keras.layers.Dense(3))
    x = kf.constant(cases.FLAT)
    with kf.GradientTape() as tape:
        y = kf.reduce_sum(sn(x, training=True) ** 2)
    grads = tape.gradient(y, sn.trainable_weights)
    assert all(g is not None for g in grads) and len(sn.trainable_weights) == 2
    with pytest.raises(ValueError, match="power_iterations"):
        keras.layers.SpectralNormalization(keras.layers.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="kernel"):
        keras.layers.SpectralNormalization(keras.layers.Flatten()).build((2, 3))
    with pytest.raises(ValueError, match="incompatible"):
        sn(kf.ones([2, 7]))  # the InputSpec set in build


@pytest.mark.parametrize("window,periodic,scaling", [("hann", False, "density"),
                                                     ("hamming", True, "spectrum"),
                                                     (None, False, None)])
def test_stft_kernels_compute_the_windowed_dft(window, periodic, scaling):
    layer = keras.layers.STFTSpectrogram(mode="stft", frame_length=16, frame_step=16,
                                         window=window, periodic=periodic, scaling=scaling)
    x = cases.AUDIO[:1, :64, None]
    out = layer(x).numpy()[0]  # [frames, 2 * (16 // 2 + 1)]
    if window is None:
        win, scale = np.ones(16), 1.0
    else:
        make = np.hanning if window == "hann" else np.hamming
        win = make(17)[:-1] if periodic else make(16)
        scale = np.sqrt(np.sum(win ** 2)) if scaling == "density" else np.sum(np.abs(win))
    frames = cases.AUDIO[0, :64].reshape(4, 16).astype(np.float64)
    spectrum = np.fft.rfft(frames * win, 16) / scale
    np.testing.assert_allclose(out[:, :9], spectrum.real, atol=1e-5)
    np.testing.assert_allclose(out[:, 9:], spectrum.imag, atol=1e-5)


with open(os.path.join(os.path.dirname(__file__), "data", "keras_conv_lstm_paths.json")) as _f:
    PATHS = json.load(_f)  # scripts/record_keras_conv_lstm_paths.py


@pytest.mark.parametrize("cls_name", ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"])
def test_convlstm_weights_live_on_a_conv_lstm_cell_as_in_keras(cls_name):
    shape = {"ConvLSTM1D": (1, 4, 5, 2), "ConvLSTM2D": (1, 4, 5, 5, 2),
             "ConvLSTM3D": (1, 4, 5, 5, 5, 2)}[cls_name]
    expected = PATHS["layers"][cls_name]
    layer = getattr(keras.layers, cls_name)(3, 3, kernel_regularizer="l2")
    layer(np.zeros(shape, np.float32))
    assert layer.cell.name == expected["cell"]
    # Keras 3 (TF 2.21): name is the short name, path <layer>/conv_lstm_cell/<name>
    assert [w.name for w in layer.weights] == [p.split("/")[-1] for p in expected["paths"]]
    assert [w.path for w in layer.weights] == [
        layer.name + "/" + p.split("/", 1)[1] for p in expected["paths"]]
    assert [p.split("/")[0] for p in expected["paths"]] == [type(layer).__name__.lower()
                                                            .replace("convlstm", "conv_lstm")] * 3
    assert layer.kernel is layer.cell.kernel and layer.bias is layer.weights[2]
    assert len(layer.losses) == 1 and len(layer.trainable_weights) == 3
    layer.trainable = False
    assert len(layer.trainable_weights) == 0 and len(layer.non_trainable_weights) == 3


def test_convlstm_weights_h5_layout_matches_keras():
    from kilnflow.keras.saving.archive import collect_variables
    model = keras.Sequential([keras.Input((4, 5, 5, 2)), keras.layers.ConvLSTM2D(3, 3),
                              keras.layers.Flatten()])
    keys = list(collect_variables(model))
    assert keys == PATHS["h5_datasets"]  # every dataset Keras wrote is a variable


def test_convlstm_model_save_and_load_keep_weights(tmp_path):
    inp = keras.Input((3, 4, 4, 2))
    model = keras.Model(inp, keras.layers.ConvLSTM2D(2, 2)(inp))
    x = np.random.RandomState(0).rand(2, 3, 4, 4, 2).astype(np.float32)
    path = str(tmp_path / "m.keras")
    model.save(path)
    again = keras.models.load_model(path)
    np.testing.assert_allclose(again.predict(x, verbose=0), model.predict(x, verbose=0),
                               atol=1e-6)
