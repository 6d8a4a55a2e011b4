"""Samples of the ops in kilnflow/ops/custom_gradient.py (see tests/ops/samples/__init__.py)."""
import kilnflow as kf
from tests.ops.samples import add, rand


@kf.custom_gradient
def _square(x):
    return x * x, lambda dy: 2.0 * x * dy  # the true derivative: finite differences agree


add("CustomGradient", _square, (rand(2, 3),), lambda x: x * x, differentiable=True)
