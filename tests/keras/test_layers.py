"""Keras layers: output shapes (eager, compute_output_shape, functional), gradients against
central finite differences in float64, eager == @kf.function, configs, training flags,
regularization losses, and the seed's CharUnpack layer (E11, E17)."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers

# (name, layer factory, input shape, integer inputs?, call kwargs)
CASES = [
    ("dense", lambda: L.Dense(3, activation="tanh"), (2, 4), False, {}),
    ("dense_rank3", lambda: L.Dense(3), (2, 3, 4), False, {}),
    ("conv_same", lambda: L.Conv2D(2, 3, padding="same", activation="relu"), (2, 5, 5, 3),
     False, {}),
    ("conv_valid_strided", lambda: L.Conv2D(2, (2, 3), strides=2), (1, 6, 7, 2), False, {}),
    ("conv_channels_first", lambda: L.Conv2D(2, 3, data_format="channels_first"),
     (1, 2, 5, 5), False, {}),
    ("max_pool", lambda: L.MaxPooling2D(), (2, 4, 6, 2), False, {}),
    ("avg_pool_same", lambda: L.AveragePooling2D(3, strides=2, padding="same"), (1, 5, 5, 2),
     False, {}),
    ("global_avg", lambda: L.GlobalAveragePooling2D(), (2, 3, 3, 4), False, {}),
    ("global_max", lambda: L.GlobalMaxPooling2D(keepdims=True), (2, 3, 3, 4), False, {}),
    ("flatten", lambda: L.Flatten(), (2, 3, 4), False, {}),
    ("reshape", lambda: L.Reshape((4, -1)), (2, 3, 4), False, {}),
    ("batch_norm_train", lambda: L.BatchNormalization(), (4, 3), False, {"training": True}),
    ("batch_norm_infer", lambda: L.BatchNormalization(axis=1), (2, 3, 2, 2), False,
     {"training": False}),
    ("layer_norm", lambda: L.LayerNormalization(), (2, 5), False, {}),
    ("embedding", lambda: L.Embedding(7, 3), (2, 4), True, {}),
    ("simple_rnn", lambda: L.SimpleRNN(3, return_sequences=True), (2, 4, 3), False, {}),
    ("lstm", lambda: L.LSTM(3), (2, 4, 3), False, {}),
    ("gru", lambda: L.GRU(3, return_sequences=True), (2, 4, 3), False, {}),
    ("gru_reset_before", lambda: L.GRU(2, reset_after=False, go_backwards=True), (2, 3, 3),
     False, {}),
    ("activation_gelu", lambda: L.Activation("gelu"), (2, 5), False, {}),
    ("activation_softmax", lambda: L.Activation("softmax"), (2, 5), False, {}),
    ("dropout_inference", lambda: L.Dropout(0.5), (2, 5), False, {"training": False}),
]
IDS = [c[0] for c in CASES]


def _make(factory, dtype="float64"):
    layer = factory()
    layer._dtype = kf.as_dtype(dtype)  # the same layer in float64 for finite differences
    for sub in layer._flatten(predicate=lambda m: isinstance(m, L.Layer)):
        sub._dtype = layer._dtype
    return layer


def _input(shape, integer, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    if integer:
        return rng.integers(0, 7, shape).astype(np.int32)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("name, factory, shape, integer, kwargs", CASES, ids=IDS)
def test_shapes_agree(name, factory, shape, integer, kwargs):
    layer = factory()
    x = _input(shape, integer, "float32")
    out = layer(x, **kwargs)
    assert out.dtype == kf.float32
    batchless = (None,) + shape[1:]
    assert layer.compute_output_shape(batchless).as_list() == [None] + out.shape.as_list()[1:]
    symbolic = layer(keras.Input(batch_shape=batchless, dtype="int32" if integer else None),
                     **kwargs)
    assert symbolic.shape.as_list() == [None] + out.shape.as_list()[1:]


@pytest.mark.parametrize("name, factory, shape, integer, kwargs", CASES, ids=IDS)
def test_gradients_match_finite_differences(name, factory, shape, integer, kwargs):
    layer = _make(factory)
    x = _input(shape, integer)
    weights = []
    out = layer(x, **kwargs)
    weights = layer.trainable_weights
    r = np.random.default_rng(1).standard_normal(out.shape.as_list())

    def loss_at(x_value):
        return float(np.sum(layer(x_value, **kwargs).numpy() * r))
    x_t = kf.constant(x)
    with kf.GradientTape() as tape:
        tape.watch(x_t)
        loss = kf.reduce_sum(layer(x_t, **kwargs) * r)
    grads = tape.gradient(loss, [x_t] + list(weights))
    rng = np.random.default_rng(2)
    eps = 1e-6
    if not integer:
        for i in rng.choice(x.size, min(x.size, 6), replace=False):
            plus, minus = x.copy(), x.copy()
            plus.flat[i] += eps
            minus.flat[i] -= eps
            numeric = (loss_at(plus) - loss_at(minus)) / (2 * eps)
            np.testing.assert_allclose(grads[0].numpy().flat[i], numeric, rtol=1e-5, atol=1e-6)
    for w, g in zip(weights, grads[1:]):
        assert g is not None, f"no gradient for {w.name}"
        value = w.numpy().copy()
        for i in rng.choice(value.size, min(value.size, 4), replace=False):
            for sign, store in ((1, "plus"), (-1, "minus")):
                changed = value.copy()
                changed.flat[i] += sign * eps
                w.assign(changed)
                if store == "plus":
                    up = loss_at(x)
                else:
                    down = loss_at(x)
            w.assign(value)
            np.testing.assert_allclose(g.numpy().flat[i], (up - down) / (2 * eps), rtol=1e-5,
                                       atol=1e-6, err_msg=w.name)


@pytest.mark.parametrize("name, factory, shape, integer, kwargs",
                         [c for c in CASES if c[0] in ("dense", "conv_same", "lstm", "gru",
                                                       "batch_norm_infer", "embedding")],
                         ids=["dense", "conv_same", "lstm", "gru", "batch_norm_infer",
                              "embedding"])
def test_eager_equals_function(name, factory, shape, integer, kwargs):
    layer = factory()
    x = kf.constant(_input(shape, integer, "float32"))
    eager = layer(x, **kwargs).numpy()
    traced = kf.function(lambda t: layer(t, **kwargs))
    np.testing.assert_allclose(traced(x).numpy(), eager, rtol=1e-5, atol=1e-6)


def test_weights_names_and_trainability():
    bn = L.BatchNormalization(name="bn")
    bn(np.ones((2, 3), np.float32))
    # Keras 3's names and paths, as TF 2.21 gives them
    assert [w.name for w in bn.trainable_weights] == ["gamma", "beta"]
    assert [w.path for w in bn.trainable_weights] == ["bn/gamma", "bn/beta"]
    assert [w.path for w in bn.non_trainable_weights] == ["bn/moving_mean",
                                                          "bn/moving_variance"]
    bn.trainable = False
    assert bn.trainable_weights == [] and len(bn.non_trainable_weights) == 4
    dense = L.Dense(2, use_bias=False)
    with pytest.raises(ValueError, match="isn't built"):
        dense.count_params()
    dense(np.ones((1, 3), np.float32))
    assert dense.count_params() == 6 and dense.bias is None


def test_batch_norm_moving_statistics_and_frozen_inference():
    bn = L.BatchNormalization(momentum=0.5, epsilon=0.0)
    x = np.array([[1.0], [3.0]], np.float32)
    y = bn(x, training=True).numpy()
    np.testing.assert_allclose(y.ravel(), [-1.0, 1.0], rtol=1e-6)
    np.testing.assert_allclose(bn.moving_mean.numpy(), [1.0])       # 0.5 * 0 + 0.5 * 2
    np.testing.assert_allclose(bn.moving_variance.numpy(), [1.0])   # 0.5 * 1 + 0.5 * 1
    np.testing.assert_allclose(bn(x).numpy().ravel(), [0.0, 2.0])   # inference by default
    bn.trainable = False
    np.testing.assert_allclose(bn(x, training=True).numpy().ravel(), [0.0, 2.0])


def test_dropout_uses_the_training_flag_from_the_outer_call():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.drop = L.Dropout(0.5)

        def call(self, x):  # no training argument: the flag travels through the context
            return self.drop(x)
    net = Net()
    x = np.ones((50, 40), np.float32)
    assert np.all(net(x).numpy() == 1.0)
    train = net(x, training=True).numpy()
    assert set(np.unique(train)) <= {0.0, 2.0} and 0.3 < (train == 0).mean() < 0.7


def test_regularizers_add_losses():
    dense = L.Dense(2, kernel_initializer="ones", kernel_regularizer=keras.regularizers.L2(0.1),
                    activity_regularizer=keras.regularizers.L1(0.5))
    out = dense(np.ones((2, 3), np.float32))
    losses = [float(l) for l in dense.losses]
    assert losses[0] == pytest.approx(0.5 * float(np.abs(out.numpy()).sum()) / 2)
    assert losses[1] == pytest.approx(0.1 * 6)
    model = keras.Sequential([dense])
    assert len(model.losses) == 2


def test_config_round_trip():
    for layer in (L.Dense(4, activation="relu", kernel_initializer="he_normal"),
                  L.Conv2D(3, 2, strides=2, padding="same"), L.LSTM(5, return_sequences=True),
                  L.BatchNormalization(momentum=0.9), L.Dropout(0.3), L.Embedding(10, 2)):
        config = layer.get_config()
        clone = type(layer).from_config(config)
        again = clone.get_config()
        again["name"] = config["name"]
        assert again == config


def test_subclassed_layer_build_and_bad_arguments():
    class Scale(L.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", shape=[input_shape[-1]], initializer="ones")

        def call(self, x):
            return x * self.w
    layer = Scale()
    assert layer(np.ones((2, 3), np.float32)).shape.as_list() == [2, 3]
    assert layer.built and [(w.name, w.path) for w in layer.weights] == [("w", "scale/w")]
    with pytest.raises(TypeError, match="not understood"):
        L.Dense(3, bogus=1)
    with pytest.raises(ValueError, match="should be defined"):
        L.Dense(2)(keras.Input(batch_shape=(None, None)))


def test_functional_operators_and_lambda():
    x = keras.Input(shape=(3,))
    y = L.Lambda(lambda t: t * 2.0)(x) + x
    z = -y[:, :2]
    model = keras.Model(x, z)
    out = model(np.ones((2, 3), np.float32)).numpy()
    assert out.tolist() == [[-3.0, -3.0], [-3.0, -3.0]]
    with pytest.raises(TypeError, match="symbolic"):
        bool(x)


# ---------------------------------------------------------------- seed 001: CharUnpack

class CharUnpack(keras.layers.Layer):
    """The seed's bit-unpacking layer, as written there (tf -> kf)."""

    def __init__(self, name="CharUnpack", *args, **kwargs):
        super(CharUnpack, self).__init__(trainable=False, name=name, *args, **kwargs)
        self._shifting_range = kf.reshape(
            kf.cast(kf.range(7, -1, -1, name="shifter_range"), kf.uint8, name="shifter_cast"),
            (1, 1, 8), name="shifter_reshape")
        self._selection_bit = kf.constant(0x01, dtype=kf.uint8, name="and_selection_bit")

    def call(self, inputs):
        return kf.cast(
            kf.reshape(
                kf.bitwise.bitwise_and(
                    kf.bitwise.right_shift(kf.expand_dims(inputs, 2), self._shifting_range),
                    self._selection_bit),
                [x if x else -1 for x in self.compute_output_shape(inputs.shape)]),
            kf.float32)

    def compute_output_shape(self, input_shape):
        try:
            if len(input_shape) > 1:
                output_shape = kf.TensorShape(tuple(list(input_shape[:-1]) +
                                                    [input_shape[-1] * 8]))
            else:
                output_shape = kf.TensorShape((input_shape[0] * 8,))
        except TypeError:
            output_shape = input_shape
        return output_shape

    def compute_output_signature(self, input_signature):
        return kf.TensorSpec(self.compute_output_shape(input_signature.shape), kf.float32)


