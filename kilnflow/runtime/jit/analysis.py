"""Graph facts the jit emitter (lower.py) plans with: loop gradients that can be summed
after the loop, outputs that may reuse the caller's dropped array, variable updates that
may run in place (and fold a `s * g` product in). Reads graphs only.
"""
from __future__ import annotations

from typing import Any, Dict, List

VARIABLE_OPS = {"ReadVariableOp": None, "AssignVariableOp": "{1}",
                "AssignAddVariableOp": "{0} + {1}", "AssignSubVariableOp": "{0} - {1}"}


def deferred_products(graph: Any, n: int, n_totals: int) -> Dict[int, Any]:
    """Captured gradients of a loop body that are one `A^T B` MatMul per iteration (a
    weight's gradient in an RNN), with static 2-D operands of equal rows, used by nothing
    else: total number j -> the MatMul. The loop stacks A and B; one GEMM sums them."""
    used = {id(t) for op in graph.operations for t in op.inputs}
    counts: Dict[int, int] = {}
    for t in graph.outputs:
        counts[id(t)] = counts.get(id(t), 0) + 1
    found = {}
    for j in range(n_totals):
        t = graph.outputs[n + j]
        m = t.op
        if m.type != "MatMul" or not m.attrs.get("transpose_a") or \
                m.attrs.get("transpose_b") or id(t) in used or counts[id(t)] > 1:
            continue
        a, b = m.inputs
        if all(x.shape.rank == 2 and x.shape.is_fully_defined() and x.dtype.is_floating
               for x in (a, b)) and a.shape[0] == b.shape[0] and a.dtype == b.dtype:
            found[j] = m
    return found


def deferred_sums(graph: Any, n: int, n_totals: int, taken: Dict[int, Any]) -> Dict[int, Any]:
    """Captured gradients of a loop body that are a column sum of a static 2-D float
    tensor (a bias gradient: Sum over axis 0, or SumToShape [rows, cols] -> [cols]), used
    by nothing else: total number j -> the op. The loop stacks the tensor; one column sum
    after the loop replaces one per iteration."""
    used = {id(t) for op in graph.operations for t in op.inputs}
    outputs = [id(t) for t in graph.outputs]
    found = {}
    for j in range(n_totals):
        t = graph.outputs[n + j]
        m, x = t.op, (t.op.inputs[0] if t.op.inputs else None)
        if j in taken or id(t) in used or outputs.count(id(t)) > 1 or x is None or \
                x.shape.rank != 2 or not x.shape.is_fully_defined() or \
                not x.dtype.is_floating or x.dtype != t.dtype or t.shape.rank != 1:
            continue
        axis = m.attrs.get("axis")
        if (m.type == "Sum" and axis in (0, (0,), [0]) and not m.attrs.get("keepdims")) or \
                (m.type == "SumToShape" and t.shape.as_list() == x.shape.as_list()[1:]):
            found[j] = m
    return found


def donated_outputs(graph: Any) -> List[int]:
    """Outputs an elementwise loop writes whole (FusedElementwise, no reduction): the
    caller may hand back the array it returned last time, when nobody holds it any more,
    and the loop writes into it instead of into fresh pages (XLA's buffer donation, done
    by the runtime: a new 64 MB array costs its page faults every call)."""
    seen: set = set()
    found = []
    for i, t in enumerate(graph.outputs):
        op = t.op
        if op.type == "FusedElementwise" and op.attrs["program"].reduce is None and \
                t.shape.rank and id(t) not in seen:
            found.append(i)
        seen.add(id(t))
    return found


def in_place_updates(graph: Any) -> set:
    """assign_add/assign_sub ops of the top level after which no value read from their
    variable is used (nor returned), and whose variable no subgraph touches: those may
    update the array in place when the caller says nothing else holds it."""
    ops = graph.operations
    last_use: Dict[int, int] = {}
    for i, op in enumerate(ops):
        for t in op.inputs:
            last_use[id(t)] = i
    for t in graph.outputs:
        last_use[id(t)] = len(ops)
    nested = {id(value) for op in ops for sub in op.attrs.values()
              if hasattr(sub, "graph") and hasattr(sub.graph, "operations")
              for inner in sub.graph.operations for value in inner.attrs.values()}
    reads: Dict[int, List[Any]] = {}
    found = set()
    for i, op in enumerate(ops):
        handle = op.attrs.get("handle") if op.type in VARIABLE_OPS else None
        if handle is None or id(handle) in nested:
            continue
        if op.type == "ReadVariableOp":
            reads.setdefault(id(handle), []).append(op.outputs[0])
        elif op.type in ("AssignAddVariableOp", "AssignSubVariableOp") and all(
                last_use.get(id(t), -1) < i for t in reads.get(id(handle), [])):
            found.add(id(op))
    return found


def _consumer_counts(graph: Any) -> Dict[int, int]:
    """id(tensor) -> how many op inputs and graph outputs use it."""
    consumers: Dict[int, int] = {}
    for op in graph.operations:
        for t in op.inputs:
            consumers[id(t)] = consumers.get(id(t), 0) + 1
    for t in graph.outputs:
        consumers[id(t)] = consumers.get(id(t), 0) + 1
    return consumers


