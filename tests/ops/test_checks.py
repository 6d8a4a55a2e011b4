"""tf.debugging checks: eagerly they raise at once; in a compiled function they run on every
call (never pruned, even when nothing uses them) and raise InvalidArgumentError with the
data; static checks raise while building."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors


@pytest.mark.parametrize("check, good, bad", [
    (kf.debugging.assert_equal, ([1, 2], [1, 2]), ([1, 2], [1, 3])),
    (kf.debugging.assert_none_equal, ([1, 2], [3, 4]), ([1, 2], [1, 4])),
    (kf.debugging.assert_less, ([1, 2], [2, 3]), ([1, 2], [2, 2])),
    (kf.debugging.assert_less_equal, ([1, 2], [1, 2]), ([1, 3], [1, 2])),
    (kf.debugging.assert_greater, ([2, 3], [1, 2]), ([2, 3], [1, 3])),
    (kf.debugging.assert_greater_equal, ([2, 3], [2, 3]), ([2, 1], [2, 3])),
    (kf.debugging.assert_near, ([1.0, 2.0], [1.0, 2.0 + 1e-9]), ([1.0, 2.0], [1.0, 2.1])),
], ids=lambda v: getattr(v, "__name__", ""))
def test_comparisons_eagerly_and_on_every_call(check, good, bad):
    check(*[kf.constant(v) for v in good])
    with pytest.raises(errors.InvalidArgumentError, match="did not hold"):
        check(*[kf.constant(v) for v in bad])

    @kf.function
    def checked(x, y):
        check(x, y)  # the result is not used: the check must still run
        return x

    checked(*[kf.constant(v) for v in good])
    with pytest.raises(errors.InvalidArgumentError, match="did not hold"):
        checked(*[kf.constant(v) for v in bad])


@pytest.mark.parametrize("check, good, bad", [
    (kf.debugging.assert_positive, [1, 2], [1, 0]),
    (kf.debugging.assert_negative, [-1, -2], [-1, 0]),
    (kf.debugging.assert_non_negative, [0, 2], [0, -1]),
    (kf.debugging.assert_non_positive, [0, -2], [1, -1]),
])
def test_sign_checks(check, good, bad):
    check(kf.constant(good))
    with pytest.raises(errors.InvalidArgumentError, match="did not hold"):
        check(kf.constant(bad), message="custom")


def test_static_checks_raise_while_building():
    with pytest.raises(ValueError, match="rank 2"):
        kf.debugging.assert_rank(kf.constant([1.0]), 2)
    with pytest.raises(TypeError, match="float32"):
        kf.debugging.assert_type(kf.constant([1]), kf.float32)


def test_check_numerics_passes_values_through_and_names_the_message():
    x = kf.constant([1.0, 2.0])
    np.testing.assert_array_equal(kf.debugging.check_numerics(x, "fine").numpy(), [1.0, 2.0])
    with pytest.raises(errors.InvalidArgumentError, match="weights : Tensor had NaN"):
        kf.function(lambda t: kf.debugging.check_numerics(t, "weights"))(
            kf.constant([1.0, np.nan]))
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = kf.reduce_sum(kf.debugging.check_numerics(x, "x") * 3.0)
    assert tape.gradient(y, x).numpy().tolist() == [3.0, 3.0]


# The static shape/dtype checks, with TF 2.21's error classes and wording (recorded from TF).
def test_rank_checks_raise_value_errors_naming_the_rank():
    x = kf.constant([1.0, 2.0])
    kf.debugging.assert_rank_at_least(x, 1)
    with pytest.raises(ValueError, match=r"must have rank at least 2\. Received rank 1, shape \(2,\)"):
        kf.debugging.assert_rank_at_least(x, 2)
    kf.debugging.assert_rank_in(x, [1, 2])
    with pytest.raises(ValueError, match=r"must have rank in \(0, 2\)"):
        kf.debugging.assert_rank_in(x, [0, 2])
    assert kf.debugging.assert_scalar(kf.constant(1.0)).shape.rank == 0
    with pytest.raises(ValueError, match=r"Expected scalar shape, saw shape: \(2,\)"):
        kf.debugging.assert_scalar(x)


def test_dtype_checks():
    kf.debugging.assert_integer(kf.constant(1))
    with pytest.raises(TypeError, match="Expected \"x\" to be integer type.*float32"):
        kf.debugging.assert_integer(kf.constant(1.0))
    assert kf.debugging.assert_same_float_dtype([kf.constant([1.0])]) == kf.float32
    assert kf.debugging.assert_same_float_dtype(None, kf.float64) == kf.float64
    with pytest.raises(ValueError, match="same type"):
        kf.debugging.assert_same_float_dtype([kf.constant([1.0]), kf.constant([1.0], kf.float64)])
    with pytest.raises(ValueError, match="Expected floating point type, got <dtype: 'int32'>"):
        kf.debugging.assert_same_float_dtype([kf.constant(1)])
    assert kf.debugging.is_numeric_tensor(kf.constant([1.0]))
    assert not kf.debugging.is_numeric_tensor(kf.constant("a"))
    assert not kf.debugging.is_numeric_tensor(1.0)


def test_proper_iterable_refuses_tensors_and_strings():
    kf.debugging.assert_proper_iterable([1, 2])
    for value in (kf.constant([1.0]), "ab", b"ab", np.zeros(2), 3):
        with pytest.raises(TypeError, match="proper"):
            kf.debugging.assert_proper_iterable(value)


def test_assert_shapes_binds_symbols_across_tensors():
    x = kf.constant([1.0, 2.0])
    kf.debugging.assert_shapes([(x, ("N",)), (kf.zeros([2, 3]), ("N", 3))])
    kf.debugging.assert_shapes([(kf.zeros([4, 2, 3]), (..., 3))])
    with pytest.raises(ValueError, match=r"Specified by tensor shape=\(2,\) dimension 0.*must have "
                                         r"size 2\. Received size 3"):
        kf.debugging.assert_shapes([(x, ("N",)), (kf.zeros([3, 2]), ("N", 2))])
    with pytest.raises(ValueError, match="Specified explicitly.*must have size 3"):
        kf.debugging.assert_shapes({x.ref(): (3,)})
    with pytest.raises(ValueError, match="rank"):
        kf.debugging.assert_shapes([(kf.zeros([2, 3]), ("N",))])


def test_static_checks_run_at_trace_time_in_functions():
    @kf.function
    def f(a):
        kf.debugging.assert_rank_at_least(a, 2)
        return a * 2
    assert f(kf.zeros([2, 2])).shape == (2, 2)
    with pytest.raises(ValueError, match="rank at least 2"):
        f(kf.zeros([2]))
