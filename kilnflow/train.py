"""kf.train: Checkpoint, CheckpointManager, latest_checkpoint, list_variables, load_variable,
load_checkpoint and CheckpointReader.

The file format and the matching of saved values to objects live in
kilnflow/saving/checkpoint.py; this module is the TF-shaped API over them.
"""
from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.context import eager_mode
from kilnflow.module import leaves_with_paths, notify_attached
from kilnflow.saving import checkpoint as _ckpt
from kilnflow.saving.checkpoint import CheckpointLoadStatus, latest_checkpoint
from kilnflow.saving.tf_checkpoint import TFCheckpoint, is_tf_checkpoint
from kilnflow.variables import Variable

# the key TF gives an object-based checkpoint's serialized object graph
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointLoadStatus", "latest_checkpoint",
           "list_variables", "load_variable", "load_checkpoint", "CheckpointReader"]


class Checkpoint:
    """Groups trackable objects (modules, layers, optimizers, variables) for saving.

    >>> import kilnflow as kf, tempfile, os
    >>> from kilnflow.train import Checkpoint
    >>> v = kf.Variable(3.0)
    >>> ckpt = Checkpoint(v=v)
    >>> path = ckpt.save(os.path.join(tempfile.mkdtemp(), "ckpt"))
    >>> os.path.basename(path)
    'ckpt-1'
    >>> _ = v.assign(0.0)
    >>> ckpt.restore(path).assert_consumed().matched
    ['v', 'save_counter']
    >>> float(v.numpy())
    3.0
    """

    def __init__(self, root: Any = None, **kwargs: Any):
        if root is not None:
            kwargs = {"root": root, **kwargs}
        for name, value in kwargs.items():
            for parts, leaf in leaves_with_paths(value, (name,)):
                if not (isinstance(leaf, Variable) or _ckpt.is_trackable(leaf)):
                    raise ValueError(
                        f"`Checkpoint` was expecting {'/'.join(map(str, parts))} to be a "
                        f"trackable object (a kf.Module, Keras layer or model, optimizer or "
                        f"kf.Variable), got {leaf!r}")
            setattr(self, name, value)
        self._save_counter: Optional[Variable] = None
        self._last_saved: List[str] = []

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        notify_attached(self, name, value)  # values restored before `name` was attached

    def _checkpoint_children(self) -> list:
        children = [(k, v) for k, v in vars(self).items() if not k.startswith("_")]
        if self._save_counter is not None:
            children.append(("save_counter", self._save_counter))
        return children

    @property
    def save_counter(self) -> Variable:
        """How many times save() has run (saved in the checkpoint, numbers the files)."""
        if self._save_counter is None:
            with eager_mode():
                self._save_counter = Variable(np.int64(0), trainable=False, name="save_counter")
        return self._save_counter

    def write(self, file_prefix: str, options: Any = None) -> str:
        """Write exactly to `file_prefix` (.json and .safetensors); no counter, no state file."""
        return _ckpt.write_checkpoint(self, os.fspath(file_prefix))

    def save(self, file_prefix: str, options: Any = None) -> str:
        """Write to `file_prefix-N` (N = the incremented save_counter) and record it as the
        directory's latest checkpoint. Returns the path to pass to restore()."""
        counter = self.save_counter
        counter.handle.value = np.asarray(counter.handle.read() + 1, np.int64)
        path = self.write(f"{os.fspath(file_prefix)}-{int(counter.handle.value)}")
        directory = os.path.dirname(path) or "."
        state = _safe_state(directory)
        all_paths = [os.path.join(directory, p) for p in state["all_model_checkpoint_paths"]] \
            if state else []
        all_paths = [p for p in all_paths if os.path.normpath(p) != os.path.normpath(path)]
        _ckpt.write_state(directory, path, all_paths + [path])
        return path

    def _make_counter(self, index: dict) -> None:
        if any(e["path"] == "save_counter" for e in index["variables"]):
            self.save_counter  # noqa: B018 - created so the saved value has a home

    def _always_make_counter(self, index: dict) -> None:
        # as TF's restore() (not read()): the counter exists afterwards, saved or not (a
        # checkpoint written by write() has none: the counter is then an unmatched object)
        self.save_counter  # noqa: B018

    def read(self, save_path: str, options: Any = None) -> CheckpointLoadStatus:
        """Restore values from `save_path` (written by write() or save())."""
        return _ckpt.restore_checkpoint(self, os.fspath(save_path), self._make_counter)

    def restore(self, save_path: Optional[str], options: Any = None) -> Any:
        """Restore from `save_path`; with None (no checkpoint yet) nothing happens.

        Works for objects built eagerly or in a compat.v1 graph (uninitialized variables
        get their values directly), and leaves values for unbuilt layers until they build.
        """
        if save_path is None:
            return _InitializationOnlyStatus()
        return _ckpt.restore_checkpoint(self, os.fspath(save_path), self._always_make_counter)


