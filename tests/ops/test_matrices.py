"""kf.linalg's structured-matrix helpers and decompositions beyond the op table: values
against NumPy, eager = @kf.function, and gradients against finite differences where the
helper is built from differentiable ops."""
import numpy as np
import pytest

import kilnflow as kf

rng = np.random.default_rng(7)


def _fd_grad(f, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def _check_grad(fn, x):
    def loss(a):
        return float(kf.reduce_sum(fn(kf.constant(a)) * kf.constant(weights)))
    weights = rng.uniform(-1, 1, np.asarray(fn(kf.constant(x))).shape)
    xt = kf.constant(x)
    with kf.GradientTape() as tape:
        tape.watch(xt)
        total = kf.reduce_sum(fn(xt) * kf.constant(weights))
    np.testing.assert_allclose(tape.gradient(total, xt).numpy(), _fd_grad(loss, x),
                               rtol=1e-5, atol=1e-6)


def _spd(n):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def _sym(a):
    """Symmetric input: these ops read one triangle, and TF's gradients are symmetric."""
    return (a + kf.linalg.matrix_transpose(a)) / 2


CASES = [
    ("cholesky_solve", lambda a: kf.linalg.cholesky_solve(kf.linalg.cholesky(_sym(a)),
                                                          kf.constant(np.ones((3, 2)))),
     _spd(3), lambda a: np.linalg.solve(a, np.ones((3, 2)))),
    ("cross", lambda a: kf.linalg.cross(a, kf.constant([[1.0, 2.0, 3.0]] * 2, kf.float64)),
     rng.normal(size=(2, 3)), lambda a: np.cross(a, [[1.0, 2.0, 3.0]] * 2)),
    ("matvec", lambda a: kf.linalg.matvec(a, kf.constant([1.0, -1.0, 2.0], kf.float64)),
     rng.normal(size=(2, 4, 3)), lambda a: a @ np.array([1.0, -1.0, 2.0])),
    ("set_diag", lambda a: kf.linalg.set_diag(a, kf.constant([1.0, 2.0, 3.0], kf.float64)),
     rng.normal(size=(3, 3)), lambda a: a - np.diag(np.diag(a)) + np.diag([1.0, 2.0, 3.0])),
    ("tensor_diag", kf.linalg.tensor_diag, rng.normal(size=(2, 3)),
     lambda d: np.diag(d.ravel()).reshape(2, 3, 2, 3)),
    ("tensor_diag_part", kf.linalg.tensor_diag_part, rng.normal(size=(2, 3, 2, 3)),
     lambda x: np.diag(x.reshape(6, 6)).reshape(2, 3)),
    ("tridiagonal_matmul", lambda d: kf.linalg.tridiagonal_matmul(d, kf.constant(np.eye(4))),
     rng.normal(size=(3, 4)),
     lambda d: np.diag(d[1]) + np.diag(d[0][:-1], 1) + np.diag(d[2][1:], -1)),
    ("tridiagonal_solve", lambda d: kf.linalg.tridiagonal_solve(
        d + kf.constant([[0.0] * 4, [5.0] * 4, [0.0] * 4], kf.float64),
        kf.constant([1.0, 2.0, 3.0, 4.0], kf.float64)),
     rng.normal(size=(3, 4)),
     lambda d: np.linalg.solve(np.diag(d[1] + 5) + np.diag(d[0][:-1], 1)
                               + np.diag(d[2][1:], -1), [1.0, 2.0, 3.0, 4.0])),
    ("lu_solve", lambda a: kf.linalg.lu_solve(*kf.linalg.lu(a), kf.constant(np.ones((4, 1)))),
     rng.normal(size=(4, 4)) + 4 * np.eye(4), lambda a: np.linalg.solve(a, np.ones((4, 1)))),
    ("lu_matrix_inverse", lambda a: kf.linalg.lu_matrix_inverse(*kf.linalg.lu(a)),
     rng.normal(size=(3, 3)) + 3 * np.eye(3), np.linalg.inv),
    ("normalize", lambda a: kf.linalg.normalize(a, axis=-1)[0], rng.normal(size=(2, 3)),
     lambda a: a / np.linalg.norm(a, axis=-1, keepdims=True)),
    ("eigvalsh", lambda a: kf.linalg.eigvalsh(_sym(a)), _spd(3), np.linalg.eigvalsh),
]
GRADIENT_FREE = {"lu_solve", "lu_matrix_inverse"}  # gradients through the rhs only


@pytest.mark.parametrize("name, fn, x, reference", CASES, ids=[c[0] for c in CASES])
def test_values_match_numpy_in_both_modes(name, fn, x, reference):
    expected = reference(x)
    np.testing.assert_allclose(fn(kf.constant(x)).numpy(), expected, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(kf.function(fn)(kf.constant(x)).numpy(), expected, rtol=1e-9,
                               atol=1e-10)


@pytest.mark.parametrize("name, fn, x, reference",
                         [c for c in CASES if c[0] not in GRADIENT_FREE],
                         ids=[c[0] for c in CASES if c[0] not in GRADIENT_FREE])
def test_gradients_match_finite_differences(name, fn, x, reference):
    _check_grad(fn, x)


def test_pinv_and_matrix_rank():
    a = rng.normal(size=(4, 2)) @ rng.normal(size=(2, 3))  # rank 2
    np.testing.assert_allclose(kf.linalg.pinv(a).numpy(), np.linalg.pinv(a), atol=1e-10)
    assert int(kf.linalg.matrix_rank(a)) == 2
    assert int(kf.function(kf.linalg.matrix_rank)(kf.constant(a))) == 2


def test_eig_of_a_rotation_is_complex():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    values = np.sort_complex(kf.linalg.eigvals(rotation).numpy())
    np.testing.assert_allclose(values, [-1j, 1j], atol=1e-12)


def test_cross_rejects_vectors_that_are_not_3d():
    with pytest.raises(kf.errors.InvalidArgumentError, match="cross: `a`"):
        kf.linalg.cross([1.0, 2.0], [3.0, 4.0])
