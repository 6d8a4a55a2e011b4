"""FuncGraph: the graph a traced function builds.

Beyond Graph it knows its inputs and outputs, chains stateful ops in program order
(automatic control dependencies), captures tensors of enclosing graphs as extra inputs
(for control-flow branches), and lifts constant-only variable initializers out.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from kilnflow import errors
from kilnflow.graph import Graph, Operation
from kilnflow.runtime import profile_dot
from kilnflow.runtime.interpreter import evaluate
from kilnflow.tensor import SymbolicTensor


class FuncGraph(Graph):
    is_function = True

    def __init__(self, name: str, outer_graph: Optional[Graph] = None):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.inputs: List[SymbolicTensor] = []
        self.outputs: List[SymbolicTensor] = []
        # (outer tensor, inner placeholder) pairs, for graphs nested in another graph
        self.captures: List[tuple] = []
        self._capture_map: Dict[int, SymbolicTensor] = {}
        self._last_stateful: Optional[Operation] = None
        # Control-flow bodies read variables in the enclosing graph and capture the value,
        # so gradients reach the variable through the cond/while op's inputs.
        self.hoist_reads = False
        self.hoisted: Dict[int, Any] = {}

    def to_dot(self, timings: Optional[Dict[str, int]] = None) -> str:
        """Graphviz DOT text: nodes clustered by name scope and user line (profile_dot)."""
        return profile_dot.to_dot(self, timings)

    def to_svg(self, timings: Optional[Dict[str, int]] = None) -> str:
        """SVG of to_dot(), when the `graphviz` package and binary are installed."""
        return profile_dot.to_svg(self, timings)

    def create_op(self, opdef: Any, inputs: Any, attrs: dict,
                  name: Optional[str] = None) -> Operation:
        if self.hoist_reads and opdef.watch_attr is not None and not inputs:
            from kilnflow.context import building
            from kilnflow.core.opdef import bind
            with building(self.outer_graph):
                outer = bind(opdef, (), attrs, name)
            handle = attrs[opdef.watch_attr]
            self.hoisted[id(handle)] = handle
            return self.capture(outer).op
        op = super().create_op(opdef, inputs, attrs, name)
        if opdef.stateful:
            self._last_stateful = op
        return op

    def _control_inputs_for(self, opdef: Any) -> list:
        deps = super()._control_inputs_for(opdef)
        if opdef.stateful and self._last_stateful is not None:
            deps.append(self._last_stateful)  # stateful ops run in program order
        return deps

    def _capture_symbolic(self, t: SymbolicTensor) -> SymbolicTensor:
        graph = self.outer_graph
        while graph is not None and graph is not t.op.graph:
            graph = graph.outer_graph
        if graph is None:
            return super()._capture_symbolic(t)
        found = self._capture_map.get(id(t))
        if found is None:
            found = self.placeholder(t.dtype, t.shape, name=t.op.name.split("/")[-1])
            self._capture_map[id(t)] = found
            self.captures.append((t, found))
        return found

    def evaluate_constant(self, t: SymbolicTensor) -> Any:
        """The value of `t` if it depends on no input (lifting variable initializers)."""
        ancestors: set = set()
        stack = [t.op]
        while stack:
            op = stack.pop()
            if id(op) in ancestors:
                continue
            if op.type == "Placeholder":
                raise ValueError(errors.with_location(
                    "A kf.Variable created in a kf.function must not have an initial value "
                    "that depends on the function's arguments; pass a Python value, an eager "
                    "tensor or a callable"))
            ancestors.add(id(op))
            stack.extend(x.op for x in op.inputs)
        ops = [op for op in self.operations if id(op) in ancestors]
        for op in ops:
            op.quiet = True  # lifted out: that nothing in the graph uses them is expected
        return evaluate(ops, [], [t], [])[0]

    # ---------------------------------------------------------------- for passes

    def empty_like(self) -> "FuncGraph":
        return FuncGraph(self.name, self.outer_graph)

    def finish_copy(self, old: "FuncGraph", tensor_map: Dict[int, Any]) -> None:
        self.inputs = [tensor_map[id(t)] for t in old.inputs]
        self.outputs = [tensor_map[id(t)] for t in old.outputs]
        self.captures = [(outer, tensor_map[id(inner)]) for outer, inner in old.captures]
