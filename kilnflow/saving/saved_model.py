"""kf.saved_model.save / load: concrete functions' graphs as validated JSON plus weights.

A SavedModel directory holds `saved_model.json` (format, version, one graph per signature,
variable table) and `variables.safetensors`. Loading rebuilds each graph against the op
registry and needs none of the original Python code; nothing is executed from the files.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List

import numpy as np

from kilnflow import errors, nest
from kilnflow.function.api import Function
from kilnflow.function.concrete import ConcreteFunction, _Slot
from kilnflow.function.func_graph import FuncGraph
from kilnflow.graph_json import GraphFormatError, graph_from_dict, graph_to_dict
from kilnflow.saving import safetensors
from kilnflow.shapes import TensorSpec
from kilnflow.variables import Variable

FORMAT = "kilnflow.saved_model"
VERSION = 1
GRAPH_FILE = "saved_model.json"
WEIGHTS_FILE = "variables.safetensors"
MAX_JSON_BYTES = 256 << 20


class SavedModelError(errors.DataLossError, ValueError):
    """A SavedModel directory that is missing, truncated, tampered with, or from another
    version."""


def _fail(path: str, problem: str) -> SavedModelError:
    return SavedModelError(f"{path}: {problem}")


def _signatures_of(obj: Any, signatures: Any) -> Dict[str, ConcreteFunction]:
    if signatures is None:
        found = {}
        for name in dir(type(obj)):
            attr = getattr(type(obj), name, None)
            if isinstance(attr, Function):
                bound = getattr(obj, name)
                if bound.input_signature is not None:
                    found[name] = bound.get_concrete_function()
                elif bound._cache:
                    found[name] = next(iter(bound._cache.values()))
        if isinstance(obj, Function):
            found["serving_default"] = obj.get_concrete_function()
        return found
    if isinstance(signatures, dict):
        return {k: _concrete(v) for k, v in signatures.items()}
    return {"serving_default": _concrete(signatures)}


def _concrete(f: Any) -> ConcreteFunction:
    if isinstance(f, ConcreteFunction):
        return f
    if isinstance(f, Function):
        return f.get_concrete_function()
    raise TypeError(f"A signature must be a kf.function or ConcreteFunction, got {f!r}")


def _handles_in(graph: Any, found: Dict[int, Any]) -> None:
    from kilnflow.ops.control_flow import Subgraph
    from kilnflow.ops.state import VariableHandle
    for op in graph.operations:
        for value in op.attrs.values():
            if isinstance(value, VariableHandle):
                found.setdefault(id(value), value)
            elif isinstance(value, Subgraph):
                _handles_in(value.graph, found)


def _encode_template(template: Any) -> Any:
    if isinstance(template, _Slot):
        return {"slot": template.index}
    if template is None:
        return None
    if isinstance(template, dict):
        return {"dict": {str(k): _encode_template(v) for k, v in template.items()}}
    if isinstance(template, (list, tuple)):
        return {"list" if isinstance(template, list) else "tuple":
                [_encode_template(v) for v in template]}
    raise TypeError(f"Cannot save a function returning {type(template).__name__} values")


def _decode_template(data: Any) -> Any:
    if data is None:
        return None
    if not isinstance(data, dict) or len(data) != 1:
        raise GraphFormatError(f"malformed output structure {data!r}")
    (kind, value), = data.items()
    if kind == "slot":
        if type(value) is not int or value < 0:
            raise GraphFormatError(f"malformed output slot {value!r}")
        return _Slot(value)
    if kind == "dict":
        return {k: _decode_template(v) for k, v in value.items()}
    if kind in ("list", "tuple"):
        items = [_decode_template(v) for v in value]
        return items if kind == "list" else tuple(items)
    raise GraphFormatError(f"malformed output structure {data!r}")


def save(obj: Any, export_dir: str, signatures: Any = None, options: Any = None) -> None:
    """Saves `obj`'s traced functions (or `signatures`) and the variables they use."""
    concretes = _signatures_of(obj, signatures)
    if not concretes:
        raise ValueError("saved_model.save: nothing to save; pass `signatures=` or give the "
                         "object kf.function methods with an input_signature")
    from kilnflow.passes.prune import prune
    # The traced graph (pruned), not the optimized one: loading optimizes it again, and the
    # fused kernels of this process are not a file format.
    graphs = {name: prune(concrete.traced_graph) for name, concrete in concretes.items()}
    handles: Dict[int, Any] = {}
    for graph in graphs.values():
        _handles_in(graph, handles)
    keys = {hid: f"variable_{i}" for i, hid in enumerate(handles)}
    entries = []
    arrays = {}
    for hid, handle in handles.items():
        key = keys[hid]
        arrays[key] = np.asarray(handle.read())
        entries.append({"key": key, "name": handle.name, "trainable": bool(handle.trainable)})
    functions = {}
    for name, concrete in concretes.items():
        functions[name] = {
            "graph": graph_to_dict(graphs[name], keys),
            "inputs": [{"name": n, "shape": s.shape.dims, "dtype": s.dtype.name}
                       for n, s in concrete._input_specs],
            "arg_names": list(concrete._arg_names),
            "outputs": _encode_template(concrete._output_template),
        }
    document = {"format": FORMAT, "version": VERSION, "functions": functions,
                "variables": entries}
    os.makedirs(export_dir, exist_ok=True)
    safetensors.save_file(arrays, os.path.join(export_dir, WEIGHTS_FILE))
    with open(os.path.join(export_dir, GRAPH_FILE), "w", encoding="utf-8") as f:
        json.dump(document, f)