def test_char_unpack_layer():
    """E11 and E17: eager and @kf.function agree; the shape hooks work."""
    layer = CharUnpack()
    x = np.random.default_rng(0).integers(0, 256, (64, 400)).astype(np.uint8)
    eager = layer(x).numpy()
    np.testing.assert_array_equal(eager, np.unpackbits(x, axis=1).astype(np.float32))

    @kf.function
    def fun(t):
        return layer(t)
    np.testing.assert_array_equal(fun(kf.constant(x)).numpy(), eager)
    spec = layer.compute_output_signature(kf.TensorSpec([None, 400], kf.uint8))
    assert spec == kf.TensorSpec([None, 3200], kf.float32)
    assert layer.compute_output_shape(kf.TensorShape([None, 400])).as_list() == [None, 3200]
    assert layer.trainable is False and layer.weights == []
    symbolic = layer(keras.Input(shape=(400,), dtype="uint8"))
    assert symbolic.shape.as_list() == [None, 3200] and symbolic.dtype == kf.float32
    concrete = fun.get_concrete_function(kf.TensorSpec([None, 400], kf.uint8))
    assert concrete(kf.constant(x[:3])).shape.as_list() == [3, 3200]


def test_layer_call_method_decorated_with_function():
    """E17: a Layer whose call is a @kf.function traces per instance and works."""
    class Doubler(L.Layer):
        @kf.function
        def call(self, x, training=None):
            return x * 2.0 if training else x + 1.0
    a = Doubler()
    x = np.ones((2, 2), np.float32)
    assert a(x).numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert a(x, training=True).numpy().tolist() == [[2.0, 2.0], [2.0, 2.0]]
    assert a(keras.Input(shape=(2,))).shape.as_list() == [None, 2]


def test_tensor_control_flow_in_call_is_converted_in_graphs():
    """While a graph is built, a user layer's call() goes through AutoGraph (as in TF-Keras):
    tensor `if`s work in functional construction and in compiled training."""
    class SignFlip(L.Layer):
        def call(self, x):
            if kf.reduce_sum(x) > 0:
                return x
            return -x
    symbolic = SignFlip()(keras.Input(shape=(3,)))
    assert symbolic.shape.as_list() == [None, 3]
    layer = SignFlip()
    traced = kf.function(lambda t: layer(t))
    x = -np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(traced(kf.constant(x)).numpy(), -x)
    np.testing.assert_array_equal(traced(kf.constant(-x)).numpy(), -x)
    with pytest.raises(ValueError, match="while tracing layer"):
        class Broken(L.Layer):
            def call(self, x):
                return kf.concat([x, kf.ones([5, 5])], 0)
        Broken()(keras.Input(shape=(3,)))
