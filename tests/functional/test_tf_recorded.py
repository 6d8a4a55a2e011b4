"""The functional names against TF 2.21's own results (recorded in a side venv by
scripts/record_functional_tf.py into tests/functional/data/tf_functional.json): the same
calls on kilnflow, eagerly and inside kf.function, give TF's structure, dtypes, shapes and
values, and the failing calls raise TF's error classes."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from tests.functional.tf_cases import CASES, ERROR_CASES

pytestmark = pytest.mark.filterwarnings("ignore")

with open(os.path.join(os.path.dirname(__file__), "data", "tf_functional.json")) as f:
    RECORDED = json.load(f)


def test_every_case_was_recorded_with_tf_2_21():
    assert RECORDED["tensorflow"].startswith("2.21")
    assert set(RECORDED["results"]) == set(CASES)
    assert set(RECORDED["errors"]) == set(ERROR_CASES)


def _check(name, out):
    entry = RECORDED["results"][name]
    assert repr(kf.nest.map_structure(lambda _: 0, out)) == entry["structure"]
    flat = kf.nest.flatten(out)
    assert len(flat) == len(entry["outputs"])
    for got, want in zip(flat, entry["outputs"]):
        got = np.asarray(got)
        if want["dtype"] == "string":
            assert [v.decode() for v in got.ravel()] == want["value"]
            continue
        assert str(got.dtype) == want["dtype"] and list(got.shape) == want["shape"], name
        np.testing.assert_allclose(got.ravel().astype(np.float64), want["value"], rtol=1e-5,
                                   atol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_matches_tf(name):
    _check(name, CASES[name](kf))


# TF's own tf.function differs from its eager result here, or cannot run the case
IN_FUNCTION_DIFFERS = {
    "map_fn_empty": "TF's function gives shape (0, 3) (the element shape is traced), its "
                    "eager map_fn (0,): test_map_fn_empty_in_function checks the former",
    "grad_pass_through": "creates a Variable on every call: tf.function refuses it too",
}


@pytest.mark.parametrize("name", sorted(set(CASES) - set(IN_FUNCTION_DIFFERS)))
def test_function_matches_tf(name):
    _check(name, kf.function(lambda: CASES[name](kf))())


def test_map_fn_empty_in_function():
    # recorded from TF 2.21: tf.function(lambda: tf.map_fn(lambda t: t * 2, tf.zeros([0, 3])))
    assert kf.function(lambda: kf.map_fn(lambda t: t * 2, kf.zeros([0, 3])))().shape == (0, 3)


ERROR_CLASSES = {"InvalidArgumentError": errors.InvalidArgumentError,
                 "UnknownError": errors.UnknownError, "OutOfRangeError": errors.OutOfRangeError,
                 "ValueError": ValueError, "TypeError": TypeError, "KeyError": KeyError,
                 "RuntimeError": RuntimeError}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_match_tf(name):
    with pytest.raises(ERROR_CLASSES[RECORDED["errors"][name]]):
        ERROR_CASES[name](kf)