class _InitializationOnlyStatus:
    """restore(None): nothing was restored; the objects keep their initial values."""

    def assert_consumed(self) -> Any:
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed

    def expect_partial(self) -> "_InitializationOnlyStatus":
        return self

    def run_restore_ops(self, session: Any = None) -> None:
        pass

    def initialize_or_restore(self, session: Any = None) -> None:
        pass


def _safe_state(directory: str) -> Optional[dict]:
    try:
        return _ckpt.read_state(directory)
    except _ckpt.CheckpointError:
        return None  # a damaged state file is rewritten by the next save


class CheckpointManager:
    """Saves numbered checkpoints in a directory and deletes all but the newest few.

    >>> import kilnflow as kf, tempfile
    >>> from kilnflow.train import Checkpoint, CheckpointManager
    >>> manager = CheckpointManager(Checkpoint(v=kf.Variable(1.0)), tempfile.mkdtemp(),
    ...                             max_to_keep=2)
    >>> for _ in range(3):
    ...     _ = manager.save()
    >>> [p.rsplit("/", 1)[-1] for p in manager.checkpoints]
    ['ckpt-2', 'ckpt-3']
    """

    def __init__(self, checkpoint: Checkpoint, directory: str, max_to_keep: Optional[int],
                 keep_checkpoint_every_n_hours: Optional[float] = None,
                 checkpoint_name: str = "ckpt", step_counter: Any = None,
                 checkpoint_interval: Optional[int] = None, init_fn: Optional[Callable] = None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"max_to_keep must be a positive integer or None, got "
                             f"{max_to_keep}")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("step_counter must be given with checkpoint_interval")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._last_step: Optional[int] = None
        self._init_fn = init_fn
        self._last_kept_time = time.time()
        self._saved_at: Dict[str, float] = {}  # path -> when this manager saved it
        state = _safe_state(self._directory) if os.path.isdir(self._directory) else None
        self._checkpoints: List[str] = []
        if state is not None:
            for rel in state["all_model_checkpoint_paths"]:
                path = os.path.join(self._directory, rel)
                if os.path.exists(path + ".json"):
                    self._checkpoints.append(path)

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self) -> "Checkpoint":
        """The Checkpoint this manager saves and restores."""
        return self._checkpoint

    @property
    def checkpoints(self) -> List[str]:
        """The managed checkpoints still on disk, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self) -> Optional[str]:
        return self._checkpoints[-1] if self._checkpoints else None

    @property
    def checkpoint_interval(self) -> Optional[int]:
        return self._interval

    def save(self, checkpoint_number: Optional[int] = None, check_interval: bool = True,
             options: Any = None) -> Optional[str]:
        """Write the next checkpoint; returns its path (None if the interval has not passed)."""
        if self._interval is not None and check_interval:
            step = int(np.asarray(self._step_counter))
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        counter = self._checkpoint.save_counter
        counter.handle.value = np.asarray(counter.handle.read() + 1, np.int64)
        number = int(counter.handle.value) if checkpoint_number is None \
            else int(np.asarray(checkpoint_number))
        path = self._checkpoint.write(f"{self._prefix}-{number}")
        self._saved_at[os.path.normpath(path)] = time.time()
        self._checkpoints = [p for p in self._checkpoints
                             if os.path.normpath(p) != os.path.normpath(path)] + [path]
        doomed = self._sweep()
        # The state file names only complete checkpoints, and is replaced before anything is
        # deleted: a crash at any point leaves a loadable latest checkpoint.
        _ckpt.write_state(self._directory, path, self._checkpoints)
        for prefix in doomed:
            self._delete(prefix)
        return path

    def _sweep(self) -> List[str]:
        """Drop the oldest checkpoints beyond max_to_keep; returns those to delete."""
        doomed: List[str] = []
        if self._max_to_keep is None:
            return doomed
        while len(self._checkpoints) > self._max_to_keep:
            oldest = self._checkpoints.pop(0)
            saved = self._saved_at.pop(os.path.normpath(oldest), self._last_kept_time)
            if self._keep_hours is not None and saved - self._last_kept_time >= \
                    self._keep_hours * 3600:
                self._last_kept_time = saved  # as TF: kept when saved n hours after the
                continue                      # last kept one; on disk, no longer managed
            doomed.append(oldest)
        return doomed

    def _delete(self, prefix: str) -> None:
        """Remove one checkpoint's files, never anything outside the manager's directory."""
        if _ckpt.inside(self._directory, os.path.relpath(prefix, self._directory)) is None:
            return
        for ext in (".json", ".safetensors"):
            try:
                os.remove(prefix + ext)
            except FileNotFoundError:
                pass

    def restore_or_initialize(self) -> Optional[str]:
        """Restore the latest checkpoint if there is one (returns its path), else run
        init_fn and return None."""
        latest = self.latest_checkpoint
        if latest is not None:
            self._checkpoint.restore(latest)
            if self._interval is not None:  # the interval counts from the restored step
                self._last_step = int(np.asarray(self._step_counter))
            return latest
        if self._init_fn is not None:
            self._init_fn()
        return None


def list_variables(ckpt_dir_or_file: str) -> list:
    """(key, shape) of every value in a checkpoint (or the latest one in a directory), keyed
    as TF keys them: 'net/w/.ATTRIBUTES/VARIABLE_VALUE'."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file: str, name: str) -> np.ndarray:
    """The saved value under TF key `name`, or under its object path ('model/dense/kernel')."""
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


