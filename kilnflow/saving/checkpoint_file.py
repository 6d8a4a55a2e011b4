"""A checkpoint's two files on disk: the JSON index, validated field by field, and the
safetensors file, memory-mapped and read one tensor at a time.

Index (version 2): {"format", "version", "tensors" (the data file's name), "variables" and
"slots" (one entry per tensor: object path, dtype, shape, sha256 of its bytes; slots also
name their optimizer, owner variable and slot), "objects" (path -> class name)}. Each
tensor's bytes are checked against its sha256 when it is first read, so restoring one
variable touches that tensor's bytes only, and a tampered byte anywhere a reader looks is
caught. Version 1 indexes (a sha256 of the whole data file; tensors keyed by object path)
are still read, hashing the whole file on open.
"""
from __future__ import annotations

import hashlib
import os
import re
from typing import Any, Dict, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.saving import fileio, safetensors

FORMAT = "kilnflow-checkpoint"
VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: tensors keyed by object path, one sha256 of the file
MAX_JSON_BYTES = 64 * 1024 * 1024
SAVE_ID = "kilnflow.save_id"  # in the tensors file's metadata and the index: the same save
READ_ATTEMPTS = 5
SHA256 = re.compile(r"^[0-9a-f]{64}$")
VALUE_SUFFIX = ".ATTRIBUTES/VARIABLE_VALUE"
_DTYPE_NAMES = frozenset(d.name for d in _dtypes.ALL) | frozenset(
    () if isinstance(_dtypes.bfloat16, _dtypes.Unavailable) else ("bfloat16",))


class CheckpointError(errors.DataLossError, ValueError):
    """A checkpoint's files are missing pieces, corrupt, tampered with or inconsistent."""


def escape(part: Any) -> str:
    """TF's escaping of one object-graph name: '.' doubles, '/' becomes '.S' (so a name can
    never forge a path separator or a '.ATTRIBUTES' suffix)."""
    return str(part).replace(".", "..").replace("/", ".S")


def tf_key(entry: dict) -> str:
    """The key TF gives a saved value: 'net/w/.ATTRIBUTES/VARIABLE_VALUE' for a variable,
    '<owner>/.OPTIMIZER_SLOT/<optimizer>/<slot>/.ATTRIBUTES/VARIABLE_VALUE' for a slot."""
    if "slot" in entry:
        optimizer = entry["optimizer"] or "optimizer"
        return (f"{entry['owner']}/.OPTIMIZER_SLOT/{optimizer}/{escape(entry['slot'])}/"
                f"{VALUE_SUFFIX}")
    return f"{entry['path']}/{VALUE_SUFFIX}"


def split_prefix(path: str) -> str:
    """The checkpoint prefix of a path that may end in .json or .safetensors (or .index, a
    TensorFlow checkpoint's)."""
    path = os.fspath(path)
    for ext in (".json", ".safetensors", ".index"):
        if path.endswith(ext):
            return path[:-len(ext)]
    return path


def bad_index(path: str, problem: str) -> CheckpointError:
    return CheckpointError(f"{path}: not a valid kilnflow checkpoint index: {problem}")


def _no_duplicates(pairs: list) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r}")
        out[k] = v
    return out


def read_json(path: str, limit: int = MAX_JSON_BYTES) -> Any:
    raw = fileio.read_regular_file(path, limit, "checkpoint file")
    return fileio.loads_json(raw, path, lambda problem: bad_index(path, problem),
                             _no_duplicates)


