"""Graph, Operation, and the GraphDef views: the static form of a computation.

A Graph holds operations in creation (hence topological) order, unique TF-style names
('add', 'add_1', 'dense/MatMul'), control inputs, and the user line that created each op.
bind() adds operations through Graph.create_op. Imports ops (for Const/Placeholder and
shape inference), tensor, context; nothing above.
"""
from __future__ import annotations

import contextlib
import threading

from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence

import numpy as np

from kilnflow import context, errors
from kilnflow import dtypes as _dtypes
from kilnflow.context import ctx
from kilnflow.core.const import CONST, Literal
from kilnflow.core.opdef import OpDef, bind, defop, infer
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import EagerTensor, SymbolicTensor


def _placeholder_kernel(*, dtype: Any, shape: Any) -> Any:
    raise errors.InvalidArgumentError("a placeholder was evaluated without being fed")


PLACEHOLDER = defop("Placeholder", shape=lambda *, dtype, shape: TensorSpec(shape, dtype),
                    kernel=_placeholder_kernel)
NO_OP = defop("NoOp", shape=lambda: [], kernel=lambda: (), multi_output=True)


class Operation:
    """A node: an OpDef applied to input tensors with attrs, producing output tensors."""

    __slots__ = ("name", "opdef", "inputs", "attrs", "outputs", "control_inputs", "graph",
                 "location", "device", "quiet", "__weakref__")

    def __init__(self, graph: "Graph", opdef: OpDef, name: str, inputs: tuple, attrs: dict,
                 control_inputs: list, location: Optional[tuple]):
        self.graph = graph
        self.opdef = opdef
        self.name = name
        self.inputs = inputs
        self.attrs = attrs
        self.control_inputs = control_inputs
        self.location = location
        self.outputs: List[SymbolicTensor] = []
        self.device = graph._device
        self.quiet = ctx.quiet_ops > 0  # see context.quiet_ops

    @property
    def type(self) -> str:
        return self.opdef.name

    @property
    def node_def(self) -> "NodeDef":
        return NodeDef(self)

    def get_attr(self, name: str) -> Any:
        return self.attrs[name]

    def run(self, feed_dict: Any = None, session: Any = None) -> None:
        sess = session or ctx.default_session
        if sess is None:
            raise ValueError("Cannot execute operation using `run()`: No default session is "
                             "registered.")
        sess.run(self, feed_dict)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self.name}' type={self.type}>"


class NodeDef:
    """TF's GraphDef node view: name, op, input ('name', 'name:1', '^control'), attr."""

    __slots__ = ("name", "op", "input", "attr", "device")

    def __init__(self, op: Operation):
        self.name = op.name
        self.op = op.type
        self.input = [_input_name(t) for t in op.inputs] + \
            ["^" + c.name for c in op.control_inputs]
        self.attr = dict(op.attrs)
        self.device = op.device or ""

    def __repr__(self) -> str:
        return f"name: {self.name!r} op: {self.op!r} input: {self.input}"


def _input_name(t: SymbolicTensor) -> str:
    return t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}"


class GraphDef:
    __slots__ = ("node",)

    def __init__(self, nodes: List[NodeDef]):
        self.node = nodes

    def __repr__(self) -> str:
        return "\n".join(repr(n) for n in self.node)


