"""Typing TensorArrays for the jit: element ranks inferred from the writes.

`kf.TensorArray(kf.float32, size=n)` without `element_shape` starts as an empty [n, 0]
buffer that takes the written element's shape on the first write, so as a loop variable
it has unknown rank in the traced graph (and so has everything computed from the loop's
result: `stack()`, the loss, the gradient ops). numba needs every array's rank. While a
graph is lowered, `typed(graph)` infers each such loop variable's rank from the static
shapes of the values written into it in the loop body (all writes to one list must agree,
as TF requires: otherwise ValueError, TF's "Inconsistent shapes"), then re-runs the shape
rules of the ops downstream, inside loop bodies, branches and the gradient loop's VJP
graph. Only shapes of unknown rank are filled in, and every shape is restored when the
lowering ends: the Python runtime never sees them. The lowered loop starts from an empty
buffer of the inferred rank (`retyped`), which the first write grows as the Python kernel
grows its [n, 0] start. Reads graphs and op attrs only; never imports ops/.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, List, Optional, Sequence

from kilnflow.shapes import TensorShape

LOOPS = ("While", "StatelessWhile")
BRANCHES = ("If", "StatelessIf")


@contextlib.contextmanager
def typed(graph: Any) -> Iterator[None]:
    """Fill in the ranks of TensorArray loop variables and what depends on them in
    `graph` (its ops, in topological order) for the duration of the block."""
    undo: List[tuple] = []
    try:
        if _has_unknown_rank(graph.operations):
            _Refiner(undo).ops(graph.operations)
        yield
    finally:
        for t, shape in reversed(undo):
            t._shape = shape


def retyped(value: str, initial: Any, loop_var: Any, dtype: str) -> str:
    """The loop's starting buffer: an empty TensorArray's [n, 0] at the rank the body's
    writes give the loop variable (rows of zeros for scalars, as the first write makes
    them); any other initial value as it is."""
    have, want = initial.shape.rank, loop_var.shape.rank
    if have is None or want is None or have == want:
        return value
    return f"np.zeros(({value}.shape[0],{' 0,' * (want - 1)}), {dtype})"


def owned_writes(g: Any, n: int) -> List[tuple]:
    """(k, TensorListSetItem) for each loop variable k of the body `g` that is only
    written, once, into the body's k-th result: with no history recorded, the loop may
    write that buffer in place (after copying what it starts from)."""
    uses: dict = {}
    for t in [t for op in g.operations for t in op.inputs] + list(g.outputs):
        uses[id(t)] = uses.get(id(t), 0) + 1
    found = []
    for k, var in enumerate(g.inputs[:n]):
        write = next((op for op in g.operations if op.type == "TensorListSetItem" and
                      op.inputs[0] is var), None)
        if write is None or uses.get(id(var)) != 1 or g.outputs[k] is not write.outputs[0] \
                or uses[id(write.outputs[0])] != 1:
            continue
        buffer, value = write.inputs[0].shape, write.inputs[2].shape
        if value.rank is not None and buffer.rank == value.rank + 1 and \
                write.inputs[0].dtype == write.inputs[2].dtype:
            found.append((k, write))
    return found


def statically_empty(buffer: Any) -> bool:
    """A buffer with a 0 element dim: an unwritten TensorArray's [n, 0] start."""
    dims = buffer.shape.as_list() if buffer.shape.rank else []
    return 0 in dims[1:]


def inconsistent(saw: TensorShape, expected: TensorShape) -> ValueError:
    """TF's trace-time error for writes of different element shapes to one TensorArray."""
    return ValueError(f"Inconsistent shapes: saw {_text(saw)} but expected {_text(expected)}"
                      " (TensorArray writes must agree on the element shape)")


def _text(shape: TensorShape) -> str:
    return str(tuple(shape.as_list())) if shape.rank is not None else "<unknown>"


def _has_unknown_rank(operations: Sequence) -> bool:
    for op in operations:
        if any(t.shape.rank is None for t in op.outputs if t.dtype.name != "variant"):
            return True
        for key in ("body_graph", "vjp_graph", "then_branch", "else_branch"):
            sub = op.attrs.get(key) if op.type in LOOPS + BRANCHES + ("WhileGrad",) else None
            if sub is not None and (any(t.shape.rank is None for t in sub.graph.inputs) or
                                    _has_unknown_rank(sub.graph.operations)):
                return True
    return False


