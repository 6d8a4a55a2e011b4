"""jit_compile=True over the op sample table: where the backend lowers an op, the compiled
function equals eager execution and the Python runtime; where it does not, compiling raises
InvalidArgumentError naming the op (TF's rule: the whole function must compile).

Tolerances per dtype: integers and bools exact; float64 rtol 1e-9 and float32 rtol 2e-5
(the backend sums in float64 and evaluates fused groups element by element, so the last
bits may differ from NumPy's pairwise sums). Slow: every sample compiles with numba.
"""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors, nest
from tests.ops import samples as S

pytest.importorskip("numba")
pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:AutoGraph could not convert <lambda>"),
              pytest.mark.filterwarnings("ignore:.*results are never used")]

TOLERANCE = {"f": {np.dtype(np.float64): 1e-9, np.dtype(np.float32): 2e-5,
                   np.dtype(np.float16): 1e-3}}


def _flat(x):
    return nest.flatten(list(x) if isinstance(x, (list, tuple)) else [x])


def assert_close(got, want, label):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{label}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    if want.dtype.kind in "fc":
        rtol = TOLERANCE["f"].get(np.dtype(want.real.dtype), 1e-6)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-2, err_msg=label)
    else:
        np.testing.assert_array_equal(got, want, err_msg=label)


@pytest.mark.parametrize("sample", S.SAMPLES, ids=[s.id for s in S.SAMPLES])
def test_jit_matches_eager_or_names_the_op(sample):
    tensors = [kf.constant(a) for a in sample.inputs]
    eager = [t.numpy() for t in _flat(sample.fn(*tensors))]
    graph = kf.function(lambda *xs: sample.fn(*xs))
    interpreted = [t.numpy() for t in _flat(graph(*tensors))]
    compiled = kf.function(lambda *xs: sample.fn(*xs), jit_compile=True)
    try:
        got = [t.numpy() for t in _flat(compiled(*tensors))]
    except errors.InvalidArgumentError as exc:
        assert "cannot be compiled by the numba backend" in str(exc), str(exc)
        pytest.skip(f"not lowered: {str(exc).splitlines()[1].strip()}")
    for g, e, i in zip(got, eager, interpreted):
        assert_close(g, e, f"{sample.id}: jit vs eager")
        assert_close(g, i, f"{sample.id}: jit vs function")