def scaled_updates(graph: Any, in_place: set) -> Dict[int, tuple]:
    """In-place assign_add/sub of `s * g` (a scalar times a tensor of the variable's
    static shape, used by nothing else): id(update) -> (s, g), so the update is one loop
    (`v[i] -= s * g[i]`, the same float rounding as the product then the subtraction)."""
    consumers = _consumer_counts(graph)
    found = {}
    for op in graph.operations:
        if id(op) not in in_place:
            continue
        value, handle = op.inputs[0], op.attrs["handle"]
        product = value.op
        operands = list(product.inputs)
        if product.type == "FusedElementwise":
            program = product.attrs["program"]
            if program.reduce is not None or len(program.steps) != 1 or \
                    program.steps[0].fn != "multiply" or \
                    [a[0] for a in program.steps[0].args] != ["in", "in"]:
                continue
            operands = [operands[a[1]] for a in program.steps[0].args]
        elif product.type != "Mul":
            continue
        if consumers.get(id(value)) != 1 or len(operands) != 2 or \
                not handle.shape.is_fully_defined() or not handle.shape.rank:
            continue
        ranks = [t.shape.rank for t in operands]
        if 0 not in ranks:
            continue
        scale, tensor = operands[ranks.index(0)], operands[1 - ranks.index(0)]
        if tensor.shape.as_list() == handle.shape.as_list() and \
                tensor.dtype == scale.dtype == value.dtype:
            found[id(op)] = (scale, tensor)
    return found


def gemm_updates(graph: Any, scaled: Dict[int, tuple]) -> Dict[int, tuple]:
    """Scaled in-place updates whose `g` is a 2-D float MatMul used by nothing else (a
    weight's gradient): id(update) -> (id(op) after which to emit it, the MatMul). One
    GEMM then writes `v += -s * op(A) op(B)` into the variable (BLAS beta 1): no array
    for the product, no separate update pass. It runs after the MatMul and after the last
    use of any read of v, with no variable written from the MatMul to there (so A and B,
    possibly views of a variable, still hold their values) nor v written from there to
    the update (so moving the update up keeps the program's order); not when A or B may
    be a view of v (BLAS must not read the array it writes)."""
    ops = graph.operations
    index = {id(op): i for i, op in enumerate(ops)}
    consumers = _consumer_counts(graph)
    last_use = {id(t): i for i, op in enumerate(ops) for t in op.inputs}
    reads: Dict[int, List[tuple]] = {}  # id(handle) -> (index, last use) of each read
    writes: List[tuple] = []  # (index, id(handle)) of every assign
    for i, op in enumerate(ops):
        handle = op.attrs.get("handle") if op.type in VARIABLE_OPS else None
        if handle is None:
            continue
        if op.type != "ReadVariableOp":
            writes.append((i, id(handle)))
            continue
        reads.setdefault(id(handle), []).append((i, last_use.get(id(op.outputs[0]), i)))
    found = {}
    for op in ops:
        scale, tensor = scaled.get(id(op), (None, None))
        matmul = getattr(tensor, "op", None)
        if matmul is None or matmul.type != "MatMul" or consumers.get(id(tensor)) != 1 or \
                tensor.dtype.name not in ("float32", "float64") or \
                id(matmul) not in index or tensor.shape.rank != 2:
            continue
        handle, i, j = op.attrs["handle"], index[id(op)], index[id(matmul)]
        at = max([j, index.get(id(scale.op), -1)] +
                 [use for read, use in reads.get(id(handle), ()) if read < i])
        if at < i and not _may_view(matmul.inputs, handle) and \
                not any(j < w <= at for w, _ in writes) and \
                not any(at < w < i and h == id(handle) for w, h in writes):
            found[id(op)] = (id(ops[at]), matmul)
    return found


FRESH = {"MatMul", "FusedElementwise"}  # lowered to a new array, never a view of an input


def _may_view(tensors: Any, handle: Any) -> bool:
    """Whether a read of `handle` reaches `tensors` through ops other than FRESH ones
    (conservative: any other op might return a view of its input)."""
    stack, seen = list(tensors), set()
    while stack:
        t = stack.pop()
        op = t.op
        if id(op) in seen or op.type in FRESH:
            continue
        seen.add(id(op))
        if op.type == "ReadVariableOp" and op.attrs.get("handle") is handle:
            return True
        stack.extend(op.inputs)
    return False


def bias_epilogues(graph: Any) -> Dict[int, tuple]:
    """`A @ B + b` and `relu(A @ B + b)` (an AddV2/BiasAdd, or a FusedElementwise of
    exactly that add and a max with 0) with the 2-D float MatMul used by nothing else and
    b 1-D along its columns: id(op) -> (product, b, relu). The add (and max) then run in
    place over the GEMM's fresh output, one pass with the separate ops' rounding."""
    consumers = _consumer_counts(graph)
    add = ("add", (("in", 0), ("in", 1)))
    found = {}
    for op in graph.operations:
        relu = False
        if op.type == "FusedElementwise":
            program = op.attrs["program"]
            steps = [(s.fn, tuple(s.args)) for s in program.steps]
            relu = len(steps) == 2 and steps[1][0] == "maximum" and \
                steps[1][1][0] == ("step", 0) and steps[1][1][1][0] == "const" and \
                float(steps[1][1][1][1][0]) == 0
            if steps[0] != add or program.reduce is not None or not (relu or len(steps) == 1) \
                    or tuple(program.root) != ("step", len(steps) - 1) or len(op.inputs) != 2:
                continue
        elif op.type not in ("AddV2", "Add", "BiasAdd"):
            continue
        for product, bias in (op.inputs, op.inputs[::-1]):
            if product.op.type == "MatMul" and consumers.get(id(product)) == 1 and \
                    product.shape.rank == 2 and bias.shape.rank == 1 and \
                    product.dtype.name in ("float32", "float64") and \
                    product.dtype == bias.dtype == op.outputs[0].dtype and \
                    op.outputs[0].shape.as_list() == product.shape.as_list() and \
                    bias.shape[0] is not None and bias.shape[0] == product.shape[1]:
                found[id(op)] = (product, bias, relu)
                break
    return found
