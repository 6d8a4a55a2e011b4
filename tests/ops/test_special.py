"""tf.math special functions and complex parts beyond the sample table: poles, tails, domains,
float32, and kf.function."""
import math

import numpy as np

import kilnflow as kf

M = kf.math


def test_lgamma_at_poles_and_negative_arguments():
    out = M.lgamma([0.0, -2.0, -0.5, -1.5]).numpy()
    assert out[0] == np.inf and out[1] == np.inf
    np.testing.assert_allclose(out[2:], [math.lgamma(-0.5), math.lgamma(-1.5)], rtol=1e-6)
    np.testing.assert_allclose(M.digamma([-0.5]).numpy(), [0.03649010], rtol=1e-5)
    assert np.isnan(M.digamma([0.0]).numpy()[0])


def test_inverse_error_functions_in_the_tails_and_outside_the_domain():
    y = M.erfinv(kf.constant([-1.0, 1.0, 1.5, 1 - 1e-12], kf.float64)).numpy()
    assert y[0] == -np.inf and y[1] == np.inf and np.isnan(y[2])
    assert abs(math.erf(y[3]) - (1 - 1e-12)) < 1e-15
    tail = M.erfcinv(kf.constant([1e-300, 1e-20, 2 - 1e-12], kf.float64)).numpy()
    for x, target in zip(tail, [1e-300, 1e-20, 2 - 1e-12]):
        assert math.isclose(math.erfc(x), target, rel_tol=1e-9)
    assert M.ndtri(kf.constant([0.0, 1.0], kf.float64)).numpy().tolist() == [-np.inf, np.inf]
    np.testing.assert_allclose(M.ndtri(kf.constant([1e-30], kf.float64)).numpy(),
                               [-11.46403], rtol=1e-6)


def test_incomplete_gamma_and_beta_edges():
    assert M.igamma([1.0, 1.0], [0.0, np.inf]).numpy().tolist() == [0.0, 1.0]
    assert np.isnan(M.igamma([-1.0], [1.0]).numpy()[0])
    np.testing.assert_allclose(M.igamma(50.0, 50.0).numpy() + M.igammac(50.0, 50.0).numpy(),
                               1.0, rtol=1e-6)
    assert M.betainc(2.0, 3.0, [0.0, 1.0]).numpy().tolist() == [0.0, 1.0]
    assert np.isnan(M.betainc(2.0, 3.0, 1.5).numpy())


def test_float32_and_function_mode():
    f = kf.function(lambda x: (M.lgamma(x), M.digamma(x), M.erfinv(x / 10), M.zeta(2.0, x)))
    x = kf.constant([0.5, 3.0])
    for got, want in zip(f(x), (M.lgamma(x), M.digamma(x), M.erfinv(x / 10),
                                M.zeta(2.0, x))):
        assert got.dtype is kf.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    np.testing.assert_allclose(float(M.zeta(2.0, 1.0)), math.pi ** 2 / 6, rtol=1e-6)


def test_gradients_of_lgamma_are_digamma_and_of_igamma_the_density():
    x = kf.constant([1.5, 4.0], kf.float64)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = M.igamma(kf.constant([2.0, 2.0], kf.float64), x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), x.numpy() * np.exp(-x.numpy()))


def test_complex_parts_of_real_inputs_follow_tf():
    x = kf.constant([-2.0, 3.0])
    assert M.real(x) is x or M.real(x).numpy().tolist() == [-2.0, 3.0]
    assert M.imag(x).numpy().tolist() == [0.0, 0.0]
    np.testing.assert_allclose(M.angle(x).numpy(), [np.pi, 0.0])
    z = kf.complex(kf.constant([1.0], kf.float64), kf.constant([-1.0], kf.float64))
    assert z.dtype is kf.complex128 and M.conj(z).numpy().tolist() == [1 + 1j]
