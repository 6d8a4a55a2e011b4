"""prune: drop operations that feed no output and are not stateful.

    before:  a = Mul(x, x); b = Exp(x); out = Identity(a)      outputs: [out]
    after:   a = Mul(x, x); out = Identity(a)

Respects: `stateful` ops (prints, variable updates, random draws) always stay, with all
they depend on. Placeholders (the function's inputs) always stay.
"""
from __future__ import annotations

from typing import Any, List

from kilnflow.graph import PLACEHOLDER
from kilnflow.passes.rewrite import copy_graph


def needed_ops(graph: Any) -> set:
    """ids of the ops that must run: outputs, stateful ops, inputs, and their ancestors."""
    roots: List[Any] = [t.op for t in graph.outputs]
    roots += [op for op in graph.operations if op.opdef.stateful or op.opdef is PLACEHOLDER]
    needed: set = set()
    while roots:
        op = roots.pop()
        if id(op) in needed:
            continue
        needed.add(id(op))
        roots.extend(t.op for t in op.inputs)
        roots.extend(op.control_inputs)
    return needed


def prune(graph: Any) -> Any:
    needed = needed_ops(graph)
    if len(needed) == len(graph.operations):
        return graph
    return copy_graph(graph, keep=lambda op: id(op) in needed)
