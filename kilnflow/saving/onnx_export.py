"""kf.onnx.export: a kf.function (or a Keras model, or any callable) lowered to an ONNX model.

The function's traced graph (before kilnflow's own optimizations, so fused groups appear as
the ops they were made of) is walked op by op; each op type has one lowering in
`onnx_ops.LOWERINGS` that emits ONNX nodes. Variables become initializers holding their
current values; cond and while loops become ONNX If and Loop with their branches and bodies
lowered the same way. An op without a lowering raises UnimplementedError naming the op and
the user line that created it. Needs the optional extra kilnflow[onnx] (the onnx package;
tests also run the model with onnxruntime). The file is written atomically.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.saving import fileio

OPSET = 18
EXTRA = "kf.onnx needs the optional extra kilnflow[onnx]: pip install 'kilnflow[onnx]'"


def import_onnx() -> Any:
    """The onnx package, or ModuleNotFoundError naming the extra."""
    try:
        import onnx
    except ImportError:
        raise ModuleNotFoundError(EXTRA) from None
    return onnx


def onnx_type(dtype: _dtypes.DType) -> int:
    """The ONNX TensorProto element type of a kilnflow dtype."""
    onnx = import_onnx()
    name = {"float32": "FLOAT", "float64": "DOUBLE", "bool": "BOOL"}.get(
        dtype.name, dtype.name.upper())
    value = getattr(onnx.TensorProto, name, None)
    if value is None or dtype.name in ("string", "variant"):
        raise errors.UnimplementedError(f"ONNX export: dtype {dtype.name} has no ONNX type")
    return value


class Converter:
    """Emits ONNX nodes for kilnflow graphs; one per export (names are unique model-wide,
    as ONNX wants even across subgraphs)."""

    def __init__(self) -> None:
        self.onnx = import_onnx()
        self.helper = self.onnx.helper
        self.initializers: list = []
        self.nodes: list = []          # the node list being filled (a subgraph swaps it)
        self._names: set = set()
        self._variables: Dict[int, str] = {}

    def fresh(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_./:-]", "_", base) or "t"
        name, k = base, 0
        while name in self._names:
            k += 1
            name = f"{base}_{k}"
        self._names.add(name)
        return name

    def const(self, value: Any, dtype: Any = None, base: str = "const") -> str:
        """An initializer holding `value` (any array-like); returns its name."""
        array = np.asarray(value, dtype=dtype)
        name = self.fresh(base)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def ints(self, values: Sequence[int], base: str = "ints") -> str:
        return self.const(np.asarray(list(values), np.int64), base=base)

    def node(self, op_type: str, inputs: List[str], base: str, n_out: int = 1,
             **attrs: Any) -> List[str]:
        outputs = [self.fresh(base) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op_type, inputs, outputs,
                                                name=self.fresh(f"{base}/{op_type}"),
                                                **attrs))
        return outputs

    def one(self, op_type: str, inputs: List[str], base: str, **attrs: Any) -> str:
        return self.node(op_type, inputs, base, **attrs)[0]

    def variable(self, handle: Any) -> str:
        """The initializer holding a variable's current value."""
        name = self._variables.get(id(handle))
        if name is None:
            if handle.value is None:
                raise errors.FailedPreconditionError(
                    f"ONNX export: variable {handle.name} is not initialized; run its "
                    "initializer first")
            name = self._variables[id(handle)] = self.const(
                np.asarray(handle.value), base=handle.name.split(":")[0])
        return name

    def value_info(self, name: str, spec: Any) -> Any:
        dims = None if spec.shape.rank is None else list(spec.shape.as_list())
        return self.helper.make_tensor_value_info(name, onnx_type(spec.dtype), dims)

    def lower(self, graph: Any, env: Dict[int, str]) -> None:
        """Emit the ops of `graph` into self.nodes; `env` maps id(tensor) -> ONNX name and
        must already bind the graph's placeholders."""
        from kilnflow.saving.onnx_ops import LOWERINGS
        for op in graph.operations:
            if op.type == "Placeholder":
                if id(op.outputs[0]) not in env:
                    raise errors.UnimplementedError(unmapped(op, "an unbound placeholder"))
                continue
            lowering = LOWERINGS.get(op.type)
            if lowering is None:
                raise errors.UnimplementedError(unmapped(op, "no ONNX mapping"))
            ins = [env[id(t)] for t in op.inputs]
            outs = lowering(self, op, ins)
            for tensor, name in zip(op.outputs, outs):
                env[id(tensor)] = name

    def subgraph(self, name: str, env: Dict[int, str], inputs: list, outputs: Any) -> Any:
        """An ONNX GraphProto: `inputs` are value infos; `outputs(env)` lowers what it needs
        and returns (name, spec) pairs, each exported through an Identity (ONNX needs a
        subgraph's outputs produced inside it)."""
        saved, self.nodes = self.nodes, []
        try:
            pairs = outputs(env)
            infos = []
            for value, spec in pairs:
                out = self.one("Identity", [value], f"{name}/out")
                infos.append(self.value_info(out, spec))
            return self.helper.make_graph(self.nodes, self.fresh(name), inputs, infos)
        finally:
            self.nodes = saved


