"""fuse_elementwise: maximal groups of elementwise ops become one FusedElementwise op.

    before:  a = Mul(x, x); b = Mul(a, x); c = Tanh(b); out = Mul(c, 0.5)
    after:   out = FusedElementwise(x, Const, program='t0 = a0 * a0; ...')

A member is an op with a `fusable` template that ops/fused.py can translate (and that
gives the dtype the op declares). A group grows backwards from its root: a producer joins
when every op reading its result is already in the group, so intermediates never leave it
(chains, trees, and values used twice inside the group). Inputs may broadcast (scalars,
rows); casts are members like any other. A reduction (facts.reduction) whose input is a
member root may end the group: the engine reduces block by block.
Respects: `stateful` / `random` ops, ops with control inputs or that others wait for, and
graph outputs (an output is always a group's root) are never inside a group.
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional

import numpy as np

from kilnflow.ops import fused
from kilnflow.core.const import CONST
from kilnflow.passes import facts
from kilnflow.passes.rewrite import add_op, consumers, control_targets, copy_graph, output_ids


@functools.lru_cache(maxsize=4096)
def _translatable(opdef: Any, attrs: tuple, in_dtypes: tuple, out_dtype: str) -> bool:
    builder = fused.ProgramBuilder()
    operands = [builder.input(i, np.dtype(d)) for i, d in enumerate(in_dtypes)]
    return builder.add_op(opdef.fusable, operands, dict(attrs), np.dtype(out_dtype)) is not None


def is_fusable_member(op: Any, controlled: set) -> bool:
    opdef = op.opdef
    if opdef.fusable is None or opdef.stateful or opdef.random or op.control_inputs:
        return False
    if id(op) in controlled or len(op.outputs) != 1 or not op.inputs:
        return False
    try:
        attrs = tuple(sorted(op.attrs.items()))
        hash(attrs)
    except TypeError:
        return False
    return _translatable(opdef, attrs, tuple(np.dtype(t.dtype.as_numpy_dtype).str
                                            for t in op.inputs),
                         np.dtype(op.outputs[0].dtype.as_numpy_dtype).str)


def _reduction(op: Any, controlled: set) -> Optional[tuple]:
    """(kind, axes, keepdims) when `op` is a reduction the engine can end a group with."""
    kind = facts.reduction(op.opdef)
    if kind is None or op.control_inputs or id(op) in controlled or len(op.inputs) != 1:
        return None
    axes, keepdims = op.attrs.get("axis"), op.attrs.get("keepdims")
    rank = op.inputs[0].shape.rank
    if not isinstance(keepdims, bool) or (axes is not None and (
            rank is None or not isinstance(axes, tuple) or
            any(not isinstance(a, int) or not 0 <= a < rank for a in axes))):
        return None
    if op.outputs[0].dtype is not op.inputs[0].dtype:
        return None
    return (kind, axes, keepdims)


class _Group:
    def __init__(self, root: Any, reduce: Optional[tuple] = None):
        self.root = root          # the op whose result leaves the group
        self.reduce = reduce      # set when root is a reduction
        self.members: List[Any] = []


def find_groups(graph: Any) -> List[_Group]:
    """Groups of at least two ops, each with its members in graph order."""
    users = consumers(graph)
    outputs = output_ids(graph)
    controlled = control_targets(graph)
    group_of: Dict[int, _Group] = {}
    groups: List[_Group] = []
    for op in reversed(graph.operations):
        reduce = _reduction(op, controlled)
        if reduce is not None:
            group = _Group(op, reduce)
            group_of[id(op)] = group
            groups.append(group)
            continue
        if not is_fusable_member(op, controlled):
            continue
        out = op.outputs[0]
        readers = users.get(id(out), [])
        owners = {id(group_of.get(id(r))) for r in readers}
        group = group_of.get(id(readers[0])) if readers else None
        if group is None or len(owners) != 1 or id(out) in outputs:
            group = _Group(op)
            groups.append(group)
        group.members.append(op)
        group_of[id(op)] = group
    result = []
    for group in groups:
        group.members.reverse()
        if group.reduce is not None and not group.members:
            continue
        if len(group.members) + (group.reduce is not None) >= 2:
            result.append(group)
    return result


def _build(group: _Group) -> Optional[tuple]:
    """(program, input tensors) for a group, or None if its templates do not combine."""
    builder = fused.ProgramBuilder()
    refs: Dict[int, Any] = {}
    tensors: Dict[int, Any] = {}  # keyed by id: tensors overload == elementwise
    for op in group.members:
        operands = []
        for t in op.inputs:
            if id(t) in refs:
                operands.append(refs[id(t)])
                continue
            value = t.op.attrs["value"].array if t.op.opdef is CONST else None
            tensors[id(t)] = t
            operands.append(builder.input(id(t), t.dtype.as_numpy_dtype, value))
        ref = builder.add_op(op.opdef.fusable, operands, dict(op.attrs),
                             np.dtype(op.outputs[0].dtype.as_numpy_dtype))
        if ref is None:
            return None
        refs[id(op.outputs[0])] = ref
    last = group.members[-1]
    quiet = all(isinstance(op.opdef.kernel, np.ufunc) for op in group.members)
    final = group.root if group.reduce is not None else last
    program, keys = builder.build(refs[id(last.outputs[0])], group.reduce,
                                  np.dtype(final.outputs[0].dtype.as_numpy_dtype), quiet,
                                  n_ops=len(group.members) + (group.reduce is not None))
    return program, [tensors[k] for k in keys]


def fuse_elementwise(graph: Any) -> Any:
    plans = {}
    dropped = set()
    for group in find_groups(graph):
        built = _build(group)
        if built is None:
            continue
        plans[id(group.root)] = built
        dropped.update(id(op) for op in group.members if op is not group.root)

    if not plans:
        return graph

    def replace(op: Any, inputs: tuple, new_graph: Any, mapped: Any) -> Any:
        plan = plans.get(id(op))
        if plan is None:
            return None
        program, tensors = plan
        new = add_op(new_graph, fused.FUSED, [mapped(t) for t in tensors],
                     {"program": program, "into": None}, op.name, like=op)
        return new.outputs

    return copy_graph(graph, keep=lambda op: id(op) not in dropped, replace=replace)
