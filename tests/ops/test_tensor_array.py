"""kf.TensorArray eagerly, inside @kf.function and as while_loop state."""
import pytest

import kilnflow as kf
from tests.ops.modes import eager_and_function

F32 = kf.float32


# ---------------------------------------------------------------- TensorArray

def tensor_array_ops(x, indices):
    ta = kf.TensorArray(F32, size=4, element_shape=[2])
    ta = ta.write(0, x[0]).write(1, x[1])
    ta = ta.scatter([2, 3], x * 10.)
    unstacked = kf.TensorArray(F32, size=0, dynamic_size=True).unstack(x * 2.)
    return {"stack": ta.stack(), "read": ta.read(2), "gather": ta.gather(indices),
            "size": ta.size(), "unstacked": unstacked.stack(), "unstacked_read":
            unstacked.read(1), "unstacked_size": unstacked.size(), "concat": ta.concat()}


def test_tensor_array_operations_eager_and_function():
    x = kf.constant([[1., 2.], [3., 4.]])
    result = eager_and_function(tensor_array_ops, x, kf.constant([3, 0]))
    assert result["stack"].numpy().tolist() == [[1., 2.], [3., 4.], [10., 20.], [30., 40.]]
    assert result["gather"].numpy().tolist() == [[30., 40.], [1., 2.]]
    assert result["read"].numpy().tolist() == [10., 20.]
    assert int(result["size"]) == 4 and int(result["unstacked_size"]) == 2
    assert result["unstacked_read"].numpy().tolist() == [6., 8.]
    assert result["concat"].shape == (8,)


def dynamic_writes(v):
    ta = kf.TensorArray(F32, size=0, dynamic_size=True, element_shape=[])
    ta = ta.write(0, v).write(3, v * 4.)
    return ta.stack(), ta.size()


def test_dynamic_size_grows_on_write_and_unwritten_elements_are_zero():
    stacked, size = eager_and_function(dynamic_writes, kf.constant(1.5))
    assert stacked.numpy().tolist() == [1.5, 0., 0., 6.] and int(size) == 4


def test_element_shape_and_dtype():
    ta = kf.TensorArray(kf.int32, size=2, element_shape=[3])
    assert ta.element_shape.as_list() == [3] and ta.dtype == kf.int32
    assert ta.stack().shape == (2, 3)
    empty = kf.TensorArray(F32, size=0, element_shape=[3])
    assert empty.stack().shape == (0, 3)
    inferred = kf.TensorArray(F32, size=1).write(0, [1., 2.])
    assert inferred.element_shape.as_list() == [2]


def test_writing_a_wrong_element_shape_is_an_error():
    ta = kf.TensorArray(F32, size=2, element_shape=[2])
    with pytest.raises(kf.errors.InvalidArgumentError, match="shape"):
        ta.write(0, [1., 2., 3.]).stack()


def symbolic_size(n):
    ta = kf.TensorArray(F32, size=n, element_shape=[])
    return ta.write(1, 2.).stack(), ta.size()


def test_symbolic_size_and_index():
    stacked, size = eager_and_function(symbolic_size, kf.constant(3))
    assert stacked.numpy().tolist() == [0., 2., 0.] and int(size) == 3
    def write_at(i, v):
        return kf.TensorArray(F32, size=3, element_shape=[]).write(i, v).stack()
    assert eager_and_function(write_at, kf.constant(2), kf.constant(5.)).numpy().tolist() \
        == [0., 0., 5.]


def tensor_array_in_while_loop(n):
    ta = kf.TensorArray(F32, size=n, element_shape=[])
    _, ta = kf.while_loop(lambda i, ta: i < n,
                          lambda i, ta: (i + 1, ta.write(i, kf.cast(i * i, F32))),
                          (kf.constant(0), ta))
    return ta.stack()


def test_tensor_array_as_a_while_loop_variable():
    result = eager_and_function(tensor_array_in_while_loop, kf.constant(4))
    assert result.numpy().tolist() == [0., 1., 4., 9.]


def test_write_past_the_size_of_a_fixed_size_array_is_an_error():
    with pytest.raises((kf.errors.InvalidArgumentError, ValueError, IndexError)):
        kf.TensorArray(F32, size=2).write(5, 1.).stack()


def test_scatter_with_tensor_indices_in_a_function():
    def scatter(i, v):
        return kf.TensorArray(F32, size=3, element_shape=[]).scatter(i, v).stack()
    eager_and_function(scatter, kf.constant([0, 2]), kf.constant([1., 2.]))


def test_tensor_array_without_element_shape_in_a_graph_while_loop():
    def fill(n):
        ta = kf.TensorArray(F32, size=0, dynamic_size=True)
        return kf.while_loop(lambda i, ta: i < n,
                             lambda i, ta: (i + 1, ta.write(i, kf.cast(i, F32))),
                             (kf.constant(0), ta))[1].stack()
    eager_and_function(fill, kf.constant(3))


def _write_rows_of(x):
    """A loop writing matrices into a TensorArray given no element_shape (its buffer
    starts as an empty [size, 0])."""
    ta = kf.TensorArray(F32, size=3)
    for i in kf.range(3):
        ta = ta.write(i, x[i] * 2.0)
    return ta


def test_gradient_through_writes_without_element_shape():
    """The empty [size, 0] start has no values: its gradient is zeros of its own shape.
    The gradient used to crop dy to the start's rank and fail in Slice."""
    import numpy as np
    x = kf.constant(np.arange(12, dtype=np.float32).reshape(3, 2, 2))

    def loss_grad(x):
        with kf.GradientTape() as tape:
            tape.watch(x)
            loss = kf.reduce_sum(_write_rows_of(x).stack() * x)
        return tape.gradient(loss, x)
    got = eager_and_function(loss_grad, x)
    np.testing.assert_allclose(got.numpy(), 4.0 * x.numpy())


def test_concat_of_a_loop_written_array_keeps_the_element_dims():
    """In a graph the loop variable's rank is unknown: concat used to flatten to [12]
    where eager (and TF) give [6, 2]."""
    import numpy as np
    x = kf.constant(np.arange(12, dtype=np.float32).reshape(3, 2, 2))
    got = eager_and_function(lambda x: _write_rows_of(x).concat(), x)
    np.testing.assert_array_equal(got.numpy(), 2.0 * x.numpy().reshape(6, 2))
