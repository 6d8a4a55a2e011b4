"""Rebinding a traced graph to other variables: what lets variables be traced by spec.

A trace reads and writes its variable arguments through their handles, held in op attrs
(cond branches and loop bodies included). A later call with other variables of the same
dtype and shape reuses the trace: the graph is copied with the handles swapped, which
costs a copy and code generation, never a second run of the user's Python.
"""
from __future__ import annotations

from typing import Any, Dict

from kilnflow.passes.rewrite import copy_graph


def _is_subgraph(value: Any) -> bool:
    graph = getattr(value, "graph", None)
    return graph is not None and hasattr(graph, "operations") and hasattr(value, "n_args")


def with_handles(graph: Any, mapping: Dict[int, Any]) -> Any:
    """A copy of `graph` whose op attrs hold mapping[id(h)] instead of each handle h in
    the mapping, through nested branch and loop graphs; `graph` itself if none is used."""
    done: Dict[int, Any] = {}

    def swap(value: Any) -> Any:
        if id(value) in mapping:
            return mapping[id(value)]
        if _is_subgraph(value):
            if id(value) not in done:
                new_graph = with_handles(value.graph, mapping)
                done[id(value)] = value if new_graph is value.graph else \
                    type(value)(new_graph, value.n_args, value.capture_positions)
            return done[id(value)]
        if isinstance(value, (tuple, list)):
            items = [swap(v) for v in value]
            if any(a is not b for a, b in zip(items, value)):
                return type(value)(items)
        return value

    def new_attrs(op: Any) -> Any:
        attrs = {k: swap(v) for k, v in op.attrs.items()}
        if all(attrs[k] is v for k, v in op.attrs.items()):
            return None
        return attrs

    if not any(new_attrs(op) is not None for op in graph.operations):
        return graph
    return copy_graph(graph, new_attrs=new_attrs)
