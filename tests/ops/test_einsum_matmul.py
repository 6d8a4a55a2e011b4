"""Two-operand einsums run as one batched matmul when their indices allow; every form must
equal NumPy's einsum (the path is an optimisation, never a different answer)."""
import numpy as np
import pytest

import kilnflow as kf

CASES = [
    ("aecd,abcd->acbe", (2, 5, 3, 4), (2, 6, 3, 4)),  # attention scores
    ("acbe,aecd->abcd", (2, 3, 6, 5), (2, 5, 3, 4)),  # attention output
    ("abc,cd->abd", (2, 3, 4), (4, 5)),
    ("ij,jk->ki", (3, 4), (4, 5)),                     # transposed output
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("i,i->", (4,), (4,)),                             # a scalar result
    ("i,j->ij", (3,), (4,)),
    ("ij,ij->ij", (3, 4), (3, 4)),                     # pure batch (Hadamard)
    ("ij,kj->", (3, 4), (2, 4)),                       # free indices summed: np.einsum
    ("ij,jk", (3, 4), (4, 5)),                         # implicit output
    ("abc,abd->acd", (1, 3, 4), (2, 3, 5)),            # broadcast batch dim: np.einsum
    ("ii,ij->j", (3, 3), (3, 4)),                      # repeated index: np.einsum
]


@pytest.mark.parametrize("equation,shape_a,shape_b", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32])
def test_matches_numpy_einsum(equation, shape_a, shape_b, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(shape_a) * 3).astype(dtype)
    b = (rng.standard_normal(shape_b) * 3).astype(dtype)
    expected = np.einsum(equation, a, b)
    got = kf.einsum(equation, a, b).numpy()
    assert got.shape == np.shape(expected) and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    traced = kf.function(lambda x, y: kf.einsum(equation, x, y))(a, b).numpy()
    np.testing.assert_allclose(traced, expected, rtol=1e-5, atol=1e-5)
