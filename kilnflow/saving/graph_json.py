"""The JSON-safe form of a graph, and its validated reconstruction.

Plain attr kinds (Python values, dtypes, shapes, specs, constants) are encoded here; attr
classes of the op families (subgraphs, random streams, variable handles) register their
own codec beside their class (graph.register_attr_codec). Loading checks the format version,
that every op is registered, that edges point backwards, and re-runs each shape rule
against the recorded specs. Nothing in the data is ever executed or unpickled.
"""
from __future__ import annotations

import base64
import math
from typing import Any, Dict, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.function.func_graph import FuncGraph
from kilnflow.graph import ATTR_CODECS, Graph, Operation
from kilnflow.core.const import Literal
from kilnflow.core.opdef import REGISTRY, declared_attrs, infer
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import SymbolicTensor

FORMAT = "kilnflow.graph"
VERSION = 1


class GraphFormatError(ValueError):
    """A serialized graph that is malformed, from another version, or inconsistent."""


class _Writer:
    """What an attr codec may ask while encoding: nested graphs and variable keys."""

    def __init__(self, keys: Dict[int, str]):
        self._keys = keys

    def graph(self, graph: Graph) -> dict:
        return graph_to_dict(graph, self._keys)

    def variable(self, handle: Any) -> str:
        return self._keys.get(id(handle), handle.name)


class _Reader:
    """What an attr codec may ask while decoding: nested graphs and saved variables."""

    def __init__(self, variables: Dict[str, Any]):
        self._variables = variables

    def graph(self, data: Any) -> Graph:
        name = data.get("name", "sub") if isinstance(data, dict) else "sub"
        return graph_from_dict(data, FuncGraph(str(name)), variables=self._variables)

    def variable(self, key: Any) -> Any:
        try:
            return self._variables[key]
        except (KeyError, TypeError):
            raise GraphFormatError(f"graph reads variable {key!r}, which was not "
                                   "provided") from None


def _encode(value: Any, keys: Dict[int, str]) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return {"t": "py", "v": value}
    if isinstance(value, float):
        return {"t": "float", "v": repr(value)} if not math.isfinite(value) else \
            {"t": "py", "v": value}
    if isinstance(value, tuple):
        return {"t": "tuple", "v": [_encode(v, keys) for v in value]}
    if isinstance(value, _dtypes.DType):
        return {"t": "dtype", "v": value.name}
    if isinstance(value, TensorShape):
        return {"t": "shape", "v": value.dims}
    if isinstance(value, TensorSpec):
        return {"t": "spec", "shape": value.shape.dims, "dtype": value.dtype.name,
                "name": value.name}
    if isinstance(value, Literal):
        array = np.array(value.array, order="C", copy=True)
        return {"t": "array", "dtype": _dtypes.from_numpy(array.dtype).name,
                "shape": list(array.shape),
                "data": base64.b64encode(array.astype(array.dtype.newbyteorder("<"))
                                         .tobytes()).decode("ascii")}
    for codec in ATTR_CODECS.values():
        if isinstance(value, codec.type):
            return {"t": codec.tag, **codec.encode(value, _Writer(keys))}
    raise TypeError(f"Cannot serialize attr of type {type(value).__name__}: {value!r}")


def _decode(data: Any, variables: Dict[str, Any]) -> Any:
    if not isinstance(data, dict) or "t" not in data:
        raise GraphFormatError(f"malformed attr {data!r}")
    kind = data["t"]
    if kind == "py":
        if not (data["v"] is None or isinstance(data["v"], (bool, int, float, str))):
            raise GraphFormatError(f"malformed attr value {data['v']!r}")
        return data["v"]
    if kind == "float":
        if data["v"] not in ("inf", "-inf", "nan"):
            raise GraphFormatError(f"malformed float {data['v']!r}")
        return float(data["v"])
    if kind == "tuple":
        return tuple(_decode(v, variables) for v in data["v"])
    if kind == "dtype":
        return _dtypes.as_dtype(data["v"])
    if kind == "shape":
        return TensorShape(data["v"])
    if kind == "spec":
        return TensorSpec(data["shape"], data["dtype"], data.get("name"))
    if kind == "array":
        dtype = _dtypes.as_dtype(data["dtype"]).as_numpy_dtype
        raw = base64.b64decode(data["data"], validate=True)
        shape = tuple(int(d) for d in data["shape"])
        expected = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if len(raw) != expected:
            raise GraphFormatError(f"constant data has {len(raw)} bytes, expected {expected}")
        array = np.frombuffer(raw, np.dtype(dtype).newbyteorder("<")).astype(dtype)
        return Literal(array.reshape(shape))
    codec = ATTR_CODECS.get(kind)
    if codec is not None:
        fields = {k: v for k, v in data.items() if k != "t"}
        return codec.decode(fields, _Reader(variables))
    raise GraphFormatError(f"unknown attr kind {kind!r}")


