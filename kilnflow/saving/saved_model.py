"""kf.saved_model.save / load: concrete functions' graphs as validated JSON plus weights.

A SavedModel directory holds `saved_model.json` (format, version, one graph per signature,
variable table) and `variables.safetensors`. Loading rebuilds each graph against the op
registry and needs none of the original Python code; nothing is executed from the files.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List

import numpy as np

from kilnflow import errors, nest
from kilnflow.function.api import Function
from kilnflow.function.concrete import ConcreteFunction, OutputSlot
from kilnflow.function.func_graph import FuncGraph
from kilnflow.saving.graph_json import GraphFormatError, graph_from_dict, graph_to_dict
from kilnflow.saving import fileio, safetensors, saved_objects
from kilnflow.saving.checkpoint import is_trackable
from kilnflow.shapes import TensorSpec
from kilnflow.variables import Variable

FORMAT = "kilnflow.saved_model"
VERSION = 1
GRAPH_FILE = "saved_model.json"
WEIGHTS_FILE = "variables.safetensors"
MAX_JSON_BYTES = 256 << 20
MAX_JSON_DEPTH = 400  # each nested cond/while adds about seven levels


class SavedModelError(errors.DataLossError, ValueError):
    """A SavedModel directory that is missing, truncated, tampered with, or from another
    version."""


def _fail(path: str, problem: str) -> SavedModelError:
    return SavedModelError(f"{path}: {problem}")


# saved_model.json is sealed: {"sha256": "<64 hex of DOC>", "saved_model": DOC}, so a
# damaged byte anywhere in the graphs is an error naming the file, not a model that
# quietly computes something else. (Files written before the seal are read unsealed.)
_SEAL_HEAD, _SEAL_MID = b'{"sha256": "', b'", "saved_model": '
_SEAL_BODY = len(_SEAL_HEAD) + 64 + len(_SEAL_MID)


def seal(document: dict) -> bytes:
    """The bytes of saved_model.json holding `document` with its checksum."""
    body = json.dumps(document).encode("utf-8")
    return _SEAL_HEAD + hashlib.sha256(body).hexdigest().encode("ascii") + _SEAL_MID + \
        body + b"}"


def _unseal(raw: bytes, path: str) -> bytes:
    if not raw.startswith(_SEAL_HEAD):
        return raw  # an unsealed (older) file: parsed and validated as it is
    digest = raw[len(_SEAL_HEAD):len(_SEAL_HEAD) + 64]
    if raw[len(_SEAL_HEAD) + 64:_SEAL_BODY] != _SEAL_MID or not raw.endswith(b"}"):
        raise _fail(path, "damaged: the checksum wrapper is malformed (truncated?)")
    body = raw[_SEAL_BODY:-1]
    if hashlib.sha256(body).hexdigest().encode("ascii") != digest:
        raise _fail(path, "damaged: its content does not match the sha256 it was saved "
                          "with (a changed or lost byte)")
    return body


def read_document(export_dir: str) -> dict:
    """The parsed saved_model.json of `export_dir` (checksum verified, not validated)."""
    path = os.path.join(os.fspath(export_dir), GRAPH_FILE)
    raw = _unseal(fileio.read_regular_file(path, MAX_JSON_BYTES, "SavedModel graph file"),
                  path)
    return fileio.loads_json(raw, path, lambda problem: _fail(path, problem),
                             max_depth=MAX_JSON_DEPTH)


def write_document(export_dir: str, document: dict) -> None:
    """Replace `export_dir`'s saved_model.json with `document`, sealed (for tools and tests
    that edit a saved model; load() still validates every field)."""
    fileio.write_atomically(os.path.join(os.fspath(export_dir), GRAPH_FILE), seal(document))


def _signatures_of(obj: Any, signatures: Any) -> Dict[str, ConcreteFunction]:
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
    from kilnflow.ops.subgraph import Subgraph
    from kilnflow.ops.state import VariableHandle
    for op in graph.operations:
        for value in op.attrs.values():
            if isinstance(value, VariableHandle):
                found.setdefault(id(value), value)
            elif isinstance(value, Subgraph):
                _handles_in(value.graph, found)


def _encode_template(template: Any) -> Any:
    if isinstance(template, OutputSlot):
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
        return OutputSlot(value)
    if kind == "dict":
        return {k: _decode_template(v) for k, v in value.items()}
    if kind in ("list", "tuple"):
        items = [_decode_template(v) for v in value]
        return items if kind == "list" else tuple(items)
    raise GraphFormatError(f"malformed output structure {data!r}")


DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"


class SaveOptions:
    """Options for saved_model.save (TF's; accepted and recorded, none changes the files)."""

    def __init__(self, namespace_whitelist: Any = None, save_debug_info: bool = False,
                 function_aliases: Any = None, experimental_debug_stripper: bool = False,
                 experimental_io_device: Any = None, experimental_variable_policy: Any = None,
                 experimental_custom_gradients: bool = True,
                 experimental_image_format: bool = False, experimental_skip_saver: bool = False,
                 experimental_sharding_callback: Any = None, extra_tags: Any = None):
        self.namespace_whitelist = namespace_whitelist
        self.save_debug_info = save_debug_info
        self.function_aliases = function_aliases or {}
        self.experimental_io_device = experimental_io_device
        self.experimental_variable_policy = experimental_variable_policy
        self.extra_tags = extra_tags


class LoadOptions:
    """Options for saved_model.load (TF's): accepted and recorded. kilnflow loads all on the
    CPU, and a kilnflow saved model always holds all its variables."""

    def __init__(self, allow_partial_checkpoint: bool = False,
                 experimental_io_device: Any = None, experimental_skip_checkpoint: bool = False,
                 experimental_variable_policy: Any = None,
                 experimental_load_function_aliases: bool = False):
        self.allow_partial_checkpoint = allow_partial_checkpoint
        self.experimental_io_device = experimental_io_device
        self.experimental_skip_checkpoint = experimental_skip_checkpoint
        self.experimental_variable_policy = experimental_variable_policy
        self.experimental_load_function_aliases = experimental_load_function_aliases


def _default_signature(obj: Any) -> Dict[str, ConcreteFunction]:
    """TF's rule: with no `signatures`, a root whose only kf.function method with an
    input_signature is that one exports it as serving_default."""
    if isinstance(obj, Function):
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: obj.get_concrete_function()}
    with_signature = [getattr(obj, name) for name in dir(type(obj))
                      if isinstance(getattr(type(obj), name, None), Function)
                      and getattr(obj, name).input_signature is not None]
    if len(with_signature) == 1:
        return {DEFAULT_SERVING_SIGNATURE_DEF_KEY: with_signature[0].get_concrete_function()}
    return {}


