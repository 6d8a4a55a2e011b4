"""Samples of the ops in kilnflow/ops/checks.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, rand

add("CheckNumerics", lambda x: kf.debugging.check_numerics(x, "ok"), (rand(2, 3),),
    lambda x: x, differentiable=True)

ERRORS.extend([
    ErrorSample("CheckNumerics", lambda x: kf.debugging.check_numerics(x, "inputs"),
                (np.array([1.0, np.inf]),), errors.InvalidArgumentError,
                ("inputs", "Inf"), name="inf"),
])