def _tensor_name(t: SymbolicTensor) -> str:
    return f"{t.op.name}:{t.value_index}"


def graph_to_dict(graph: Graph, variable_keys: Optional[Dict[int, str]] = None) -> dict:
    """`variable_keys` maps id(VariableHandle) -> the name to record (default: its name)."""
    keys = variable_keys or {}
    nodes = []
    for op in graph.operations:
        nodes.append({
            "name": op.name, "op": op.type,
            "inputs": [_tensor_name(t) for t in op.inputs],
            "control_inputs": [c.name for c in op.control_inputs],
            "attrs": {k: _encode(v, keys) for k, v in op.attrs.items()},
            "outputs": [{"shape": t.shape.dims, "dtype": t.dtype.name} for t in op.outputs],
        })
    data = {"format": FORMAT, "version": VERSION, "name": getattr(graph, "name", ""),
            "nodes": nodes}
    if graph.is_function:
        data["inputs"] = [_tensor_name(t) for t in graph.inputs]
        data["outputs"] = [_tensor_name(t) for t in graph.outputs]
    return data


def graph_from_dict(data: Any, graph: Graph, variables: Optional[Dict[str, Any]] = None
                    ) -> Graph:
    """Rebuild `data` into the empty `graph`, validating everything."""
    variables = variables or {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise GraphFormatError("not a kilnflow graph (missing or wrong 'format')")
    if data.get("version") != VERSION:
        raise GraphFormatError(f"graph format version {data.get('version')!r} is not "
                               f"supported (this kilnflow reads version {VERSION})")
    tensors: Dict[str, SymbolicTensor] = {}
    ops: Dict[str, Operation] = {}
    try:
        for node in data["nodes"]:
            opdef = REGISTRY.get(node["op"])
            if opdef is None:
                raise GraphFormatError(f"unknown op type {node['op']!r} (node {node['name']!r})")
            name = str(node["name"])
            if name in ops:
                raise GraphFormatError(f"duplicate node name {name!r}")
            try:
                inputs = tuple(tensors[i] for i in node["inputs"])
                controls = [ops[c] for c in node["control_inputs"]]
            except KeyError as exc:
                raise GraphFormatError(f"node {name!r} reads {exc.args[0]!r}, which is not "
                                       "defined before it") from None
            allowed = declared_attrs(opdef, len(inputs))
            unknown = [k for k in node["attrs"] if k not in allowed]
            if unknown:
                raise GraphFormatError(f"node {name!r}: {opdef.name} has no attr "
                                       f"{unknown[0]!r} (it takes {sorted(allowed)})")
            attrs = {k: _decode(v, variables) for k, v in node["attrs"].items()}
            op = Operation(graph, opdef, name, inputs, attrs, controls, None)
            specs = infer(opdef, inputs, attrs)
            recorded = [TensorSpec(o["shape"], o["dtype"]) for o in node["outputs"]]
            if len(specs) != len(recorded) or any(
                    s.dtype is not r.dtype or not s.shape.is_compatible_with(r.shape)
                    for s, r in zip(specs, recorded)):
                raise GraphFormatError(f"node {name!r}: recorded outputs {recorded} do not "
                                       f"match what {opdef.name} computes ({specs})")
            op.outputs = [SymbolicTensor(op, i, r.shape, r.dtype)
                          for i, r in enumerate(recorded)]
            graph._add(op)
            graph._name_counts.setdefault(name, 1)
            ops[name] = op
            for t in op.outputs:
                tensors[_tensor_name(t)] = t
        if "inputs" in data:
            graph.inputs = [tensors[n] for n in data["inputs"]]
            graph.outputs = [tensors[n] for n in data["outputs"]]
    except GraphFormatError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise GraphFormatError(f"malformed graph: {type(exc).__name__}: {exc}") from None
    return graph
