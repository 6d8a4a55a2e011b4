"""gradients(ys, xs): symbolic gradients in a graph, built from the same OpDef rules.

The graph's operations are the records for the shared reverse walk; gradient ops are
added to the graph that holds ys.
"""
from __future__ import annotations

from typing import Any, List

from kilnflow import nest
from kilnflow.autodiff.accumulate import backward
from kilnflow.context import building
from kilnflow.ops import array, convert


class _OpRecord:
    """A graph op seen by the reverse walk (variable reads take the handle as input)."""

    __slots__ = ("opdef", "inputs", "outputs", "attrs")

    def __init__(self, op: Any):
        self.opdef = op.opdef
        self.outputs = tuple(op.outputs)
        self.attrs = op.attrs
        watch = op.opdef.watch_attr
        self.inputs = (op.attrs[watch],) if watch else tuple(op.inputs)


def gradients(ys: Any, xs: Any, grad_ys: Any = None,
              unconnected_gradients: Any = "none", stop_gradients: Any = None) -> List[Any]:
    """`stop_gradients`: tensors held constant (no gradient flows back through their op)."""
    flat_ys = nest.flatten(ys)
    flat_xs = nest.flatten(xs)
    graph = flat_ys[0].graph
    keys = [getattr(x, "_handle", x) for x in flat_xs]
    with building(graph):
        seeds = [array.gradient_seed(y) for y in flat_ys] if grad_ys is None else \
            [convert.convert_to_tensor(g) for g in nest.flatten(grad_ys)]
        stopped = {id(t) for t in nest.flatten(stop_gradients)} if stop_gradients else set()
        records = [_OpRecord(op) for op in graph.operations
                   if not any(id(o) in stopped for o in op.outputs)]
        found = backward(records, flat_ys, seeds, {id(k) for k in keys})
        out = []
        for x, k in zip(flat_xs, keys):
            g = found.get(id(k))
            if g is None and str(getattr(unconnected_gradients, "value",
                                         unconnected_gradients)).lower() == "zero":
                g = array.zeros_like(x.read_value() if hasattr(x, "_handle") else x)
            out.append(g)
    return out
