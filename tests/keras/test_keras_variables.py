"""Keras 3 variables: `name`, `path` and printing, as TF 2.21's tf.keras gives them.

Every expected value below was recorded from TF 2.21 (tf.keras = Keras 3) running the
same sequence of layer constructions (auto names depend on that order)."""
import copy

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

K = keras


def _paths(variables):
    return [(v.name, v.path) for v in variables]


def test_recorded_names_and_paths_of_layers_and_models():
    K.backend.clear_session()
    dense = K.layers.Dense(2)
    dense.build((None, 3))
    assert _paths(dense.weights) == [("kernel", "dense/kernel"), ("bias", "dense/bias")]
    assert type(dense.kernel).__name__ == "Variable"
    assert isinstance(dense.kernel, kf.Variable) and isinstance(dense.kernel, K.Variable)
    seq = K.Sequential([K.Input((3,)), K.layers.Dense(2), K.layers.Dense(1)])
    assert [v.path for v in seq.weights] == [
        "sequential/dense_1/kernel", "sequential/dense_1/bias",
        "sequential/dense_2/kernel", "sequential/dense_2/bias"]
    assert [v.name for v in seq.weights] == ["kernel", "bias", "kernel", "bias"]
    lazy = K.Sequential([K.layers.Dense(2), K.layers.Dense(1)])
    lazy(np.zeros((1, 3), np.float32))
    assert [v.path for v in lazy.weights] == [
        "sequential_1/dense_3/kernel", "sequential_1/dense_3/bias",
        "sequential_1/dense_4/kernel", "sequential_1/dense_4/bias"]
    # functional: the layers are built when called on the inputs, outside the model
    i = K.Input((3,))
    out = K.layers.Dense(1)(K.layers.Dense(2, name="h")(i))
    functional = K.Model(i, out, name="fm")
    assert [v.path for v in functional.weights] == [
        "h/kernel", "h/bias", "dense_5/kernel", "dense_5/bias"]
    pre = K.layers.Dense(2, name="pre")
    pre.build((None, 3))
    assert [v.path for v in K.Sequential([K.Input((3,)), pre]).weights] == [
        "pre/kernel", "pre/bias"]
    inner = K.Sequential([K.layers.Dense(2, name="a")], name="inner")
    outer = K.Sequential([K.Input((3,)), inner, K.layers.Dense(1, name="b")], name="outer")
    assert [v.path for v in outer.weights] == [
        "outer/inner/a/kernel", "outer/inner/a/bias", "outer/b/kernel", "outer/b/bias"]


