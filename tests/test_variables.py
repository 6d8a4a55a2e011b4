"""kf.Variable eagerly: construction, assignment, reads, operators, errors and printing."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import kilnflow as kf


def test_constructor_arguments():
    v = kf.Variable([1.0, 2.0], name="weights")
    assert v.name == "weights:0" and v.dtype is kf.float32 and v.shape == [2]
    assert v.trainable and v.numpy().tolist() == [1.0, 2.0]
    assert kf.Variable(3).dtype is kf.int32
    assert kf.Variable(1.0, dtype=kf.float64).dtype is kf.float64
    assert kf.Variable(np.zeros((2, 3), np.float16)).dtype is kf.float16
    assert kf.Variable(kf.constant([[1, 2]])).shape == [1, 2]
    assert kf.Variable(1.0, trainable=False).trainable is False
    assert kf.Variable(7.0).name == "Variable:0"


def test_callable_initial_value():
    v = kf.Variable(lambda: kf.ones([2, 2]))
    assert v.shape == [2, 2] and v.numpy().sum() == 4.0


def test_shape_argument_allows_unknown_dims():
    v = kf.Variable([1.0, 2.0], shape=[None])
    assert v.shape == kf.TensorShape([None])
    v.assign([1.0, 2.0, 3.0])
    assert v.numpy().tolist() == [1.0, 2.0, 3.0]
    assert kf.Variable([1.0], validate_shape=False).shape.rank is None


def test_missing_initial_value():
    with pytest.raises(ValueError):
        kf.Variable()
    with pytest.raises(ValueError):
        kf.Variable(None)


def test_initial_ndarray_is_copied():
    source = np.array([1.0, 2.0])
    v = kf.Variable(source)
    source[0] = 9.0
    assert v.numpy().tolist() == [1.0, 2.0]


def test_assign_methods_return_the_variable():
    """Eagerly TF returns a view of the variable (same handle) that prints as
    'UnreadVariable'; read_value=False returns None."""
    v = kf.Variable([1.0, 2.0])
    r = v.assign([3.0, 4.0])
    assert r.handle is v.handle and r.name == "UnreadVariable" and v.name == "Variable:0"
    assert type(r).__name__ == "_UnreadVariable" and isinstance(r, kf.Variable)
    assert v.numpy().tolist() == [3.0, 4.0]
    assert v.assign_add([1.0, 1.0]).handle is v.handle
    assert v.numpy().tolist() == [4.0, 5.0]
    assert v.assign_sub(kf.constant([0.5, 0.5])).numpy().tolist() == [3.5, 4.5]
    r.assign([0.0, 0.0])  # writes through the view reach the variable
    assert v.numpy().tolist() == [0.0, 0.0]
    assert v.assign([1.0, 1.0], read_value=False) is None
    with pytest.raises(ValueError, match="Shape mismatch"):
        v.assign([1.0, 2.0, 3.0])


def test_slice_of_a_variable_assigns_into_it():
    v = kf.Variable(kf.zeros([2, 2]))
    assert v[0, 1].assign(7.0).numpy().tolist() == [[0.0, 7.0], [0.0, 0.0]]
    v[1].assign([1.0, 2.0])
    assert v.numpy().tolist() == [[0.0, 7.0], [1.0, 2.0]]
    assert not hasattr(kf.constant([1.0]), "assign")
    assert v.scatter_nd_update([[0, 0]], [5.0]).numpy()[0, 0] == 5.0
    assert kf.is_tensor(v) and not kf.is_tensor(v.numpy())


def test_assign_chains_and_takes_python_values_in_the_variables_dtype():
    v = kf.Variable(1.0, dtype=kf.float64)
    v.assign(2).assign_add(0.5)
    assert v.dtype is kf.float64 and float(v) == 2.5
    counter = kf.Variable(0)
    for _ in range(3):
        counter.assign_add(1)
    assert int(counter) == 3 and counter.dtype is kf.int32


def test_reads_are_snapshots():
    v = kf.Variable([1.0, 2.0])
    before = v.read_value()
    value = v.value()
    v.assign([5.0, 6.0])
    v.assign_add([1.0, 1.0])
    assert before.numpy().tolist() == [1.0, 2.0] and value.numpy().tolist() == [1.0, 2.0]
    assert v.read_value().numpy().tolist() == [6.0, 7.0]
    assert isinstance(v.read_value(), kf.Tensor)


def test_writing_to_numpy_result_leaves_variable_unchanged():
    v = kf.Variable([1.0, 2.0])
    v.numpy()[0] = 100.0
    assert v.numpy().tolist() == [1.0, 2.0]


def test_numpy_of_scalars_is_a_numpy_scalar():
    assert type(kf.constant(3.5).numpy()) is np.float32
    assert type(kf.Variable(1.0).numpy()) is np.float32
    assert type(kf.Variable(1.0).assign(2.0).numpy()) is np.float32


def test_shape_mismatch_on_assign():
    v = kf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        v.assign_add([[1.0, 2.0]])
    assert v.numpy().tolist() == [1.0, 2.0]


def test_dtype_mismatch_on_assign():
    v = kf.Variable([1.0, 2.0])
    with pytest.raises((TypeError, ValueError)):
        v.assign(kf.constant([1, 2]))
    with pytest.raises((TypeError, ValueError)):
        v.assign(kf.constant([1.0, 2.0], kf.float64))
    with pytest.raises(TypeError):
        kf.Variable(1).assign_add(2.5)
    assert v.numpy().tolist() == [1.0, 2.0]


def test_operators_read_the_variable():
    v = kf.Variable([1.0, 2.0])
    for result, expected in [(v + 1, [2.0, 3.0]), (1 - v, [0.0, -1.0]), (v * v, [1.0, 4.0]),
                             (v / 2, [0.5, 1.0]), (-v, [-1.0, -2.0]), (v ** 2, [1.0, 4.0]),
                             (abs(-v), [1.0, 2.0]), (v[1], 2.0),
                             (kf.constant([3.0, 3.0]) - v, [2.0, 1.0])]:
        assert isinstance(result, kf.Tensor)
        assert result.numpy().tolist() == expected
    assert (v < 2).numpy().tolist() == [True, False]
    assert (v == v).numpy().tolist() == [True, True]
    m = kf.Variable([[1.0, 2.0]])
    assert (m @ kf.constant([[1.0], [1.0]])).numpy().tolist() == [[3.0]]
    assert kf.matmul(m, kf.transpose(m)).numpy().tolist() == [[5.0]]
    assert kf.reduce_sum(v).numpy() == 3.0


def test_numpy_interop_and_python_conversions():
    v = kf.Variable([1.0, 2.0])
    assert np.asarray(v).tolist() == [1.0, 2.0]
    assert np.multiply(v, 2).tolist() == [2.0, 4.0]
    assert kf.convert_to_tensor(v).numpy().tolist() == [1.0, 2.0]
    assert float(kf.Variable(2.5)) == 2.5 and int(kf.Variable(4)) == 4
    assert bool(kf.Variable(True)) is True
    assert len(v) == 2 and [float(x) for x in v] == [1.0, 2.0]
    assert [0, 1, 2][kf.Variable(2)] == 2


def test_variables_are_unhashable_but_refs_work():
    v, w = kf.Variable(1.0), kf.Variable(1.0)
    with pytest.raises(TypeError):
        hash(v)
    table = {v.ref(): "v", w.ref(): "w"}
    assert table[v.ref()] == "v" and v.ref().deref() is v


def test_repr():
    v = kf.Variable([1.0, 2.0], name="w")
    assert repr(v) == ("<tf.Variable 'w:0' shape=(2,) dtype=float32, "
                       "numpy=array([1., 2.], dtype=float32)>")
    assert repr(kf.Variable(3)) == "<tf.Variable 'Variable:0' shape=() dtype=int32, numpy=3>"
    assert repr(kf.Variable([[1, 2], [3, 4]])) == (
        "<tf.Variable 'Variable:0' shape=(2, 2) dtype=int32, numpy=\n"
        "array([[1, 2],\n"
        "       [3, 4]], dtype=int32)>")


def test_deepcopy_is_independent():
    v = kf.Variable([1.0, 2.0], trainable=False, name="v")
    w = copy.deepcopy(v)
    w.assign([3.0, 4.0])
    assert v.numpy().tolist() == [1.0, 2.0] and w.numpy().tolist() == [3.0, 4.0]
    assert w.trainable is False and w.dtype is v.dtype
