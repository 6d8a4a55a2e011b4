"""tf.compat.v1.saved_model: TF 1's SavedModelBuilder and loader over kilnflow's files.

A TF 1 saved model is a Session's graph, the values of its variables and named signatures
(SignatureDefs mapping keys to tensor names), under one or more tag sets. Builder writes
them to `saved_model_v1.json` (the graph as kilnflow's validated graph JSON, the tag sets
and signatures) and `variables_v1.safetensors`; loader.load rebuilds the graph into a
Session's graph with the variables restored and returns a MetaGraphDef whose signature_def
names the tensors to feed and fetch. TF 2's names (load, save, the constants) are here too,
as in TF's compat.v1.
"""
from __future__ import annotations

import json
import os
from types import SimpleNamespace
from typing import Any, Dict, List, Optional

import numpy as np

from kilnflow import errors
from kilnflow.context import eager_mode
from kilnflow.saving import fileio, safetensors
from kilnflow.saving.graph_json import GraphFormatError, graph_from_dict, graph_to_dict
from kilnflow.saving.saved_model import load_weights
from kilnflow.saved_model import save as save  # noqa: F401
from kilnflow.saved_model import DEFAULT_SERVING_SIGNATURE_DEF_KEY as DEFAULT_SERVING_SIGNATURE_DEF_KEY  # noqa: F401
from kilnflow.saved_model import SaveOptions as SaveOptions  # noqa: F401
from kilnflow.saved_model import LoadOptions as LoadOptions  # noqa: F401
from kilnflow.saved_model import contains_saved_model as contains_saved_model  # noqa: F401
from kilnflow.saved_model import SERVING as SERVING  # noqa: F401
from kilnflow.saved_model import TRAINING as TRAINING  # noqa: F401
from kilnflow.saved_model import GPU as GPU  # noqa: F401
from kilnflow.saved_model import TPU as TPU  # noqa: F401
from kilnflow.saved_model import ASSETS_KEY as ASSETS_KEY  # noqa: F401
from kilnflow.saved_model import PREDICT_METHOD_NAME as PREDICT_METHOD_NAME  # noqa: F401
from kilnflow.saved_model import PREDICT_INPUTS as PREDICT_INPUTS  # noqa: F401
from kilnflow.saved_model import PREDICT_OUTPUTS as PREDICT_OUTPUTS  # noqa: F401
from kilnflow.saved_model import CLASSIFY_METHOD_NAME as CLASSIFY_METHOD_NAME  # noqa: F401
from kilnflow.saved_model import CLASSIFY_INPUTS as CLASSIFY_INPUTS  # noqa: F401
from kilnflow.saved_model import CLASSIFY_OUTPUT_CLASSES as CLASSIFY_OUTPUT_CLASSES  # noqa: F401
from kilnflow.saved_model import CLASSIFY_OUTPUT_SCORES as CLASSIFY_OUTPUT_SCORES  # noqa: F401
from kilnflow.saved_model import REGRESS_METHOD_NAME as REGRESS_METHOD_NAME  # noqa: F401
from kilnflow.saved_model import REGRESS_INPUTS as REGRESS_INPUTS  # noqa: F401
from kilnflow.saved_model import REGRESS_OUTPUTS as REGRESS_OUTPUTS  # noqa: F401
from kilnflow.shapes import TensorShape
from kilnflow.variables import Variable

GRAPH_FILE = "saved_model_v1.json"
WEIGHTS_FILE = "variables_v1.safetensors"
FORMAT = "kilnflow-saved-model-v1"
VERSION = 1
MAX_JSON_BYTES = 1 << 30


class TensorInfo:
    """Names one tensor of a signature: `name` ("x:0"), `dtype` and `tensor_shape`."""

    def __init__(self, name: str, dtype: Any, tensor_shape: Any):
        self.name = name
        self.dtype = dtype
        self.tensor_shape = TensorShape(tensor_shape)

    def __repr__(self) -> str:
        return f"TensorInfo(name={self.name!r}, dtype={self.dtype!r}, " \
               f"tensor_shape={self.tensor_shape})"


