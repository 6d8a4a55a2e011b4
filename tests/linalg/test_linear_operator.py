"""Every LinearOperator against the dense computation: to_dense, shape, matmul / matvec
(with adjoint and adjoint_arg), solve / solvevec, determinant, log_abs_determinant,
inverse, adjoint, diag_part and trace agree with NumPy on the dense matrix, eagerly and
inside kf.function; gradients flow through the structured paths."""
import numpy as np
import pytest

import kilnflow as kf

L = kf.linalg
rng = np.random.default_rng(3)


def _m(*shape):
    return rng.standard_normal(shape)


_A, _B, _S = _m(3, 3) + 3 * np.eye(3), _m(2, 2) + 2 * np.eye(2), _m(2, 3, 3) + 4 * np.eye(3)
_TRIL = np.tril(_m(3, 3)) + 3 * np.eye(3)
_D = np.array([1.5, -2.0, 0.7])
_U = _m(3, 2)
_SPECTRUM = np.array([4.0, 1.0 + 0.5j, 2.0, 1.0 - 0.5j])  # Hermitian: a real circulant
_TRI = np.stack([np.r_[_m(2), 0.0], _m(3) + 4, np.r_[0.0, _m(2)]])
_V = _m(3)


def _circulant_dense():
    c = np.fft.ifft(_SPECTRUM)
    n = len(c)
    return np.array([[c[(i - j) % n] for j in range(n)] for i in range(n)])


# name -> (operator factory, dense NumPy matrix, invertible)
OPERATORS = {
    "full": (lambda: L.LinearOperatorFullMatrix(_A), _A, True),
    "full_batch": (lambda: L.LinearOperatorFullMatrix(_S), _S, True),
    "diag": (lambda: L.LinearOperatorDiag(_D), np.diag(_D), True),
    "identity": (lambda: L.LinearOperatorIdentity(3, dtype=kf.float64), np.eye(3), True),
    "identity_batch": (lambda: L.LinearOperatorIdentity(3, batch_shape=[2], dtype=kf.float64),
                       np.stack([np.eye(3)] * 2), True),
    "scaled_identity": (lambda: L.LinearOperatorScaledIdentity(3, -1.5), -1.5 * np.eye(3),
                        True),
    "zeros": (lambda: L.LinearOperatorZeros(3, 2, dtype=kf.float64), np.zeros((3, 2)), False),
    "lower_triangular": (lambda: L.LinearOperatorLowerTriangular(_TRIL + np.triu(_m(3, 3), 1)),
                         _TRIL, True),
    "adjoint": (lambda: L.LinearOperatorAdjoint(L.LinearOperatorFullMatrix(_A)), _A.T, True),
    "inversion": (lambda: L.LinearOperatorInversion(L.LinearOperatorFullMatrix(_A)),
                  np.linalg.inv(_A), True),
    "composition": (lambda: L.LinearOperatorComposition(
        [L.LinearOperatorFullMatrix(_A), L.LinearOperatorDiag(_D)]), _A @ np.diag(_D), True),
    "kronecker": (lambda: L.LinearOperatorKronecker(
        [L.LinearOperatorFullMatrix(_A), L.LinearOperatorFullMatrix(_B)]), np.kron(_A, _B),
        True),
    "block_diag": (lambda: L.LinearOperatorBlockDiag(
        [L.LinearOperatorFullMatrix(_A), L.LinearOperatorDiag(_D[:2])]),
        np.block([[_A, np.zeros((3, 2))], [np.zeros((2, 3)), np.diag(_D[:2])]]), True),
    "block_lower_triangular": (lambda: L.LinearOperatorBlockLowerTriangular(
        [[L.LinearOperatorFullMatrix(_B)],
         [L.LinearOperatorFullMatrix(_U), L.LinearOperatorFullMatrix(_A)]]),
        np.block([[_B, np.zeros((2, 3))], [_U, _A]]), True),
    "low_rank_update": (lambda: L.LinearOperatorLowRankUpdate(
        L.LinearOperatorDiag(np.abs(_D) + 1), _U, np.array([2.0, 0.5])),
        np.diag(np.abs(_D) + 1) + _U @ np.diag([2.0, 0.5]) @ _U.T, True),
    "permutation": (lambda: L.LinearOperatorPermutation([2, 0, 1], dtype=kf.float64),
                    np.eye(3)[[2, 0, 1]], True),
    "toeplitz": (lambda: L.LinearOperatorToeplitz([4.0, 1.0, 0.5], [9.0, 2.0, -1.0]),
                 np.array([[4.0, 2.0, -1.0], [1.0, 4.0, 2.0], [0.5, 1.0, 4.0]]), True),
    "circulant": (lambda: L.LinearOperatorCirculant(_SPECTRUM,
                                                    input_output_dtype=kf.complex128),
                  _circulant_dense(), True),
    "householder": (lambda: L.LinearOperatorHouseholder(_V),
                    np.eye(3) - 2 * np.outer(_V, _V) / (_V @ _V), True),
    "tridiag": (lambda: L.LinearOperatorTridiag(_TRI),
                np.diag(_TRI[1]) + np.diag(_TRI[0][:2], 1) + np.diag(_TRI[2][1:], -1), True),
    "tridiag_sequence": (lambda: L.LinearOperatorTridiag(list(_TRI), "sequence"),
                         np.diag(_TRI[1]) + np.diag(_TRI[0][:2], 1) + np.diag(_TRI[2][1:], -1),
                         True),
}


