"""Samples of the ops in kilnflow/ops/fused.py (see tests/ops/samples/__init__.py)."""
from typing import Any, Callable, Optional


import numpy as np

from kilnflow.core.opdef import REGISTRY, bind
from tests.ops.samples import add, rand


def _fused(templates: list, n_inputs: int, reduce: Optional[tuple] = None) -> Callable:
    """Apply a FusedElementwise program chaining `templates` (each over the previous
    result and the next input), as passes/fuse_elementwise.py would build it."""
    def apply(*xs: Any) -> Any:
        from kilnflow.ops import fused  # built at call time: the engine's API may move
        builder = fused.ProgramBuilder()
        refs = [builder.input(i, np.float64) for i in range(n_inputs)]
        result, unused = refs[0], iter(refs[1:])
        for template in templates:
            operands = [result, next(unused)] if "{1}" in template else [result]
            result = builder.add_op(template, operands, {}, np.float64)
        program, _ = builder.build(result, reduce, np.float64, quiet=True)
        return bind(REGISTRY["FusedElementwise"], xs, {"program": program, "into": None})
    return apply


add("FusedElementwise", _fused(["({0} * {1})", "tanh({0})", "({0} - {1})"], 3),
     (rand(2, 1), rand(3), rand(2, 3)), lambda x, y, z: np.tanh(x * y) - z)


add("FusedElementwise", _fused(["exp({0})"], 1, ("sum", (1,), False)), (rand(2, 3),),
     lambda x: np.exp(x).sum(1), name="sum")
