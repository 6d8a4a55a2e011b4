"""Candidate samplers (tf.random.*_candidate_sampler) and the sampled losses: shapes, dtypes,
TF's expected-count formulas, distributions, determinism under seeds, function mode, and
gradients of nce_loss / sampled_softmax_loss."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import random as R

TRUE = kf.constant([[1], [5]], kf.int64)


@pytest.fixture(autouse=True)
def no_global_seed():
    R.set_seed(None)
    yield
    R.set_seed(None)


def _expected_unique(p, tries):
    return -np.expm1(tries * np.log1p(-p))


def test_uniform_sampler_shapes_and_expected_counts():
    sampled, true_count, sampled_count = kf.random.uniform_candidate_sampler(
        TRUE, 1, 4, False, 10)
    assert sampled.dtype is kf.int64 and sampled.shape == (4,)
    assert true_count.dtype is kf.float32 and true_count.shape == (2, 1)
    np.testing.assert_allclose(true_count.numpy(), 0.4)  # num_sampled * 1/10
    np.testing.assert_allclose(sampled_count.numpy(), 0.4)
    unique, _, counts = kf.random.uniform_candidate_sampler(TRUE, 1, 10, True, 10)
    assert sorted(unique.numpy().tolist()) == list(range(10))
    assert np.all(counts.numpy() > 0) and np.all(counts.numpy() <= 1)


def test_log_uniform_sampler_follows_zipf():
    sampled = np.concatenate([kf.random.log_uniform_candidate_sampler(
        TRUE, 1, 50, False, 100, seed=i)[0].numpy() for i in range(40)])
    p0 = np.log(2) / np.log(101)
    assert abs(np.mean(sampled == 0) - p0) < 0.04
    _, true_count, _ = kf.random.log_uniform_candidate_sampler(TRUE, 1, 5, False, 100)
    np.testing.assert_allclose(true_count.numpy()[0, 0],
                               5 * (np.log(3) - np.log(2)) / np.log(101), rtol=1e-6)


def test_unique_expected_counts_use_tfs_formula():
    sampled, true_count, sampled_count = kf.random.fixed_unigram_candidate_sampler(
        TRUE, 1, 3, True, 6, unigrams=[1, 1, 1, 1, 1, 1])
    # every class has p = 1/6; the counts agree with some number of tries >= 3
    tries = np.log1p(-sampled_count.numpy()[0]) / np.log1p(-1 / 6)
    assert tries >= 3 - 1e-6 and abs(tries - round(tries)) < 1e-4
    np.testing.assert_allclose(true_count.numpy(), _expected_unique(1 / 6, round(tries)),
                               rtol=1e-5)


def test_fixed_unigram_from_a_vocab_file_with_reserved_ids(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a,0\nb,5\nc,0\n")
    sampled, _, _ = kf.random.fixed_unigram_candidate_sampler(
        [[2], [3]], 1, 20, False, 4, vocab_file=str(vocab), num_reserved_ids=1)
    assert set(sampled.numpy().tolist()) == {2}  # only 'b' (id 1 + 1 reserved) has weight


def test_learned_sampler_learns_the_true_classes():
    true = kf.constant([[3]] * 50, kf.int64)
    sampler = kf.function(lambda: kf.random.learned_unigram_candidate_sampler(
        true, 1, 200, False, 5))
    first = sampler()[0].numpy()
    later = np.concatenate([sampler()[0].numpy() for _ in range(5)])
    assert np.mean(later == 3) > np.mean(first == 3) and np.mean(later == 3) > 0.8


def test_all_sampler_and_seeds():
    sampled, true_count, sampled_count = kf.random.all_candidate_sampler(TRUE, 1, 7, True)
    assert sampled.numpy().tolist() == list(range(7))
    assert true_count.numpy().tolist() == [[1.0], [1.0]]
    R.set_seed(4)
    a = kf.random.uniform_candidate_sampler(TRUE, 1, 5, False, 50)[0].numpy()
    R.set_seed(4)
    b = kf.random.uniform_candidate_sampler(TRUE, 1, 5, False, 50)[0].numpy()
    np.testing.assert_array_equal(a, b)


def test_sampler_errors():
    with pytest.raises(errors.InvalidArgumentError, match="num_sampled"):
        kf.random.uniform_candidate_sampler(TRUE, 1, 20, True, 10)
    with pytest.raises(errors.InvalidArgumentError, match="true_classes must be in"):
        kf.random.uniform_candidate_sampler(TRUE, 1, 2, False, 3)
    with pytest.raises(errors.InvalidArgumentError, match="columns"):
        kf.random.uniform_candidate_sampler(TRUE, 2, 2, False, 10)


def _model():
    rng = np.random.default_rng(0)
    return (kf.Variable(rng.standard_normal((20, 4))), kf.Variable(np.zeros(20)),
            kf.constant(rng.standard_normal((3, 4))), kf.constant([[2], [7], [7]], kf.int64))


def test_sampled_losses_match_their_definition_with_given_samples():
    w, b, x, labels = _model()
    sampled = kf.constant([0, 7, 9], kf.int64)
    counts = (sampled, kf.ones([3, 1], kf.float32), kf.ones([3], kf.float32))
    loss = kf.nn.sampled_softmax_loss(w, b, labels, x, 3, 20, sampled_values=counts)
    logits = x.numpy() @ w.numpy().T
    rows = []
    for i, label in enumerate([2, 7, 7]):
        sampled_logits = logits[i, [0, 7, 9]].copy()
        sampled_logits[[0, 7, 9].index(7)] -= np.finfo(np.float32).max if label == 7 else 0
        z = np.concatenate([[logits[i, label]], sampled_logits])
        rows.append(np.log(np.sum(np.exp(z - z.max()))) + z.max() - z[0])
    np.testing.assert_allclose(loss.numpy(), rows, rtol=1e-6)
    nce = kf.nn.nce_loss(w, b, labels, x, 3, 20, sampled_values=counts)
    sig = lambda v: np.log1p(np.exp(-np.abs(v))) + np.maximum(v, 0)  # noqa: E731
    want = [sig(-logits[i, label]) + sum(sig(logits[i, c]) for c in (0, 7, 9))
            for i, label in enumerate([2, 7, 7])]
    np.testing.assert_allclose(nce.numpy(), want, rtol=1e-6)


def test_sampled_losses_train_in_a_function():
    w, b, x, labels = _model()

    @kf.function
    def step():
        with kf.GradientTape() as tape:
            loss = kf.reduce_mean(kf.nn.sampled_softmax_loss(w, b, labels, x, 5, 20)) + \
                kf.reduce_mean(kf.nn.nce_loss(w, b, labels, x, 5, 20))
        dw, db = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * dw)
        b.assign_sub(0.1 * db)
        return loss
    losses = [float(step()) for _ in range(30)]
    assert np.mean(losses[-5:]) < np.mean(losses[:5])
