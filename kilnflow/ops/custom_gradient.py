"""The op behind kf.custom_gradient: passes values through and takes its gradient from a
user function held in an attr, so the user's rule serves tapes and graph gradients alike.

CustomGradient(x..., y...) returns y...; its gradient is grad_fn(dy...) for the x and
nothing for the y (the y were computed out of sight of the tapes).
"""
from __future__ import annotations

from typing import Any

from kilnflow.core.opdef import defop
from kilnflow.shapes import TensorSpec


def _rule(*inputs: Any, grad_fn: Any, n_sources: int) -> list:
    return [TensorSpec(t.shape, t.dtype) for t in inputs[n_sources:]]


def _grad(op: Any, *dys: Any) -> list:
    n = op.attrs["n_sources"]
    grads = op.attrs["grad_fn"](*dys)
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    if len(grads) != n:
        raise ValueError(f"custom_gradient: the gradient function returned {len(grads)} "
                         f"gradients for {n} inputs")
    return grads + [None] * (len(op.inputs) - n)


CUSTOM_GRADIENT = defop("CustomGradient", shape=_rule, same_dtype=False, multi_output=True,
                        kernel=lambda *arrays, grad_fn, n_sources: tuple(arrays[n_sources:]),
                        grad=_grad)