class SignatureDef:
    """`inputs` and `outputs` map keys to TensorInfos; `method_name` is TF's method."""

    def __init__(self, inputs: Dict[str, TensorInfo], outputs: Dict[str, TensorInfo],
                 method_name: str = ""):
        self.inputs = dict(inputs)
        self.outputs = dict(outputs)
        self.method_name = method_name

    def __repr__(self) -> str:
        return f"SignatureDef(inputs={self.inputs}, outputs={self.outputs}, " \
               f"method_name={self.method_name!r})"


class MetaGraphDef:
    """What loader.load returns: the tag set (`meta_info_def.tags`) and `signature_def`."""

    def __init__(self, tags: List[str], signature_def: Dict[str, SignatureDef]):
        self.meta_info_def = SimpleNamespace(tags=list(tags))
        self.signature_def = signature_def


def build_tensor_info(tensor: Any) -> TensorInfo:
    """The TensorInfo of a graph tensor (or a variable: its read tensor)."""
    tensor = getattr(tensor, "_graph_read", tensor)
    if not hasattr(tensor, "op"):
        raise RuntimeError("build_tensor_info is not supported in eager execution: it needs a "
                           f"graph tensor, got {tensor!r}")
    return TensorInfo(tensor.name, tensor.dtype, tensor.shape)


def build_signature_def(inputs: Optional[Dict[str, TensorInfo]] = None,
                        outputs: Optional[Dict[str, TensorInfo]] = None,
                        method_name: Optional[str] = None) -> SignatureDef:
    """A SignatureDef from TensorInfo maps."""
    return SignatureDef(inputs or {}, outputs or {}, method_name or "")


def predict_signature_def(inputs: Dict[str, Any], outputs: Dict[str, Any]) -> SignatureDef:
    """A predict SignatureDef from maps of keys to graph tensors."""
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return SignatureDef({k: build_tensor_info(t) for k, t in inputs.items()},
                        {k: build_tensor_info(t) for k, t in outputs.items()},
                        PREDICT_METHOD_NAME)


def _encode_signatures(signature_def_map: Optional[Dict[str, SignatureDef]]) -> dict:
    def infos(table: Dict[str, TensorInfo]) -> dict:
        return {str(k): {"name": i.name, "dtype": i.dtype.name, "shape": i.tensor_shape.dims}
                for k, i in table.items()}
    return {str(key): {"inputs": infos(sig.inputs), "outputs": infos(sig.outputs),
                       "method_name": sig.method_name}
            for key, sig in (signature_def_map or {}).items()}


def _decode_signatures(data: dict, graph: Any) -> Dict[str, SignatureDef]:
    def infos(table: dict) -> Dict[str, TensorInfo]:
        out = {}
        for k, i in table.items():
            t = graph.get_tensor_by_name(str(i["name"]))  # must exist in the loaded graph
            out[str(k)] = TensorInfo(t.name, t.dtype, t.shape)
        return out
    return {str(key): SignatureDef(infos(sig["inputs"]), infos(sig["outputs"]),
                                   str(sig.get("method_name", "")))
            for key, sig in data.items()}