def unmapped(op: Any, problem: str) -> str:
    where = f" (created at {op.location[0]}:{op.location[1]})" if op.location else ""
    return (f"ONNX export: op {op.name!r} of type {op.type} has {problem}{where}; "
            "kf.onnx.export lowers the ops listed in kilnflow/saving/onnx_ops.py")


def _concrete(function_or_model: Any, input_signature: Optional[Sequence]) -> Any:
    from kilnflow.function.api import Function, function
    from kilnflow.function.concrete import ConcreteFunction
    if isinstance(function_or_model, ConcreteFunction):
        return function_or_model
    if isinstance(function_or_model, Function):
        if input_signature is not None:
            return function_or_model.get_concrete_function(*input_signature)
        if function_or_model.input_signature is None:
            raise ValueError("kf.onnx.export: give input_signature (a list of kf.TensorSpec) "
                             "for a kf.function traced without one")
        return function_or_model.get_concrete_function()
    if not callable(function_or_model):
        raise TypeError(f"kf.onnx.export expects a kf.function, a ConcreteFunction, a Keras "
                        f"model or a callable, got {function_or_model!r}")
    if input_signature is None:
        raise ValueError("kf.onnx.export: give input_signature (a list of kf.TensorSpec) to "
                         f"export {function_or_model!r}")
    model = function_or_model
    return function(lambda *args: model(*args),
                    input_signature=list(input_signature)).get_concrete_function()


def _infer_output_ranks(onnx: Any, model: Any) -> None:
    """Outputs kilnflow knows no rank for get the shape ONNX infers (ONNX wants one)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in model.graph.output:
        if not out.type.tensor_type.HasField("shape"):
            found = known.get(out.name)
            if found is None or not found.type.tensor_type.HasField("shape"):
                raise errors.UnimplementedError(
                    f"ONNX export: the rank of output {out.name!r} is unknown; give the "
                    "function an input_signature that fixes it")
            out.type.tensor_type.shape.CopyFrom(found.type.tensor_type.shape)


def export(function_or_model: Any, path: Optional[str] = None,
           input_signature: Optional[Sequence] = None, opset: int = OPSET,
           output_names: Optional[Sequence[str]] = None) -> Any:
    """Lower `function_or_model` to ONNX; writes it to `path` (atomically) when given, and
    returns the onnx ModelProto (checked by onnx.checker).

    Inputs are named as the function's arguments, outputs `output_0`.. (or `output_names`).
    Variables are saved with their current values.
    """
    onnx = import_onnx()
    concrete = _concrete(function_or_model, input_signature)
    graph = concrete.traced_graph
    cv = Converter()
    env: Dict[int, str] = {}
    inputs = []
    for t in graph.inputs:
        env[id(t)] = cv.fresh(t.op.name)
        inputs.append(cv.value_info(env[id(t)], t))
    cv.lower(graph, env)
    names = list(output_names or [f"output_{i}" for i in range(len(graph.outputs))])
    if len(names) != len(graph.outputs):
        raise ValueError(f"kf.onnx.export: {len(names)} output_names for "
                         f"{len(graph.outputs)} outputs")
    outputs = []
    for t, name in zip(graph.outputs, names):
        if name in cv._names:
            raise ValueError(f"kf.onnx.export: output name {name!r} is already used")
        cv._names.add(name)
        cv.nodes.append(cv.helper.make_node("Identity", [env[id(t)]], [name],
                                            name=cv.fresh(f"{name}/Identity")))
        outputs.append(cv.value_info(name, t))
    onnx_graph = cv.helper.make_graph(cv.nodes, concrete.name or "kilnflow", inputs, outputs,
                                      initializer=cv.initializers)
    model = cv.helper.make_model(onnx_graph, producer_name="kilnflow",
                                 opset_imports=[cv.helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)
    if any(t.shape.rank is None for t in graph.outputs):
        _infer_output_ranks(onnx, model)
    onnx.checker.check_model(model)
    if path is not None:
        path = os.fspath(path)
        fileio.write_atomically(path, model.SerializeToString())
    return model
