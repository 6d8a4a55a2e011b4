"""Summary writers: kf.summary.create_file_writer, the default writer, the default step and
record_if, as TF's tf.summary keeps them (per thread).

Files are real TensorBoard event files, written by the `tensorboard` package's own event
file writer and protos (the optional extra `tensorboard`); without it, creating a writer
raises ImportError naming the extra. The WriteSummary op (kilnflow/ops/summary_ops.py)
calls `SummaryWriter.write_summary` at run time, eagerly and inside compiled functions.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any, Iterator, Optional

from kilnflow.summary import encode

EXTRA = "tensorboard"


def require_tensorboard() -> Any:
    """The tensorboard package, or an ImportError naming kilnflow's optional extra."""
    try:
        from tensorboard.summary.writer import event_file_writer
    except ImportError:
        raise ImportError(
            f"kf.summary writes TensorBoard event files with the `tensorboard` package, "
            f"which is not installed: install the optional extra "
            f"`pip install kilnflow[{EXTRA}]` (or `pip install tensorboard`)") from None
    return event_file_writer


class _State(threading.local):
    def __init__(self) -> None:
        self.writers: list = []      # default writer stack, innermost last
        self.step: Any = None        # kf.summary.experimental.set_step
        self.record: list = []       # record_if conditions, innermost last


STATE = _State()


class SummaryWriter:
    """Writes summaries to one TensorBoard event file in `logdir` (needs `tensorboard`,
    so the example is not a doctest)::

        writer = kf.summary.create_file_writer("logs/run1")
        with writer.as_default(step=3):
            kf.summary.scalar("loss", 0.5)      # True: written
        writer.close()
    """

    def __init__(self, logdir: str, max_queue: int = 10, flush_millis: int = 120_000,
                 filename_suffix: str = ".v2"):
        module = require_tensorboard()
        self.logdir = os.fspath(logdir)
        self._lock = threading.Lock()
        self._writer = module.EventFileWriter(self.logdir, max_queue_size=max_queue,
                                              flush_secs=max(flush_millis / 1000.0, 0.001),
                                              filename_suffix=filename_suffix)
        self._closed = False

    # ---------------------------------------------------------------- writing

    def write_summary(self, kind: str, tag: str, step: int, data: Any, params: dict) -> bool:
        """Encode `data` as a `kind` summary and append it as an event (run time)."""
        summary = encode.summary_proto(kind, tag, data, params)
        return self.write_event(step=step, summary=summary)

    def write_event(self, step: int = 0, **fields: Any) -> bool:
        """Append one Event (with summary=, graph_def=, tagged_run_metadata= ...)."""
        from tensorboard.compat.proto import event_pb2
        with self._lock:
            if self._closed:
                return False
            self._writer.add_event(event_pb2.Event(wall_time=time.time(), step=int(step),
                                                   **fields))
        return True

    def flush(self) -> None:
        with self._lock:
            if not self._closed:
                self._writer.flush()

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._writer.close()
                self._closed = True

    def init(self) -> None:
        """TF's writer.init(): nothing to do, the file is open from creation."""

    # ---------------------------------------------------------------- default writer

    @contextlib.contextmanager
    def as_default(self, step: Any = None) -> Iterator["SummaryWriter"]:
        """Make this the default writer (and `step` the default step) inside the block."""
        saved_step = STATE.step
        STATE.writers.append(self)
        if step is not None:
            STATE.step = step
        try:
            yield self
        finally:
            STATE.writers.pop()
            STATE.step = saved_step
            self.flush()

    def set_as_default(self, step: Any = None) -> None:
        STATE.writers[:] = [self]
        if step is not None:
            STATE.step = step

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the writer thread may be gone
            pass


class NoopWriter:
    """kf.summary.create_noop_writer(): a writer that writes nothing."""

    def write_summary(self, kind: str, tag: str, step: int, data: Any, params: dict) -> bool:
        return False

    def write_event(self, step: int = 0, **fields: Any) -> bool:
        return False

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def init(self) -> None:
        pass

    as_default = SummaryWriter.as_default
    set_as_default = SummaryWriter.set_as_default


def create_file_writer(logdir: str, max_queue: Optional[int] = None,
                       flush_millis: Optional[int] = None,
                       filename_suffix: Optional[str] = None, name: Optional[str] = None,
                       experimental_trackable: bool = False) -> SummaryWriter:
    """A SummaryWriter for `logdir` (created if missing), as tf.summary.create_file_writer."""
    return SummaryWriter(logdir, 10 if max_queue is None else max_queue,
                         120_000 if flush_millis is None else flush_millis,
                         ".v2" if filename_suffix is None else filename_suffix)


def create_noop_writer() -> NoopWriter:
    return NoopWriter()


def default_writer() -> Any:
    return STATE.writers[-1] if STATE.writers else None


def flush(writer: Any = None, name: Optional[str] = None) -> None:
    """Flush `writer` (default: the default writer)."""
    writer = writer if writer is not None else default_writer()
    if writer is not None:
        writer.flush()


def set_step(step: Any) -> None:
    """kf.summary.experimental.set_step: the step summaries use when given none (an int
    or an int64 Variable, read at run time inside functions)."""
    STATE.step = step


def get_step() -> Any:
    return STATE.step


@contextlib.contextmanager
def record_if(condition: Any) -> Iterator[None]:
    """Record summaries only when `condition` (a bool, a bool tensor, or a callable
    returning either) holds; nested conditions must all hold."""
    STATE.record.append(condition)
    try:
        yield
    finally:
        STATE.record.pop()


def record_conditions() -> list:
    """The active record_if conditions, callables resolved now (trace time in functions)."""
    return [c() if callable(c) else c for c in STATE.record]


def should_record_summaries() -> bool:
    """False when no default writer is set or a Python record_if condition is False."""
    if default_writer() is None:
        return False
    return all(c if isinstance(c, bool) else True for c in record_conditions())
