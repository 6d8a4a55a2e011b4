"""Checkpoints: variables in a safetensors file, the object graph in a JSON file beside it.

A checkpoint `prefix` is two files: `prefix.safetensors` (one tensor per variable) and
`prefix.json` (format, version, one entry per variable with its sha256; the file format is
described in saving/FORMAT.md).
An object path is the chain of attribute names (list indices, dict keys) from the root,
e.g. `model/dense/kernel`, found by walking `_checkpoint_children()` breadth first; the
shortest path to an object names it. Names are escaped as TF escapes them ('.' -> '..',
'/' -> '.S'). Tensors are keyed as TF keys them in its checkpoints (`tf_key`):
`model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE`, and optimizer slots
`<variable path>/.OPTIMIZER_SLOT/<optimizer path>/<slot>/.ATTRIBUTES/VARIABLE_VALUE`, so
other tools reading the safetensors file see TF's names. Version 1 files (tensors keyed
by object path) are still read.

Restoring matches by path, so a model built eagerly restores into the same model built
in a compat.v1 graph (values go straight into the variables' handles) and back. Values
for layers not built yet wait on the layer until `add_weight` creates them; optimizer
slots wait on the optimizer until it creates them; values under an attribute that does
not exist yet wait on the nearest module until that attribute (a variable, module, list
or dict) is assigned. A restore reads the memory-mapped file one tensor at a time, straight
into the variable's buffer; only values left waiting are copied. Nothing is unpickled or
executed.
"""
from __future__ import annotations

import collections
import hashlib
import json
import os
import re
from typing import Any, Callable, Dict, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.context import executing_eagerly
from kilnflow.module import add_attach_hook, leaves_with_paths
from kilnflow.saving import fileio, safetensors
from kilnflow.saving.checkpoint_file import (FORMAT, SAVE_ID, VERSION, CheckpointError,
                                             OpenCheckpoint,
                                             escape, read_checkpoint, read_json, split_prefix,
                                             tf_key)
from kilnflow.saving.tf_checkpoint import TFCheckpoint, is_tf_checkpoint
from kilnflow.variables import Variable

__all__ = ["CheckpointError", "read_checkpoint", "split_prefix", "tf_key", "write_checkpoint",
           "restore_checkpoint", "latest_checkpoint", "read_state", "write_state"]
_SLOTS = "_slots"


def is_trackable(x: Any) -> bool:
    """Objects a checkpoint follows: anything with `_checkpoint_children` (modules, layers,
    optimizers, checkpoints)."""
    return callable(getattr(x, "_checkpoint_children", None))


def _join(prefix: str, parts: tuple) -> str:
    tail = "/".join(escape(p) for p in parts)
    return f"{prefix}/{tail}" if prefix else tail


# ---------------------------------------------------------------- the object graph

class ObjectGraph:
    """The live objects reachable from a root: path -> variable, path -> trackable, and
    the optimizer slots whose variables have a path."""

    def __init__(self, root: Any):
        self.variables: Dict[str, Variable] = {}
        self.objects: Dict[str, Any] = {"": root}
        seen = {id(root)}
        queue = collections.deque([("", root)])
        while queue:
            path, obj = queue.popleft()
            for name, value in obj._checkpoint_children():
                for parts, leaf in leaves_with_paths(value, (name,)):
                    if id(leaf) in seen:
                        continue
                    if isinstance(leaf, Variable):
                        seen.add(id(leaf))
                        self.variables[_join(path, parts)] = leaf
                    elif is_trackable(leaf):
                        seen.add(id(leaf))
                        full = _join(path, parts)
                        self.objects[full] = leaf
                        queue.append((full, leaf))
        self.path_of = {id(v.handle): p for p, v in self.variables.items()}
        self.slots = []  # (key, optimizer path, owner path, slot name, slot variable)
        for opt_path, obj in self.objects.items():
            slot_items = getattr(obj, "_checkpoint_slots", None)
            if slot_items is None:
                continue
            for owner, slot_name, slot_var in slot_items():
                owner_path = self.path_of.get(id(owner.handle))
                if owner_path is not None:  # slots of variables outside the graph are dropped
                    key = _join(opt_path, (_SLOTS, owner_path, slot_name))
                    self.slots.append((key, opt_path, owner_path, slot_name, slot_var))