class Graph:
    """A dataflow graph. `with g.as_default():` makes ops build into it (compat.v1 style).

    >>> import kilnflow as kf
    >>> g = kf.Graph()
    >>> with g.as_default():
    ...     c = kf.constant(1.0) + 2.0
    >>> print(c)
    Tensor("add:0", shape=(), dtype=float32)
    """

    is_function = False

    def __init__(self) -> None:
        self._operations: List[Operation] = []
        self._by_name: Dict[str, Operation] = {}
        self._name_counts: Dict[str, int] = {}
        self._scope = ""
        self._device = ""
        self._variables: list = []
        self._captured: Dict[int, SymbolicTensor] = {}
        self._keep_alive: list = []
        self.collections: Dict[str, list] = {}
        self.outer_graph: Optional[Graph] = None
        self.finalized = False

    # ---------------------------------------------------------------- building

    @contextlib.contextmanager
    def as_default(self) -> Iterator["Graph"]:
        with context.building(self):
            yield self

    def create_op(self, opdef: OpDef, inputs: Sequence, attrs: dict,
                  name: Optional[str] = None) -> Operation:
        if self.finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        inputs = tuple(self.capture(t) for t in inputs)
        specs = infer(opdef, inputs, attrs)
        op = Operation(self, opdef, self.unique_name(name or opdef.name), inputs, attrs,
                       self._control_inputs_for(opdef), _user_location())
        op.outputs = [SymbolicTensor(op, i, s.shape, s.dtype) for i, s in enumerate(specs)]
        self._add(op)
        return op

    def _add(self, op: Operation) -> None:
        self._operations.append(op)
        self._by_name[op.name] = op

    def _control_inputs_for(self, opdef: OpDef) -> list:
        deps: list = []
        for group in ctx.control_deps:
            deps.extend(op for op in group if op.graph is self)
        return deps

    def capture(self, t: Any) -> SymbolicTensor:
        """The graph's own tensor for input `t`: eager values become Const nodes."""
        if isinstance(t, SymbolicTensor):
            if t.op.graph is self:
                return t
            return self._capture_symbolic(t)
        if isinstance(t, EagerTensor):
            found = self._captured.get(id(t))
            if found is not None:
                return found
            with context.building(self), self._scope_reset():
                const = bind(CONST, (), {"value": Literal(t._value)})
            self._captured[id(t)] = const
            self._keep_alive.append(t)
            return const
        raise TypeError(f"Expected a tensor, got {t!r}")

    def _capture_symbolic(self, t: SymbolicTensor) -> SymbolicTensor:
        raise ValueError(errors.with_location(
            f"Tensor {t.name} must be from the same graph as the op being created; it belongs "
            f"to another graph. Create it inside `with graph.as_default():` (or pass it as an "
            "argument of the function)."))

    @contextlib.contextmanager
    def _scope_reset(self) -> Iterator[None]:
        saved = self._scope
        self._scope = ""
        try:
            yield
        finally:
            self._scope = saved

    def placeholder(self, dtype: Any, shape: Any, name: Optional[str] = None) -> SymbolicTensor:
        dtype = _dtypes.as_dtype(dtype)
        with context.building(self):
            return bind(PLACEHOLDER, (), {"dtype": dtype,
                                                  "shape": TensorShape(shape)},
                                name or "Placeholder")

    # ---------------------------------------------------------------- names

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """'add', then 'add_1', 'add_2' ... within the current name scope."""
        full = self._scope + name
        count = self._name_counts.get(full, 0)
        unique = full
        if count:
            unique = f"{full}_{count}"
            while unique in self._name_counts:
                count += 1
                unique = f"{full}_{count}"
        if mark_as_used:
            self._name_counts[full] = count + 1
            self._name_counts.setdefault(unique, 1)
        return unique

    @contextlib.contextmanager
    def name_scope(self, name: Optional[str]) -> Iterator[str]:
        saved = self._scope
        if name:
            if name.endswith("/"):
                self._scope = name
            else:
                self._scope = self.unique_name(name) + "/"
        try:
            yield self._scope
        finally:
            self._scope = saved

    @contextlib.contextmanager
    def device(self, device_name: Optional[str]) -> Iterator[None]:
        saved = self._device
        self._device = device_name or ""
        try:
            yield
        finally:
            self._device = saved

    # ---------------------------------------------------------------- lookup

    def get_operations(self) -> List[Operation]:
        return list(self._operations)

    @property
    def operations(self) -> List[Operation]:
        return self._operations

    def get_operation_by_name(self, name: str) -> Operation:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"The name {name!r} refers to an Operation not in the graph.") \
                from None

    def get_tensor_by_name(self, name: str) -> SymbolicTensor:
        if ":" not in name:
            raise ValueError(f"The name {name!r} looks like an (invalid) Operation name, "
                             "not a Tensor. Tensor names must be of the form "
                             "\"<op_name>:<output_index>\".")
        op_name, index = name.rsplit(":", 1)
        op = self.get_operation_by_name(op_name)
        try:
            if not (index.isascii() and index.isdigit()):  # "-1" would count from the end
                raise ValueError(index)
            return op.outputs[int(index)]
        except (IndexError, ValueError):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The "
                           f"operation {op_name!r} has {len(op.outputs)} outputs.") from None

    def add_variable(self, variable: Any) -> None:
        self._variables.append(variable)

    def global_variables(self) -> list:
        return list(self._variables)

    def add_to_collection(self, name: str, value: Any) -> None:
        self.collections.setdefault(name, []).append(value)

    def get_collection(self, name: str) -> list:
        return list(self.collections.get(name, []))

    def finalize(self) -> None:
        self.finalized = True

    # ---------------------------------------------------------------- views

    def as_graph_def(self) -> GraphDef:
        return GraphDef([op.node_def for op in self._operations])

    def lint(self) -> None:
        """Check names, edges, topological order and every shape rule; raise on a problem."""
        seen: set = set()
        names: set = set()
        for op in self._operations:
            if op.name in names:
                raise AssertionError(f"duplicate op name {op.name}")
            names.add(op.name)
            for t in op.inputs:
                if t.op.graph is not self:
                    raise AssertionError(f"{op.name} reads {t.name} from another graph")
                if id(t.op) not in seen:
                    raise AssertionError(f"{op.name} reads {t.name} before it is computed")
            for c in op.control_inputs:
                if id(c) not in seen:
                    raise AssertionError(f"{op.name} has control input {c.name} out of order")
            specs = infer(op.opdef, op.inputs, op.attrs)
            if len(specs) != len(op.outputs):
                raise AssertionError(f"{op.name}: {len(specs)} outputs by rule, "
                                     f"{len(op.outputs)} in graph")
            for s, t in zip(specs, op.outputs):
                if s.dtype is not t.dtype or not s.shape.is_compatible_with(t.shape):
                    raise AssertionError(f"{t.name}: rule says {s.shape} {s.dtype.name}, "
                                         f"graph has {t.shape} {t.dtype.name}")
            seen.add(id(op))

    def __repr__(self) -> str:
        return f"<kilnflow.Graph with {len(self._operations)} ops>"

    def pretty(self) -> str:
        """One line per op, in the style of the generated code."""
        lines = []
        for op in self._operations:
            outs = ", ".join(t.name for t in op.outputs) or "_"
            args = [t.name for t in op.inputs]
            args += [f"{k}={_attr_text(v)}" for k, v in sorted(op.attrs.items())]
            deps = f"  # after {', '.join(c.name for c in op.control_inputs)}" \
                if op.control_inputs else ""
            lines.append(f"{outs} = {op.type}({', '.join(args)}){deps}")
        return "\n".join(lines)


