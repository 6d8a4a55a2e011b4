"""subgraphs: optimize the graphs that ops hold in attrs (cond branches, loop bodies).

    before:  w = While(i, x, body_graph=<body: y = x * 1.0; z = Exp(y) ...>)
    after:   w = While(i, x, body_graph=<body: z = Exp(x) ...>)     (the body, optimized)

A graph held in an attr is recognised by what it offers (a `.graph` with operations, and
`n_args` / `capture_positions`, the Subgraph protocol of ops/subgraph.py); it is run
through the same pipeline, with the same switches, and a new holder replaces the old one
so the traced graph (which gradients replay) keeps its own. A subgraph shared by two ops
(a loop body used by While and WhileGrad) is optimized once. Respects what every pass
respects; inputs and outputs of each subgraph stay as they are.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

from kilnflow.passes.rewrite import copy_graph


def _is_subgraph(value: Any) -> bool:
    graph = getattr(value, "graph", None)
    return (graph is not None and hasattr(graph, "operations") and hasattr(graph, "inputs")
            and hasattr(value, "n_args") and hasattr(value, "capture_positions"))


def make_subgraphs_pass(optimize: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The pass, given the function that optimizes one graph (the pipeline's)."""

    def subgraphs(graph: Any) -> Any:
        done: Dict[int, Any] = {}

        def optimized(holder: Any) -> Any:
            if id(holder) not in done:
                new_graph = optimize(holder.graph)
                done[id(holder)] = holder if new_graph is holder.graph else \
                    type(holder)(new_graph, holder.n_args, holder.capture_positions)
            return done[id(holder)]

        def new_attrs(op: Any) -> Any:
            if not any(_is_subgraph(v) for v in op.attrs.values()):
                return None
            return {k: optimized(v) if _is_subgraph(v) else v for k, v in op.attrs.items()}

        if not any(_is_subgraph(v) for op in graph.operations for v in op.attrs.values()):
            return graph
        return copy_graph(graph, new_attrs=new_attrs)

    return subgraphs
