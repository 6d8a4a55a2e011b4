"""cse: common-subexpression elimination; equal ops compute once.

    before:  a = Mul(x, y); b = Mul(y, x); out = AddV2(a, b)
    after:   a = Mul(x, y); out = AddV2(a, a)            (Mul is `commutative`)

Two ops are equal when their (opdef, inputs, attrs, control inputs) are: the declared
properties, as in PyTensor. Constants are equal by value (Literal compares small arrays
by content). Respects: `stateful` and `random` ops are never merged (two reads of a
variable may see different values; two draws differ); graph inputs are never merged;
control inputs are part of the key, so an op that must wait for something only merges
with one that waits for the same; `commutative` ops match with their inputs swapped.
Ops that waited for a removed duplicate wait for the op it was merged into.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from kilnflow.passes.rewrite import copy_graph, input_ids


def _key(op: Any, inputs: tuple, controls: tuple) -> Optional[tuple]:
    """The equality key of `op` over its new-graph inputs, or None if it must stay unique."""
    ins = tuple(id(t) for t in inputs)
    if op.opdef.commutative and len(ins) == 2:
        ins = tuple(sorted(ins))
    try:
        # the type is part of the key: attrs 1, 1.0 and True hash alike but differ
        attrs = tuple(sorted((k, type(v), v) for k, v in op.attrs.items()))
        hash(attrs)
    except TypeError:
        return None
    return (op.opdef, ins, attrs, controls)


def cse(graph: Any) -> Any:
    graph_inputs = input_ids(graph)
    seen: Dict[tuple, Any] = {}
    merged: Dict[int, Any] = {}  # id(old op) -> the old op it was merged into
    removed = []

    def replace(op: Any, inputs: tuple, new_graph: Any, mapped: Any) -> Any:
        if op.opdef.stateful or op.opdef.random or not op.outputs:
            return None
        if any(id(t) in graph_inputs for t in op.outputs):
            return None
        controls = tuple(sorted(id(merged.get(id(c), c)) for c in op.control_inputs))
        key = _key(op, inputs, controls)
        if key is None:
            return None
        first = seen.get(key)
        if first is None:
            seen[key] = op
            return None
        merged[id(op)] = first
        removed.append(op)
        # `first` was copied under its own name (names are unique and nothing is renamed)
        return list(new_graph.get_operation_by_name(first.name).outputs)

    result = copy_graph(graph, replace=replace)
    return result if removed else graph