def _everything(op, x, vec, invertible):
    """Every method's result, as a dict of tensors."""
    x_in = x[..., :op.domain_dimension, :]
    out = {"dense": op.to_dense(), "matmul": op.matmul(x_in),
           "matmul_adjoint": op.matmul(_rows(x, op.range_dimension), adjoint=True),
           "matmul_adjoint_arg": op.matmul(kf.linalg.adjoint(x_in), adjoint_arg=True),
           "matvec": op.matvec(vec[..., :op.domain_dimension]), "diag_part": op.diag_part(),
           "trace": op.trace(),
           "adjoint": op.adjoint().to_dense(), "operator_matmul": (op @ op.H).to_dense()}
    if invertible:
        out.update(solve=op.solve(_rows(x, op.range_dimension)),
                   solve_adjoint=op.solve(_rows(x, op.range_dimension), adjoint=True),
                   solvevec=op.solvevec(vec[..., :op.range_dimension]),
                   det=op.determinant(), logdet=op.log_abs_determinant(),
                   inverse=op.inverse().to_dense())
    return out


def _rows(x, n):
    return x[..., :n, :] if x.shape[-2] != n else x


def _expected(dense, x, vec, invertible):
    h = np.conj(np.swapaxes(dense, -1, -2))
    xr, x_in = x[..., :dense.shape[-2], :], x[..., :dense.shape[-1], :]
    out = {"dense": dense, "matmul": dense @ x_in, "matmul_adjoint": h @ xr,
           "matmul_adjoint_arg": dense @ x_in, "matvec": dense @ vec[:dense.shape[-1]],
           "diag_part": np.diagonal(dense, axis1=-2, axis2=-1),
           "trace": np.trace(dense, axis1=-2, axis2=-1), "adjoint": h,
           "operator_matmul": dense @ h}
    if invertible:
        out.update(solve=np.linalg.solve(dense, xr), solve_adjoint=np.linalg.solve(h, xr),
                   solvevec=np.linalg.solve(dense, vec[..., :dense.shape[-2]]),
                   det=np.linalg.det(dense), logdet=np.log(np.abs(np.linalg.det(dense))),
                   inverse=np.linalg.inv(dense))
    return out


