"""kf.profiler.experimental (tf.profiler.experimental): start / stop a profile, Trace and
Profile context managers.

While a profile records, compiled functions run their profiled twins
(kilnflow/runtime/profile.py) and Trace ranges are recorded too; stop() writes a Chrome
trace JSON and a top-ops table under `<logdir>/plugins/profile/<run>/`.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional

from kilnflow import errors
from kilnflow.profiler.trace_file import format_table, write_profile
from kilnflow.runtime import profile

_session: dict = {"recorder": None, "logdir": None, "last": None}
_lock = threading.Lock()


class ProfilerOptions:
    """Accepted for TF compatibility (host_tracer_level, python_tracer_level, ...)."""

    def __init__(self, host_tracer_level: int = 2, python_tracer_level: int = 0,
                 device_tracer_level: int = 1, delay_ms: Optional[int] = None):
        self.host_tracer_level = host_tracer_level
        self.python_tracer_level = python_tracer_level
        self.device_tracer_level = device_tracer_level
        self.delay_ms = delay_ms


def start(logdir: str, options: Optional[ProfilerOptions] = None) -> None:
    """Start profiling: every compiled function call, op and Trace range is recorded.

    Raises AlreadyExistsError when a profile is already being recorded, as TF does.
    """
    with _lock:
        if _session["recorder"] is not None:
            raise errors.AlreadyExistsError(None, None, "Another profiler is running.")
        recorder = profile.Recorder()
        _session.update(recorder=recorder, logdir=logdir)
        profile.start(recorder)


def stop(save: bool = True) -> Optional[str]:
    """Stop profiling and (with `save`) write the trace; returns the trace file's path.

    Raises UnavailableError when no profile is being recorded, as TF does.
    """
    with _lock:
        recorder = _session["recorder"]
        if recorder is None:
            raise errors.UnavailableError(None, None, "Cannot export profiling results. "
                                          "No profiler is running.")
        profile.stop(recorder)
        _session.update(recorder=None, last=recorder)
    return write_profile(recorder, _session["logdir"]) if save else None


def last_profile() -> Any:
    """The Recorder of the last stopped profile (events, graphs), or None."""
    return _session["last"]


def top_ops_table(top: int = 20, recorder: Any = None) -> str:
    """The top ops by self time, as text: of `recorder` (e.g. the `experimental_profile` of
    a kf.function(experimental_profile=True)) or of the last stopped profile."""
    recorder = _session["last"] if recorder is None else recorder
    return "" if recorder is None else format_table(recorder, top)


class Trace:
    """A named range on the profile's timeline (tf.profiler.experimental.Trace):
    `with kf.profiler.experimental.Trace("train", step_num=step, _r=1): ...`.
    Costs one list check when no profile records."""

    def __init__(self, name: str, **kwargs: Any):
        self.name = name
        self.kwargs = kwargs
        self._start = 0

    def __enter__(self) -> "Trace":
        if profile.recording():
            self._start = profile.clock()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._start:
            name = self.name
            if self.kwargs:   # TF's TraceMe encoding, decoded into the event's args
                name += "#" + ",".join(f"{k}={v}" for k, v in self.kwargs.items()) + "#"
            site = profile.Site(name, "trace", None, "")
            profile.record_op(site, self._start, profile.clock())
            self._start = 0


@contextlib.contextmanager
def Profile(logdir: str, options: Optional[ProfilerOptions] = None) -> Iterator[None]:
    """Profile the block: start(logdir) on entry, stop() on exit."""
    start(logdir, options)
    try:
        yield
    finally:
        stop()
