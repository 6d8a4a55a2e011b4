"""Gradients through complex products follow TF's convention: for a real loss L(z) the
gradient is dL/dRe(z) + i dL/dIm(z) (so |z|^2 gives 2z). Mul, RealDiv, Square and MatMul
conjugate the other factor; checked against finite differences on both parts."""
import numpy as np
import pytest

import kilnflow as kf

rng = np.random.default_rng(3)


def _complex(*shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


def _fd(loss, z, eps=1e-6):
    g = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        for unit in (1.0, 1j):
            d = np.zeros_like(z)
            d[i] = eps * unit
            g[i] += unit * (loss(z + d) - loss(z - d)) / (2 * eps)
    return g


CASES = [
    ("mul", lambda z, w: z * w),
    ("div", lambda z, w: z / w),
    ("square", lambda z, w: kf.square(z) + w),
    ("matmul", lambda z, w: kf.matmul(z, w)),
]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_complex_gradients_match_finite_differences(name, fn):
    z, w = _complex(2, 2), _complex(2, 2) + 2.0
    weights = kf.constant(_complex(2, 2))

    def loss(zv):
        out = fn(kf.constant(zv), kf.constant(w)) * weights
        return float(kf.reduce_sum(kf.math.real(out) + kf.math.imag(out) ** 2))

    zt = kf.constant(z)
    with kf.GradientTape() as tape:
        tape.watch(zt)
        out = fn(zt, kf.constant(w)) * weights
        total = kf.reduce_sum(kf.math.real(out) + kf.math.imag(out) ** 2)
    np.testing.assert_allclose(tape.gradient(total, zt).numpy(), _fd(loss, z), rtol=1e-5,
                               atol=1e-6)


def test_abs_squared_has_gradient_two_z():
    z = kf.constant([1 + 2j, 3 - 1j])
    with kf.GradientTape() as tape:
        tape.watch(z)
        loss = kf.math.real(z * kf.math.conj(z))
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), 2 * z.numpy())
