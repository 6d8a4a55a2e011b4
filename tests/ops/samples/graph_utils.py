"""Samples of the ops in kilnflow/ops/graph_utils.py (see tests/ops/samples/__init__.py)."""
import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, rand


add("EnsureShape", lambda x: kf.ensure_shape(x, [None, 3]), (rand(2, 3),), lambda x: x,
    differentiable=True)
add("EnsureShape", lambda x: kf.ensure_shape(x, [2, 3]) * 2.0, (rand(2, 3),),
    lambda x: x * 2.0, differentiable=True, name="fully_known")

ERRORS.extend([
    ErrorSample("EnsureShape", lambda x: kf.ensure_shape(x, [3]), (rand(2),),
                errors.InvalidArgumentError, ("[2]", "[3]", "EnsureShape"), name="wrong_dim"),
    ErrorSample("EnsureShape", lambda x: kf.ensure_shape(x, [2, 1]), (rand(2),),
                errors.InvalidArgumentError, ("[2]", "[2,1]"), name="wrong_rank"),
])