class Builder:
    """TF 1's SavedModelBuilder: add_meta_graph_and_variables once, add_meta_graph for more
    tag sets, then save(). The export directory must not exist yet (or be empty)."""

    def __init__(self, export_dir: str):
        export_dir = os.fspath(export_dir)
        if os.path.exists(export_dir) and os.listdir(export_dir):
            raise AssertionError(
                f"Export directory {export_dir} already exists, and isn't empty. Please choose "
                "a different export directory, or delete all the contents of the specified "
                "directory.")
        self._export_dir = export_dir
        self._meta_graphs: List[dict] = []
        self._arrays: Optional[Dict[str, np.ndarray]] = None
        self._entries: List[dict] = []

    def add_meta_graph_and_variables(self, sess: Any, tags: Any,
                                     signature_def_map: Optional[dict] = None,
                                     assets_collection: Any = None, legacy_init_op: Any = None,
                                     clear_devices: bool = False, main_op: Any = None,
                                     strip_default_attrs: bool = False, saver: Any = None,
                                     init_op: Any = None, train_op: Any = None) -> None:
        """Record `sess`'s graph under `tags`, with its variables' current values."""
        if self._arrays is not None:
            raise AssertionError("Graph state including variables and assets has already been "
                                 "saved. Please invoke `add_meta_graph()` instead.")
        self._arrays = {}
        for variable in sess.graph.global_variables():
            key = variable.name[:-2] if variable.name.endswith(":0") else variable.name
            self._arrays[key] = np.asarray(variable.handle.read())
            self._entries.append({"key": key, "trainable": bool(variable.trainable)})
        self._add(sess.graph, tags, signature_def_map)

    def add_meta_graph(self, tags: Any, signature_def_map: Optional[dict] = None,
                       assets_collection: Any = None, legacy_init_op: Any = None,
                       clear_devices: bool = False, main_op: Any = None,
                       strip_default_attrs: bool = False, saver: Any = None,
                       init_op: Any = None, train_op: Any = None) -> None:
        """Record the default graph under another tag set, sharing the saved variables."""
        if self._arrays is None:
            raise AssertionError("Graph state including variables and assets has not been "
                                 "saved yet. Please invoke `add_meta_graph_and_variables()` "
                                 "first.")
        from kilnflow.compat.v1 import get_default_graph
        self._add(get_default_graph(), tags, signature_def_map)

    def _add(self, graph: Any, tags: Any, signature_def_map: Optional[dict]) -> None:
        tags = [tags] if isinstance(tags, str) else [str(t) for t in (tags or [])]
        if any(set(m["tags"]) == set(tags) for m in self._meta_graphs):
            raise AssertionError(f"MetaGraphDef with tags {tags} has already been added")
        keys = {id(v.handle): (v.name[:-2] if v.name.endswith(":0") else v.name)
                for v in graph.global_variables()}
        self._meta_graphs.append({"tags": tags, "graph": graph_to_dict(graph, keys),
                                  "signature_def": _encode_signatures(signature_def_map)})

    def save(self, as_text: bool = False) -> bytes:
        """Write the saved model (atomically: the graph file names its weights last);
        returns the graph file's path as bytes, as TF does."""
        if self._arrays is None:
            raise AssertionError("add_meta_graph_and_variables() must be called before save()")
        os.makedirs(self._export_dir, exist_ok=True)
        write_weights = safetensors.writer(self._arrays)
        digest = fileio.sha256_of(write_weights)

        def document_for(weights_name: str) -> bytes:
            return json.dumps({"format": FORMAT, "version": VERSION, "weights": weights_name,
                               "weights_sha256": digest, "variables": self._entries,
                               "meta_graphs": self._meta_graphs}).encode("utf-8")
        graph_path = os.path.join(self._export_dir, GRAPH_FILE)
        fileio.replace_pair(os.path.join(self._export_dir, WEIGHTS_FILE), write_weights,
                            graph_path, document_for)
        return graph_path.encode("utf-8")


SavedModelBuilder = Builder


def simple_save(session: Any, export_dir: str, inputs: Dict[str, Any], outputs: Dict[str, Any],
                legacy_init_op: Any = None) -> None:
    """Save `session`'s graph and variables with one predict signature (serving_default)
    under the "serve" tag."""
    builder = Builder(export_dir)
    builder.add_meta_graph_and_variables(
        session, ["serve"], {"serving_default": predict_signature_def(inputs, outputs)})
    builder.save()


def _fail(path: str, problem: str) -> errors.DataLossError:
    return errors.DataLossError(f"{path}: {problem}")


def maybe_saved_model_directory(export_dir: str) -> bool:
    """True when `export_dir` holds a TF 1-style saved model written by Builder."""
    return os.path.isfile(os.path.join(os.fspath(export_dir), GRAPH_FILE))


