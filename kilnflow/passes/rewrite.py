"""Rebuilding a function graph: the helpers every pass uses to return a new graph.

copy_graph walks the old graph's ops in order and lets a pass drop ops, or map an op to
replacement tensors; everything else is copied with its name, attrs, location and
control inputs. Ops that had a replaced op as a control input then wait for the op that
produces the replacement. Shape rules are re-run only for new ops (add_op); lint() checks
everything in tests. Reads graph and ops only.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence

import numpy as np

from kilnflow.graph import Operation
from kilnflow.core.opdef import infer
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


def add_op(new_graph: Any, opdef: Any, inputs: Sequence, attrs: dict, name: str,
           like: Optional[Operation] = None) -> Operation:
    """A new op in `new_graph` (its specs from the shape rule), named `name` when free and
    placed at `like`'s source line."""
    specs = infer(opdef, inputs, attrs)
    name = name if name not in new_graph._by_name else new_graph.unique_name(name)
    new = Operation(new_graph, opdef, name, tuple(inputs), attrs, [],
                    like.location if like is not None else None)
    if like is not None:
        new.device = like.device
    new.outputs = [SymbolicTensor(new, i, s.shape, s.dtype) for i, s in enumerate(specs)]
    new_graph._name_counts.setdefault(name, 1)
    new_graph._add(new)
    return new


def const(new_graph: Any, array: Any, name: str, like: Optional[Operation] = None) -> Any:
    """A Const op holding `array` (made read-only: graphs never write into constants)."""
    from kilnflow.core.const import CONST, Literal
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return add_op(new_graph, CONST, (), {"value": Literal(array)}, name, like).outputs[0]


def copy_graph(graph: Any, keep: Optional[Callable[[Operation], bool]] = None,
               replace: Optional[Callable[..., Any]] = None,
               new_attrs: Optional[Callable[[Operation], Optional[dict]]] = None) -> Any:
    """A new graph like `graph`. `keep(op)` False drops the op; `replace(op, new_inputs,
    new_graph, mapped)` may return a list of new-graph tensors standing for op's outputs
    (or None to copy it); mapped(old_tensor) is the new graph's tensor for an earlier one.
    Dropped ops must feed only replaced ones. A replaced op must have no control inputs of
    its own (passes check); ops that waited for it wait for the replacement's op.
    `new_attrs(op)` may return the attrs a copied op gets instead of its own.
    """
    new_graph = graph.empty_like()
    tensor_map: Dict[int, Any] = {}
    op_map: Dict[int, Operation] = {}

    def mapped(t: Any) -> Any:
        return tensor_map[id(t)]

    for op in graph.operations:
        if keep is not None and not keep(op):
            continue
        # None for an input whose producer was dropped: only a replaced op may read one
        inputs = tuple(tensor_map.get(id(t)) for t in op.inputs)
        if replace is not None:
            replaced = replace(op, inputs, new_graph, mapped)
            if replaced is not None and (not replaced or
                                         isinstance(replaced[0], SymbolicTensor)):
                for old, new in zip(op.outputs, replaced):
                    tensor_map[id(old)] = new
                if replaced:
                    op_map[id(op)] = replaced[0].op
                continue
        controls = _dedup([op_map[id(c)] for c in op.control_inputs if id(c) in op_map])
        new = copy_op(new_graph, op, inputs, controls,
                      attrs=new_attrs(op) if new_attrs is not None else None)
        op_map[id(op)] = new
        for old, t in zip(op.outputs, new.outputs):
            tensor_map[id(old)] = t
    new_graph.finish_copy(graph, tensor_map)
    return new_graph


def _dedup(ops: list) -> list:
    seen: set = set()
    out = []
    for op in ops:
        if id(op) not in seen:
            seen.add(id(op))
            out.append(op)
    return out


def consumers(graph: Any) -> Dict[int, list]:
    """id(tensor) -> the ops that read it (an op reading a tensor twice appears twice)."""
    users: Dict[int, list] = {}
    for op in graph.operations:
        for t in op.inputs:
            users.setdefault(id(t), []).append(op)
    return users


def control_targets(graph: Any) -> set:
    """ids of the ops some other op names as a control input."""
    return {id(c) for op in graph.operations for c in op.control_inputs}


def input_ids(graph: Any) -> set:
    """ids of the graph's input tensors (placeholders and captures): never constant."""
    return {id(t) for t in graph.inputs}


def output_ids(graph: Any) -> set:
    return {id(t) for t in graph.outputs}
