"""tf.train.get_checkpoint_state, checkpoints_iterator and CheckpointOptions.

The state comes from the directory's `checkpoint` file (kilnflow's JSON or TF's text
format, read by kilnflow/saving/checkpoint.py); paths in it are relative to the
directory and are returned joined to it, as TF returns them. kilnflow keeps no
timestamps, so the state has none.
"""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Iterator, List, Optional

from kilnflow.saving import checkpoint as _ckpt

__all__ = ["CheckpointState", "get_checkpoint_state", "checkpoints_iterator",
           "CheckpointOptions"]


class CheckpointState:
    """What get_checkpoint_state returns: `model_checkpoint_path` (the newest) and
    `all_model_checkpoint_paths` (oldest first), printed in TF's text format."""

    def __init__(self, model_checkpoint_path: str = "",
                 all_model_checkpoint_paths: Optional[List[str]] = None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])

    def __str__(self) -> str:
        def line(name: str, value: str) -> str:
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            return f'{name}: "{escaped}"\n'
        return line("model_checkpoint_path", self.model_checkpoint_path) + "".join(
            line("all_model_checkpoint_paths", p) for p in self.all_model_checkpoint_paths)

    __repr__ = __str__

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CheckpointState) and str(self) == str(other)


def get_checkpoint_state(checkpoint_dir: str,
                         latest_filename: Optional[str] = None) -> Optional[CheckpointState]:
    """The CheckpointState of `checkpoint_dir` from its `checkpoint` file, or None when
    there is none.

    >>> import kilnflow as kf, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> kf.train.get_checkpoint_state(d) is None
    True
    """
    if latest_filename not in (None, _ckpt.STATE_FILE):
        raise ValueError(f"get_checkpoint_state: kilnflow keeps the state in the file "
                         f"{_ckpt.STATE_FILE!r}; latest_filename={latest_filename!r} is "
                         "not supported")
    directory = os.fspath(checkpoint_dir)
    state = _ckpt.read_state(directory)
    if state is None or state["model_checkpoint_path"] is None:
        return None
    return CheckpointState(os.path.join(directory, state["model_checkpoint_path"]),
                           [os.path.join(directory, p)
                            for p in state["all_model_checkpoint_paths"]])


def checkpoints_iterator(checkpoint_dir: str, min_interval_secs: float = 0,
                         timeout: Optional[float] = None,
                         timeout_fn: Optional[Callable[[], bool]] = None) -> Iterator[str]:
    """Yield each new checkpoint of `checkpoint_dir` as it appears (waiting for it).

    Waits at most `timeout` seconds for the next one (forever if None); on a timeout,
    stops unless `timeout_fn()` returns False, in which case it keeps waiting. At least
    `min_interval_secs` pass between two yields."""
    last: Optional[str] = None
    while True:
        deadline = None if timeout is None else time.monotonic() + timeout
        found = None
        while found is None:
            current = _ckpt.latest_checkpoint(checkpoint_dir)
            if current is not None and current != last:
                found = current
            elif deadline is not None and time.monotonic() >= deadline:
                break
            else:
                time.sleep(0.1)  # poll the state file
        if found is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        started = time.monotonic()
        last = found
        yield found
        wait = min_interval_secs - (time.monotonic() - started)
        if wait > 0:
            time.sleep(wait)


class CheckpointOptions:
    """Options of Checkpoint.save/restore (tf.train.CheckpointOptions). kilnflow writes
    synchronously on the host, so async writing (`enable_async`) is a synchronous save
    and the io device is the host; write and sharding callbacks are not supported."""

    def __init__(self, experimental_io_device: Optional[str] = None,
                 experimental_enable_async_checkpoint: bool = False,
                 experimental_write_callbacks: Optional[List[Callable]] = None,
                 enable_async: bool = False, experimental_sharding_callback: Any = None,
                 experimental_skip_slot_variables: bool = False):
        for name, value in (("experimental_write_callbacks", experimental_write_callbacks),
                            ("experimental_sharding_callback", experimental_sharding_callback)):
            if value is not None:
                raise NotImplementedError(f"CheckpointOptions({name}=...): kilnflow's "
                                          "checkpoints do not call write or sharding callbacks")
        self.experimental_io_device = experimental_io_device
        self.enable_async = bool(experimental_enable_async_checkpoint or enable_async)
        self.experimental_enable_async_checkpoint = self.enable_async
        self.experimental_write_callbacks = experimental_write_callbacks
        self.experimental_sharding_callback = experimental_sharding_callback
        self.experimental_skip_slot_variables = experimental_skip_slot_variables