class _Refiner:
    def __init__(self, undo: List[tuple]) -> None:
        self.undo = undo
        self.changed: set = set()  # id(tensor) of shapes filled in: their users rerun

    def set(self, t: Any, shape: Optional[TensorShape]) -> None:
        old = t.shape
        if shape is None or shape.rank is None or not old.is_compatible_with(shape):
            return
        new = old.merge_with(shape)
        if old.rank is not None and new.as_list() == old.as_list():
            return
        self.undo.append((t, t._shape))
        t._shape = new
        self.changed.add(id(t))

    def ops(self, operations: Sequence) -> None:
        for op in operations:
            if op.type in LOOPS or op.type == "WhileGrad":
                self.loop(op)
            elif op.type in BRANCHES:
                self.branches(op)
            elif any(id(t) in self.changed for t in op.inputs) or \
                    any(t.shape.rank is None for t in op.outputs):
                self.generic(op)

    def generic(self, op: Any) -> None:
        try:
            specs = op.opdef.shape(*op.inputs, **op.attrs)
        except Exception:  # noqa: BLE001 - a rule that cannot tell leaves the shape as is
            return
        specs = specs if isinstance(specs, (list, tuple)) else [specs]
        for t, spec in zip(op.outputs, specs):
            self.set(t, getattr(spec, "shape", None))

    def feed(self, sub: Any, args: Sequence, captured: Sequence) -> None:
        for placeholder, outer in zip(sub.graph.inputs, sub.feed(list(args), list(captured))):
            self.set(placeholder, outer.shape)

    def loop(self, op: Any) -> None:
        """While, or WhileGrad (the same loop run forwards to record it, then its VJP)."""
        n = op.attrs["n_vars"]
        n_captured = op.attrs.get("n_captured", len(op.inputs) - n)
        initial, captured = op.inputs[:n], op.inputs[n:n + n_captured]
        body, cond = op.attrs["body_graph"], op.attrs["cond_graph"]
        g = body.graph
        self.feed(body, g.inputs[:n], captured)  # the captured placeholders (loop vars: later)
        self.ops(g.operations)
        for k, (placeholder, start) in enumerate(zip(g.inputs[:n], initial)):
            if placeholder.shape.rank is None:
                self.set(placeholder, _loop_shape(g, placeholder, g.outputs[k], start))
        self.ops(g.operations)  # again, now that the loop variables have ranks
        loop_vars = g.inputs[:n]
        self.feed(cond, loop_vars, captured)
        self.ops(cond.graph.operations)
        if op.type != "WhileGrad":
            for t, var in zip(op.outputs[:n], loop_vars):
                self.set(t, var.shape)
            return
        vjp = op.attrs["vjp_graph"]
        self.feed(vjp, list(loop_vars) + list(captured) + list(loop_vars) + list(loop_vars),
                  [])
        self.ops(vjp.graph.operations)
        for t, var in zip(op.outputs[:n], loop_vars):
            self.set(t, var.shape)

    def branches(self, op: Any) -> None:
        captured = op.inputs[1:]
        outs = []
        for key in ("then_branch", "else_branch"):
            sub = op.attrs[key]
            self.feed(sub, [], captured)
            self.ops(sub.graph.operations)
            outs.append(sub.graph.outputs)
        for t, a, b in zip(op.outputs, *outs):
            if a.shape.rank is not None and a.shape.rank == b.shape.rank:
                self.set(t, a.shape.most_specific_common_supertype(b.shape))


def _writes(g: Any, source: Any) -> List[Any]:
    """TensorListSetItem ops writing into the list that enters `g` as `source` (through
    writes, identities and branches): the values one TensorArray receives."""
    derived, found = {id(source)}, []
    for op in g.operations:
        if op.type == "TensorListSetItem" and id(op.inputs[0]) in derived:
            found.append(op)
            derived.add(id(op.outputs[0]))
        elif op.type == "Identity" and id(op.inputs[0]) in derived:
            derived.add(id(op.outputs[0]))
        elif op.type in BRANCHES:
            for k, t in enumerate(op.inputs[1:]):
                if id(t) not in derived:
                    continue
                for key in ("then_branch", "else_branch"):
                    sub = op.attrs[key]
                    fed = sub.feed([], list(op.inputs[1:]))
                    for placeholder, outer in zip(sub.graph.inputs, fed):
                        if outer is t:
                            found += _writes(sub.graph, placeholder)
                derived.update(id(o) for o in op.outputs)  # conservative: a branch result
    return found


def _loop_shape(g: Any, placeholder: Any, result: Any, start: Any) -> Optional[TensorShape]:
    """The shape a TensorArray loop variable keeps: [None] + the element shape its writes
    agree on, relaxed against the starting buffer when that has the same rank."""
    element: Optional[TensorShape] = None
    for write in _writes(g, placeholder):
        value = write.inputs[2].shape
        if value.rank is None:
            continue
        if element is not None and not element.is_compatible_with(value):
            raise inconsistent(value, element)
        element = value if element is None else element.merge_with(value)
    if element is None:  # never written here: the body's result, else the start
        shape = result.shape if result.shape.rank is not None else start.shape
        return shape if shape.rank is not None else None
    shape = TensorShape([None]).concatenate(element)
    if start.shape.rank == shape.rank:
        return shape.most_specific_common_supertype(start.shape)
    return TensorShape([None] * shape.rank)
