"""keras.utils' small utilities: Config, standardize_dtype, interactive logging, the
functional-graph helpers (is_keras_tensor, get_source_inputs), model_to_dot and get_file
(local files only: kilnflow never downloads)."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import zipfile
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.keras import backend
from kilnflow.keras.layers.base import KerasTensor
from kilnflow.keras.progbar import disable_interactive_logging  # noqa: F401 - keras.utils
from kilnflow.keras.progbar import enable_interactive_logging  # noqa: F401 - keras.utils
from kilnflow.keras.progbar import is_interactive_logging_enabled  # noqa: F401
from kilnflow.saving.fileio import write_atomically

_PYTHON_DTYPES = {bool: "bool", int: "int64", float: "float32", str: "string", "int": "int64"}


def standardize_dtype(dtype: Any = None) -> str:
    """A dtype's Keras name ('float32', 'int64', ...); None is backend.floatx()."""
    if dtype is None:
        return backend.floatx()
    dtype = _PYTHON_DTYPES.get(dtype, dtype)
    if dtype == "string":
        return "string"
    try:
        name = _dtypes.as_dtype(dtype).name
    except (TypeError, ValueError, KeyError):
        name = None
    if name is None:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = None
    if name is None or name in ("float", "int"):
        raise ValueError(f"Invalid dtype: {dtype}")
    return name


