"""Subgraphs: branches and loop bodies traced into FuncGraphs and held in op attrs.

`trace_subgraph` traces a Python callable on given specs (once more when the first trace
hoists variable writes), `unify_captures` gives branches one capture list, `replay`
re-applies a subgraph's ops in the current mode (gradients of cond and while use it).
Imported by ops/cond.py and ops/while_loop.py.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

from kilnflow import nest

from kilnflow.core.opdef import bind
from kilnflow.graph import register_attr_codec
from kilnflow.runtime import codegen, interpreter, loader
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import SymbolicTensor


# ---------------------------------------------------------------- subgraphs

class Subgraph:
    """A traced function graph used as an attr (hashable by identity).

    `capture_positions[i]` is the position, among the op's captured inputs, of the outer
    tensor that feeds this graph's i-th captured placeholder.
    """

    def __init__(self, graph: Any, n_args: int, capture_positions: tuple):
        self.graph = graph
        self.n_args = n_args
        self.capture_positions = capture_positions
        self._compiled: Optional[Callable] = None

    def feed(self, args: Sequence, captured: Sequence) -> list:
        return list(args) + [captured[p] for p in self.capture_positions]

    def run(self, args: Sequence, captured: Sequence) -> tuple:
        """Run on arrays: by the interpreter while it evaluates (an independent oracle),
        otherwise through generated Python compiled on first use."""
        evaluate = interpreter.subgraph_evaluator()
        if evaluate is not None:
            return tuple(evaluate(self.graph, self.feed(args, captured)))
        if self._compiled is None:
            g = self.graph
            source, globals_, _ = codegen.generate(g.name, g.operations, g.inputs, g.outputs)
            self._compiled = loader.load(source, globals_, g.name)
        return self._compiled(*self.feed(args, captured))

    def __repr__(self) -> str:
        return f"<Subgraph {self.graph.name}: {len(self.graph.operations)} ops>"


def _encode_subgraph(sub: Subgraph, writer: Any) -> dict:
    return {"graph": writer.graph(sub.graph), "capture_positions": list(sub.capture_positions),
            "n_args": sub.n_args}


def _decode_subgraph(fields: dict, reader: Any) -> Subgraph:
    return Subgraph(reader.graph(fields["graph"]), int(fields["n_args"]),
                    tuple(int(p) for p in fields["capture_positions"]))


register_attr_codec("subgraph", Subgraph, _encode_subgraph, _decode_subgraph)


def writes_hoisted(graph: Any) -> bool:
    """True if the graph updates a variable whose reads were hoisted out of it."""
    for op in graph.operations:
        if op.opdef.stateful and op.opdef.watch_attr is None:
            if any(id(v) in graph.hoisted for v in op.attrs.values()):
                return True
    return False


def trace_subgraph(name: str, fn: Callable, arg_specs: Sequence[TensorSpec], outer: Any) -> tuple:
    """Trace fn(*placeholders) into a FuncGraph nested in `outer`; returns (graph, result).

    Variable reads are hoisted into `outer` (so their gradients flow through the op's
    inputs) unless the body also updates that variable; then it is traced again as is."""
    graph, result, flat = trace_once(name, fn, arg_specs, outer, hoist=True)
    if writes_hoisted(graph):
        graph, result, flat = trace_once(name, fn, arg_specs, outer, hoist=False)
    return graph, result, flat


def trace_once(name: str, fn: Callable, arg_specs: Sequence[TensorSpec], outer: Any,
                hoist: bool) -> tuple:
    from kilnflow.function.func_graph import FuncGraph
    graph = FuncGraph(outer.unique_name(name, mark_as_used=False).replace("/", "_"),
                      outer_graph=outer)
    graph.hoist_reads = hoist
    with graph.as_default():
        args = [graph.placeholder(s.dtype, s.shape, name=s.name or f"arg{i}")
                for i, s in enumerate(arg_specs)]
        graph.inputs = list(args)
        result = fn(*args)
        flat = [graph.capture(convert_to_tensor(x)) if x is not None else None
                for x in nest.flatten(result)]
    return graph, result, flat


def unify_captures(graphs: Sequence) -> tuple:
    """Outer tensors captured by any of `graphs` (deduplicated), and each graph's positions."""
    outer: List[SymbolicTensor] = []
    index: dict = {}
    positions = []
    for g in graphs:
        mine = []
        for t, placeholder in g.captures:
            if id(t) not in index:
                index[id(t)] = len(outer)
                outer.append(t)
            mine.append(index[id(t)])
            g.inputs.append(placeholder)
        positions.append(tuple(mine))
    return outer, positions


def any_stateful(*graphs: Any) -> bool:
    return any(op.opdef.stateful for g in graphs for op in g.operations)


def replay(graph: Any, inputs: Sequence, known: Optional[dict] = None,
           side_effects: bool = False) -> list:
    """Re-apply graph's ops to `inputs` in the current mode; returns the values of
    graph.outputs. Gradients of subgraphs use it, skipping output-less side effects (prints,
    variable writes) unless `side_effects`; a loaded function replays them too. `known`
    maps id(tensor) of an op's output to the value to use instead of re-running the op
    (what a random op drew in the forward pass)."""
    env = {id(p): x for p, x in zip(graph.inputs, inputs)}
    known = known or {}
    for op in graph.operations:
        if op.type == "Placeholder" or not (op.outputs or side_effects):
            continue
        if op.outputs and all(id(t) in known for t in op.outputs):
            env.update((id(t), known[id(t)]) for t in op.outputs)
            continue
        result = bind(op.opdef, [env[id(t)] for t in op.inputs], op.attrs)
        outs = result if op.opdef.multi_output else (result,)
        for t, value in zip(op.outputs, outs):
            env[id(t)] = value
    return [env[id(t)] for t in graph.outputs]


def random_outputs(graph: Any) -> list:
    """What the graph's random ops draw: a gradient replaying the graph must reuse it."""
    return [t for op in graph.operations if op.opdef.random for t in op.outputs]