def save(obj: Any, export_dir: str, signatures: Any = None, options: Any = None) -> None:
    """Saves `obj`: its object tree (variables, plain attributes, sub-objects, kf.function
    methods with their traced signatures) and `signatures` (by default serving_default
    from the root's one method with an input_signature)."""
    registry: Dict[str, ConcreteFunction] = {}
    handles: Dict[int, Any] = {}

    def variable_key(v: Variable) -> str:
        handles.setdefault(id(v.handle), v.handle)
        return f"variable_{list(handles).index(id(v.handle))}"

    def function_key(path: str, concrete: ConcreteFunction) -> str:
        base = path.lstrip("./").replace("/", ".") or "function"
        key, n = base, 1
        while key in registry and registry[key] is not concrete:
            key, n = f"{base}#{n}", n + 1
        registry[key] = concrete
        return key

    tree = saved_objects.describe(obj, variable_key, function_key) if is_trackable(obj) \
        else None
    chosen = _default_signature(obj) if signatures is None else _signatures_of(obj, signatures)
    signature_entries = {}
    for name, concrete in chosen.items():
        key = next((k for k, c in registry.items() if c is concrete), None) or \
            function_key(f"signature.{name}", concrete)
        signature_entries[name] = {"function": key, "outputs": saved_objects.output_names(
            concrete._output_template)}
    if not registry and not handles:
        raise ValueError("saved_model.save: nothing to save; pass `signatures=` or give the "
                         "object variables or kf.function methods")
    from kilnflow.passes.prune import prune
    # The traced graph (pruned), not the optimized one: loading optimizes it again, and the
    # fused kernels of this process are not a file format.
    graphs = {name: prune(concrete.traced_graph) for name, concrete in registry.items()}
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
    for name, concrete in registry.items():
        functions[name] = {
            "graph": graph_to_dict(graphs[name], keys),
            "inputs": [{"name": n, "shape": s.shape.dims, "dtype": s.dtype.name}
                       for n, s in concrete._input_specs],
            "arg_names": list(concrete._arg_names),
            "outputs": _encode_template(concrete._output_template),
        }
    write_weights = safetensors.writer(arrays)
    digest = fileio.sha256_of(write_weights)

    def document_for(weights_name: str) -> bytes:
        document = {"format": FORMAT, "version": VERSION, "functions": functions,
                    "variables": entries, "weights": weights_name,
                    "weights_sha256": digest, "signatures": signature_entries}
        if tree is not None:
            document["root"] = tree
        return seal(document)

    os.makedirs(export_dir, exist_ok=True)
    # saved_model.json names the weights it was written with (and their hash), and is
    # replaced last: a crash leaves the old model or the new one, never old graphs with
    # new weights.
    fileio.replace_pair(os.path.join(export_dir, WEIGHTS_FILE), write_weights,
                        os.path.join(export_dir, GRAPH_FILE), document_for)


