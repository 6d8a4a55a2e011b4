"""WrappedFunction: what compat.v1.wrap_function returns, a ConcreteFunction traced once
from TF1-style code, plus `prune(feeds, fetches)` to cut a new function out of its graph.

Reads the traced FuncGraph; copies it with passes.rewrite.copy_graph, never mutates it.
"""
from __future__ import annotations

from typing import Any, List

from kilnflow import nest
from kilnflow.function.concrete import ConcreteFunction, OutputSlot
from kilnflow.graph import ops_needed
from kilnflow.passes.rewrite import copy_graph
from kilnflow.shapes import TensorSpec


class WrappedFunction(ConcreteFunction):
    """A ConcreteFunction made by wrap_function; `prune` extracts sub-functions."""

    def prune(self, feeds: Any, fetches: Any, name: Any = None) -> ConcreteFunction:
        """A function of `feeds` (tensors of this graph) computing `fetches` (a tensor or
        a structure of them), with only the ops the fetches need."""
        graph = self.traced_graph
        feed_list = nest.flatten(feeds)
        fetch_list = nest.flatten(fetches)
        for t in feed_list + fetch_list:
            if getattr(t, "graph", None) is not graph:
                raise ValueError(f"prune: {t!r} is not a tensor of this wrapped function's "
                                 "graph")
        fed = {id(t.op): t for t in feed_list}
        # the fed ops themselves are kept: copying replaces each with a placeholder
        needed = {id(op) for op in ops_needed(graph, [t.op for t in fetch_list],
                                              {id(t) for t in feed_list})} | set(fed)
        made: List[tuple] = []

        def replace(op: Any, inputs: tuple, new_graph: Any, mapped: Any) -> Any:
            if id(op) not in fed:
                return None
            t = fed[id(op)]
            p = new_graph.placeholder(t.dtype, t.shape, name=op.name)
            made.append((t, p))
            return [p]
        new = copy_graph(graph, keep=lambda op: id(op) in needed, replace=replace)
        by_feed = {id(t): p for t, p in made}
        new.inputs = [by_feed[id(t)] for t in feed_list]
        new.outputs = [new.get_tensor_by_name(t.name) for t in fetch_list]
        specs = [(p.op.name, TensorSpec(p.shape, p.dtype)) for p in new.inputs]
        slots = [OutputSlot(i) for i in range(len(fetch_list))]
        template = slots[0] if not nest.is_nested(fetches) else \
            nest.pack_sequence_as(fetches, slots)
        return ConcreteFunction(name or f"{self.name}_pruned", new,
                                [n for n, _ in specs], specs, template, None)