def _value_of(var: Variable, path: str) -> np.ndarray:
    value = var.handle.value
    if value is None:
        raise errors.FailedPreconditionError(
            f"Cannot save variable {var.name} (checkpoint path {path!r}): it is not "
            "initialized. Run its initializer (kf.compat.v1.global_variables_initializer()) "
            "in a Session first.")
    return np.asarray(value)


def _entry(path: str, value: np.ndarray) -> dict:
    return {"path": path, "dtype": _dtypes.from_numpy(value.dtype).name,
            "shape": list(value.shape)}


def _digest(value: np.ndarray) -> str:
    """sha256 of the bytes the safetensors file holds for `value` (little-endian, C order)."""
    data = np.ascontiguousarray(value.astype(value.dtype.newbyteorder("<"), copy=False))
    return hashlib.sha256(data.reshape(-1).view(np.uint8)).hexdigest()


def write_checkpoint(root: Any, prefix: str, name_based: bool = False) -> str:
    """Write every variable reachable from `root` to `prefix`.{safetensors,json}.
    `name_based` marks a compat.v1 Saver's checkpoint (readers key it by variable name)."""
    prefix = split_prefix(prefix)
    graph = ObjectGraph(root)
    tensors: Dict[str, np.ndarray] = {}
    entries, slot_entries = [], []
    for path, var in graph.variables.items():
        value = _value_of(var, path)
        entries.append({**_entry(path, value), "sha256": _digest(value)})
        tensors[tf_key(entries[-1])] = value
    for key, opt_path, owner_path, slot_name, slot_var in graph.slots:
        value = _value_of(slot_var, key)
        slot_entries.append({**_entry(key, value), "sha256": _digest(value),
                             "optimizer": opt_path, "owner": owner_path, "slot": slot_name})
        tensors[tf_key(slot_entries[-1])] = value
    try:
        save_id = os.urandom(16).hex()  # ties this index to this tensors file
        write = safetensors.writer(tensors, {"format": FORMAT, SAVE_ID: save_id},
                                   checksum=False)  # a sha256 per tensor, in the index
    except TypeError as exc:
        raise TypeError(f"Cannot write checkpoint {prefix}: {exc}") from None
    objects = {p: type(o).__name__ for p, o in graph.objects.items()}

    def index_for(tensors_name: str) -> bytes:
        index = {"format": FORMAT, "version": VERSION, "tensors": tensors_name,
                 "variables": entries, "slots": slot_entries, "objects": objects,
                 "save_id": save_id}
        if name_based:
            index["name_based"] = True
        return json.dumps(index, indent=1).encode("utf-8")

    directory = os.path.dirname(prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)
    # The index is the checkpoint's last word: a crash at any step leaves the old
    # checkpoint or the new one loadable (see fileio.replace_pair).
    fileio.replace_pair(prefix + ".safetensors", write, prefix + ".json", index_for)
    return prefix


# ---------------------------------------------------------------- restoring

def assign_value(var: Variable, value: np.ndarray, path: str, source: str) -> None:
    """Put `value` into `var` (initialized or not: the handle holds the storage)."""
    dtype = var.dtype
    if value.dtype != dtype.as_numpy_dtype:
        raise ValueError(f"{source}: checkpoint value {path!r} has dtype "
                         f"{_dtypes.from_numpy(value.dtype).name} but variable {var.name} is "
                         f"{dtype.name}")
    if not var.shape.is_compatible_with(value.shape):
        raise ValueError(f"{source}: checkpoint value {path!r} has shape {list(value.shape)} "
                         f"but variable {var.name} has shape {var.shape}")
    current = var.handle.value
    if isinstance(current, np.ndarray) and current.shape == value.shape and \
            current.flags.writeable:
        np.copyto(current, value)  # in place: views and captured handles see the new values
    else:  # the reader's arrays are fresh copies; a value shared elsewhere is copied once
        var.handle.value = value if value.flags.owndata and value.flags.writeable \
            else np.array(value, copy=True)