def _check_entry(entry: Any, where: str, path: str, slot: bool, version: int) -> None:
    fields = {"path", "dtype", "shape"} | ({"optimizer", "owner", "slot"} if slot else set()) \
        | ({"sha256"} if version >= 2 else set())
    if not isinstance(entry, dict) or set(entry) != fields:
        raise bad_index(path, f"{where}: expected an object with the fields {sorted(fields)}, "
                              f"got {entry!r}")
    for key in fields - {"shape"}:
        if not isinstance(entry[key], str):
            raise bad_index(path, f"{where}: field {key!r} must be a string, got "
                                  f"{entry[key]!r}")
    if entry["dtype"] not in _DTYPE_NAMES:
        if entry["dtype"] == "bfloat16":
            raise bad_index(path, f"{where}: dtype bfloat16 needs the optional extra "
                                  "kilnflow[bf16] (ml_dtypes)")
        raise bad_index(path, f"{where}: unknown dtype {entry['dtype']!r}")
    shape = entry["shape"]
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise bad_index(path, f"{where}: shape must be a list of non-negative integers, got "
                              f"{shape!r}")
    if version >= 2 and not SHA256.match(entry["sha256"]):
        raise bad_index(path, f"{where}: sha256 must be 64 lowercase hex digits")


def read_index(prefix: str) -> dict:
    """The validated index of checkpoint `prefix` (NotFoundError if there is none)."""
    index_path = prefix + ".json"
    if os.path.isdir(prefix) and not os.path.exists(index_path):
        raise errors.NotFoundError(
            f"{prefix} is a directory, not a checkpoint prefix; use "
            f"kf.train.latest_checkpoint({prefix!r}) to find the newest checkpoint in it")
    if not os.path.exists(index_path):
        raise errors.NotFoundError(f"{prefix}: no checkpoint found (expected the files "
                                   f"{index_path} and {prefix}.safetensors)")
    index = read_json(index_path)
    if not isinstance(index, dict):
        raise bad_index(index_path, "the top level must be a JSON object")
    if index.get("format") != FORMAT:
        raise bad_index(index_path, f"format is {index.get('format')!r}, expected {FORMAT!r}")
    version = index.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or \
            version not in READABLE_VERSIONS:
        raise bad_index(index_path, f"version {version!r} is not supported (this kilnflow "
                                    f"reads versions {', '.join(map(str, READABLE_VERSIONS))})")
    fields = [("tensors", str), ("variables", list), ("slots", list), ("objects", dict)]
    if version == 1:
        fields.append(("sha256", str))
    for key, kind in fields:
        if not isinstance(index.get(key), kind):
            raise bad_index(index_path, f"field {key!r} must be a {kind.__name__}")
    tensors_name = index["tensors"]
    if os.path.basename(tensors_name) != tensors_name or tensors_name in ("", ".", ".."):
        raise bad_index(index_path, f"the tensors file name {tensors_name!r} must be a plain "
                                    "file name in the same directory")
    if version == 1 and not SHA256.match(index["sha256"]):
        raise bad_index(index_path, "sha256 must be 64 lowercase hex digits")
    for i, entry in enumerate(index["variables"]):
        _check_entry(entry, f"variables[{i}]", index_path, False, version)
    for i, entry in enumerate(index["slots"]):
        _check_entry(entry, f"slots[{i}]", index_path, True, version)
    return index


