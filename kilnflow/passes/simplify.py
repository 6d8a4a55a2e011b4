"""simplify: algebraic rewrites that are exact for the shapes and dtypes at hand.

    x * 1, 1 * x, x / 1, x + 0, 0 + x, x - 0, x ** 1   ->  x
    Identity(Identity(x))                               ->  x
    Neg(Neg(x)), LogicalNot(LogicalNot(x))              ->  x
    Cast(Cast(x, int64), int32)   (x: int32)            ->  x   (and float32->float64->float32)
    Transpose(Transpose(x, p), q)                       ->  x, or Transpose(x, p.q)
    Reshape(Reshape(x, s1), s2)                         ->  Reshape(x, s2)
    MatMul(Transpose(a, last two swapped), b)           ->  MatMul(a, b, transpose_a=True)
    f(Reshape(g(x), s))   (f, g elementwise, f unary)   ->  Reshape(f(g(x)), s)

Ops are recognised by their OpDef only (passes/facts.py): a `fusable` template `({0} * {1})`
is a multiplication whatever its name. A rewrite applies only when the result has exactly
the op's dtype and static shape (a broadcasting `x * ones((2, 3))` stays) and the constant
is exactly the identity element everywhere. The one inexactness accepted (as XLA does):
x + 0.0 -> x keeps a -0.0 that the addition would have turned into +0.0 (equal values).
Respects: ops with control inputs, stateful and random ops are never rewritten; a graph
output is never replaced by a graph input (the caller's array would come back).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.graph import PLACEHOLDER
from kilnflow.core.const import CONST
from kilnflow.passes import facts
from kilnflow.passes.rewrite import add_op, copy_graph, output_ids


def _constant(t: Any) -> Optional[np.ndarray]:
    return t.op.attrs["value"].array if t.op.opdef is CONST else None


def _dims(t: Any) -> Optional[list]:
    return None if t.shape.rank is None else t.shape.as_list()


def _same_spec(new: Any, old: Any) -> bool:
    return new.dtype is old.dtype and _dims(new) is not None and _dims(new) == _dims(old)


# ---------------------------------------------------------------- rules

def remove_identity(op: Any, inputs: tuple, graph: Any) -> Any:
    """Identity(x) -> x (so chains of them vanish)."""
    return inputs[0] if facts.is_identity(op.opdef) else None


def drop_identity_operand(op: Any, inputs: tuple, graph: Any) -> Any:
    """x * 1 -> x, x + 0 -> x, ... when the constant is the identity element everywhere and
    is fully known, so broadcasting cannot change the result's shape."""
    found = facts.identity_element(op.opdef)
    if found is None or len(inputs) != 2:
        return None
    element, sides = found
    candidates = [(1, 0)] if sides == "right" else [(1, 0), (0, 1)]
    for const_pos, kept_pos in candidates:
        value = _constant(inputs[const_pos])
        kept = inputs[kept_pos]
        if value is None or not inputs[const_pos].shape.is_fully_defined():
            continue
        if sides == "bool" and value.dtype != np.bool_:
            continue
        if value.size and np.all(value == element) and _same_spec(kept, op.outputs[0]):
            return kept
    return None


def cancel_involution(op: Any, inputs: tuple, graph: Any) -> Any:
    """f(f(x)) -> x for negation and logical / bitwise not."""
    inner = inputs[0].op if inputs else None
    if inner is not None and inner.opdef is op.opdef and facts.is_involution(op.opdef) \
            and not inner.control_inputs:
        return inner.inputs[0]
    return None


def cancel_cast_round_trip(op: Any, inputs: tuple, graph: Any) -> Any:
    """Cast(Cast(x, B), A) -> x when x is A and every A value is exactly a B value."""
    attr = facts.cast_attr(op.opdef)
    inner = inputs[0].op
    if attr is None or inner.opdef is not op.opdef or inner.control_inputs:
        return None
    x = inner.inputs[0]
    if x.dtype is op.outputs[0].dtype and _exact_widening(x.dtype.as_numpy_dtype,
                                                          inputs[0].dtype.as_numpy_dtype):
        return x
    return None


def _exact_widening(a: Any, b: Any) -> bool:
    """Does every value of dtype a convert to dtype b and back unchanged?"""
    a, b = np.dtype(a), np.dtype(b)
    if a.kind == "b":
        return True
    if a.kind in "iu" and b.kind in "iu":
        return bool(np.can_cast(a, b, "safe"))
    if a.kind in "iu" and b.kind in "fc":
        bits = np.iinfo(a).bits - (1 if a.kind == "i" else 0)
        return np.finfo(b).nmant + 1 >= bits
    if a.kind in "fc" and b.kind in "fc":
        return bool(np.can_cast(a, b, "safe"))
    return False


