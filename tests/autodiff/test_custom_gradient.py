"""kf.custom_gradient: the user's gradient is used eagerly, inside kf.function and by
symbolic gradients; the forward value is unchanged."""
import numpy as np
import pytest

import kilnflow as kf


@kf.custom_gradient
def log1pexp(x):
    e = kf.exp(x)

    def grad(dy):
        return dy * (1.0 - 1.0 / (1.0 + e))  # stable where the plain rule gives nan
    return kf.math.log1p(e), grad


@kf.custom_gradient
def scaled_pair(x, y):
    def grad(da, db):
        return 10.0 * da, 20.0 * db
    return (x * 1.0, y * 1.0), grad


def _grad(fn, *xs):
    with kf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        out = fn(*xs)
        total = sum(kf.reduce_sum(o) for o in (out if isinstance(out, tuple) else (out,)))
    return tape.gradient(total, list(xs))


def test_the_user_gradient_is_used_eagerly_and_in_a_function():
    x = kf.constant(100.0)
    assert float(_grad(log1pexp, x)[0]) == 1.0  # plain autodiff would give nan here
    compiled = kf.function(lambda x: _grad(log1pexp, x)[0])
    assert float(compiled(x)) == 1.0
    small = kf.constant(0.5)
    np.testing.assert_allclose(float(_grad(log1pexp, small)[0]), 1 / (1 + np.exp(-0.5)),
                               rtol=1e-6)


def test_several_inputs_and_outputs():
    gx, gy = _grad(scaled_pair, kf.constant([1.0, 2.0]), kf.constant(3.0))
    assert gx.numpy().tolist() == [10.0, 10.0] and float(gy) == 20.0
    a, b = scaled_pair(kf.constant([1.0, 2.0]), kf.constant(3.0))
    assert a.numpy().tolist() == [1.0, 2.0] and float(b) == 3.0


def test_a_wrong_number_of_gradients_is_a_named_error():
    @kf.custom_gradient
    def bad(x, y):
        return x + y, lambda dy: dy
    with pytest.raises(ValueError, match="returned 1 gradients for 2 inputs"):
        _grad(bad, kf.constant(1.0), kf.constant(2.0))
