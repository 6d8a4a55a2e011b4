"""Samples of the op in kilnflow/compat/v1/placeholders.py (see tests/ops/samples/__init__.py)."""
import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, rand

add("PlaceholderWithDefault",
    lambda x: kf.compat.v1.placeholder_with_default(x, [None, 3]) * 2.0, (rand(2, 3),),
    lambda x: x * 2.0, differentiable=True, static_shape=False)

ERRORS.extend([
    ErrorSample("PlaceholderWithDefault",
                lambda x: kf.compat.v1.placeholder_with_default(x, [3]), (rand(2),),
                errors.InvalidArgumentError, ("not compatible", "(3,)")),
])