def merge_transposes(op: Any, inputs: tuple, graph: Any) -> Any:
    """Transpose(Transpose(x, p), q) -> x when the composition is the identity, else one
    Transpose(x, p[q])."""
    attr = facts.permutation_attr(op.opdef)
    inner = inputs[0].op
    if attr is None or inner.opdef is not op.opdef or inner.control_inputs:
        return None
    p, q = inner.attrs[attr], op.attrs[attr]
    composed = tuple(int(p[i]) for i in q)
    x = inner.inputs[0]
    if composed == tuple(range(len(composed))):
        return x
    return add_op(graph, op.opdef, (x,), {**op.attrs, attr: composed}, op.name,
                  like=op).outputs[0]


def merge_reshapes(op: Any, inputs: tuple, graph: Any) -> Any:
    """Reshape(Reshape(x, s1), s2) -> Reshape(x, s2); Reshape(x, s) -> x when x already has
    that (fully known) shape."""
    attr = facts.reshape_attr(op.opdef)
    if attr is None:
        return None
    x = inputs[0]
    inner = x.op
    if inner.opdef is op.opdef and not inner.control_inputs:
        x = inner.inputs[0]
    if x.shape.is_fully_defined() and _same_spec(x, op.outputs[0]):
        return x
    if x is inputs[0]:
        return None
    return add_op(graph, op.opdef, (x,), dict(op.attrs), op.name, like=op).outputs[0]


def fold_transpose_into_matmul(op: Any, inputs: tuple, graph: Any) -> Any:
    """MatMul(Transpose(a, perm swapping the last two dims), b) -> MatMul(a, b, transpose_a)
    (and for b): the kernel swaps the axes itself, on the same memory."""
    flags = facts.transpose_flags(op.opdef)
    if flags is None:
        return None
    new_inputs, attrs = list(inputs), dict(op.attrs)
    for i, flag in enumerate(flags):
        inner = inputs[i].op
        attr = facts.permutation_attr(inner.opdef)
        if attr is None or inner.control_inputs:
            continue
        perm = tuple(inner.attrs[attr])
        n = len(perm)
        if n >= 2 and perm == tuple(range(n - 2)) + (n - 1, n - 2):
            new_inputs[i] = inner.inputs[0]
            attrs[flag] = not attrs[flag]
    if attrs == op.attrs:
        return None
    return add_op(graph, op.opdef, tuple(new_inputs), attrs, op.name, like=op).outputs[0]


def sink_elementwise_below_reshape(op: Any, inputs: tuple, graph: Any) -> Any:
    """f(Reshape(y, s)) -> Reshape(f(y), s) for an elementwise one-input f (a Cast, say)
    when y itself comes from an elementwise op: f can then fuse with what computed y, and
    the reshape of the fused result is free."""
    if op.opdef.fusable is None or len(inputs) != 1:
        return None
    inner = inputs[0].op
    if facts.reshape_attr(inner.opdef) is None or inner.control_inputs:
        return None
    y = inner.inputs[0]
    if y.op.opdef.fusable is None:
        return None
    moved = add_op(graph, op.opdef, (y,), dict(op.attrs), op.name, like=op).outputs[0]
    return add_op(graph, inner.opdef, (moved,), dict(inner.attrs), inner.name,
                  like=inner).outputs[0]


RULES = [remove_identity, drop_identity_operand, cancel_involution, cancel_cast_round_trip,
         merge_transposes, merge_reshapes, fold_transpose_into_matmul,
         sink_elementwise_below_reshape]


def simplify(graph: Any) -> Any:
    outputs = output_ids(graph)
    rewritten = []

    def replace(op: Any, inputs: tuple, new_graph: Any, mapped: Any) -> Any:
        if op.control_inputs or op.opdef.stateful or len(op.outputs) != 1 or not inputs:
            return None
        for rule in RULES:
            result = rule(op, inputs, new_graph)
            if result is None or not _same_spec(result, op.outputs[0]):
                continue
            if id(op.outputs[0]) in outputs and result.op.opdef is PLACEHOLDER:
                continue
            rewritten.append(op)
            return [result]
        return None

    result = copy_graph(graph, replace=replace)
    return result if rewritten else graph