class CheckpointLoadStatus:
    """What a restore matched. Values are assigned at once, in eager and graph mode alike,
    so `run_restore_ops` has nothing left to run."""

    def __init__(self, root: Any, source: str):
        self._root = root
        self._source = source
        self.matched: list = []      # checkpoint paths assigned to live variables
        self.unexpected: list = []   # checkpoint paths with no live object to go to
        self._pending: dict = {}     # path -> description, values waiting for creation
        self._restored: set = set()  # ids of restored handles
        self._attachments: dict = {}  # id(holder) -> values waiting for an attribute of it
        self._restored_paths: set = set()
        self._file: Any = None  # the open checkpoint, while values wait for variables
        # a restore building a compat.v1 graph: its values are assigned again by
        # run_restore_ops, so running the initializers first does not lose them
        self._graph_mode = not executing_eagerly()
        self._assigned: Dict[str, Variable] = {}

    def _matched(self, path: str, var: Variable) -> None:
        self.matched.append(path)
        self._restored_paths.add(path)
        self._restored.add(id(var.handle))
        self._pending.pop(path, None)
        if path in self.unexpected:
            self.unexpected.remove(path)
        if self._graph_mode:
            self._assigned[path] = var

    def wait(self, path: str, what: str) -> None:
        """`path`'s value waits for its variable to be created (`what`: variable or slot)."""
        self._pending[path] = what
        if path in self.unexpected:
            self.unexpected.remove(path)

    @property
    def deferred(self) -> list:
        """Checkpoint paths whose variables do not exist yet (layers not built yet)."""
        return sorted(self._pending)

    @property
    def missing(self) -> list:
        """Paths of live variables (now) that the checkpoint gave no value."""
        graph = ObjectGraph(self._root)
        return [p for p, v in graph.variables.items() if id(v.handle) not in self._restored]

    def assert_existing_objects_matched(self) -> "CheckpointLoadStatus":
        """Raise AssertionError if any live variable got no value from the checkpoint."""
        missing = self.missing
        if missing:
            raise AssertionError(f"Some objects had no value in checkpoint {self._source}: "
                                 f"{missing}")
        return self

    def assert_consumed(self) -> "CheckpointLoadStatus":
        """Raise AssertionError unless every checkpoint value went to a variable and every
        live variable got one."""
        self.assert_existing_objects_matched()
        if self.unexpected or self._pending:
            raise AssertionError(
                f"Unresolved values in checkpoint {self._source}: no matching object for "
                f"{self.unexpected}; still waiting for their variables: {self.deferred}")
        return self

    def assert_nontrivial_match(self) -> "CheckpointLoadStatus":
        if not self.matched:
            raise AssertionError(f"Nothing in checkpoint {self._source} matched the objects")
        return self

    def expect_partial(self) -> "CheckpointLoadStatus":
        """Silences complaints about values not used; kilnflow makes none on its own."""
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        """Eagerly, nothing to run: values went into the variables when restore() returned.
        For a restore made while building a compat.v1 graph, the values are assigned again
        (read from the checkpoint), as TF's restore ops would, so they win over initializers
        a Session ran in between."""
        if not self._assigned:
            return
        ckpt = TFCheckpoint(self._source) if is_tf_checkpoint(self._source) \
            else OpenCheckpoint(self._source)
        with ckpt:
            for path, var in self._assigned.items():
                assign_value(var, ckpt.view(path), path, self._source)

    def initialize_or_restore(self, session: Any = None) -> None:
        """Run, in `session`, the initializers of the compat.v1 graph variables the checkpoint
        gave no value (restored ones already hold theirs); eagerly there is nothing to do."""
        graph = ObjectGraph(self._root)
        initializers = [v.initializer for v in graph.variables.values()
                        if id(v.handle) not in self._restored and v.handle.value is None
                        and v.initializer is not None]
        if initializers and session is not None:
            session.run(initializers)

    def __repr__(self) -> str:
        return (f"<CheckpointLoadStatus {self._source}: {len(self.matched)} matched, "
                f"{len(self.unexpected)} unexpected, {len(self._pending)} deferred>")


