"""Model.compile(jit_compile=...) as Keras 3 (tf.keras in TF 2.21) has it, on kilnflow's
numba backend: with jit_compile=True the train/test/predict steps are
kf.function(jit_compile=True), and fit/evaluate/predict give what the Python runtime gives.

Keras 3's answers, asked of TF 2.21 on this CPU-only machine: `model.jit_compile` is False
before compile and after compile() (whose default is "auto"), after "auto" and after None;
True after jit_compile=True and when set; run_eagerly=True with jit_compile=True warns
"If `run_eagerly` is True, then `jit_compile` cannot also be True. Disabling
`jit_compile`." (a UserWarning, not an error) and leaves it False.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors, keras
from kilnflow.runtime import jit

pytestmark = pytest.mark.filterwarnings("ignore:AutoGraph could not convert")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(20, 4)).astype(np.float32)
Y = RNG.integers(0, 3, 20)


def _model(*extra):
    keras.utils.set_random_seed(0)
    # fixed layer names: equal graphs, so the SGD and Adam models share compiled modules
    return keras.Sequential([keras.Input((4,)), *extra,
                             keras.layers.Dense(6, activation="relu", name="hidden"),
                             keras.layers.Dense(3, activation="softmax", name="probs")])


def test_jit_compile_property_follows_keras3():
    model = _model()
    assert model.jit_compile is False  # never compiled: "auto", False on the CPU
    for given, want in (("auto", False), (None, False), (True, True), (False, False)):
        model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=given)
        assert model.jit_compile is want, given
    model.compile("sgd", "sparse_categorical_crossentropy")  # the default is "auto"
    assert model.jit_compile is False
    model.make_train_function()
    model.jit_compile = True  # settable; the step functions are rebuilt with it
    assert model.jit_compile is True and model.train_function is None
    assert model.make_predict_function().jit_compile is True


def test_run_eagerly_disables_jit_compile_with_keras_warning():
    model = _model()
    with pytest.warns(UserWarning, match="If `run_eagerly` is True, then `jit_compile` "
                                         "cannot also be True. Disabling `jit_compile`."):
        model.compile("sgd", "mse", run_eagerly=True, jit_compile=True)
    assert model.jit_compile is False and model.run_eagerly is True


def test_a_layer_without_jit_support_turns_it_off_as_keras():
    assert keras.layers.Dense(3).supports_jit is True  # Keras 3's flag, per layer
    assert keras.layers.StringLookup().supports_jit is False
    assert keras.layers.RandomRotation(0.1).supports_jit is False
    layer = keras.layers.Dense(3, name="nojit")
    layer.supports_jit = False
    model = _model(layer)
    with pytest.warns(UserWarning, match="Model doesn't support `jit_compile=True`"):
        model.compile("sgd", "mse", jit_compile=True)
    assert model.jit_compile is False


def test_without_numba_jit_compile_names_the_fast_extra(monkeypatch):
    model = _model()
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=True)
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now fails
    with pytest.raises(ImportError, match="'fast' extra"):
        model.fit(X, Y, batch_size=10, epochs=1, verbose=0)


def _fit_evaluate_predict(optimizer, jit_compile):
    model = _model()
    model.compile(optimizer(), "sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=jit_compile)
    history = model.fit(X, Y, batch_size=8, epochs=3, verbose=0, shuffle=False).history
    evaluated = model.evaluate(X, Y, batch_size=8, verbose=0, return_dict=True)
    predicted = model.predict(X, batch_size=8, verbose=0)
    return history, evaluated, predicted, [w.numpy() for w in model.weights]


def _check_same_training(optimizer):
    pytest.importorskip("numba")
    want = _fit_evaluate_predict(optimizer, False)
    calls = jit.stats["calls"]
    got = _fit_evaluate_predict(optimizer, True)
    # 3 epochs x 3 batches, 3 evaluate and 3 predict batches (20 rows: the last batch
    # has 4, the same compiled code as numba keys on rank)
    assert jit.stats["calls"] - calls == 15
    (h1, e1, p1, w1), (h0, e0, p0, w0) = got, want
    assert h1.keys() == h0.keys() == {"loss", "accuracy"} and e1.keys() == e0.keys()
    for key in h0:  # float32: the backend sums in float64, the runtime pairwise
        np.testing.assert_allclose(h1[key], h0[key], rtol=1e-5, err_msg=key)
        np.testing.assert_allclose(e1[key], e0[key], rtol=1e-5, err_msg=key)
    np.testing.assert_allclose(p1, p0, rtol=1e-5, atol=1e-7)
    for a, b in zip(w1, w0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_fit_evaluate_predict_with_sgd_match_the_python_runtime():
    _check_same_training(lambda: keras.optimizers.SGD(0.1, momentum=0.9))


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", [lambda: keras.optimizers.Adam(0.01),
                                       lambda: keras.optimizers.RMSprop(0.01)],
                         ids=["adam", "rmsprop"])
def test_fit_evaluate_predict_with_adam_rmsprop_match_the_python_runtime(optimizer):
    _check_same_training(optimizer)


@pytest.mark.slow
def test_a_gru_classifier_fits_the_same_compiled():
    # GRU: SplitV for the gates, StridedSliceGrad for its bias rows, a While loop
    pytest.importorskip("numba")
    runs = []
    for jit_compile in (False, True):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Reshape((4, 1)),
                                  keras.layers.GRU(3), keras.layers.Dense(3)])
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], jit_compile=jit_compile)
        history = model.fit(X, Y, batch_size=8, epochs=2, verbose=0, shuffle=False).history
        runs.append((history, [w.numpy() for w in model.weights]))
    (h0, w0), (h1, w1) = runs
    for key in h0:
        np.testing.assert_allclose(h1[key], h0[key], rtol=1e-5, err_msg=key)
    for a, b in zip(w1, w0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_model_with_an_op_the_backend_cannot_lower_lists_it():
    pytest.importorskip("numba")
    model = _model(keras.layers.Lambda(lambda t: kf.sort(t, axis=-1), name="sorted"))
    model.compile("sgd", "sparse_categorical_crossentropy", jit_compile=True)
    with pytest.raises(errors.InvalidArgumentError) as info:
        model.predict(X, verbose=0)
    message = str(info.value)
    assert "cannot be compiled by the numba backend" in message and "Sort" in message
    assert "Remove jit_compile=True" in message
    model.jit_compile = False  # the same model on the Python runtime
    assert model.predict(X, verbose=0).shape == (20, 3)


@pytest.mark.slow
def test_a_cnn_with_dropout_fits_the_same_compiled():
    """Conv2D, MaxPooling2D and Dropout (conv.py and random_ops.py): the same history,
    evaluation and weights as without jit_compile, with the steps run natively."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8, 8, 1)).astype(np.float32)
    y = rng.integers(0, 3, 32)
    runs = []
    for jit_compile in (False, True):
        keras.utils.set_random_seed(1)
        model = keras.Sequential([
            keras.Input((8, 8, 1)), keras.layers.Conv2D(3, 3, activation="relu"),
            keras.layers.MaxPooling2D(), keras.layers.Dropout(0.25), keras.layers.Flatten(),
            keras.layers.Dense(3)])
        model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"], jit_compile=jit_compile)
        calls = jit.stats.get("calls", 0)
        history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False).history
        runs.append((history, model.evaluate(x, y, verbose=0),
                     [w.numpy() for w in model.weights], jit.stats.get("calls", 0) - calls))
    (h0, e0, w0, native0), (h1, e1, w1, native1) = runs
    assert native0 == 0 and native1 >= 8
    for key in h0:
        np.testing.assert_allclose(h1[key], h0[key], rtol=1e-5, err_msg=key)
    np.testing.assert_allclose(e1, e0, rtol=1e-5)
    for a, b in zip(w1, w0):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
