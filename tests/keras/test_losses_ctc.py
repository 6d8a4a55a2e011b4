"""keras.losses.CTC / keras.losses.ctc against the values TF 2.21's Keras 3 gave for the
same inputs (tests/keras/data/keras_ctc.json, recorded by scripts/record_keras_ctc.py):
eager, inside kf.function, through compile(loss="ctc") + fit, and the gradient against
central differences."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

with open(os.path.join(os.path.dirname(__file__), "data", "keras_ctc.json")) as f:
    REF = json.load(f)
CASES = REF["cases"]


def _inputs(case):
    return np.array(case["y_true"], np.int32), np.array(case["y_pred"], np.float32)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_ctc_matches_keras_eager(i):
    y, logits = _inputs(CASES[i])
    np.testing.assert_allclose(keras.losses.ctc(y, logits).numpy(), CASES[i]["per_example"],
                               rtol=1e-5, atol=1e-5)
    assert float(keras.losses.CTC()(y, logits)) == pytest.approx(CASES[i]["reduced"], rel=1e-5)


@pytest.mark.parametrize("i", range(len(CASES)))
def test_ctc_matches_keras_inside_function(i):
    y, logits = _inputs(CASES[i])
    loss = keras.losses.CTC()

    @kf.function
    def both(a, b):
        return keras.losses.ctc(a, b), loss(a, b)
    per, red = both(kf.constant(y), kf.constant(logits))
    np.testing.assert_allclose(per.numpy(), CASES[i]["per_example"], rtol=1e-5, atol=1e-5)
    assert float(red) == pytest.approx(CASES[i]["reduced"], rel=1e-5)


def test_ctc_reductions_and_sample_weight():
    y, logits = _inputs(CASES[1])
    per = np.array(CASES[1]["per_example"])
    assert keras.losses.CTC(reduction="none")(y, logits).numpy() == pytest.approx(per, rel=1e-5)
    assert float(keras.losses.CTC(reduction="sum")(y, logits)) == pytest.approx(per.sum(),
                                                                                 rel=1e-5)
    w = np.array([1.0, 0.0, 2.0], np.float32)
    assert float(keras.losses.CTC()(y, logits, sample_weight=w)) == pytest.approx(
        (per * w).sum() / 3, rel=1e-5)


def test_ctc_rank_errors_use_keras_wording():
    with pytest.raises(ValueError) as e:
        keras.losses.ctc(np.zeros((2, 3, 1), np.int32), np.zeros((2, 5, 4), np.float32))
    assert str(e.value) == REF["errors"]["rank_true"]
    with pytest.raises(ValueError) as e:
        keras.losses.ctc(np.zeros((2, 3), np.int32), np.zeros((2, 5), np.float32))
    assert str(e.value) == REF["errors"]["rank_pred"]


def test_ctc_get_and_serialization():
    loss = keras.losses.get("ctc")
    assert isinstance(loss, keras.losses.CTC)
    assert (loss.name, loss.reduction) == ("ctc", "sum_over_batch_size")
    config = keras.losses.serialize(keras.losses.CTC())
    assert config == {"class_name": REF["class_name"], "config": REF["config"]}
    again = keras.losses.deserialize({"class_name": "CTC",
                                      "config": {"name": "c2", "reduction": "sum"}})
    assert isinstance(again, keras.losses.CTC) and (again.name, again.reduction) == ("c2", "sum")


def test_ctc_gradient_matches_finite_differences():
    y, logits = _inputs(CASES[0])
    logits = logits.astype(np.float64)
    x = kf.Variable(logits.astype(np.float32))
    with kf.GradientTape() as tape:
        value = keras.losses.CTC()(y, x)
    grad = tape.gradient(value, x).numpy()

    def f(z):
        return float(keras.losses.CTC()(y, z.astype(np.float32)))
    eps = 1e-2
    numeric = np.zeros_like(logits)
    for idx in np.ndindex(logits.shape):
        up, down = logits.copy(), logits.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (f(up) - f(down)) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, atol=2e-3)
    # softmax logits: each time step's gradient sums to zero over classes
    np.testing.assert_allclose(grad.sum(-1), 0.0, atol=1e-5)


def test_compile_with_ctc_string_fits_one_step():
    rng = np.random.RandomState(1)
    x = rng.randn(4, 6, 3).astype(np.float32)
    y = np.array([[1, 2, 0], [3, 0, 0], [2, 2, 1], [1, 0, 0]], np.int32)
    model = keras.Sequential([keras.Input((6, 3)), keras.layers.Dense(4)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="ctc")
    before = float(keras.losses.CTC()(y, model.predict(x, verbose=0)))
    history = model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert history.history["loss"][0] == pytest.approx(before, rel=1e-4)
    after = float(keras.losses.CTC()(y, model.predict(x, verbose=0)))
    assert np.isfinite(after) and after < before