def restore_checkpoint(root: Any, prefix: str,
                       before: Optional[Callable] = None) -> CheckpointLoadStatus:
    """Assign every value of checkpoint `prefix` to the object at the same path below root.

    `before(index)` runs after validation and before matching (Checkpoint uses it to create
    its save_counter when the checkpoint has one).
    """
    prefix = split_prefix(prefix)
    ckpt = TFCheckpoint(prefix) if is_tf_checkpoint(prefix) else OpenCheckpoint(prefix)
    try:
        if before is not None:
            before(ckpt.index)
        status = _match(root, ckpt)
    except BaseException:
        ckpt.close()
        raise
    if len(status._restored_paths) == len(ckpt.entries):
        ckpt.close()
    else:  # values still waiting for their variables are read from the mapped file when
        status._file = ckpt  # those appear (no copies held meanwhile)
    return status


def _match(root: Any, ckpt: OpenCheckpoint) -> tuple:
    source = ckpt.prefix
    graph = ObjectGraph(root)
    status = CheckpointLoadStatus(root, source)
    waiting_slots: dict = {}  # owner path -> slot entries whose owner does not exist yet
    for entry in ckpt.index["slots"]:
        waiting_slots.setdefault(entry["owner"], []).append(entry)

    value_of = ckpt.view

    def restore_slot(entry: dict, owner: Variable) -> None:
        opt = graph.objects.get(entry["optimizer"])
        key = entry["path"]
        restore = getattr(opt, "_restore_slot", None)
        if restore is None:
            if key not in status.unexpected:
                status.unexpected.append(key)
            return
        status.wait(key, "slot")
        restore(owner, entry["slot"], value_of(key),
                lambda var, key=key: (assign_value(var, value_of(key), key, source),
                                      status._matched(key, var)))

    def owner_ready(path: str, var: Variable) -> None:
        for entry in waiting_slots.pop(path, []):
            restore_slot(entry, var)

    by_name = _ByName(graph, ckpt, restore_slot) \
        if isinstance(ckpt, TFCheckpoint) else None
    for entry in ckpt.index["variables"]:
        path = entry["path"]

        def consume(var: Variable, path: str = path) -> None:
            assign_value(var, value_of(path), path, source)
            status._matched(path, var)
            owner_ready(path, var)

        if path not in graph.variables and by_name is not None and ckpt.full_names and \
                by_name.place(path, ckpt.full_names.get(path), consume):
            continue
        place(graph, path, path, consume, status)
    for entries in list(waiting_slots.values()):
        for entry in entries:
            if entry["owner"] not in status._pending:
                status.unexpected.append(entry["path"])
    return status


# Keras 3's words for the slots kilnflow's optimizers call m, v, vhat, u (as Keras 3 names
# its slot variables: '<optimizer>/<variable path, _ for />_<word>')
_SLOT_WORDS = {"momentum": "m", "velocity": "v", "velocity_hat": "vhat", "norm": "u"}
# Keras 3's tracked attributes for an optimizer's step count and learning rate
_OPTIMIZER_COUNTERS = {"_iterations": "iterations", "_learning_rate": "learning_rate"}