def _attr_text(value: Any) -> str:
    if isinstance(value, Literal):
        array = value.array
        if array.size <= 4:
            return np.array2string(np.asarray(array), separator=",").replace("\n", "")
        return f"<{array.dtype}{list(array.shape)}>"
    if isinstance(value, _dtypes.DType):
        return value.name
    return repr(value)


def _user_location() -> Optional[tuple]:
    frame = errors.user_frame()
    return None if frame is None else (frame[0], frame[1])


def get_default_graph() -> Graph:
    """The graph ops are being added to; in eager mode, a global graph for compat.v1 use."""
    if ctx.graph is not None:
        return ctx.graph
    if ctx.v1_default_graph is None:
        ctx.v1_default_graph = Graph()
    return ctx.v1_default_graph


def reset_default_graph() -> None:
    ctx.v1_default_graph = Graph()


@contextlib.contextmanager
def control_dependencies(control_inputs: Optional[Sequence]) -> Iterator[None]:
    """Ops created inside run after `control_inputs` (ops or tensors)."""
    if ctx.graph is None:  # eager: everything already ran in order
        yield
        return
    ops = []
    for c in control_inputs or []:
        if c is None:
            continue
        ops.append(c.op if isinstance(c, SymbolicTensor) else c)
    ctx.control_deps.append(ops)
    try:
        yield
    finally:
        ctx.control_deps.pop()


_eager_scope = threading.local()  # eagerly, scopes only name things: kept per thread


@contextlib.contextmanager
def _eager_name_scope(name: str) -> Iterator[str]:
    saved = getattr(_eager_scope, "scope", "")
    scope = saved if not name else name if name.endswith("/") else f"{saved}{name}/"
    _eager_scope.scope = scope
    try:
        yield name
    finally:
        _eager_scope.scope = saved


def name_scope(name: str) -> Any:
    """Prefix the names of ops created inside with `name/` (eagerly it only sets the scope
    get_current_name_scope reports)."""
    if ctx.graph is None:
        return _eager_name_scope(name)
    return ctx.graph.name_scope(name)


def current_name_scope() -> str:
    """The name scope ops are created in now, with its trailing slash ('' at top level)."""
    if ctx.graph is None:
        return getattr(_eager_scope, "scope", "")
    with ctx.graph.name_scope(None) as scope:
        return scope


def device(device_name: Optional[str]) -> Any:
    """Accepts '/cpu:0' and GPU names alike: everything runs on the CPU (soft placement)."""
    if ctx.graph is None:
        return contextlib.nullcontext()
    return ctx.graph.device(device_name)


# ---------------------------------------------------------------- attr codecs

class AttrCodec(NamedTuple):
    """How one attr type is written to and read from the JSON graph format.

    encode(value, writer) -> JSON-safe dict fields; decode(fields, reader) -> value. The
    writer offers `graph(g)` (a nested graph) and `variable(handle)` (its saved key); the
    reader offers `graph(data)` and `variable(key)`.
    """
    tag: str
    type: type
    encode: Callable[[Any, Any], dict]
    decode: Callable[[dict, Any], Any]


ATTR_CODECS: Dict[str, AttrCodec] = {}


def register_attr_codec(tag: str, attr_type: type, encode: Callable[[Any, Any], dict],
                        decode: Callable[[dict, Any], Any]) -> None:
    """Declare how attrs of `attr_type` are serialized (called beside the class)."""
    ATTR_CODECS[tag] = AttrCodec(tag, attr_type, encode, decode)


def ops_needed(graph: Graph, roots: Sequence, fed: set) -> list:
    """The ops of `graph`, in graph order, that running `roots` (ops) needs: their inputs and
    control inputs, transitively, not looking past tensors whose id is in `fed`."""
    needed: set = set()
    stack = list(roots)
    while stack:
        op = stack.pop()
        if id(op) in needed:
            continue
        needed.add(id(op))
        stack.extend(t.op for t in op.inputs if id(t) not in fed)
        stack.extend(op.control_inputs)
    return [op for op in graph.operations if id(op) in needed]
