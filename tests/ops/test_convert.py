"""Conversion of the second operand of binary ops, and of composites."""
import math

import numpy as np
import pytest

import kilnflow as kf


def test_python_scalar_operands_keep_type_sign_and_dtype_apart():
    # The eager fast path reuses converted Python scalars; nothing that differs may share one.
    x = kf.constant([1.0, -2.0])
    assert np.signbit((x * -0.0).numpy()[0]) and not np.signbit((x * 0.0).numpy()[0])
    assert (kf.constant([3]) + 1).dtype == kf.int32
    assert (kf.constant([3.0], kf.float64) + 1).dtype == kf.float64
    assert (kf.constant([3.0], kf.float16) + 1).dtype == kf.float16
    assert (kf.constant([True]) & True).dtype == kf.bool
    np.testing.assert_array_equal((x + 1).numpy(), [2.0, -1.0])
    np.testing.assert_array_equal((x + 1.5).numpy(), [2.5, -0.5])
    assert math.isnan((x + float("nan")).numpy()[0])


def test_a_bad_scalar_still_raises_on_every_call():
    ints = kf.constant([1, 2])
    for _ in range(2):  # the second call must not find a cached success
        with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int32"):
            ints + 1.5


def test_scalar_operands_stay_bounded():
    x = kf.constant([0.0])
    for k in range(1, 3000):
        x + float(k)
    from kilnflow.ops import convert
    assert len(convert._SCALAR_OPERANDS) <= convert._SCALAR_OPERANDS_MAX


@pytest.mark.parametrize("make", [
    lambda: kf.sparse.SparseTensor([[0, 0]], [1.0], [2, 2]),
    lambda: kf.ragged.constant([[1], [2, 3]]),
])
def test_composites_are_never_densified_implicitly(make):
    # TF 2.21: ValueError "Attempt to convert a value (...) with an unsupported type".
    with pytest.raises(ValueError, match="Attempt to convert a value .* unsupported type"):
        kf.convert_to_tensor(make())
    with pytest.raises(ValueError, match="unsupported type"):
        kf.constant(make())
