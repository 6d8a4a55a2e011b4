"""Rebuilding a function graph: the one helper every pass uses to return a new graph.

copy_graph walks the old graph's ops in order and lets a pass drop ops, or map an op to
replacement tensors; everything else is copied with its name, attrs, location and
control inputs. Shape rules are not re-run (lint() does that in tests).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from kilnflow.graph import Operation
from kilnflow.tensor import SymbolicTensor


def copy_op(new_graph: Any, op: Operation, inputs: tuple, control_inputs: list,
            attrs: Optional[dict] = None, opdef: Any = None) -> Operation:
    """Add a copy of `op` (same name and output specs) to `new_graph`."""
    name = op.name if op.name not in new_graph._by_name else new_graph.unique_name(op.name)
    new = Operation(new_graph, opdef or op.opdef, name, inputs,
                    op.attrs if attrs is None else attrs, control_inputs, op.location)
    new.device = op.device
    new.outputs = [SymbolicTensor(new, i, t.shape, t.dtype) for i, t in enumerate(op.outputs)]
    new_graph._name_counts.setdefault(name, 1)
    new_graph._add(new)
    return new


def copy_graph(graph: Any, keep: Optional[Callable[[Operation], bool]] = None,
               replace: Optional[Callable[[Operation, tuple, Dict[int, Any]], Any]] = None
               ) -> Any:
    """A new graph like `graph`. `keep(op)` False drops the op; `replace(op, new_inputs,
    tensor_map)` may return a list of new tensors standing for op's outputs (or None to
    copy it). Dropped ops must not feed kept ones."""
    new_graph = graph.empty_like()
    tensor_map: Dict[int, Any] = {}
    op_map: Dict[int, Operation] = {}
    for op in graph.operations:
        if keep is not None and not keep(op):
            continue
        inputs = tuple(tensor_map[id(t)] for t in op.inputs)
        if replace is not None:
            with new_graph.as_default():
                replaced = replace(op, inputs, tensor_map)
            if replaced is not None:
                for old, new in zip(op.outputs, replaced):
                    tensor_map[id(old)] = new
                if replaced and isinstance(replaced[0], SymbolicTensor) or not replaced:
                    continue
        controls = [op_map[id(c)] for c in op.control_inputs if id(c) in op_map]
        new = copy_op(new_graph, op, inputs, controls)
        op_map[id(op)] = new
        for old, t in zip(op.outputs, new.outputs):
            tensor_map[id(old)] = t
    new_graph.finish_copy(graph, tensor_map)
    return new_graph
