"""The reference evaluator: runs a graph node by node with no code generation.

It is the oracle for codegen tests and a debugging aid; ConcreteFunctions run generated code.
"""
from __future__ import annotations

from typing import Any, Dict, Sequence


def evaluate(graph_ops: Sequence, inputs: Sequence, outputs: Sequence,
             values: Sequence) -> list:
    env: Dict[int, Any] = {id(t): v for t, v in zip(inputs, values)}
    for op in graph_ops:
        if id(op.outputs[0]) in env if op.outputs else False:
            continue
        run = getattr(op.opdef, "interpret", None)
        args = [env[id(t)] for t in op.inputs]
        result = run(op, args) if run is not None else op.opdef.kernel(*args, **op.attrs)
        if op.opdef.multi_output:
            for t, r in zip(op.outputs, result):
                env[id(t)] = r
        elif op.outputs:
            env[id(op.outputs[0])] = result
    return [env[id(t)] for t in outputs]
