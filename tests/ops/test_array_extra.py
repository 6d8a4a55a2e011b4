"""Issue 12's top-level names beyond the sample table: the stateful Timestamp, the pure-Python
broadcast_static_shape / shape_n / parallel_stack, strided_slice with bounds known only
when a graph runs, and the graph-mode shapes of the value-dependent ops."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors


def test_timestamp_reads_the_clock_on_every_call_of_a_function():
    stamps = kf.function(lambda: kf.timestamp())
    first, second = float(stamps()), float(stamps())
    assert first > 1.5e9 and second >= first
    assert kf.timestamp().dtype == kf.float64


def test_broadcast_static_shape_keeps_unknown_dims_and_rejects_mismatches():
    got = kf.broadcast_static_shape(kf.TensorShape([None, 1, 3]), kf.TensorShape([4, 3]))
    assert got.as_list() == [None, 4, 3]
    with pytest.raises(ValueError, match="Incompatible"):
        kf.broadcast_static_shape(kf.TensorShape([2]), kf.TensorShape([3]))


def test_shape_n_and_parallel_stack():
    shapes = kf.shape_n([kf.zeros([2, 3]), kf.zeros([4])], out_type=kf.int64)
    assert [s.numpy().tolist() for s in shapes] == [[2, 3], [4]]
    assert shapes[0].dtype == kf.int64
    stacked = kf.function(lambda: kf.parallel_stack([[1, 2], [3, 4]]))()
    assert stacked.numpy().tolist() == [[1, 2], [3, 4]]
    with pytest.raises(RuntimeError, match="eager"):  # as TF 2.21
        kf.parallel_stack([[1, 2], [3, 4]])


def test_strided_slice_with_bounds_fed_when_the_graph_runs():
    x = np.arange(24.0).reshape(4, 6)

    @kf.function(input_signature=[kf.TensorSpec([2], kf.int32)])
    def cut(begin):
        return kf.strided_slice(x, begin, [4, 6], [2, 1], end_mask=1)

    np.testing.assert_array_equal(cut(kf.constant([1, 2])).numpy(), x[1::2, 2:6])


def test_value_dependent_outputs_have_unknown_leading_dims_in_graphs():
    @kf.function(input_signature=[kf.TensorSpec([None], kf.int32)])
    def parts(x):
        y, idx = kf.unique(x)
        first, _ = kf.dynamic_partition(x, kf.math.floormod(x, 2), 2)
        assert y.shape.as_list() == [None] and first.shape.as_list() == [None]
        return y, idx, first

    y, idx, first = parts(kf.constant([3, 3, 2, 5, 2]))
    assert y.numpy().tolist() == [3, 2, 5] and idx.numpy().tolist() == [0, 0, 1, 2, 1]
    assert first.numpy().tolist() == [2, 2]


def test_sequence_mask_default_maxlen_and_bad_lengths():
    assert kf.sequence_mask([0, 2]).numpy().tolist() == [[False, False], [True, True]]
    with pytest.raises(TypeError, match="lengths"):
        kf.sequence_mask([1.5])


def test_dynamic_stitch_needs_matching_lists():
    with pytest.raises(ValueError, match="dynamic_stitch"):
        kf.dynamic_stitch([[0]], [])
    with pytest.raises(errors.InvalidArgumentError):
        kf.dynamic_stitch([[0, 1]], [[1.0]])


def test_matrix_square_root_is_the_linalg_sqrtm():
    a = np.array([[5.0, 2.0], [2.0, 5.0]])
    root = kf.matrix_square_root(a).numpy()
    np.testing.assert_allclose(root @ root, a, rtol=1e-12)
    np.testing.assert_allclose(kf.linalg.sqrtm(a).numpy(), root)