@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operator_matches_the_dense_matrix_eagerly_and_in_functions(name):
    make, dense, invertible = OPERATORS[name]
    op = make()
    dtype = op.dtype.as_numpy_dtype
    size = max(dense.shape[-2:])
    x = _m(*dense.shape[:-2], size, 2).astype(dtype)
    vec = _m(size).astype(dtype)
    assert op.shape.as_list() == list(dense.shape)
    assert op.batch_shape.as_list() == list(dense.shape[:-2])
    assert op.shape_tensor().numpy().tolist() == list(dense.shape)
    want = _expected(dense.astype(dtype), x, vec, invertible)
    eager = _everything(op, kf.constant(x), kf.constant(vec), invertible)
    compiled = kf.function(lambda a, v: _everything(make(), a, v, invertible))(x, vec)
    for got_all in (eager, compiled):
        assert set(got_all) == set(want)
        for key, expected in want.items():
            got = np.asarray(got_all[key])
            if key == "logdet":
                expected = np.real(expected)
            tight = got.dtype in (np.float64, np.complex128)
            np.testing.assert_allclose(got, expected, rtol=1e-8 if tight else 1e-5,
                                       atol=1e-10 if tight else 1e-6,
                                       err_msg=f"{name}.{key}")


def test_hints_and_refusals():
    with pytest.raises(ValueError, match="non-singular"):
        L.LinearOperatorFullMatrix(_A, is_non_singular=False, is_positive_definite=True)
    zeros = L.LinearOperatorZeros(2, dtype=kf.float64)
    with pytest.raises(NotImplementedError, match="singular"):
        zeros.solve(np.ones((2, 1)))
    with pytest.raises(NotImplementedError, match="non-square"):
        L.LinearOperatorFullMatrix(_U).determinant()
    with pytest.raises(ValueError, match="does not fit"):
        L.LinearOperatorFullMatrix(_A).matmul(np.ones((2, 2)))
    diag = L.LinearOperatorDiag(_D)
    assert diag.is_self_adjoint and diag.adjoint() is diag
    assert isinstance(diag.inverse(), L.LinearOperatorDiag)
    spd = L.LinearOperatorFullMatrix(_A @ _A.T, is_self_adjoint=True, is_positive_definite=True)
    np.testing.assert_allclose(spd.cholesky().to_dense().numpy(),
                               np.linalg.cholesky(_A @ _A.T))
    np.testing.assert_allclose(spd.eigvals().numpy(), np.linalg.eigvalsh(_A @ _A.T))
    s = np.linalg.svd(_A, compute_uv=False)
    np.testing.assert_allclose(L.LinearOperatorFullMatrix(_A).cond().numpy(), s[0] / s[-1])


def test_gradients_flow_through_structured_methods():
    d = kf.Variable(_D)
    with kf.GradientTape() as tape:
        op = L.LinearOperatorComposition([L.LinearOperatorDiag(d),
                                          L.LinearOperatorFullMatrix(_A)])
        loss = op.log_abs_determinant() + kf.reduce_sum(op.solvevec(_V))
    grad = tape.gradient(loss, d).numpy()
    eps = 1e-6
    numeric = []
    for i in range(3):
        step = np.zeros(3)
        step[i] = eps
        value = [np.log(abs(np.linalg.det(np.diag(_D + s) @ _A))) +
                 np.linalg.solve(np.diag(_D + s) @ _A, _V).sum() for s in (step, -step)]
        numeric.append((value[0] - value[1]) / (2 * eps))
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


def test_conjugate_gradient_solves_through_an_operator():
    spd = _A @ _A.T + np.eye(3)
    state = L.experimental.conjugate_gradient(L.LinearOperatorFullMatrix(spd), _V, tol=1e-10,
                                              max_iter=20)
    np.testing.assert_allclose(state.x.numpy(), np.linalg.solve(spd, _V), rtol=1e-8)
    assert 1 <= int(state.i) <= 20


def test_circulant_2d_and_3d_are_multidimensional_convolutions():
    for make, depth in ((L.LinearOperatorCirculant2D, 2), (L.LinearOperatorCirculant3D, 3)):
        shape = (2, 3, 2)[:depth]
        spectrum = _m(*shape) + 1j * _m(*shape)
        x = _m(*shape) + 1j * _m(*shape)
        op = make(spectrum, input_output_dtype=kf.complex128)
        assert op.shape.as_list() == [x.size, x.size]
        want = np.fft.ifftn(spectrum * np.fft.fftn(x)).reshape(-1)
        np.testing.assert_allclose(op.matvec(x.reshape(-1)).numpy(), want, rtol=1e-10)
        np.testing.assert_allclose(op.determinant().numpy(), np.prod(spectrum), rtol=1e-10)
