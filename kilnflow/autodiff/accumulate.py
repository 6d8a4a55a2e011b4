"""The reverse walk shared by GradientTape and symbolic gradients, plus its helpers:
undoing broadcasting (once, here) and summing partial gradients.

A record is anything with .opdef, .inputs, .outputs and .attrs: a tape entry or a graph
Operation. Inputs may be tensors or variable handles (for reads); both are keyed by id.
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from kilnflow.context import quiet_ops
from kilnflow.ops import math
from kilnflow.ops import reshaping
from kilnflow.ops import reduction


def unbroadcast(grad: Any, x: Any) -> Any:
    """Reduce `grad` to the shape of input `x` (undoing NumPy broadcasting)."""
    gshape, xshape = grad.shape, x.shape
    if gshape.is_fully_defined() and xshape.is_fully_defined() and gshape == xshape:
        return grad
    if not hasattr(x, "op") and not hasattr(x, "_value"):  # a variable handle: static shape
        return reshaping.reshape(reduction.reduce_sum(grad, list(range(gshape.rank - xshape.rank)))
                             if gshape.rank and gshape.rank > xshape.rank else grad,
                             xshape.as_list())
    return reshaping.sum_to_shape(grad, x)


def sum_partials(partials: List[Any]) -> Any:
    if len(partials) == 1:
        return partials[0]
    return math.add_n(partials)


def differentiable(x: Any) -> bool:
    dtype = x.dtype
    return dtype.is_floating or dtype.is_complex


# op type -> gradient rule, for ops declared without one (kf.RegisterGradient); None marks
# an op kf.no_gradient declared not differentiable
REGISTERED_GRADIENTS: Dict[str, Any] = {}
_needed: list = [()]  # which inputs of the record being differentiated need a gradient


def needed_inputs() -> tuple:
    """For a gradient rule: one bool per input of its op, True where a gradient is wanted.

    Rules may skip expensive work for the others (their result is discarded anyway)."""
    return _needed[0]


def reachable_from(records: Sequence, source_ids: set) -> set:
    """Ids of everything computed (transitively) from the sources."""
    reached = set(source_ids)
    for record in records:
        if any(id(x) in reached for x in record.inputs):
            reached.update(id(o) for o in record.outputs)
    return reached


def backward(records: Sequence, targets: Sequence, target_grads: Sequence,
             source_ids: set) -> Dict[int, Any]:
    """Walk `records` (in execution order) backwards from targets; returns id -> gradient
    for every source reached. Deterministic: records in reverse, inputs in order."""
    reached = reachable_from(records, source_ids)
    partials: Dict[int, List[Any]] = {}
    for t, g in zip(targets, target_grads):
        if id(t) in reached and differentiable(t):
            partials.setdefault(id(t), []).append(g)
    for record in reversed(records):
        rule = record.opdef.grad or REGISTERED_GRADIENTS.get(record.opdef.name)
        if rule is None or not any(id(x) in reached for x in record.inputs):
            continue
        out_grads = []
        for o in record.outputs:
            found = partials.get(id(o))
            if found:
                total = sum_partials(found)
                partials[id(o)] = [total]
                out_grads.append(total)
            else:
                out_grads.append(None)
        if all(g is None for g in out_grads):
            continue
        _needed[0] = tuple(id(x) in reached and differentiable(x) for x in record.inputs)
        with quiet_ops():  # rules also differentiate inputs nobody asked about
            in_grads = rule(record, *out_grads)
        for x, g in zip(record.inputs, in_grads):
            if g is None or id(x) not in reached or not differentiable(x):
                continue
            partials.setdefault(id(x), []).append(unbroadcast(g, x))
    return {i: sum_partials(p) for i, p in partials.items() if i in source_ids and p}