class Config:
    """A dict whose keys are also attributes (`config.lr`, `config["lr"]`); freeze() makes
    it read-only."""

    def __init__(self, **kwargs: Any):
        object.__setattr__(self, "_config", dict(kwargs))
        object.__setattr__(self, "_frozen", False)

    def freeze(self) -> None:
        object.__setattr__(self, "_frozen", True)

    def unfreeze(self) -> None:
        object.__setattr__(self, "_frozen", False)

    @property
    def frozen(self) -> bool:
        return self._frozen

    def _check(self) -> None:
        if self._frozen:
            raise ValueError("Cannot mutate attribute(s) because the config is frozen.")

    def __setattr__(self, name: str, value: Any) -> None:
        self._check()
        self._config[name] = value

    def __getattr__(self, name: str) -> Any:
        config = object.__getattribute__(self, "_config")
        if name in config:
            return config[name]
        raise AttributeError(f"Unknown attribute: '{name}'")

    def __setitem__(self, key: str, value: Any) -> None:
        self._check()
        self._config[key] = value

    def __getitem__(self, key: str) -> Any:
        return self._config[key]

    def __delitem__(self, key: str) -> None:
        self._check()
        del self._config[key]

    def __contains__(self, key: str) -> bool:
        return key in self._config

    def __len__(self) -> int:
        return len(self._config)

    def __iter__(self) -> Any:
        return iter(self._config)

    def keys(self) -> Any:
        return self._config.keys()

    def values(self) -> Any:
        return self._config.values()

    def items(self) -> Any:
        return self._config.items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._config.get(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._check()
        self._config.update(*args, **kwargs)

    def pop(self, *args: Any) -> Any:
        self._check()
        return self._config.pop(*args)

    def as_dict(self) -> dict:
        return dict(self._config)

    def to_json(self) -> str:
        return json.dumps(self._config)

    def __repr__(self) -> str:
        return f"<Config {self._config}>"


def is_keras_tensor(x: Any) -> bool:
    """True for the symbolic tensors of the functional API (keras.Input and layer calls on
    it)."""
    return isinstance(x, KerasTensor)


def get_source_inputs(tensor: Any) -> list:
    """The keras.Input tensors a KerasTensor was computed from (a non-Keras value: itself)."""
    history = getattr(tensor, "_keras_history", None)
    if history is None:
        return [tensor]
    layer, node_index, _ = history
    nodes = getattr(layer, "_inbound_nodes", None) or []
    node = nodes[node_index] if node_index < len(nodes) else None
    if node is None or not node.parents:
        return [tensor]
    sources: list = []
    for parent in node.parents:
        for source in get_source_inputs(parent):
            if not any(source is seen for seen in sources):
                sources.append(source)
    return sources


class Dot:
    """A model graph as DOT text: to_string(), and write(path) (DOT source)."""

    def __init__(self, text: str):
        self.text = text

    def to_string(self) -> str:
        return self.text

    def write(self, path: str, format: str = "raw") -> None:  # noqa: A002 - pydot's
        if format not in ("raw", "dot"):
            raise ValueError("model_to_dot writes DOT source only (format='raw'); render it "
                             "with Graphviz's `dot`")
        write_atomically(os.fspath(path), self.text.encode())


def model_to_dot(model: Any, show_shapes: bool = False, show_dtype: bool = False,
                 show_layer_names: bool = True, rankdir: str = "TB", dpi: int = 200,
                 **kwargs: Any) -> Dot:
    """The model's layers and their connections as a Graphviz digraph (DOT text): one node
    per layer labelled `name (Type)`, an edge per layer input."""
    layers = list(getattr(model, "layers", []))
    ids = {id(layer): f"n{i}" for i, layer in enumerate(layers)}
    lines = ["digraph G {", f"  rankdir={rankdir};", f"  dpi={dpi};",
             "  node [shape=record];"]
    for layer in layers:
        label = f"{layer.name} ({type(layer).__name__})" if show_layer_names \
            else type(layer).__name__
        if show_shapes:
            shape = getattr(layer, "output_shape", None) if layer.built else None
            label += f" | output: {shape}"
        if show_dtype:
            label += f" | dtype: {getattr(layer, 'dtype', None)}"
        lines.append(f'  {ids[id(layer)]} [label="{label}"];')
    edges = []
    for layer in layers:
        for node in getattr(layer, "_inbound_nodes", None) or []:
            for parent in node.parents:
                source = parent._keras_history[0] if parent._keras_history else None
                if source is not None and id(source) in ids:
                    edges.append((ids[id(source)], ids[id(layer)]))
    if not edges:  # a Sequential without recorded nodes: its layers in order
        edges = [(ids[id(a)], ids[id(b)]) for a, b in zip(layers, layers[1:])]
    seen = set()
    for a, b in edges:
        if (a, b) not in seen:
            seen.add((a, b))
            lines.append(f"  {a} -> {b};")
    lines.append("}")
    return Dot("\n".join(lines) + "\n")


def _hash(path: str, algorithm: str) -> str:
    digest = hashlib.sha256() if algorithm in ("sha256", "auto") else hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def get_file(fname: Optional[str] = None, origin: Optional[str] = None, untar: bool = False,
             md5_hash: Optional[str] = None, file_hash: Optional[str] = None,
             cache_subdir: str = "datasets", hash_algorithm: str = "auto",
             extract: bool = False, archive_format: str = "auto",
             cache_dir: Optional[str] = None, force_download: bool = False) -> str:
    """Copy a local file (`origin` a path or a file:// URL) into the Keras cache
    (~/.keras/<cache_subdir>, or cache_dir) and return its path there, checking its hash
    and extracting a tar/zip archive if asked. kilnflow does not download: http(s)
    origins raise."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to '
                         "download).")
    if origin.startswith("file://"):
        source = origin[len("file://"):]
    elif "://" in origin:
        raise NotImplementedError(f"get_file({origin!r}): kilnflow does not download; "
                                  "fetch the file yourself and pass its path or file:// URL")
    else:
        source = origin
    if not os.path.exists(source):
        raise FileNotFoundError(f"get_file: {source} does not exist")
    cache_dir = cache_dir or os.path.join(os.path.expanduser("~"), ".keras")
    folder = os.path.join(cache_dir, cache_subdir)
    os.makedirs(folder, exist_ok=True)
    fname = fname or os.path.basename(source)
    target = os.path.join(folder, fname)
    if force_download or not os.path.exists(target):
        tmp = target + ".part"
        shutil.copyfile(source, tmp)
        os.replace(tmp, target)
    expected = file_hash or md5_hash
    if expected is not None:
        algorithm = "md5" if md5_hash and not file_hash else hash_algorithm
        if algorithm == "auto" and len(expected) == 32:
            algorithm = "md5"
        if _hash(target, algorithm) != expected:
            raise ValueError(f"get_file: {target} does not match the expected {algorithm} "
                             f"hash {expected}")
    if untar or extract:
        out = os.path.join(folder, fname.split(".")[0] + ("" if untar else "_extracted"))
        if tarfile.is_tarfile(target) and archive_format in ("auto", "tar"):
            with tarfile.open(target) as archive:
                archive.extractall(out, filter="data")
        elif zipfile.is_zipfile(target) and archive_format in ("auto", "zip"):
            with zipfile.ZipFile(target) as archive:
                archive.extractall(out)
        else:
            raise ValueError(f"get_file: {target} is not a {archive_format} archive")
        return out
    return target