class LoadedModel:
    """What saved_model.load returns: one callable attribute per saved function, plus
    `signatures` and `variables`."""

    def __init__(self, functions: Dict[str, ConcreteFunction], variables: List[Variable]):
        self.signatures = dict(functions)
        self.variables = list(variables)
        self.trainable_variables = [v for v in variables if v.trainable]
        for name, fn in functions.items():
            setattr(self, name, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.signatures.get("serving_default") or self.signatures.get("__call__")
        if fn is None:
            raise TypeError("This loaded model has no default function to call; use one of "
                            f"{sorted(self.signatures)}")
        return fn(*args, **kwargs)


def load(export_dir: str, tags: Any = None, options: Any = None) -> LoadedModel:
    """Loads a SavedModel written by saved_model.save, validating every file."""
    graph_path = os.path.join(export_dir, GRAPH_FILE)
    weights_path = os.path.join(export_dir, WEIGHTS_FILE)
    if not os.path.isfile(graph_path):
        raise _fail(graph_path, "not found: is this a SavedModel directory?")
    if os.path.getsize(graph_path) > MAX_JSON_BYTES:
        raise _fail(graph_path, "file is too large")
    try:
        with open(graph_path, "r", encoding="utf-8") as f:
            document = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _fail(graph_path, f"not valid JSON (truncated or corrupt?): {exc}") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise _fail(graph_path, "not a kilnflow SavedModel (wrong 'format')")
    if document.get("version") != VERSION:
        raise _fail(graph_path, f"version {document.get('version')!r} is not supported "
                                f"(this kilnflow reads version {VERSION})")
    arrays = safetensors.load_file(weights_path)
    try:
        variables, handles = [], {}
        for entry in document["variables"]:
            key = str(entry["key"])
            if key not in arrays:
                raise _fail(weights_path, f"missing tensor {key!r}")
            v = Variable(arrays[key], trainable=bool(entry["trainable"]),
                         name=str(entry["name"]).split(":")[0])
            variables.append(v)
            handles[key] = v.handle
        functions = {}
        for name, spec in document["functions"].items():
            graph = graph_from_dict(spec["graph"], FuncGraph(str(name)), variables=handles)
            inputs = [(str(i["name"]), TensorSpec(i["shape"], i["dtype"]))
                      for i in spec["inputs"]]
            if len(inputs) != len(graph.inputs):
                raise GraphFormatError(f"function {name!r}: {len(inputs)} input specs for "
                                       f"{len(graph.inputs)} graph inputs")
            template = _decode_template(spec["outputs"])
            slots = [x for x in nest.flatten(template) if isinstance(x, _Slot)]
            if any(s.index >= len(graph.outputs) for s in slots):
                raise GraphFormatError(f"function {name!r}: output structure refers to a "
                                       "missing output")
            functions[str(name)] = ConcreteFunction(str(name), graph,
                                                    [str(a) for a in spec["arg_names"]],
                                                    inputs, template, None)
    except GraphFormatError as exc:
        raise _fail(graph_path, str(exc)) from None
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SavedModelError):
            raise
        raise _fail(graph_path, f"malformed: {type(exc).__name__}: {exc}") from None
    return LoadedModel(functions, variables)