def test_recorded_paths_of_custom_and_composite_layers():
    K.backend.clear_session()

    class Mine(K.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(2,), name="w")
            self.w2 = self.add_weight(shape=(2,), name="w")  # Keras 3 repeats the name
            self.u = self.add_weight(shape=(2,))

        def call(self, x):
            return x

    mine = Mine(name="mine")
    mine.build((None, 2))
    assert _paths(mine.weights) == [("w", "mine/w"), ("w", "mine/w"),
                                    ("variable", "mine/variable")]

    class Sub(K.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d = K.layers.Dense(2, name="dd")

        def call(self, x):
            return self.d(x)

    sub = Sub(name="sub")
    sub(np.zeros((1, 3), np.float32))
    assert [v.path for v in sub.weights] == ["sub/dd/kernel", "sub/dd/bias"]
    bn = K.layers.BatchNormalization()
    bn.build((None, 4))
    assert _paths(bn.weights) == [
        ("gamma", "batch_normalization/gamma"), ("beta", "batch_normalization/beta"),
        ("moving_mean", "batch_normalization/moving_mean"),
        ("moving_variance", "batch_normalization/moving_variance")]
    lstm = K.layers.LSTM(2)
    lstm(np.zeros((1, 2, 3), np.float32))
    assert [v.path for v in lstm.weights] == [
        "lstm/lstm_cell/kernel", "lstm/lstm_cell/recurrent_kernel", "lstm/lstm_cell/bias"]
    emb = K.layers.Embedding(5, 2)
    emb.build((None,))
    assert _paths(emb.weights) == [("embeddings", "embedding/embeddings")]
    mha = K.layers.MultiHeadAttention(2, 2)
    x = np.zeros((1, 2, 3), np.float32)
    mha(x, x)
    assert [v.path for v in mha.weights] == [
        f"multi_head_attention/{part}/{w}"
        for part in ("query", "key", "value", "attention_output") for w in ("kernel", "bias")]
    with kf.name_scope("ns"):  # kf name scopes are not part of a Keras 3 path
        d = K.layers.Dense(1, name="d")
        d.build((None, 1))
    assert [v.path for v in d.weights] == ["d/kernel", "d/bias"]


def test_recorded_printing_and_standalone_variables():
    v = K.Variable(np.ones((2,)), name="x")
    assert (v.name, v.path) == ("x", "x")
    assert repr(v) == "<Variable path=x, shape=(2,), dtype=float64, value=[1. 1.]>"
    z = K.Variable(np.zeros((2, 2), np.float32), name="z")
    text = "<Variable path=z, shape=(2, 2), dtype=float32, value=[[0. 0.]\n [0. 0.]]>"
    assert repr(z) == text and str(z) == text
    i = K.Variable(3, name="i")
    assert repr(i) == "<Variable path=i, shape=(), dtype=int32, value=3>"
    assert repr(K.Variable(1.0, name="f")) == \
        "<Variable path=f, shape=(), dtype=float32, value=1.0>"
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        K.Variable(1.0, name="a/b")


def test_keras_variables_still_work_as_variables():
    K.backend.clear_session()
    layer = K.layers.Dense(1, kernel_initializer="ones", name="dd")
    layer.build((None, 2))
    k = layer.kernel
    k.assign(k * 2.0)
    np.testing.assert_allclose(k.numpy(), [[2.0], [2.0]])
    x = kf.constant([[1.0, 1.0]])
    with kf.GradientTape() as tape:
        y = kf.reduce_sum(layer(x))
    np.testing.assert_allclose(tape.gradient(y, k).numpy(), [[1.0], [1.0]])
    np.testing.assert_allclose(kf.function(lambda t: layer(t))(x).numpy(), [[4.0]])
    c = copy.deepcopy(k)
    assert (type(c), c.name, c.path) == (type(k), "kernel", "dd/kernel")
    opt = K.optimizers.Adam()
    opt.apply_gradients([(kf.ones_like(k), k)])
    assert opt.variables  # slots made from paths, so two layers' kernels never collide


RECORDED_OPTIMIZER_PATHS = {  # TF 2.21, optimizer built on Dense(1, name="d") over 2 inputs
    "Adam": ["adam/iteration", "adam/learning_rate", "adam/d_kernel_momentum",
             "adam/d_kernel_velocity", "adam/d_bias_momentum", "adam/d_bias_velocity"],
    "Adamax": ["adamax/iteration", "adamax/learning_rate", "adamax/d_kernel_momentum",
               "adamax/d_kernel_norm", "adamax/d_bias_momentum", "adamax/d_bias_norm"],
    "Adagrad": ["adagrad/iteration", "adagrad/learning_rate", "adagrad/d_kernel_accumulator",
                "adagrad/d_bias_accumulator"],
    "Ftrl": ["ftrl/iteration", "ftrl/learning_rate", "ftrl/d_kernel_accumulator",
             "ftrl/d_kernel_linear", "ftrl/d_bias_accumulator", "ftrl/d_bias_linear"],
    "Lion": ["lion/iteration", "lion/learning_rate", "lion/d_kernel_momentum",
             "lion/d_bias_momentum"],
    "Lamb": ["lamb/iteration", "lamb/learning_rate", "lamb/d_kernel_momentum",
             "lamb/d_kernel_velocity", "lamb/d_bias_momentum", "lamb/d_bias_velocity"],
}


@pytest.mark.parametrize("cls_name", sorted(RECORDED_OPTIMIZER_PATHS))
def test_recorded_optimizer_variable_paths(cls_name):
    d = K.layers.Dense(1, name="d")
    d.build((None, 2))
    opt = getattr(K.optimizers, cls_name)()
    opt.build(d.trainable_variables)
    assert [v.path for v in opt.variables] == RECORDED_OPTIMIZER_PATHS[cls_name]
    assert opt.variables[0].name == "iteration"


def test_recorded_metric_variable_paths():
    assert [(v.name, v.path) for v in K.metrics.Mean().variables] == [
        ("total", "mean/total"), ("count", "mean/count")]
    assert [v.path for v in K.metrics.AUC(name="auc").variables] == [
        "auc/true_positives", "auc/false_positives", "auc/true_negatives",
        "auc/false_negatives"]


def test_weights_made_under_a_strategy_scope_stay_distributed():
    strategy = kf.distribute.MirroredStrategy()
    with strategy.scope():
        d = K.layers.Dense(1, name="ds")
        d.build((None, 2))
    assert type(d.kernel).__name__ == "MirroredVariable" and d.kernel.path == "ds/kernel"


def test_tracking_keras_variables_but_not_plain_kf_variables():
    # TF 2.21: a tf.Variable attribute is not a weight of a Keras 3 layer; a keras.Variable
    # and layers in lists and dicts are
    class Holder(K.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.tv = kf.Variable(1.0, name="tfv")
            self.kv = K.Variable(2.0, name="kv")
            self.lst = [K.layers.Dense(1, name="l0")]
            self.dct = {"a": K.layers.Dense(1, name="da")}
            self.tvl = [kf.Variable(3.0)]

        def call(self, x):
            return self.dct["a"](self.lst[0](x))

    layer = Holder(name="L")
    layer(np.zeros((1, 2), np.float32))
    assert _paths(layer.weights) == [
        ("kv", "kv"), ("kernel", "L/l0/kernel"), ("bias", "L/l0/bias"),
        ("kernel", "L/da/kernel"), ("bias", "L/da/bias")]
    assert len(layer.trainable_variables) == 5 and len(layer.variables) == 5


def test_any_callable_initializer_is_called_with_dtype_by_keyword():
    # Keras 3 calls initializer(shape, dtype=dtype): kf.random.normal's second positional
    # argument is `mean`, so a positional dtype would be taken as the mean
    import kilnflow as kf
    layer = kf.keras.layers.Dense(2, kernel_initializer=kf.random.normal)
    layer.build((None, 3))
    assert layer.kernel.shape == (3, 2) and layer.kernel.dtype == kf.float32
    seen = []
    kf.keras.layers.Dense(2, kernel_initializer=lambda shape, dtype=None: seen.append(
        (shape, dtype)) or kf.zeros(shape, dtype)).build((None, 3))
    assert seen == [((3, 2), kf.float32)]
