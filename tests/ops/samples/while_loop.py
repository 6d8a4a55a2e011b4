"""Samples of the ops in kilnflow/ops/while_loop.py (see tests/ops/samples/__init__.py)."""
from typing import Any



import kilnflow as kf
from tests.ops.samples import add, rand


def _power_loop(x: Any) -> Any:
    return kf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [kf.constant(0), x])[1]


def _power_loop_gradient(x: Any) -> Any:
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = _power_loop(x)
    return tape.gradient(y, x)


add("StatelessWhile", _power_loop, (rand(2, 2),), lambda x: x ** 4, differentiable=True,
     graph_only=True)


add("WhileGrad", _power_loop_gradient, (rand(3),), lambda x: 4 * x ** 3, differentiable=True,
     graph_only=True)
