"""tf.math names built in kilnflow/ops/math_extra.py and elementwise.py beyond the sample table:
exclusive scans, aliases, the composites' edge cases, and function == eager."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from tests.ops.modes import eager_and_function

M = kf.math


def test_exclusive_cumulative_logsumexp_starts_at_minus_inf_and_has_finite_gradients():
    x = kf.constant([0.0, 1.0, 2.0])
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = M.cumulative_logsumexp(x, exclusive=True)
        loss = kf.reduce_sum(y[1:])
    assert y.numpy()[0] == -np.inf
    np.testing.assert_allclose(y.numpy()[1:], np.log(np.cumsum(np.exp([0.0, 1.0]))), rtol=1e-6)
    grad = tape.gradient(loss, x).numpy()
    expected = [1 + 1 / (1 + np.e), np.e / (1 + np.e), 0.0]
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


def test_cumulative_ops_in_a_function():
    eager_and_function(lambda x: (M.cumprod(x, 1, exclusive=True),
                                  M.cumulative_logsumexp(x, 1, reverse=True)),
                       kf.constant(np.arange(1.0, 7.0).reshape(2, 3)))


def test_aliases_are_tf_names():
    assert M.mod is kf.math.floormod
    assert M.softmax is kf.nn.softmax and M.log_softmax is kf.nn.log_softmax
    assert float(M.accumulate_n([1.0, 2.0, 3.0])) == 6.0
    assert M.scalar_mul(2, kf.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(ValueError, match="0-D"):
        M.scalar_mul([1.0, 2.0], kf.constant([1.0, 2.0]))


def test_monotonicity_and_zero_fraction():
    assert bool(M.is_non_decreasing([])) and bool(M.is_strictly_increasing([5]))
    assert bool(M.is_non_decreasing([[1, 2], [2, 3]]))
    assert not bool(M.is_strictly_increasing([1.0, 1.0]))
    assert float(M.zero_fraction(kf.zeros([4]))) == 1.0


def test_bincount_lengths_and_function_mode():
    assert M.bincount([], minlength=3).numpy().tolist() == [0, 0, 0]
    assert M.bincount([4, 4], maxlength=2).numpy().tolist() == [0, 0]
    f = kf.function(lambda x: M.bincount(x, dtype=kf.float32))
    assert f(kf.constant([0, 2, 2])).numpy().tolist() == [1.0, 0.0, 2.0]


def test_confusion_matrix_with_weights():
    m = M.confusion_matrix([0, 1, 1], [0, 0, 1], num_classes=3, weights=[1.0, 2.0, 3.0],
                           dtype=kf.float32)
    assert m.numpy().tolist() == [[1, 0, 0], [2, 3, 0], [0, 0, 0]]


def test_in_top_k_ignores_non_finite_targets_and_counts_ties_as_in():
    p = kf.constant([[1.0, np.nan], [2.0, 2.0]])
    assert M.in_top_k([1, 1], p, 1).numpy().tolist() == [False, True]
    assert kf.nn.in_top_k is M.in_top_k


def test_reduce_variance_rejects_integers_and_approx_k_is_exact():
    with pytest.raises(TypeError, match="floating"):
        M.reduce_variance([1, 2])
    values, indices = M.approx_min_k(kf.constant([[3.0, 1.0, 2.0]]), 2)
    assert values.numpy().tolist() == [[1.0, 2.0]] and indices.numpy().tolist() == [[1, 2]]


def test_zero_safe_ops_at_zero():
    assert M.xlogy(0.0, 0.0).numpy() == 0.0 and M.xdivy(0.0, 0.0).numpy() == 0.0
    assert M.reciprocal_no_nan([0.0, 4.0]).numpy().tolist() == [0.0, 0.25]
    x = kf.constant(0.0)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = M.xlogy(x, 0.0)
    assert float(tape.gradient(y, x)) == 0.0


def test_invert_permutation_errors_in_a_function_too():
    f = kf.function(lambda x: M.invert_permutation(x))
    with pytest.raises(errors.InvalidArgumentError, match="permutation"):
        f(kf.constant([1, 1]))