class OpenCheckpoint:
    """A checkpoint with a validated index and its tensors file mapped: `view(path)` is a
    read-only view of one tensor, its bytes checked against the index on first use.

    Use as a context manager; views must not outlive it (copy what you keep).
    """

    def __init__(self, prefix: str):
        self.prefix = split_prefix(prefix)
        self.index_path = self.prefix + ".json"
        for attempt in range(READ_ATTEMPTS):  # again if a save replaced the index meanwhile
            before = fileio.identity(self.index_path)
            try:
                return self._start_reading()
            except (CheckpointError, errors.NotFoundError):
                if attempt + 1 == READ_ATTEMPTS or \
                        fileio.identity(self.index_path) in (before, None):
                    raise

    def _start_reading(self) -> None:
        self.index = read_index(self.prefix)
        try:  # opened once: a concurrent save's renames cannot swap it under the reads
            self.path, fd = fileio.open_data_file(os.path.dirname(self.prefix),
                                                  self.index["tensors"],
                                                  "checkpoint tensors file")
        except errors.NotFoundError:
            raise errors.NotFoundError(
                f"{os.path.join(os.path.dirname(self.prefix), self.index['tensors'])}: the "
                f"checkpoint's tensors file is missing (named by {self.index_path})") from None
        try:
            self._data = fileio.map_descriptor(fd)
        finally:
            os.close(fd)
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> None:
        version = self.index["version"]
        if version == 1 and hashlib.sha256(self._data).hexdigest() != self.index["sha256"]:
            raise CheckpointError(
                f"{self.path}: its sha256 does not match the one recorded in "
                f"{self.index_path}; the file was modified, truncated or belongs to another "
                "checkpoint")
        header, metadata, self._start = safetensors.parse_header(self._data, self.path)
        if "save_id" in self.index and metadata.get(SAVE_ID) != self.index["save_id"]:
            raise CheckpointError(f"{self.path}: written by another save than "
                                  f"{self.index_path} (save ids differ)")
        safetensors.check_layout(header, len(self._data) - self._start, self.path)
        key_of = tf_key if version >= 2 else (lambda entry: entry["path"])
        self.entries: Dict[str, dict] = {}   # object path -> index entry
        self._info: Dict[str, Tuple[str, dict]] = {}  # object path -> (key, header entry)
        keys: set = set()
        for entry in self.index["variables"] + self.index["slots"]:
            path, key = entry["path"], key_of(entry)
            if path in self.entries or key in keys:
                raise bad_index(self.index_path, f"path {path!r} is listed twice")
            keys.add(key)
            if key not in header:
                raise CheckpointError(f"{self.path}: has no tensor {key!r}, which "
                                      f"{self.index_path} lists")
            info = header[key]
            dtype = safetensors.DTYPES[info["dtype"]]
            if _dtypes.from_numpy(dtype.newbyteorder("=")).name != entry["dtype"] or \
                    info["shape"] != entry["shape"]:
                raise CheckpointError(
                    f"{self.path}: tensor {key!r} is {_dtypes.from_numpy(dtype).name}"
                    f"{info['shape']} but {self.index_path} says "
                    f"{entry['dtype']}{entry['shape']}")
            self.entries[path] = entry
            self._info[path] = (key, info)
        extra = set(header) - keys
        if extra:
            raise CheckpointError(f"{self.path}: tensors {sorted(extra)} are not listed in "
                                  f"{self.index_path}")
        self._verified: set = set()

    def view(self, path: str) -> np.ndarray:
        """Tensor `path` (an object path), read-only, straight from the mapped file."""
        key, info = self._info[path]
        array = safetensors.tensor_view(self._data, self._start, info, key, self.path)
        if path not in self._verified and self.index["version"] >= 2:
            if hashlib.sha256(array.reshape(-1).view(np.uint8)).hexdigest() != \
                    self.entries[path]["sha256"]:
                raise CheckpointError(
                    f"{self.path}: the bytes of tensor {key!r} do not match the sha256 "
                    f"recorded in {self.index_path}; the file was modified, truncated or "
                    "belongs to another checkpoint")
            self._verified.add(path)
        return array

    def copy(self, path: str) -> np.ndarray:
        """Tensor `path` as a fresh, writable array in native byte order."""
        view = self.view(path)
        return view.astype(view.dtype.newbyteorder("="), copy=True)

    def close(self) -> None:
        safetensors.close_mapping(self._data)

    def __enter__(self) -> "OpenCheckpoint":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_checkpoint(prefix: str) -> Tuple[dict, Dict[str, np.ndarray]]:
    """The validated index, and every tensor of checkpoint `prefix` (copies) by object path."""
    with OpenCheckpoint(prefix) as ckpt:
        return ckpt.index, {path: ckpt.copy(path) for path in ckpt.entries}
