"""Dense ops on RaggedTensors (reductions, concat/stack, binary math) against TF 2.21's
recorded results (tf_dispatch_expected.json, from dispatch_cases.py), eagerly and inside
kf.function; gradients through ragged reductions against finite differences."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from tests.ragged import dispatch_cases

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "tf_dispatch_expected.json"), encoding="utf-8") as _f:
    EXPECTED = json.load(_f)
CASES = dispatch_cases.cases(kf)


# NumPy's float32 exp may differ from TF's in the last bit: these compare to 1e-6
APPROX = ("logsumexp_1", "logsumexp_keep1")


def _run(thunk):
    return json.loads(json.dumps(dispatch_cases.run(kf, thunk)))


def _same(tag, got, want):
    if tag in APPROX:
        got, want = dict(got), dict(want)
        np.testing.assert_allclose(np.array(got.pop("value"), float),
                                   np.array(want.pop("value"), float), rtol=1e-6)
    assert got == want


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("tag", sorted(CASES))
def test_matches_tf_eagerly(tag):
    _same(tag, _run(CASES[tag]), EXPECTED[tag])


@pytest.mark.filterwarnings("ignore::kilnflow.function.diagnostics.PrunedComputationWarning")
@pytest.mark.parametrize("tag", sorted(t for t in CASES if "error" not in EXPECTED[t]))
def test_matches_tf_inside_a_function(tag):
    result = kf.function(lambda: CASES[tag](), autograph=False)()
    got = json.loads(json.dumps(dispatch_cases.describe(kf, result)))
    want = EXPECTED[tag]
    assert got["kind"] == want["kind"] and got["dtype"] == want["dtype"]
    if want["kind"] == "RT":  # a traced result's repr and nrows come from the graph
        assert got["list"] == want["list"]
    else:
        _same(tag, {"value": got["value"]}, {"value": want["value"]})


def test_ragged_arguments_of_a_function():
    f = kf.function(lambda x: (kf.reduce_sum(x, axis=1), kf.reduce_max(x, axis=0), x * 2 + x,
                               kf.concat([x, x], axis=1)), autograph=False)
    rt = kf.ragged.constant([[1.0, 2.0], [], [3.0]])
    row_sum, col_max, affine, joined = f(rt)
    assert row_sum.numpy().tolist() == [3.0, 0.0, 3.0]
    assert col_max.numpy().tolist() == [3.0, 2.0]
    assert affine.to_list() == [[3.0, 6.0], [], [9.0]]
    assert joined.to_list() == [[1.0, 2.0, 1.0, 2.0], [], [3.0, 3.0]]
    assert f(kf.ragged.constant([[5.0], [6.0, 7.0], []]))[0].numpy().tolist() == [5.0, 13.0, 0.0]


@pytest.mark.parametrize("reduce", [kf.reduce_sum, kf.reduce_mean, kf.reduce_max,
                                    kf.reduce_min, kf.reduce_prod])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_gradients_match_finite_differences(reduce, axis):
    splits = [0, 3, 4, 5]  # no empty row: its mean is NaN and its max the lowest float
    weights = np.array([0.5, -1.0, 2.0], np.float64)

    def loss(flat):
        rt = kf.RaggedTensor.from_row_splits(flat, splits)
        out = reduce(rt, axis=axis)
        if axis is not None:
            out = kf.reduce_sum(out * kf.constant(weights[:out.shape[0]]))
        return out

    x0 = np.array([0.3, -1.2, 2.5, 0.7, 1.9])  # distinct: max's gradient is defined
    x = kf.constant(x0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = loss(x)
    grad = tape.gradient(y, x).numpy()
    eps, numeric = 1e-6, np.zeros_like(x0)
    for i in range(x0.size):
        up, down = x0.copy(), x0.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (float(loss(kf.constant(up))) - float(loss(kf.constant(down)))) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-6)


def test_gradient_of_a_binary_op_with_a_dense_column():
    x = kf.constant([1.0, 2.0, 3.0])
    col = kf.constant([[10.0], [20.0]])
    with kf.GradientTape() as tape:
        tape.watch([x, col])
        rt = kf.RaggedTensor.from_row_splits(x, [0, 2, 3])
        y = kf.reduce_sum(rt * col)
    gx, gcol = tape.gradient(y, [x, col])
    assert gx.numpy().tolist() == [10.0, 10.0, 20.0]
    assert gcol.numpy().tolist() == [[3.0], [3.0]]


def test_bad_input_raises_tf_errors():
    rt = kf.ragged.constant([[1, 2], [3]])
    with pytest.raises(errors.InvalidArgumentError):
        rt + kf.ragged.constant([[1], [2, 3]])
    with pytest.raises(errors.InvalidArgumentError):
        kf.concat([rt, kf.ragged.constant([[1]])], axis=1)
    with pytest.raises(ValueError):
        kf.reduce_sum(rt, axis=-3)
