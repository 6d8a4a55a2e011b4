"""Conv3D, Conv1D/2D/3DTranspose, DepthwiseConv1D/2D, SeparableConv1D/2D, the 3-D pooling
layers, EinsumDense, RMSNormalization and ThresholdedReLU against the outputs TF 2.21's
Keras 3 gave for the same weights (tests/keras/data/keras_conv_extra.json,
recorded by scripts/record_keras_reference.py), eager and in kf.function; configs round
trip; gradients agree with central differences; model.save / load_model predict alike."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from tests.keras.conv_extra_cases import CASES, case_input, weight_values

L = keras.layers
with open(os.path.join(os.path.dirname(__file__), "data", "keras_conv_extra.json")) as f:
    REFERENCE = json.load(f)["results"]


def _built(name, dtype="float32", **extra):
    cls, kwargs, shape = CASES[name]
    layer = getattr(L, cls)(**kwargs, **extra, dtype=dtype)
    x = case_input(shape).astype(dtype)
    layer(x)
    for i, w in enumerate(layer.weights):
        w.assign(weight_values(w.shape.as_list(), i).astype(dtype))
    return layer, x


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_keras_eager_and_function(name):
    layer, x = _built(name)
    ref = REFERENCE[name]
    assert [[w.name.split("/")[-1].split(":")[0], w.shape.as_list()]
            for w in layer.weights] == ref["weights"]
    expected = np.asarray(ref["value"]).reshape(ref["shape"])
    np.testing.assert_allclose(np.asarray(layer(x)), expected, rtol=1e-4, atol=1e-4)
    traced = kf.function(lambda t: layer(t))
    np.testing.assert_allclose(np.asarray(traced(kf.constant(x))), expected, rtol=1e-4,
                               atol=1e-4)
    assert list(layer.compute_output_shape(x.shape)) == ref["output_shape"]
    assert list(layer.compute_output_shape([None, *x.shape[1:]]))[1:] == ref["output_shape"][1:]


@pytest.mark.parametrize("name", ["conv3d_same_strided", "conv2dt_output_padding",
                                  "conv3dt_same", "dw1d_valid", "sep2d_same_mult"])
def test_config_round_trip(name):
    layer, x = _built(name)
    config = layer.get_config()
    json.dumps(config)
    clone = type(layer).from_config(config)
    clone(x)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(np.asarray(clone(x)), np.asarray(layer(x)), rtol=1e-6)
    assert clone.get_config() == config


@pytest.mark.parametrize("name", ["conv3d_valid", "conv1dt_same", "conv2dt_output_padding",
                                  "conv3dt_valid", "dw2d_same", "sep1d_valid",
                                  "sep2d_dilated", "maxpool3d", "avgpool3d_same",
                                  "gavgpool3d_keepdims", "einsum_dense_heads",
                                  "rms_norm_axes", "adaptive_avg2d", "adaptive_max3d"])
def test_gradients_match_central_differences(name):
    """Directional derivatives: d/dt sum(w * f(x + t v)) against (f(+e) - f(-e)) / 2e, for
    the input and every weight (float64 layers)."""
    conv = CASES[name][0].startswith(("Conv", "Sep", "Dep", "Einsum")) and \
        "activation" not in CASES[name][1]
    layer, x = _built(name, dtype="float64", **({"activation": None} if conv else {}))
    rng = np.random.default_rng(1)
    xt = kf.Variable(x)
    targets = [xt, *layer.trainable_weights]
    out_w = rng.standard_normal(np.asarray(layer(x)).shape)

    def loss():
        return kf.reduce_sum(layer(xt) * out_w)

    with kf.GradientTape() as tape:
        value = loss()
    grads = tape.gradient(value, targets)
    eps = 1e-6
    for var, grad in zip(targets, grads):
        direction = rng.standard_normal(var.shape.as_list())
        start = np.asarray(var).copy()
        var.assign(start + eps * direction)
        up = float(loss())
        var.assign(start - eps * direction)
        down = float(loss())
        var.assign(start)
        np.testing.assert_allclose(float(np.sum(np.asarray(grad) * direction)),
                                   (up - down) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_model_save_and_load(tmp_path):
    inputs = keras.Input((6, 6, 2))
    x = L.SeparableConv2D(3, 3, padding="same", depth_multiplier=2)(inputs)
    x = L.DepthwiseConv2D(2, activation="relu")(x)
    x = L.Conv2DTranspose(2, 3, strides=2, output_padding=1)(x)
    x = L.Reshape((12, 12, 2, 1))(x)
    x = L.Conv3D(2, (3, 3, 2))(x)
    x = L.Conv3DTranspose(1, 2, strides=(2, 1, 1), padding="same")(x)
    outputs = L.Dense(1)(L.Flatten()(x))
    model = keras.Model(inputs, outputs)
    model.compile("adam", "mse")
    data = np.random.default_rng(0).standard_normal((4, 6, 6, 2)).astype("float32")
    model.fit(data, np.ones((4, 1), "float32"), epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(data, verbose=0), model.predict(data, verbose=0),
                               rtol=1e-6)
    seq = keras.Sequential([keras.Input((8, 3)), L.SeparableConv1D(4, 3),
                            L.DepthwiseConv1D(2, depth_multiplier=2),
                            L.Conv1DTranspose(2, 3, strides=2)])
    seq.save(path)
    again = keras.models.load_model(path)
    probe = np.ones((2, 8, 3), "float32")
    np.testing.assert_allclose(np.asarray(again(probe)), np.asarray(seq(probe)), rtol=1e-6)

def test_identity_and_activity_regularization():
    x = np.arange(6, dtype="float32").reshape(2, 3)
    assert np.asarray(L.Identity()(x)).tolist() == x.tolist()
    layer = L.ActivityRegularization(l1=0.5, l2=0.25)
    np.testing.assert_allclose(np.asarray(layer(x)), x)
    np.testing.assert_allclose(float(sum(layer.losses)),
                               (0.5 * np.abs(x).sum() + 0.25 * (x ** 2).sum()) / 2, rtol=1e-6)
    assert L.ActivityRegularization.from_config(layer.get_config()).l2 == 0.25


def test_bad_arguments_raise_valueerror():
    with pytest.raises(ValueError, match="padding"):
        L.Conv3D(2, 2, padding="causal")
    with pytest.raises(ValueError, match="output_padding"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="kernel_size"):
        L.DepthwiseConv2D((2, 2, 2))
    with pytest.raises(ValueError, match="channel dimension"):
        L.SeparableConv2D(2, 2).build([1, 4, 4, None])