def load(sess: Any, tags: Any, export_dir: str, import_scope: Optional[str] = None,
         **saver_kwargs: Any) -> MetaGraphDef:
    """Load the meta graph saved under exactly `tags` into `sess.graph`, restore its
    variables, and return its MetaGraphDef (signature_def names the loaded tensors)."""
    if import_scope:
        raise errors.UnimplementedError("loader.load: import_scope is not supported; load "
                                        "into a fresh Graph instead")
    export_dir = os.fspath(export_dir)
    graph_path = os.path.join(export_dir, GRAPH_FILE)
    if not os.path.isfile(graph_path):
        raise OSError(f"SavedModel file does not exist at: {export_dir}")
    raw = fileio.read_regular_file(graph_path, MAX_JSON_BYTES, "SavedModel graph file")
    document = fileio.loads_json(raw, graph_path, lambda problem: _fail(graph_path, problem))
    if not isinstance(document, dict) or document.get("format") != FORMAT \
            or document.get("version") != VERSION:
        raise _fail(graph_path, "not a kilnflow TF 1 SavedModel of a supported version")
    wanted = {tags} if isinstance(tags, str) else {str(t) for t in tags}
    try:
        meta = next((m for m in document["meta_graphs"] if set(m["tags"]) == wanted), None)
        if meta is None:
            available = [m["tags"] for m in document["meta_graphs"]]
            raise RuntimeError(f"MetaGraphDef associated with tags {sorted(wanted)} could not "
                               f"be found in SavedModel, with available tags '{available}'")
        weights_name = str(document["weights"])
        if os.path.basename(weights_name) != weights_name or weights_name in ("", ".", ".."):
            raise _fail(graph_path, f"weights file {weights_name!r} is not a plain file name")
        weights_path = os.path.join(export_dir, weights_name)
        # the weights this graph file was saved with (sha256), read from one open file
        arrays = load_weights(export_dir, weights_name, document.get("weights_sha256"),
                              graph_path)
        handles = {}
        with eager_mode():  # the values live in the handles the loaded ops read
            for entry in document["variables"]:
                key = str(entry["key"])
                if key not in arrays:
                    raise _fail(weights_path, f"missing variable {key!r}")
                handles[key] = Variable(np.array(arrays[key]), name=key,
                                        trainable=bool(entry["trainable"])).handle
        existing = {op.name for op in sess.graph.operations}
        clash = next((n["name"] for n in meta["graph"]["nodes"] if n["name"] in existing), None)
        if clash is not None:
            raise ValueError(f"loader.load: the session's graph already has an op named "
                             f"{clash!r}; load into a fresh Graph")
        graph_from_dict(meta["graph"], sess.graph, variables=handles)
        return MetaGraphDef(meta["tags"], _decode_signatures(meta["signature_def"],
                                                             sess.graph))
    except (KeyError, TypeError, AttributeError) as exc:
        raise _fail(graph_path, f"malformed saved model ({type(exc).__name__}: {exc})") \
            from None
    except GraphFormatError as exc:
        raise _fail(graph_path, str(exc)) from None


loader = SimpleNamespace(load=load, maybe_saved_model_directory=maybe_saved_model_directory)
builder = SimpleNamespace(SavedModelBuilder=Builder)
tag_constants = SimpleNamespace(SERVING=SERVING, TRAINING=TRAINING, GPU=GPU, TPU=TPU)
signature_constants = SimpleNamespace(
    DEFAULT_SERVING_SIGNATURE_DEF_KEY=DEFAULT_SERVING_SIGNATURE_DEF_KEY,
    PREDICT_METHOD_NAME=PREDICT_METHOD_NAME, PREDICT_INPUTS=PREDICT_INPUTS,
    PREDICT_OUTPUTS=PREDICT_OUTPUTS, CLASSIFY_METHOD_NAME=CLASSIFY_METHOD_NAME,
    CLASSIFY_INPUTS=CLASSIFY_INPUTS, CLASSIFY_OUTPUT_CLASSES=CLASSIFY_OUTPUT_CLASSES,
    CLASSIFY_OUTPUT_SCORES=CLASSIFY_OUTPUT_SCORES, REGRESS_METHOD_NAME=REGRESS_METHOD_NAME,
    REGRESS_INPUTS=REGRESS_INPUTS, REGRESS_OUTPUTS=REGRESS_OUTPUTS)
