"""tf.nn.embedding_lookup_sparse / safe_embedding_lookup_sparse against TF 2.21's values
(tf_embedding_expected.json): every combiner, with and without weights, eagerly and in
kf.function, with gradients reaching the embedding table."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf

with open(os.path.join(os.path.dirname(__file__), "tf_embedding_expected.json")) as _f:
    TF = json.load(_f)

PARAMS = np.arange(12, dtype=np.float32).reshape(4, 3) / 4


def _ids():
    return kf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]],
                           kf.constant([1, 3, 0, 2, 2], kf.int64), [4, 2])


def _weights():
    return kf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]],
                           [2.0, 0.5, 1.0, 3.0, 1.0], [4, 2])


def _bad():
    return (kf.SparseTensor([[0, 0], [0, 1], [2, 0]], kf.constant([1, -1, 2], kf.int64),
                            [4, 2]),
            kf.SparseTensor([[0, 0], [0, 1], [2, 0]], [1.0, 5.0, -2.0], [4, 2]))


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_lookup_sparse_matches_tf(combiner):
    params = kf.constant(PARAMS)
    got = kf.nn.embedding_lookup_sparse(params, _ids(), None, combiner=combiner)
    np.testing.assert_allclose(got.numpy(), TF["els_" + combiner], rtol=1e-6)
    weighted = kf.function(lambda p, i, w: kf.nn.embedding_lookup_sparse(
        p, i, w, combiner=combiner))(params, _ids(), _weights())
    np.testing.assert_allclose(weighted.numpy(), TF["elsw_" + combiner], rtol=1e-6)


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_safe_embedding_lookup_sparse_matches_tf(combiner):
    ids, weights = _bad()
    got = kf.nn.safe_embedding_lookup_sparse(PARAMS, ids, None, combiner=combiner)
    np.testing.assert_allclose(got.numpy(), TF["safe_" + combiner], rtol=1e-6)
    got = kf.nn.safe_embedding_lookup_sparse(PARAMS, ids, weights, combiner=combiner)
    np.testing.assert_allclose(got.numpy(), TF["safew_" + combiner], rtol=1e-6)


def test_safe_default_id_and_bad_arguments():
    ids, _ = _bad()
    got = kf.nn.safe_embedding_lookup_sparse(PARAMS, ids, None, default_id=3)
    np.testing.assert_allclose(got.numpy(), TF["safe_default"], rtol=1e-6)
    with pytest.raises(ValueError, match=TF["els_err"][1]):
        kf.nn.embedding_lookup_sparse(PARAMS, _ids(), None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        kf.nn.embedding_lookup_sparse(PARAMS, kf.constant([[1]]), None)


def test_gradients_reach_the_table():
    table = kf.Variable(PARAMS)
    with kf.GradientTape() as tape:
        loss = kf.reduce_sum(kf.nn.embedding_lookup_sparse(table, _ids(), _weights(),
                                                           combiner="sum"))
    grad = kf.convert_to_tensor(tape.gradient(loss, table))
    # row r of the table gets the sum of the weights of its ids: ids 1:2, 3:.5, 0:1, 2:3+1
    np.testing.assert_allclose(grad.numpy(), np.array([[1.0] * 3, [2.0] * 3, [4.0] * 3,
                                                       [0.5] * 3]), rtol=1e-6)
