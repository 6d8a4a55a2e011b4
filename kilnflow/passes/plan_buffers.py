"""plan_buffers: results write into a dead intermediate's buffer instead of a new one.

    before:  a = FusedElementwise(x, ...); b = MatMul(a, w); c = FusedElementwise(b, ...)
             d = AddV2(c, y)                                   (a dead after the MatMul)
    after:   ...; d = FusedElementwise(c, y, a, into=2, program='t0 = a0 + a1')

A big array is a fresh mmap whose pages fault in on first write; reusing a dead one of
the same size skips that. The recipient is an op the fused engine can run with `out=`: a
FusedElementwise, or an op with a translatable `fusable` template (it becomes a one-op
FusedElementwise). The donated buffer becomes an extra input (attr `into` gives its
position), so codegen keeps it alive until then and the graph shows the reuse. The
engine checks shape, dtype and contiguity at run time and allocates when they differ.
Donors are only results the engine, an elementwise kernel or an op declaring
`fresh_output` (MatMul: `a @ b` always allocates) allocated, whose every reader
is elementwise (so no view of them survives): never a graph input, a constant, a
variable's value or a returned array. So `w -= lr * (x.T @ d)` scales the gradient in
place instead of faulting in a new array the size of `w`. A buffer dying at the recipient is reused in place.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import numpy as np

from kilnflow.ops import fused
from kilnflow.passes import facts
from kilnflow.passes.fuse_elementwise import is_fusable_member
from kilnflow.passes.rewrite import (add_op, consumers, control_targets, copy_graph,
                                     input_ids, output_ids)

MIN_BYTES = 1 << 17  # smaller arrays come from malloc's pools: reusing them gains nothing


def _elementwise(op: Any, controlled: set) -> bool:
    """Does `op` compute a fresh array and keep no view of its inputs?"""
    return op.opdef is fused.FUSED or is_fusable_member(op, controlled)


def _big_enough(t: Any) -> bool:
    if t.shape.rank is None:
        return False
    if not t.shape.is_fully_defined():
        return True  # unknown dims: maybe big; the engine checks the real shape
    return int(np.prod(t.shape.as_list())) * t.dtype.size >= MIN_BYTES


def _fits(buffer: Any, result: Any) -> bool:
    return buffer.dtype is result.dtype and buffer.shape.rank == result.shape.rank and \
        buffer.shape.as_list() == result.shape.as_list()


def _program_of(op: Any) -> Optional[tuple]:
    """(program, operand tensors) that computes `op` with the fused engine."""
    if op.opdef is fused.FUSED:
        return op.attrs["program"], list(op.inputs[:op.attrs["program"].n_inputs])
    builder = fused.ProgramBuilder()
    operands = [builder.input(id(t), t.dtype.as_numpy_dtype) for t in op.inputs]
    ref = builder.add_op(op.opdef.fusable, operands, dict(op.attrs),
                         np.dtype(op.outputs[0].dtype.as_numpy_dtype))
    if ref is None:
        return None
    program, keys = builder.build(ref, None, np.dtype(op.outputs[0].dtype.as_numpy_dtype),
                                  isinstance(op.opdef.kernel, np.ufunc))
    by_id = {id(t): t for t in op.inputs}
    return program, [by_id[k] for k in keys]


def plan(graph: Any) -> Dict[int, Any]:
    """id(op) -> the tensor whose buffer the op's result goes into."""
    users = consumers(graph)
    controlled = control_targets(graph)
    inputs, outputs = input_ids(graph), output_ids(graph)
    position = {id(op): i for i, op in enumerate(graph.operations)}
    last_use = {key: max(position[id(u)] for u in readers) for key, readers in users.items()}

    def donor(t: Any) -> bool:
        return (id(t) not in outputs and id(t) not in inputs and id(t) in users
                and (_elementwise(t.op, controlled) or facts.fresh_output(t.op.opdef))
                and _big_enough(t)
                and all(_elementwise(u, controlled) for u in users[id(t)]))

    free: List[Any] = []      # dead donors, oldest first
    chosen: Dict[int, Any] = {}
    taken: set = set()
    for i, op in enumerate(graph.operations):
        recipient = (_elementwise(op, controlled) and not op.control_inputs and
                     len(op.outputs) == 1 and _big_enough(op.outputs[0]) and
                     (op.opdef is not fused.FUSED or op.attrs["into"] is None))
        dying = [t for t in {id(t): t for t in op.inputs}.values()
                 if last_use.get(id(t)) == i and id(t) not in taken and donor(t)]
        built = _program_of(op) if recipient else None
        if built is not None:
            program = built[0]
            # a select at the root copies one operand before reading the others: no aliasing
            in_place = [] if program.steps[program.root[1]].fn == "where" else dying
            pick = next((t for t in in_place if _fits(t, op.outputs[0])), None)
            if pick is None:
                pick = next((t for t in free if _fits(t, op.outputs[0])), None)
                if pick is not None:
                    free = [t for t in free if t is not pick]
            if pick is not None:
                chosen[id(op)] = pick
                taken.add(id(pick))
        free.extend(t for t in dying if id(t) not in taken)
    return chosen


def plan_buffers(graph: Any) -> Any:
    chosen = plan(graph)
    if not chosen:
        return graph

    def replace(op: Any, inputs: tuple, new_graph: Any, mapped: Any) -> Any:
        buffer = chosen.get(id(op))
        if buffer is None:
            return None
        built = _program_of(op)
        if built is None:
            return None
        program, operands = built
        tensors = [mapped(t) for t in operands]
        new_buffer = mapped(buffer)
        into = next((k for k, t in enumerate(tensors) if t is new_buffer), None)
        if into is None:
            into = len(tensors)
            tensors.append(new_buffer)
        new = add_op(new_graph, fused.FUSED, tensors, {"program": program, "into": into},
                     op.name, like=op)
        return new.outputs

    return copy_graph(graph, replace=replace)