class _ByName:
    """A TF-written value whose object path does not exist here: TF keys a Keras model's
    weights by the shortest path to them, through the optimizer
    (optimizer/_trainable_variables/0), and Keras 3 keeps slots in optimizer/_variables/N.
    Matched by the variable's name in TF's object graph (Keras 3 paths: kilnflow's Keras
    variables carry the same), else by position among the weights of the root's child it
    sits under (TF's depth-first order is a Keras model's weight order) when every shape
    and dtype agrees; slots follow their owner."""

    def __init__(self, graph: ObjectGraph, ckpt: Any, restore_slot: Callable):
        self.restore_slot = restore_slot
        counts: Dict[str, list] = {}
        for var in list(graph.variables.values()) + [s[4] for s in graph.slots]:
            counts.setdefault(getattr(var, "path", None), []).append(var)
        self.variables = {n: vs[0] for n, vs in counts.items()
                          if len(vs) == 1 and isinstance(n, str)}
        self.position: Dict[str, Variable] = {}
        for child, obj in graph.objects.items():
            weights, paths = getattr(obj, "weights", None), ckpt.paths_under(child)
            if "/" not in child and isinstance(weights, list) and len(weights) == len(paths) \
                    and all(isinstance(w, Variable) and ckpt.entries[p]["dtype"] == w.dtype.name
                            and ckpt.entries[p]["shape"] == w.shape.as_list()
                            for p, w in zip(paths, weights)):
                self.position.update(zip(paths, weights))
        named = {}
        for p, n in ckpt.full_names.items():
            named.setdefault(n, []).append(p)
        self.tf_paths = {n: ps[0] for n, ps in named.items() if len(ps) == 1}
        self.optimizers = {getattr(o, "name", None): p for p, o in graph.objects.items()
                           if callable(getattr(o, "_restore_slot", None))}
        self.optimizers.update({p: p for p in self.optimizers.values() if "/" not in p})
        self.objects = graph.objects

    def variable(self, path: Any, name: Any) -> Any:
        # An optimizer's own counters go by structure: its name differs between processes
        # (adam, adam_1, ...), TF's object path does not.
        parent, _, leaf = str(path).rpartition("/")
        owner = self.objects.get(parent)
        if leaf in _OPTIMIZER_COUNTERS and callable(getattr(owner, "_restore_slot", None)):
            counter = getattr(owner, _OPTIMIZER_COUNTERS[leaf], None)
            if isinstance(counter, Variable):
                return counter
        var = self.variables.get(name)
        return self.position.get(path) if var is None else var

    def place(self, path: str, name: Any, consume: Callable) -> bool:
        var = self.variable(path, name)
        if var is not None:
            consume(var)
            return True
        if not isinstance(name, str) or "/" not in name:
            return False
        prefix, rest = name.split("/", 1)
        optimizer = self.optimizers.get(path.split("/")[0]) or self.optimizers.get(prefix)
        for owner_name in sorted(self.tf_paths, key=len, reverse=True):  # longest first
            base = owner_name.replace("/", "_")
            owner = self.variable(self.tf_paths[owner_name], owner_name) \
                if rest.startswith(base + "_") else None
            if owner is not None and optimizer is not None:
                word = rest[len(base) + 1:]
                self.restore_slot({"optimizer": optimizer, "path": path,
                                   "slot": _SLOT_WORDS.get(word, word)}, owner)
                return True
        return False


def place(graph: ObjectGraph, path: str, full: str, consume: Callable,
          status: CheckpointLoadStatus) -> bool:
    """Give the value for `path` (in `graph`; `full` from the restore's root) to its variable,
    or leave it with the nearest live object: a layer creates the variable later (deferred),
    or an attribute assigned later brings it (a list, dict, module or variable attached
    after restore()). Returns False when the value is left with `graph`'s root."""
    var = graph.variables.get(path)
    if var is not None:
        consume(var)
        return True
    parts = path.split("/")
    for cut in range(len(parts) - 1, -1, -1):
        holder = graph.objects.get("/".join(parts[:cut]))
        if holder is None:
            continue
        relative = "/".join(parts[cut:])
        defer = getattr(holder, "_defer_restore", None)
        if defer is not None and defer(relative, consume):
            status.wait(full, "variable")
            return True
        if cut == 0 and graph.objects[""] is not status._root:
            return False  # an attached value's stand-in root: the caller keeps waiting
        status.unexpected.append(full)  # until an attribute assigned later brings it
        _Attachments.of(holder, status).add(relative, full, consume)
        return True
    return False


class _Holder:
    """Stands in as the root of one attached value, so ObjectGraph can walk it."""

    def __init__(self, name: str, value: Any):
        self._children = [(name, value)]

    def _checkpoint_children(self) -> list:
        return self._children


class _Attachments:
    """The values of one restore waiting on `holder` for attributes not assigned yet, grouped
    by the attribute they wait for (so an unrelated assignment costs one dict lookup)."""

    def __init__(self, status: CheckpointLoadStatus):
        self.status = status
        self.waiting: dict = {}  # escaped attribute -> {relative path: (full path, consume)}

    @staticmethod
    def of(holder: Any, status: CheckpointLoadStatus) -> "_Attachments":
        found = status._attachments.get(id(holder))
        if found is None:
            found = status._attachments[id(holder)] = _Attachments(status)
            add_attach_hook(holder, found)
        return found

    def add(self, relative: str, full: str, consume: Callable) -> None:
        self.waiting.setdefault(relative.split("/", 1)[0], {})[relative] = (full, consume)

    def __call__(self, name: str, value: Any) -> bool:
        mine = self.waiting.pop(escape(name), None)
        if mine:
            graph = ObjectGraph(_Holder(name, value))
            for relative, (full, consume) in mine.items():
                self.status.unexpected.remove(full)
                if not place(graph, relative, full, consume, self.status):
                    self.status.unexpected.append(full)
                    self.add(relative, full, consume)
        return bool(self.waiting)


