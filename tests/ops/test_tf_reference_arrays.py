"""Issue 12's array, special-function and matrix names against TF 2.21's own results
(recorded in a side venv by scripts/record_tf_arrays.py into
tests/ops/data/tf_reference_arrays.json): the same calls on kilnflow, eagerly and inside
kf.function, give TF's dtype, shape and values."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from tests.ops.tf_reference_arrays_cases import CASES, inputs
from tests.ops.tf_reference_cases import recorded_value

with open(os.path.join(os.path.dirname(__file__), "data", "tf_reference_arrays.json")) as f:
    RECORDED = json.load(f)


def _expected(name):
    return recorded_value(RECORDED["results"][name])


def test_every_case_was_recorded_with_tf_2_21():
    assert RECORDED["tensorflow"].startswith("2.21")
    assert set(RECORDED["results"]) == set(CASES)
    assert not [k for k, v in RECORDED["results"].items() if "error" in v]


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_and_function_match_tf(name):
    data = inputs()
    want = _expected(name)
    eager = np.asarray(CASES[name](kf, data))
    compiled = np.asarray(kf.function(lambda: CASES[name](kf, data))())
    for got in (eager, compiled):
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5,
                                   atol=1e-6, equal_nan=True, err_msg=name)
