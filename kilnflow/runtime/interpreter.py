"""The reference evaluator: runs a graph node by node, with no code generation.

It is the oracle for codegen tests and a debugging aid; ConcreteFunctions run generated code.
It is independent of codegen all the way down: while it runs, cond and while subgraphs are
evaluated by it too (Subgraph.run asks `subgraph_evaluator()`), not compiled. Values are freed
after their last use, and a failing kernel is reported with the op's name, type and the
user's line that created it, the original exception kept as the cause.
"""
from __future__ import annotations

import contextvars
from typing import Any, Callable, Dict, Optional, Sequence

from kilnflow import errors

_evaluator: contextvars.ContextVar = contextvars.ContextVar("kilnflow_subgraph_evaluator",
                                                            default=None)


def subgraph_evaluator() -> Optional[Callable[[Any, Sequence], list]]:
    """While the interpreter runs: a function (graph, input values) -> output values that
    subgraph kernels must use instead of generated code; otherwise None."""
    return _evaluator.get()


def evaluate_graph(graph: Any, values: Sequence) -> list:
    """Evaluate a whole function graph on its input values."""
    return evaluate(graph.operations, graph.inputs, graph.outputs, values)


def evaluate(graph_ops: Sequence, inputs: Sequence, outputs: Sequence,
             values: Sequence) -> list:
    """The values of `outputs`, running `graph_ops` in order on the inputs' `values`."""
    env: Dict[int, Any] = {id(t): v for t, v in zip(inputs, values)}
    keep = {id(t) for t in outputs}
    last_use: Dict[int, int] = {}
    for i, op in enumerate(graph_ops):
        for t in op.inputs:
            last_use[id(t)] = i
    token = _evaluator.set(evaluate_graph)
    try:
        for i, op in enumerate(graph_ops):
            if op.outputs and id(op.outputs[0]) in env:  # fed from outside: an input
                continue
            args = [env[id(t)] for t in op.inputs]
            try:
                result = op.opdef.kernel(*args, **op.attrs)
            except Exception as exc:
                raise _while_executing(op, exc) from exc
            if op.opdef.multi_output:
                for t, r in zip(op.outputs, result):
                    env[id(t)] = r
            elif op.outputs:
                env[id(op.outputs[0])] = result
            for t in op.inputs:  # free what no later op reads
                if last_use.get(id(t)) == i and id(t) not in keep:
                    env.pop(id(t), None)
    finally:
        _evaluator.reset(token)
    return [env[id(t)] for t in outputs]


def _while_executing(op: Any, exc: Exception) -> Exception:
    """`exc` with the failing op named, as TF's `[[node ...]]` and torch.fx's "While
    executing" say; OpErrors keep their class."""
    where = f" (created at {op.location[0]}:{op.location[1]})" if op.location else ""
    message = f"While executing node {op.name} ({op.type}){where}: {exc}"
    if isinstance(exc, errors.OpError):
        return type(exc)(message)
    return errors.class_for(exc)(f"{type(exc).__name__}: {message}")