# ---------------------------------------------------------------- the directory state file

STATE_FILE = "checkpoint"


def inside(directory: str, relative: str) -> Optional[str]:
    """`directory/relative`, or None when that path would leave `directory` (an absolute
    path, `..`, or a symlink pointing out): a state file never sends us elsewhere."""
    if os.path.isabs(relative):
        return None
    root = os.path.realpath(directory)
    path = os.path.join(directory, relative)
    real = os.path.realpath(path)
    return path if os.path.commonpath([root, real]) == root and real != root else None


def read_state(directory: str) -> Optional[dict]:
    """The directory's checkpoint state ({'model_checkpoint_path', 'all_...'}) or None.

    Entries naming a path outside `directory` are dropped (TF follows them; we do not).
    """
    path = os.path.join(directory, STATE_FILE)
    if not os.path.exists(path):
        return None
    raw = fileio.read_regular_file(path, 16 * 1024 * 1024, "checkpoint state file")
    state = read_json(path, limit=16 * 1024 * 1024) if raw.lstrip()[:1] in (b"{", b"") \
        else _tf_state(raw, path)
    if not (isinstance(state, dict) and isinstance(state.get("model_checkpoint_path"), str)
            and isinstance(state.get("all_model_checkpoint_paths"), list)
            and all(isinstance(p, str) for p in state["all_model_checkpoint_paths"])):
        raise CheckpointError(f"{path}: not a valid checkpoint state file (expected "
                              "model_checkpoint_path and all_model_checkpoint_paths)")
    kept = [p for p in state["all_model_checkpoint_paths"] if inside(directory, p)]
    latest = state["model_checkpoint_path"]
    return {"model_checkpoint_path": latest if inside(directory, latest) else None,
            "all_model_checkpoint_paths": kept}


_TEXT_FIELD = re.compile(r'^\s*(\w+)\s*:\s*(?:"((?:[^"\\]|\\.)*)"|[-+0-9.eE]+)\s*$')


def _tf_state(raw: bytes, path: str) -> dict:
    """The state file TensorFlow writes (text-format CheckpointState):
    `model_checkpoint_path: "ckpt-2"` and one `all_model_checkpoint_paths: "..."` a line."""
    state: dict = {"all_model_checkpoint_paths": []}
    for line in raw.decode("utf-8", "replace").splitlines():
        match = _TEXT_FIELD.match(line)
        if not line.strip():
            continue
        if match is None:
            raise CheckpointError(f"{path}: not a valid checkpoint state file: {line!r}")
        name, text = match.group(1), match.group(2)
        value = None if text is None else re.sub(r"\\(.)", r"\1", text)
        if name == "model_checkpoint_path":
            state[name] = value
        elif name == "all_model_checkpoint_paths" and value is not None:
            state[name].append(value)
    return state


def write_state(directory: str, latest: str, all_paths: list) -> None:
    def rel(p: str) -> str:
        return os.path.relpath(p, directory)
    state = {"model_checkpoint_path": rel(latest),
             "all_model_checkpoint_paths": [rel(p) for p in all_paths]}
    fileio.write_atomically(os.path.join(directory, STATE_FILE),
                  json.dumps(state, indent=1).encode("utf-8"))


def latest_checkpoint(checkpoint_dir: str, latest_filename: Optional[str] = None) -> Optional[str]:
    """The prefix of the newest checkpoint saved in `checkpoint_dir`, or None."""
    state = read_state(os.fspath(checkpoint_dir))
    if state is None or state["model_checkpoint_path"] is None:
        return None
    prefix = os.path.join(checkpoint_dir, state["model_checkpoint_path"])
    return prefix if os.path.exists(prefix + ".json") or os.path.exists(prefix + ".index") \
        else None
