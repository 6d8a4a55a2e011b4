"""Composites where TF accepts them (values recorded from TF 2.21 in
tf_composite_expected.json): kf.shape/size/rank of SparseTensor and RaggedTensor,
unary elementwise ops over a RaggedTensor's values, Session.run of a SparseTensor, and
TF's kf.dtypes names (cast, complex, saturate_cast)."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf

with open(os.path.join(os.path.dirname(__file__), "tf_composite_expected.json")) as _f:
    TF = json.load(_f)


def _sparse():
    return kf.sparse.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [4, 5])


def test_shape_size_rank_of_a_sparse_tensor():
    sp = _sparse()
    assert repr(kf.shape(sp)) == TF["sp_shape"]
    assert repr(kf.size(sp)) == TF["sp_size"]
    assert repr(kf.rank(sp)) == TF["sp_rank"]
    assert kf.shape(sp, out_type=kf.int64).dtype == kf.int64

    @kf.function
    def f(s):
        return kf.shape(s), kf.size(s), kf.rank(s)

    shape, size, rank = f(sp)
    assert shape.numpy().tolist() == [4, 5] and int(size) == 20 and int(rank) == 2


def test_size_rank_of_a_ragged_tensor():
    rt = kf.ragged.constant([[1, 2], [], [3, 4, 5]])
    assert repr(kf.size(rt)) == TF["rt_size"]
    assert repr(kf.rank(rt)) == TF["rt_rank"]
    uniform_inner = kf.RaggedTensor.from_row_splits(kf.ones([3, 2]), [0, 1, 3])
    assert int(kf.rank(uniform_inner)) == 3 and int(kf.size(uniform_inner)) == 6


@pytest.mark.parametrize("name", sorted(TF["ragged_unary"]))
def test_unary_ops_map_ragged_values(name):
    kind, expected = TF["ragged_unary"][name]
    arg = kf.ragged.constant([[True], [False, True]]) if name == "logical_not" else \
        kf.ragged.constant([[1.0, -4.0], [], [9.0]])
    result = getattr(kf.math, name)(arg)
    assert type(result).__name__ == kind
    want = eval(expected, {"nan": float("nan")})  # noqa: S307 - our own recorded file
    got = result.to_list()
    assert [len(r) for r in got] == [len(r) for r in want]
    np.testing.assert_allclose(np.array(sum(got, []), dtype=float),
                               np.array(sum(want, []), dtype=float), rtol=1e-6)


def test_unary_ops_on_ragged_inside_functions_and_gradients():
    rt = kf.ragged.constant([[1.0, 4.0], [9.0]])
    f = kf.function(lambda r: kf.math.sqrt(r).flat_values)
    assert f(rt).numpy().tolist() == [1.0, 2.0, 3.0]
    values = kf.constant([1.0, 4.0, 9.0])
    with kf.GradientTape() as tape:
        tape.watch(values)
        out = kf.math.square(kf.RaggedTensor.from_row_splits(values, [0, 2, 3]))
        loss = kf.reduce_sum(out.flat_values)
    assert tape.gradient(loss, values).numpy().tolist() == [2.0, 8.0, 18.0]


def test_session_run_of_a_sparse_tensor_is_a_sparse_tensor_value():
    v1 = kf.compat.v1
    with v1.Session(graph=kf.Graph()) as sess:
        with sess.graph.as_default():
            sp = kf.SparseTensor([[0, 1]], [5.0], [2, 3])
            value = sess.run(sp)
            assert [type(value).__name__, repr(value)] == TF["sess_sp"]
            assert isinstance(value, v1.SparseTensorValue)  # the name TF 1 code checks against
            nested = sess.run({"a": sp, "b": [kf.constant(5.0) * 1.0]})
            # TF's `b` fetched sp.values, a graph tensor; kilnflow's components made from
            # Python values are eager constants, which a Session cannot fetch directly
            assert repr(nested["a"]) in TF["sess_sp_nested"] and nested["b"] == [5.0]
            x = v1.placeholder(kf.float32, [None])
            fed = kf.SparseTensor([[0], [2]], x * 2, [4])
            got = sess.run([fed, kf.sparse.to_dense(fed)], {x: [1.0, 2.0]})
            assert got[0].values.tolist() == [2.0, 4.0]
            assert got[1].tolist() == [2.0, 0.0, 4.0, 0.0]


def test_dtypes_namespace_ops():
    assert kf.dtypes.cast is kf.cast and kf.dtypes.saturate_cast is kf.saturate_cast
    assert kf.dtypes.cast(kf.constant([1.7]), kf.int32).numpy().tolist() == [1]
    assert complex(kf.dtypes.complex(1.0, 2.0).numpy()) == 1 + 2j
    assert kf.dtypes.saturate_cast(kf.constant([300.0]), kf.uint8).numpy().tolist() == [255]
    with pytest.raises(AttributeError):
        kf.dtypes.no_such_name  # noqa: B018
