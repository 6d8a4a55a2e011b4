"""jit_compile=True over indexing (kilnflow/runtime/jit/indexing.py): slices, gather and
its gradient, TensorArray reads in a loop; every unproven index is checked, so a bad one
raises InvalidArgumentError instead of reading memory outside the array."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.runtime import jit

pytest.importorskip("numba")
pytestmark = pytest.mark.filterwarnings("ignore:AutoGraph could not convert <lambda>")

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def _same(fn, *args):
    calls = jit.stats["calls"]
    got = kf.function(fn, jit_compile=True)(*args)
    assert jit.stats["calls"] == calls + 1  # compiled, not interpreted
    for want in (kf.function(fn)(*args), fn(*args)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert np.asarray(got).dtype == np.asarray(want).dtype


@pytest.mark.parametrize("index", [
    lambda x, i: x[1:, ::2], lambda x, i: x[..., -1], lambda x, i: x[:, None, 1, ::-1],
    lambda x, i: x[i, 1:i + 2], lambda x, i: x[-1, -2, -3], lambda x, i: x[i][0][i:]],
    ids=["ranges", "ellipsis", "newaxis_reversed", "fed", "negative_ints", "chained"])
def test_slices_match_the_python_runtime(index):
    _same(index, kf.constant(X), kf.constant(1))


@pytest.mark.parametrize("bad", [2, -3, 100000])
def test_an_index_out_of_range_raises_instead_of_reading_past_the_array(bad):
    # before: x[i] compiled to an unchecked read (0.0 or garbage for i = 5)
    f = kf.function(lambda x, i: x[i] * 2.0, jit_compile=True)
    x = kf.constant(X)
    np.testing.assert_array_equal(f(x, kf.constant(-2)).numpy(), X[0] * 2)
    with pytest.raises(errors.InvalidArgumentError, match="out of bounds"):
        f(x, kf.constant(bad))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("indices", [[2, 0, 0], [[1, 0], [0, 1]], 1],
                         ids=["vector", "matrix", "scalar"])
def test_gather_matches_the_python_runtime(axis, indices):
    n = X.shape[axis]
    idx = np.asarray(indices, np.int32) % n
    _same(lambda x, i: kf.gather(x, i, axis=axis), kf.constant(X), kf.constant(idx))


def test_gather_rejects_negative_and_large_indices_as_tf():
    f = kf.function(lambda x, i: kf.gather(x, i), jit_compile=True)
    for bad in ([0, 2], [-1]):
        with pytest.raises(errors.InvalidArgumentError):
            f(kf.constant(X), kf.constant(bad))


def test_embedding_train_step_gradient_compiles_and_matches():
    table = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    ids = kf.constant([[0, 3], [3, 3]])

    def make():
        v = kf.Variable(table)

        def step(ids):
            with kf.GradientTape() as tape:
                loss = kf.reduce_sum(kf.gather(v, ids) ** 2)
            g = tape.gradient(loss, v)
            v.assign_sub(0.1 * kf.convert_to_tensor(g))
            return loss
        return v, step
    (vj, sj), (vp, sp) = make(), make()
    calls = jit.stats["calls"]
    lj = kf.function(sj, jit_compile=True)(ids)
    assert jit.stats["calls"] == calls + 1
    lp = kf.function(sp)(ids)
    np.testing.assert_allclose(lj.numpy(), lp.numpy(), rtol=1e-6)
    np.testing.assert_allclose(vj.numpy(), vp.numpy(), rtol=1e-6)


def test_tensor_array_reads_in_a_loop():
    def total(x):
        ta = kf.TensorArray(kf.float32, size=2).unstack(x)
        s = kf.zeros([3, 4])
        for i in kf.range(2):
            s += ta.read(i)
        return s
    _same(total, kf.constant(X))


def _squares(x):
    ta = kf.TensorArray(kf.float32, size=3, element_shape=[4])
    for i in kf.range(3):
        ta = ta.write(i, x[i] * x[i])
    return ta.stack()


def test_tensor_array_writes_in_a_loop():
    _same(_squares, kf.constant(X[0]))

    def scalars(x):
        ta = kf.TensorArray(kf.float32, size=4, element_shape=[])
        for i in kf.range(4):
            ta = ta.write(i, kf.reduce_sum(x) * kf.cast(i, kf.float32))
        return ta.stack()
    _same(scalars, kf.constant(X[0]))


def test_tensor_array_write_past_its_size_raises():
    def past(x):
        ta = kf.TensorArray(kf.float32, size=2, element_shape=[4])
        for i in kf.range(3):
            ta = ta.write(i, x[i])
        return ta.stack()
    with pytest.raises(errors.InvalidArgumentError, match="TensorArray"):
        kf.function(past, jit_compile=True)(kf.constant(X[0]))


def test_indexing_a_scalar_is_named_as_not_compilable():
    f = kf.function(lambda x: x[None] * 2.0, jit_compile=True)
    with pytest.raises(errors.InvalidArgumentError, match="StridedSlice"):
        f(kf.constant(3.0))
