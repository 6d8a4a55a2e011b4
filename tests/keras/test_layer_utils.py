"""keras.layers' functional merge forms, serialize/deserialize, InputSpec (with the reprs,
configs and error messages Keras 3 gives, recorded from TF 2.21's Keras) and Wrapper."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers


def test_merge_functions_in_a_functional_model():
    a, b = keras.Input((3,)), keras.Input((3,))
    outs = [L.add([a, b]), L.subtract([a, b]), L.multiply([a, b]), L.average([a, b]),
            L.maximum([a, b]), L.minimum([a, b]), L.concatenate([a, b]),
            L.dot([a, b], axes=1)]
    model = keras.Model([a, b], outs)
    x = np.array([[1.0, 2, 3]], np.float32)
    y = np.array([[3.0, 1, -1]], np.float32)
    got = model.predict([x, y], verbose=0)
    want = [x + y, x - y, x * y, (x + y) / 2, np.maximum(x, y), np.minimum(x, y),
            np.concatenate([x, y], 1), np.sum(x * y, 1, keepdims=True)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)
    eager = L.add([kf.constant(x), kf.constant(y), kf.constant(x)])
    np.testing.assert_allclose(eager.numpy(), 2 * x + y)
    assert [type(la).__name__ for la in model.layers[2:]] == [
        "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot"]


def test_serialize_deserialize():
    config = L.serialize(L.Dense(2, activation="relu", name="d"))
    assert sorted(config) == ["class_name", "config", "module", "registered_name"]
    assert (config["module"], config["class_name"]) == ("keras.layers", "Dense")
    layer = L.deserialize(config)
    assert isinstance(layer, L.Dense) and layer.units == 2 and layer.name == "d"

    class Twice(L.Layer):
        def call(self, x):
            return 2 * x
    again = L.deserialize(L.serialize(Twice(name="t")), custom_objects={"Twice": Twice})
    assert isinstance(again, Twice)
    with pytest.raises(ValueError):
        L.deserialize("not a config")


def test_input_spec_repr_config_and_checks():
    assert repr(L.InputSpec(shape=(None, 3))) == "InputSpec(shape=(None, 3), ndim=2)"
    assert repr(L.InputSpec(ndim=2, axes={-1: 4})) == "InputSpec(ndim=2, axes={-1: 4})"
    assert repr(L.InputSpec(min_ndim=2, dtype="int32")) == "InputSpec(dtype=int32, min_ndim=2)"
    assert L.InputSpec(shape=(None, 3)).get_config() == {
        "dtype": None, "shape": (None, 3), "ndim": 2, "max_ndim": None, "min_ndim": None,
        "axes": {}, "optional": False}

    class Rank3(L.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.input_spec = L.InputSpec(ndim=3)

        def call(self, x):
            return x

    class Last4(Rank3):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.input_spec = L.InputSpec(axes={-1: 4})

    with pytest.raises(ValueError, match=r"Input 0 with name 'None' of layer 'm' is "
                       r"incompatible with the layer: expected ndim=3, found ndim=2\. Full "
                       r"shape received: \(2, 3\)"):
        Rank3(name="m")(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 4, "
                       r"but received input with shape \(2, 3\)"):
        Last4(name="n")(np.ones((2, 3), np.float32))
    assert Rank3()(np.ones((1, 2, 3), np.float32)).shape == (1, 2, 3)
    with pytest.raises(ValueError, match="expected ndim=3"):
        inp = keras.Input((3,))
        Rank3()(inp)


def test_wrapper_base_class():
    class Doubled(L.Wrapper):
        def call(self, x):
            return 2.0 * self.layer(x)

    wrapped = Doubled(L.Dense(2, kernel_initializer="ones", bias_initializer="zeros"))
    np.testing.assert_allclose(wrapped(np.ones((1, 3), np.float32)).numpy(), [[6.0, 6.0]])
    assert len(wrapped.weights) == 2
    again = Doubled.from_config(wrapped.get_config())
    assert isinstance(again.layer, L.Dense) and again.layer.units == 2
    with pytest.raises(ValueError, match="isn't a supported layer type"):
        Doubled("not a layer")


def test_tfsm_layer_reloads_an_exported_model(tmp_path):
    model = keras.Sequential([keras.Input((3,)), L.Dense(4, activation="relu"), L.Dense(2)])
    path = str(tmp_path / "exported")
    model.export(path)
    layer = L.TFSMLayer(path)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 6.0
    np.testing.assert_allclose(layer(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert sorted(w.shape.as_list() for w in layer.weights) == sorted(
        w.shape.as_list() for w in model.weights)
    inp = keras.Input((3,))
    wrapped = keras.Model(inp, L.Dense(1)(layer(inp)))
    assert wrapped.predict(x, verbose=0).shape == (2, 1)
    with pytest.raises(ValueError, match="neither an attribute"):
        L.TFSMLayer(path, call_endpoint="nope")
    assert L.TFSMLayer(path, call_endpoint="serve").get_config()["filepath"] == path