class CheckpointReader:
    """Reads a checkpoint's values by TF key without restoring them into objects.

    >>> import kilnflow as kf, tempfile, os
    >>> from kilnflow.train import Checkpoint, load_checkpoint
    >>> path = Checkpoint(w=kf.Variable([1.0, 2.0])).write(os.path.join(tempfile.mkdtemp(), "c"))
    >>> reader = load_checkpoint(path)
    >>> reader.get_variable_to_shape_map()["w/.ATTRIBUTES/VARIABLE_VALUE"]
    [2]
    >>> reader.get_tensor("w/.ATTRIBUTES/VARIABLE_VALUE").tolist()
    [1.0, 2.0]
    """

    def __init__(self, ckpt_dir_or_file: str):
        self._source = _ckpt.split_prefix(_resolve(ckpt_dir_or_file))
        self._tf = None
        if is_tf_checkpoint(self._source):  # written by TensorFlow: every key, read lazily
            self._tf = TFCheckpoint(self._source)
            self._entries = {k: {**info, "key": k} for k, info in self._tf.keys.items()}
            self._by_path = {e["path"]: self._entries[self._tf.key_of(e["path"])]
                             for e in self._tf.entries.values()}
            return
        # lazy, like TF's reader: the tensors file stays mapped and get_tensor copies one
        # tensor (each checked against its sha256 when first read)
        self._file = _ckpt.OpenCheckpoint(self._source)
        index, self._tensors = self._file.index, {}
        if index.get("name_based"):  # a compat.v1 Saver's: keyed by TF1 variable names
            self._entries = {e["path"]: e for e in index["variables"]}
        else:
            self._entries = {_ckpt.tf_key(e): e for e in index["variables"] + index["slots"]}
        self._by_path = {e["path"]: e for e in self._entries.values()}
        if not index.get("name_based"):
            # TF lists an object-based checkpoint's serialized object graph as a string
            graph = {"objects": index["objects"], "keys": sorted(self._entries)}
            self._entries[OBJECT_GRAPH_KEY] = {"path": OBJECT_GRAPH_KEY, "shape": [],
                                               "dtype": "string"}
            self._tensors[OBJECT_GRAPH_KEY] = json.dumps(graph).encode("utf-8")

    def get_variable_to_shape_map(self) -> Dict[str, list]:
        return {key: list(e["shape"]) for key, e in self._entries.items()}

    def get_variable_to_dtype_map(self) -> Dict[str, Any]:
        return {key: _dtypes.as_dtype(e["dtype"]) for key, e in self._entries.items()}

    def has_tensor(self, name: str) -> bool:
        return name in self._entries or name in self._by_path

    def get_tensor(self, name: str) -> np.ndarray:
        entry = self._entries.get(name) or self._by_path.get(name)
        if entry is None:
            raise errors.NotFoundError(f"Key {name} not found in checkpoint {self._source}; it "
                                       f"has {sorted(self._entries)}")
        if self._tf is not None:
            value = self._tf.tensor(entry["key"])
            return value.copy() if value.dtype == object else \
                value.astype(value.dtype.newbyteorder("="), copy=True)
        value = self._tensors.get(entry["path"])
        if value is None:
            return self._file.copy(entry["path"])
        return value if isinstance(value, bytes) else value.copy()


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A CheckpointReader for a checkpoint prefix, or the latest checkpoint in a directory."""
    return CheckpointReader(ckpt_dir_or_file)


def _resolve(path: str) -> str:
    path = os.fspath(path)
    if os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"{path}: no checkpoint found in this directory")
        return latest
    return path



class ClusterSpec:
    """A description of a distributed cluster (jobs -> task addresses), as in TF.

    A compat.v1 Session given `config=ConfigProto(cluster_def=spec.as_cluster_def())` (or
    the target of a kf.distribute.Server) runs each task's ops in a Ray actor.

    >>> spec = ClusterSpec({"worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]})
    >>> spec.jobs, spec.num_tasks("worker"), spec.task_address("worker", 1)
    (['ps', 'worker'], 2, 'w1:2222')
    """

    def __init__(self, cluster: Any):
        if isinstance(cluster, ClusterSpec):
            cluster = cluster.as_dict()
        if not isinstance(cluster, dict):
            raise TypeError("ClusterSpec needs a dict of job name -> list or dict of tasks")
        self._jobs = {}
        for job, tasks in cluster.items():
            if isinstance(tasks, (list, tuple)):
                tasks = dict(enumerate(tasks))
            if not isinstance(tasks, dict):
                raise TypeError(f"tasks of job {job!r} must be a list or a dict")
            self._jobs[str(job)] = {int(i): str(a) for i, a in tasks.items()}

    @property
    def jobs(self) -> list:
        return sorted(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._job(job_name))

    def task_indices(self, job_name: str) -> list:
        return sorted(self._job(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        try:
            return self._job(job_name)[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}") from None

    def job_tasks(self, job_name: str) -> list:
        tasks = self._job(job_name)
        return [tasks.get(i) for i in range(max(tasks) + 1)] if tasks else []

    def as_dict(self) -> dict:
        return {job: [tasks[i] for i in sorted(tasks)] if sorted(tasks) == list(
            range(len(tasks))) else dict(tasks) for job, tasks in self._jobs.items()}

    def as_cluster_def(self) -> dict:
        """The cluster as ConfigProto's `cluster_def` takes it (TF: a ClusterDef proto;
        here the job -> tasks dict, which ClusterSpec also accepts)."""
        return self.as_dict()

    def _job(self, job_name: str) -> dict:
        try:
            return self._jobs[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ClusterSpec) and other._jobs == self._jobs

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"

# issue 12: the newer kf.train names, defined in kilnflow/training/
from kilnflow.training.checkpoint_state import CheckpointOptions as CheckpointOptions  # noqa
from kilnflow.training.checkpoint_state import checkpoints_iterator as checkpoints_iterator  # noqa
from kilnflow.training.checkpoint_state import get_checkpoint_state as get_checkpoint_state  # noqa
from kilnflow.training.coordinator import Coordinator as Coordinator  # noqa: E402
from kilnflow.training.ema import ExponentialMovingAverage as ExponentialMovingAverage  # noqa
from kilnflow.training.example import BytesList as BytesList  # noqa: E402
from kilnflow.training.example import Example as Example  # noqa: E402
from kilnflow.training.example import Feature as Feature  # noqa: E402
from kilnflow.training.example import FeatureList as FeatureList  # noqa: E402
from kilnflow.training.example import FeatureLists as FeatureLists  # noqa: E402
from kilnflow.training.example import Features as Features  # noqa: E402
from kilnflow.training.example import FloatList as FloatList  # noqa: E402
from kilnflow.training.example import Int64List as Int64List  # noqa: E402
from kilnflow.training.example import SequenceExample as SequenceExample  # noqa: E402
