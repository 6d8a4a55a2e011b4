"""AddN and the ufunc-reduce kernels of Sum/Max/Min/Prod against NumPy: dtypes kept,
inputs never written to (AddN accumulates in place into its own result)."""
import numpy as np
import pytest

import kilnflow as kf


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("shape", [(), (3,), (4, 5)])
@pytest.mark.parametrize("count", [2, 3, 7])
def test_add_n_matches_numpy_and_leaves_inputs_alone(dtype, shape, count):
    rng = np.random.default_rng(count)
    arrays = [(rng.normal(size=shape) * 10).astype(dtype) for _ in range(count)]
    copies = [a.copy() for a in arrays]
    tensors = [kf.constant(a) for a in arrays]
    for fn in (kf.add_n, kf.function(kf.add_n)):
        result = fn(tensors).numpy()
        assert result.dtype == dtype and result.shape == shape
        np.testing.assert_allclose(result, np.sum(copies, axis=0, dtype=dtype), rtol=1e-6)
        for t, c in zip(tensors, copies):
            np.testing.assert_array_equal(t.numpy(), c)


@pytest.mark.parametrize("name, reference", [("reduce_sum", np.sum), ("reduce_max", np.max),
                                             ("reduce_min", np.min),
                                             ("reduce_prod", np.prod)])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64])
@pytest.mark.parametrize("axis", [None, 0, 1, (0,), (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_keep_dtype_and_match_numpy(name, reference, dtype, axis, keepdims):
    x = np.arange(1, 25).reshape(2, 3, 4).astype(dtype) % 5 + 1
    result = getattr(kf, name)(kf.constant(x), axis=axis, keepdims=keepdims).numpy()
    want = reference(x, axis=axis, keepdims=keepdims).astype(dtype)
    assert result.dtype == dtype and result.shape == want.shape
    np.testing.assert_array_equal(result, want)


def test_int32_sum_wraps_in_int32_like_tf():
    x = kf.constant(np.array([2 ** 30, 2 ** 30, 2 ** 30], np.int32))
    assert kf.reduce_sum(x).numpy() == np.int32(-(2 ** 30))


def test_sum_of_an_empty_axis_is_zero():
    x = kf.zeros([0, 3])
    np.testing.assert_array_equal(kf.reduce_sum(x, axis=0).numpy(), np.zeros(3, np.float32))


def test_mean_of_many_float16_values_sums_in_float32():
    x = kf.constant(np.full(100_000, 3, np.float16))  # a float16 sum would overflow
    result = kf.reduce_mean(x).numpy()
    assert result.dtype == np.float16 and result == 3


def test_mean_of_an_empty_tensor_is_nan_and_integer_means_truncate():
    assert np.isnan(kf.reduce_mean(kf.zeros([0])).numpy())
    assert kf.reduce_mean(kf.zeros([0, 3]), axis=1).numpy().shape == (0,)
    assert kf.reduce_mean(kf.constant([1, 2, 4])).numpy() == 2
    np.testing.assert_allclose(kf.reduce_mean(kf.constant([[1., 2.], [3., 5.]]), axis=0,
                                              keepdims=True).numpy(), [[2., 3.5]])
