"""Is a traced map/filter function row-wise, so it may run on a block of stacked elements?

A traced graph is row-wise when every op is elementwise (its OpDef has a `fusable`
template), neither stateful nor random, and broadcasting never mixes the element's own
axes with the block axis: each element-derived input of an op has exactly the op's
(fully known) output shape, and a constant input has no more dims than the output. Then
the same generated code, fed arrays with a leading block axis, computes every row as if
it were called on that row alone (TF's map_and_batch_fusion / map vectorization, decided
from OpDef facts only, never op names).
"""
from __future__ import annotations

from typing import Any

from kilnflow.graph import PLACEHOLDER


def is_rowwise(traced: Any) -> bool:
    """True when the StructuredFunction `traced` may run on blocks of elements."""
    if traced.runs_eagerly:
        return False
    graph = traced.traced_graph
    data = {id(t) for t in graph.inputs}  # tensors that carry a block axis when batched
    for op in graph.operations:
        if op.control_inputs or op.opdef.stateful:
            return False
        if not op.inputs:
            if op.opdef is PLACEHOLDER and not any(id(t) in data for t in op.outputs):
                return False  # a captured value fed at call time: not a constant
            continue
        if not op.opdef.fusable:
            return False
        feeds = [t for t in op.inputs if id(t) in data]
        if not feeds:
            continue  # constant in, constant out
        for out in op.outputs:
            shape = out.shape
            if not shape.is_fully_defined():
                return False
            for t in op.inputs:
                if id(t) in data and t.shape != shape:
                    return False
                if id(t) not in data and (t.shape.rank is None or t.shape.rank > shape.rank):
                    return False
            data.add(id(out))
    return all(id(t) in data and t.shape.is_fully_defined() for t in graph.outputs)