def load_weights(directory: str, name: str, sha256: Any,
                  graph_path: str) -> Dict[str, np.ndarray]:
    """The weights file's tensors, checked against the hash saved_model.json recorded. The
    file is opened once: the bytes hashed are the bytes loaded."""
    path, fd = fileio.open_data_file(directory, name, "SavedModel weights file")
    try:
        if sha256 is not None:
            mapped = fileio.map_descriptor(fd)
            try:
                if not isinstance(sha256, str) or \
                        hashlib.sha256(mapped).hexdigest() != sha256:
                    raise _fail(path, f"does not match the weights {graph_path} was saved "
                                      "with (modified, or from another save)")
            finally:
                safetensors.close_mapping(mapped)
        return safetensors.read_tensors(fd, path, verify_checksum=sha256 is None)
    finally:
        os.close(fd)


class LoadedModel(saved_objects.LoadedObject):
    """What saved_model.load returns: the saved object rebuilt (its variables, attributes,
    sub-objects and functions), plus `signatures`, `variables` and `trainable_variables`."""

    def __init__(self, signatures: Dict[str, Any], variables: List[Variable]):
        self.signatures = dict(signatures)
        self.variables = list(variables)
        self.trainable_variables = [v for v in variables if v.trainable]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.__dict__.get("__call__") or self.signatures.get(
            DEFAULT_SERVING_SIGNATURE_DEF_KEY)
        if fn is None:
            raise TypeError("This loaded model has no default function to call; use one of "
                            f"{sorted(self.signatures)}")
        return fn(*args, **kwargs)


def contains_saved_model(export_dir: str) -> bool:
    """True when `export_dir` holds a kilnflow SavedModel."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), GRAPH_FILE))


READ_ATTEMPTS = 5


def load(export_dir: str, tags: Any = None, options: Any = None) -> LoadedModel:
    """Loads a SavedModel written by saved_model.save, validating every file.

    A save replacing the model while it is read (its graph file renamed over between our
    reading it and its weights) makes the read start again: the result is the old model or
    the new one, never an error or a mix."""
    export_dir = os.fspath(export_dir)
    graph_path = os.path.join(export_dir, GRAPH_FILE)
    for attempt in range(READ_ATTEMPTS):
        before = fileio.identity(graph_path)
        try:
            return _load_once(export_dir, graph_path)
        except (SavedModelError, errors.NotFoundError):
            if attempt + 1 == READ_ATTEMPTS or fileio.identity(graph_path) in (before, None):
                raise  # unchanged under us: the files are what is wrong (else: read again)
    raise AssertionError("unreachable")


def _load_once(export_dir: str, graph_path: str) -> LoadedModel:
    if not os.path.isfile(graph_path):
        raise _fail(graph_path, "not found: is this a SavedModel directory?")
    document = read_document(export_dir)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise _fail(graph_path, "not a kilnflow SavedModel (wrong 'format')")
    if document.get("version") != VERSION:
        raise _fail(graph_path, f"version {document.get('version')!r} is not supported "
                                f"(this kilnflow reads version {VERSION})")
    weights_name = document.get("weights", WEIGHTS_FILE)
    if not isinstance(weights_name, str) or os.path.basename(weights_name) != weights_name \
            or weights_name in ("", ".", ".."):
        raise _fail(graph_path, f"the weights file name {weights_name!r} must be a plain file "
                                "name in the same directory")
    weights_path = os.path.join(export_dir, weights_name)
    arrays = load_weights(export_dir, weights_name, document.get("weights_sha256"),
                           graph_path)
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
            slots = [x for x in nest.flatten(template) if isinstance(x, OutputSlot)]
            if any(s.index >= len(graph.outputs) for s in slots):
                raise GraphFormatError(f"function {name!r}: output structure refers to a "
                                       "missing output")
            functions[str(name)] = ConcreteFunction(str(name), graph,
                                                    [str(a) for a in spec["arg_names"]],
                                                    inputs, template, None)
        loaded = _assemble(document, functions, variables, dict(zip(
            (str(e["key"]) for e in document["variables"]), variables)))
    except GraphFormatError as exc:
        raise _fail(graph_path, str(exc)) from None
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SavedModelError):
            raise
        raise _fail(graph_path, f"malformed: {type(exc).__name__}: {exc}") from None
    return loaded


def _assemble(document: dict, functions: Dict[str, ConcreteFunction],
              variables: List[Variable], by_key: Dict[str, Variable]) -> LoadedModel:
    """The loaded root: signatures, then the object tree (files without one, from before
    object trees were saved, get one attribute per function)."""
    entries = document.get("signatures")
    if entries is None:
        loaded = LoadedModel(functions, variables)
        for name, fn in functions.items():
            setattr(loaded, name, fn)
        return loaded
    signatures = {}
    for name, entry in entries.items():
        concrete = functions.get(entry["function"])
        if concrete is None or not all(isinstance(n, str) for n in entry["outputs"]):
            raise GraphFormatError(f"signature {name!r} is malformed")
        signatures[str(name)] = saved_objects.ServingSignature(concrete, list(entry["outputs"]))
    loaded = LoadedModel(signatures, variables)
    if "root" in document:
        try:
            saved_objects.rebuild(document["root"], loaded, by_key, functions)
        except saved_objects.TreeError as exc:
            raise GraphFormatError(str(exc)) from None
    return loaded


