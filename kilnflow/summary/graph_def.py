"""A traced kilnflow graph as a TensorFlow GraphDef proto, for TensorBoard's Graphs
dashboard: op types, names with their name scopes (TensorBoard groups on `/`), edges and
control edges, output dtypes and shapes as attributes, simple attrs as values, and the
bodies of cond / while ops as functions of the proto's library.

Reads the graph only (ops, inputs, attrs); the protos come from the `tensorboard` package.
"""
from __future__ import annotations

from typing import Any, Dict

from kilnflow import dtypes as _dtypes

_TF_NAMES = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}


def datatype(dtype: Any) -> int:
    """The TF DataType enum value of a kilnflow DType (DT_INVALID when TF has none)."""
    from tensorboard.compat.proto import types_pb2
    name = _TF_NAMES.get(dtype.name, "DT_" + dtype.name.upper())
    try:
        return types_pb2.DataType.Value(name)
    except ValueError:
        return types_pb2.DT_INVALID


def _shape_proto(shape: Any) -> Any:
    from tensorboard.compat.proto import tensor_shape_pb2
    proto = tensor_shape_pb2.TensorShapeProto()
    if shape.rank is None:
        proto.unknown_rank = True
        return proto
    for dim in shape.as_list():
        proto.dim.add(size=-1 if dim is None else int(dim))
    return proto


def _attr_value(value: Any, functions: Dict[int, Any]) -> Any:
    """An AttrValue for `value`, or None for attrs TensorBoard cannot show."""
    from tensorboard.compat.proto import attr_value_pb2
    attr = attr_value_pb2.AttrValue
    if isinstance(value, bool):
        return attr(b=value)
    if isinstance(value, int):
        return attr(i=value)
    if isinstance(value, float):
        return attr(f=value)
    if isinstance(value, str):
        return attr(s=value.encode("utf-8"))
    if isinstance(value, _dtypes.DType):
        return attr(type=datatype(value))
    sub = getattr(value, "graph", None)
    if sub is not None and hasattr(sub, "operations"):  # a cond / while body (Subgraph)
        name = _add_function(sub, functions)
        return attr(func=attr_value_pb2.NameAttrList(name=name))
    if isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool)
                                        for v in value):
        return attr(list=attr_value_pb2.AttrValue.ListValue(i=list(value)))
    if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
        return attr(list=attr_value_pb2.AttrValue.ListValue(s=[v.encode() for v in value]))
    array = getattr(value, "array", None)
    if array is not None and getattr(array, "size", 1e9) <= 16:  # a small constant's value
        from tensorboard.util import tensor_util
        try:
            return attr(tensor=tensor_util.make_tensor_proto(array))
        except (TypeError, ValueError):
            return attr(s=repr(array.tolist()).encode())
    return None


def _node(op: Any, functions: Dict[int, Any]) -> Any:
    from tensorboard.compat.proto import attr_value_pb2, node_def_pb2
    node = node_def_pb2.NodeDef(name=op.name, op=op.type, device=op.device or "")
    for t in op.inputs:
        node.input.append(t.op.name if t.value_index == 0 else f"{t.op.name}:{t.value_index}")
    node.input.extend("^" + c.name for c in op.control_inputs)
    for key, value in op.attrs.items():
        proto = _attr_value(value, functions)
        if proto is not None:
            if proto.HasField("func") and key.endswith("_graph"):
                key = key[:-len("_graph")]  # TF's While names them `cond` and `body`
            node.attr[key].CopyFrom(proto)
    if op.outputs:
        node.attr["T"].CopyFrom(attr_value_pb2.AttrValue(type=datatype(op.outputs[0].dtype)))
        shapes = attr_value_pb2.AttrValue.ListValue(
            shape=[_shape_proto(t.shape) for t in op.outputs])
        node.attr["_output_shapes"].CopyFrom(attr_value_pb2.AttrValue(list=shapes))
    if op.location:
        node.attr["_source_line"].CopyFrom(
            attr_value_pb2.AttrValue(s=f"{op.location[0]}:{op.location[1]}".encode()))
    return node


def _add_function(graph: Any, functions: Dict[int, Any]) -> str:
    from tensorboard.compat.proto import function_pb2, op_def_pb2
    if id(graph) in functions:
        return functions[id(graph)].signature.name
    name = f"{graph.name}_{len(functions)}"
    fdef = function_pb2.FunctionDef(signature=op_def_pb2.OpDef(name=name))
    functions[id(graph)] = fdef
    for i, t in enumerate(graph.inputs):
        fdef.signature.input_arg.add(name=f"arg{i}", type=datatype(t.dtype))
    for i, t in enumerate(graph.outputs):
        fdef.signature.output_arg.add(name=f"out{i}", type=datatype(t.dtype))
    for op in graph.operations:
        fdef.node_def.append(_node(op, functions))
    return name


def graph_def(graph: Any) -> Any:
    """A tensorboard GraphDef proto of `graph` (nodes in order, library of bodies)."""
    from tensorboard.compat.proto import graph_pb2, versions_pb2
    functions: Dict[int, Any] = {}
    proto = graph_pb2.GraphDef(versions=versions_pb2.VersionDef(producer=1882))
    for op in graph.operations:
        proto.node.append(_node(op, functions))
    proto.library.function.extend(functions.values())
    return proto
