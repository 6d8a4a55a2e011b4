"""compat.v1.losses: TF1's weighted reductions (default: sum over non-zero weights), the
LOSSES collection, total and regularization losses; Session results equal eager ones."""
import numpy as np
import pytest

import kilnflow as kf

v1 = kf.compat.v1
L = v1.losses
LABELS = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]], np.float32)
PRED = np.array([[0.5, 0.25], [2.0, 1.0], [-1.0, 0.5]], np.float32)
W = np.array([[1.0], [0.0], [2.0]], np.float32)


def _sigmoid_xent(z, x):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def _softmax_xent(labels, logits):
    shifted = logits - logits.max(-1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -(labels * log_softmax).sum(-1)


CASES = {
    "mse": (lambda: L.mean_squared_error(LABELS, PRED), np.mean((PRED - LABELS) ** 2)),
    "mse_weighted": (lambda: L.mean_squared_error(LABELS, PRED, weights=W),
                     np.sum((PRED - LABELS) ** 2 * W) / 4),  # 4 non-zero weights
    "abs_sum": (lambda: L.absolute_difference(LABELS, PRED, reduction=L.Reduction.SUM),
                np.sum(np.abs(PRED - LABELS))),
    "abs_mean": (lambda: L.absolute_difference(LABELS, PRED, weights=W,
                                               reduction=L.Reduction.MEAN),
                 np.sum(np.abs(PRED - LABELS) * W) / np.sum(W * np.ones_like(PRED))),
    "abs_batch": (lambda: L.absolute_difference(LABELS, PRED, weights=W,
                                                reduction=L.Reduction.SUM_OVER_BATCH_SIZE),
                  np.sum(np.abs(PRED - LABELS) * W) / 6),
    "sigmoid": (lambda: L.sigmoid_cross_entropy(LABELS, PRED, label_smoothing=0.2),
                np.mean(_sigmoid_xent(LABELS * 0.8 + 0.1, PRED))),
    "softmax": (lambda: L.softmax_cross_entropy(LABELS, PRED, label_smoothing=0.1),
                np.mean(_softmax_xent(LABELS * 0.9 + 0.05, PRED))),
    "sparse": (lambda: L.sparse_softmax_cross_entropy(np.array([1, 0, 1]), PRED,
                                                      weights=np.array([1.0, 0.0, 1.0])),
               (_softmax_xent(np.eye(2)[[1, 0, 1]], PRED) * [1, 0, 1]).sum() / 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_and_session_equal_numpy(name):
    make, want = CASES[name]
    eager = make().numpy()
    np.testing.assert_allclose(eager, want, rtol=1e-5)
    with kf.Graph().as_default():
        loss = make()
        assert v1.losses.get_losses() == [loss]
        with v1.Session() as sess:
            np.testing.assert_allclose(sess.run(loss), eager, rtol=1e-6)


def test_none_reduction_keeps_the_weighted_losses():
    got = L.absolute_difference(LABELS, PRED, weights=W, reduction=L.Reduction.NONE)
    np.testing.assert_allclose(got.numpy(), np.abs(PRED - LABELS) * W)
    with pytest.raises(ValueError, match="Invalid Reduction"):
        L.absolute_difference(LABELS, PRED, reduction="bad")
    with pytest.raises(ValueError, match="incompatible"):
        L.mean_squared_error(LABELS, PRED[:, :1].repeat(3, 1))


def test_all_zero_weights_give_zero():
    assert float(L.mean_squared_error(LABELS, PRED, weights=0.0)) == 0.0


def test_total_loss_adds_regularization_losses():
    with kf.Graph().as_default():
        w = v1.get_variable("w", [2], initializer=v1.ones_initializer(),
                            regularizer=lambda v: 0.5 * kf.reduce_sum(v * v))
        data = L.mean_squared_error([0.0, 0.0], w)
        L.add_loss(kf.constant(1.0))
        total = L.get_total_loss()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            assert sess.run(L.get_regularization_loss()) == 1.0
            assert sess.run(data) == 1.0 and sess.run(total) == 3.0
            assert sess.run(L.get_total_loss(add_regularization_losses=False)) == 2.0
    with kf.Graph().as_default():
        with pytest.raises(ValueError, match="No losses"):
            L.get_total_loss()
        assert float(v1.Session().run(L.get_regularization_loss())) == 0.0
