"""Calls TF rejects must not silently return a result (issue: silent acceptances)."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors, keras

X = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: kf.math.cumsum(X, axis=5), errors.InvalidArgumentError, "Cumsum"),
    (lambda: kf.reshape(X, [-5]), errors.InvalidArgumentError, "Reshape"),
    (lambda: kf.cond(lambda: False, lambda: 1, lambda: 2), TypeError, "callable"),
    (lambda: kf.math.argmax(X, output_type=kf.float32), TypeError, "output_type"),
    (lambda: kf.Variable(np.ones((2, 2)), shape=[3, 3]), ValueError, "shape"),
    (lambda: kf.nn.dropout(X, rate=[1.0, 2.0]), ValueError, "rate"),
], ids=["cumsum_axis", "reshape_negative", "cond_callable", "argmax_float",
        "variable_shape", "dropout_rate_vector"])
def test_tf_rejects_these(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()


def test_cumsum_negative_axis_still_counts_from_the_end():
    np.testing.assert_array_equal(kf.math.cumsum(X, axis=-1).numpy(), np.cumsum(X, -1))


def test_average_layer_averages():
    a, b = np.ones((2, 3), np.float32), 3 * np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(keras.layers.Average()([a, b]).numpy(), 2 * a)


def test_a_huge_pooling_window_is_refused_before_any_work():
    x = np.ones((1, 4, 4, 1), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="ksize"):
        kf.nn.max_pool2d(x, ksize=10 ** 9, strides=1, padding="SAME")
    assert kf.nn.max_pool2d(x, ksize=9, strides=1, padding="SAME").shape == (1, 4, 4, 1)


def test_string_dtype_fills_as_tf_does():
    # TF 2.21 (recorded): zeros of strings are empty strings; ones, eye and range have no
    # string meaning and raise TypeError; ones_like of a string tensor InvalidArgumentError
    assert kf.zeros([2], dtype=kf.string).numpy().tolist() == [b"", b""]
    assert kf.zeros_like(kf.constant([1.0]), dtype=kf.string).numpy().tolist() == [b""]
    for call in (lambda: kf.ones([2], dtype=kf.string), lambda: kf.eye(2, dtype=kf.string),
                 lambda: kf.range(3, dtype=kf.string)):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(errors.InvalidArgumentError, match="OnesLike"):
        kf.ones_like(kf.constant([b"a"]))


def test_the_gradient_of_a_string_target_is_none():
    x = kf.constant([b"a", b"b"])
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = x + x
    assert tape.gradient(y, x) is None


def test_a_kernel_error_keeps_numpy_s_error_as_the_cause():
    with pytest.raises(errors.InvalidArgumentError, match="AddV2") as info:
        kf.add(kf.ones([2]), kf.ones([3]))
    assert isinstance(info.value.__cause__, ValueError)


def test_a_huge_3d_pooling_depth_window_is_refused_before_the_depth_loop():
    x = np.ones((1, 4, 4, 4, 1), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="MaxPool3D"):
        kf.nn.max_pool3d(x, [10 ** 9, 1, 1], 1, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="strides"):
        kf.nn.avg_pool3d(x, 2, [0, 1, 1], "SAME")


@pytest.mark.parametrize("pred", [None, object(), {}, [[1.0, 2.0], [3.0]], []])
def test_cond_does_not_take_a_malformed_predicate_as_false(pred):
    # TF converts the predicate (recorded): these raise; kilnflow took them as False
    with pytest.raises((TypeError, ValueError)):
        kf.cond(pred, lambda: 1, lambda: 2)


def test_cond_still_takes_python_values_as_tf_does():
    assert kf.cond(1, lambda: 1, lambda: 2) == 1 and kf.cond(False, lambda: 1, lambda: 2) == 2
    assert kf.cond(np.bool_(True), lambda: 1, lambda: 2) == 1


def test_gradient_with_too_few_output_gradients_is_refused():
    x = kf.Variable(1.0)
    with kf.GradientTape() as tape:
        y, z = x * 2.0, x * 3.0
    with pytest.raises(ValueError, match="output_gradients"):
        tape.gradient([y, z], x, output_gradients=[kf.constant(1.0)])


@pytest.mark.parametrize("call, error", [
    (lambda: kf.math.argmax(kf.constant(1.0)), errors.InvalidArgumentError),
    (lambda: kf.math.argmin(kf.constant(1.0)), errors.InvalidArgumentError),
    (lambda: kf.math.divide_no_nan(kf.constant(2, kf.int64), kf.constant([2.0])),
     errors.InvalidArgumentError),
    (lambda: kf.math.real(kf.constant(["a"])), TypeError),
    (lambda: kf.math.conj(kf.constant([True])), TypeError),
], ids=["argmax_scalar", "argmin_scalar", "divide_no_nan_mixed", "real_string", "conj_bool"])
def test_census_silent_acceptances_raise_as_tf(call, error):
    # found by scripts/bad_input_census.py against TF 2.21's recorded answers: kilnflow
    # returned 0 for a scalar's argmax, promoted int64/float32 to float64, passed strings
    with pytest.raises(error):
        call()


@pytest.mark.parametrize("call", [
    lambda: kf.tensor_scatter_nd_update(kf.ones([2, 3]), [[0, 1], [1, 2]], kf.constant(5.0)),
    lambda: kf.tensor_scatter_nd_add(kf.ones([2, 3]), [[0, 1], [1, 2]], kf.ones([2, 3])),
    lambda: kf.scatter_nd([[1], [2]], kf.constant(1.0), [4]),
], ids=["update_scalar", "add_wrong_shape", "scatter_nd_scalar"])
def test_scatter_updates_of_the_wrong_shape_are_not_broadcast(call):
    # TF 2.21 (census record): updates must be indices.shape[:-1] + shape[K:]
    with pytest.raises(errors.InvalidArgumentError, match="updates must have shape"):
        call()


def test_a_matrix_holding_nan_is_not_invertible():
    # TF 2.21 (census record): its LU finds no pivot; NumPy returned NaNs
    a = np.array([[np.nan, 1.0], [1.0, 1.0]], np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="MatrixInverse"):
        kf.linalg.inv(a)
    with pytest.raises(errors.InvalidArgumentError, match="MatrixSolve"):
        kf.linalg.solve(a, np.ones((2, 1), np.float32))


def test_where_of_a_scalar_condition_alone_is_refused():
    # TF 2.21 (census record): "WhereOp : Unhandled input dimensions: 0"
    with pytest.raises(errors.InvalidArgumentError, match="Where"):
        kf.where(True)
    assert kf.where([True, False]).numpy().tolist() == [[0]]


def test_a_graph_kernel_error_keeps_numpy_s_error_as_the_cause():
    # shapes only known at run time: the kernel fails inside the compiled function
    @kf.function(input_signature=[kf.TensorSpec([None]), kf.TensorSpec([None])])
    def f(a, b):
        return a + b

    with pytest.raises(errors.InvalidArgumentError, match="AddV2") as info:
        f(kf.ones([2]), kf.ones([3]))
    assert isinstance(info.value.__cause__, ValueError)


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: kf.SparseTensor(np.zeros((2, 3, 3), np.int64), [1, 2], [3, 3]), ValueError,
     "`indices`"),
    (lambda: kf.SparseTensor([[0, 0]], 1, [3, 3]), ValueError, "`values`"),
    (lambda: kf.SparseTensor([[0, 0]], [1], 3), ValueError, "`dense_shape`"),
    (lambda: kf.SparseTensor([[0, 0]], [1, 2], [3, 3]), ValueError, "`values`"),
    (lambda: kf.SparseTensor([[0, 0]], [1], [3]), ValueError, "`dense_shape`"),
    (lambda: kf.SparseTensor([[0, 0]], [1], [-3, 3]), ValueError, "`dense_shape`"),
    (lambda: kf.linspace([0.0, 1.0], [1.0, 2.0, 3.0], 4), errors.InvalidArgumentError,
     "LinSpace"),
    (lambda: kf.strings.substr([b"abc"], 97, 1), errors.InvalidArgumentError, "^Substr: "),
    (lambda: kf.function(lambda a: a, input_signature=5), TypeError, "input_signature"),
    (lambda: kf.Variable([1.0], shape=object()), TypeError, "`shape`"),
    (lambda: kf.Variable([1.0], shape={"a": 1}), TypeError, "`shape`"),
    (lambda: kf.while_loop(lambda i: i < 3, lambda i: i + 1, []), ValueError, "loop_vars"),
    (lambda: keras.layers.MaxPooling3D()(np.ones((2, 4, 4, 4, 2, 3), np.float32)),
     errors.InvalidArgumentError, "`input`"),
    (lambda: keras.layers.HashedCrossing(-1)([kf.constant([1, 2]), kf.constant([3, 4])]),
     errors.InvalidArgumentError, "`num_buckets`"),
], ids=["sparse_indices_rank", "sparse_values_rank", "sparse_shape_rank", "sparse_rows",
        "sparse_columns", "sparse_negative_dim", "linspace_broadcast", "substr_pos",
        "function_signature_int", "variable_shape_object", "variable_shape_dict",
        "while_loop_empty", "pool3d_rank", "hashed_crossing_buckets"])
def test_census_errors_name_the_op_or_argument(call, error, fragment):
    # scripts/bad_input_census.py "unnamed": these raised TF's class but named neither
    # the op nor the argument (SparseTensor's rank checks, "'int' object is not iterable")
    with pytest.raises(error, match=fragment):
        call()


_BATCH = np.ones((2, 3), np.float32)


@pytest.mark.parametrize("layer", ["Add", "Multiply", "Maximum", "Minimum", "Subtract",
                                   "Average"])
@pytest.mark.parametrize("first", [True, False])
def test_merge_layers_refuse_a_scalar_input(layer, first):
    # Keras 3 (census record): a scalar input is a ValueError, not a broadcast
    inputs = [kf.constant(1.0), _BATCH] if first else [_BATCH, kf.constant(1.0)]
    with pytest.raises(ValueError, match=layer):
        getattr(keras.layers, layer)()(inputs)
    assert getattr(keras.layers, layer)()([_BATCH, _BATCH]).shape == (2, 3)


@pytest.mark.parametrize("make", [
    lambda: keras.layers.SimpleRNN(2), lambda: keras.layers.GRU(2),
    lambda: keras.layers.LSTM(2), lambda: keras.layers.RNN(keras.layers.SimpleRNNCell(2)),
    lambda: keras.layers.Bidirectional(keras.layers.SimpleRNN(2))],
    ids=["SimpleRNN", "GRU", "LSTM", "RNN", "Bidirectional"])
def test_recurrent_layers_refuse_a_sequence_without_steps(make):
    # TF 2.21 (census record): slicing step 0 of 0 timesteps is an InvalidArgumentError
    with pytest.raises(errors.InvalidArgumentError, match="timesteps"):
        make()(np.zeros((0, 0, 0), np.float32))
    assert make()(np.zeros((2, 1, 3), np.float32)).shape[0] == 2


def test_betainc_needs_equal_shapes_or_scalars():
    # TF 2.21 (census record): "Shapes of a and b are inconsistent: [2,3] vs. [3]"
    with pytest.raises(errors.InvalidArgumentError, match="Betainc"):
        kf.math.betainc(_BATCH, np.ones(3, np.float32), _BATCH * 0.5)
    assert kf.math.betainc(1.0, _BATCH, _BATCH * 0.5).shape == (2, 3)


@pytest.mark.parametrize("matrix", [[[np.nan, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]],
                         ids=["nan", "singular"])
def test_lu_of_a_matrix_without_pivots_is_refused(matrix):
    # TF 2.21 (asked): "Input is not invertible. [Op:Lu]" for NaN and singular inputs
    with pytest.raises(errors.InvalidArgumentError, match="Lu"):
        kf.linalg.lu(np.array(matrix, np.float32))


@pytest.mark.parametrize("weights", [np.ones(4, bool), np.float32(1.0), np.ones(3, np.float32)],
                         ids=["bool", "scalar", "short"])
def test_bincount_weights_are_not_cast_or_broadcast(weights):
    # TF 2.21 (census record): bool weights have no kernel, weights must match arr's shape
    with pytest.raises(errors.InvalidArgumentError, match="weights"):
        kf.math.bincount(kf.constant([1, 1, 3, 6]), kf.constant(weights), minlength=6,
                         maxlength=7)
    out = kf.math.bincount(kf.constant([1, 1, 3, 6]), kf.ones([4], kf.int32))
    assert out.numpy().tolist() == [0, 2, 0, 1, 0, 0, 1]


@pytest.mark.parametrize("true, sampled", [
    (kf.constant([[1.0, 5.0], [2.0, 2.0]]), kf.constant([5, 2, 1, 7], kf.int64)),
    (kf.constant([[1, 5], [2, 2]], kf.int64), kf.constant([True, False, True, True])),
    (kf.zeros([0, 0], kf.int64), kf.constant([5, 2, 1, 7], kf.int64)),
], ids=["float_true", "bool_sampled", "empty"])
def test_accidental_hits_need_int64_classes_of_num_true_columns(true, sampled):
    # TF 2.21 (asked): "expected to be a int64 tensor", "a batch_size * num_true matrix"
    with pytest.raises(errors.InvalidArgumentError, match="ComputeAccidentalHits"):
        kf.nn.compute_accidental_hits(true, sampled, 2)


@pytest.mark.parametrize("grad", [2 ** 62, -3, True], ids=["huge", "negative", "bool"])
def test_output_gradients_of_an_int_for_a_float_target_are_refused(grad):
    # TF 2.21 (census record): converted as an int, the Mul with the float target fails
    x = kf.Variable(1.0)
    with kf.GradientTape() as tape:
        y = x * 2.0
    with pytest.raises(errors.InvalidArgumentError, match="output_gradients"):
        tape.gradient(y, x, output_gradients=grad)
    with kf.GradientTape() as tape:
        y = x * 2.0
    assert float(tape.gradient(y, x, output_gradients=3.0)) == 6.0


_IMAGES = np.ones((2, 8, 8, 3), np.float32)


@pytest.mark.parametrize("call, error, fragment", [
    (lambda: keras.layers.MaxPooling3D()(np.ones((2, 4, 4, 4, 3), np.int32)),
     errors.InvalidArgumentError, "MaxPool3D"),
    (lambda: keras.layers.AdaptiveMaxPooling3D(2)(np.ones((2, 4, 4, 4, 3), np.int32)),
     errors.InvalidArgumentError, "AdaptiveMaxPooling3D"),
    (lambda: keras.layers.AdaptiveAveragePooling2D(2)(np.ones((2, 8, 8, 3), np.int32)),
     errors.InvalidArgumentError, "AdaptiveAveragePooling2D"),
    (lambda: keras.layers.AdaptiveAveragePooling1D(2)(np.zeros((0, 0, 0), np.float32)),
     ValueError, "AdaptiveAveragePooling1D"),
    (lambda: keras.layers.GroupNormalization(groups=1)(np.zeros((0, 0, 0), np.float32)),
     ValueError, "groups"),
    (lambda: keras.layers.ThresholdedReLU()(np.ones((2, 3), np.int32)),
     errors.InvalidArgumentError, "ThresholdedReLU"),
    (lambda: keras.layers.Dot(0)([_BATCH, _BATCH]), ValueError, "axes"),
    (lambda: keras.layers.Dot(2 ** 62)([_BATCH, _BATCH]), ValueError, "axes"),
    (lambda: keras.layers.CategoryEncoding(4)(kf.constant([-3, 1])),
     errors.InvalidArgumentError, "CategoryEncoding"),
    (lambda: keras.layers.CenterCrop(4, 4)(np.ones((2, 8, 8, 3, 3), np.float32)), ValueError,
     "CenterCrop"),
    (lambda: keras.layers.CenterCrop(1.5, 4), ValueError, "height"),
    (lambda: keras.layers.Resizing(1.5, 4), ValueError, "height"),
    (lambda: keras.layers.RandomCrop(-1, 4), ValueError, "height"),
    (lambda: keras.layers.RandomRotation(0.2)(np.zeros((0, 0, 0, 0), np.float32)),
     errors.InvalidArgumentError, "output dimensions must be positive"),
    (lambda: keras.layers.RandomZoom(0.2)(np.zeros((0, 0, 0, 0), np.float32)),
     errors.InvalidArgumentError, "output dimensions must be positive"),
], ids=["maxpool3d_int", "adaptive_max3d_int", "adaptive_avg2d_int", "adaptive_avg_empty",
        "group_norm_no_channels", "thresholded_relu_int", "dot_batch_axis", "dot_huge_axis",
        "category_encoding_negative", "center_crop_rank5", "center_crop_float",
        "resizing_float", "random_crop_negative", "random_rotation_empty",
        "random_zoom_empty"])
def test_layers_refuse_what_keras_3_refuses(call, error, fragment):
    # scripts/bad_input_census.py: TF 2.21 / Keras 3 raise for these; kilnflow returned
    with pytest.raises(error, match=fragment):
        call()


def test_the_refusals_leave_valid_layer_calls_alone():
    assert keras.layers.CenterCrop(4, 4)(_IMAGES).shape == (2, 4, 4, 3)
    assert keras.layers.CenterCrop(4, 4)(_IMAGES[0]).shape == (4, 4, 3)  # one image
    assert keras.layers.CategoryEncoding(4)(kf.constant([0, 3])).shape == (2, 4)
    assert keras.layers.Dot(-1)([_BATCH, _BATCH]).shape == (2, 1)
    assert keras.layers.AdaptiveMaxPooling2D(2)(np.ones((2, 8, 8, 3), np.int32)).shape == \
        (2, 2, 2, 3)  # MaxPool has int kernels in TF
    assert keras.layers.ThresholdedReLU()(_BATCH).shape == (2, 3)


@pytest.mark.parametrize("call, fragment", [
    (lambda: kf.strings.unsorted_segment_join(kf.constant(["a", "b"]), kf.constant(1), 2),
     "rank 0"),
    (lambda: kf.strings.unsorted_segment_join(kf.constant(["a", "b"]), kf.constant([-3, 0]),
                                              2), "negative"),
    (lambda: kf.unravel_index(kf.zeros([0], kf.int32), [3, 4]), "empty"),
    (lambda: kf.random.stateless_categorical(kf.zeros([2, 0]), 2, [1, 2]), "num_classes"),
], ids=["segment_join_scalar_ids", "segment_join_negative_id", "unravel_empty",
        "multinomial_no_classes"])
def test_ops_refuse_what_tf_2_21_refuses(call, fragment):
    # TF 2.21 (asked): each is an InvalidArgumentError; kilnflow returned a result
    with pytest.raises(errors.InvalidArgumentError, match=fragment):
        call()


def test_reciprocal_no_nan_of_ints_is_refused():
    # TF 2.21 (asked): reciprocal_no_nan binds DivNoNan, which has no int kernel
    with pytest.raises(errors.InvalidArgumentError, match="DivNoNan"):
        kf.math.reciprocal_no_nan(kf.constant([1, 2]))
    assert kf.math.reciprocal_no_nan(kf.constant([0.0, 2.0])).numpy().tolist() == [0.0, 0.5]
    assert kf.math.divide_no_nan(kf.constant([1, 2]), kf.constant([0, 2])).numpy().tolist() \
        == [0.0, 1.0]  # the Python-level divide_no_nan still casts ints


@pytest.mark.parametrize("compare", [lambda a, b: a < b, lambda a, b: a <= b,
                                     lambda a, b: a > b, lambda a, b: a >= b])
def test_bools_are_not_ordered(compare):
    # TF 2.21 (census record): Less and friends have no bool kernel; == and != do
    a = kf.constant([True, False])
    with pytest.raises(errors.InvalidArgumentError, match="bool"):
        compare(a, a)
    assert (a == a).numpy().tolist() == [True, True]


@pytest.mark.parametrize("call", [
    lambda: kf.linalg.eigh_tridiagonal(kf.ones([3]), kf.constant([True, False])),
    lambda: kf.linalg.eigh_tridiagonal(kf.ones([3]), kf.constant([1, 2])),
    lambda: kf.random.stateless_poisson([2], [1, 2], kf.constant([True, False])),
], ids=["tridiagonal_bool_beta", "tridiagonal_int_beta", "poisson_bool_lam"])
def test_mixed_or_bool_dtypes_are_refused_as_tf_does(call):
    # TF 2.21 (census record / asked): no cast; the op has no kernel for the mix
    with pytest.raises(errors.InvalidArgumentError, match="beta|lam"):
        call()
    assert kf.random.stateless_poisson([2], [1, 2], kf.constant(3)).shape == (2,)
