"""tf.train.Coordinator: lets a group of Python threads stop together, and passes the
first exception raised in any of them to the thread that joins them."""
from __future__ import annotations

import contextlib
import sys
import threading
import time
from typing import Any, Callable, Iterator, List, Optional, Sequence

from kilnflow import errors

__all__ = ["Coordinator", "LooperThread"]


class Coordinator:
    """A coordinator for threads.

    >>> import kilnflow as kf, threading
    >>> coord = kf.train.Coordinator()
    >>> def work():
    ...     with coord.stop_on_exception():
    ...         raise ValueError("boom")
    >>> t = threading.Thread(target=work); t.start()
    >>> try:
    ...     coord.join([t])
    ... except ValueError as e:
    ...     print("joined:", e)
    joined: boom
    """

    def __init__(self, clean_stop_exception_types: Optional[Sequence[type]] = None):
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info: Optional[tuple] = None
        self._registered_threads: set = set()
        self._joined = False

    def _filter_exception(self, ex: Any) -> Any:
        value = ex[1] if isinstance(ex, tuple) else ex
        return None if isinstance(value, self._clean_stop_exception_types) else ex

    def request_stop(self, ex: Any = None) -> None:
        """Ask the threads to stop; `ex` (an exception or sys.exc_info() triple) is kept,
        the first one only, and re-raised by join(). OutOfRangeError is a clean stop."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    _, value, tb = ex
                    raise value.with_traceback(tb)
                if ex is not None:
                    raise ex
                return
            if ex is not None and self._exc_info is None:
                if isinstance(ex, tuple):
                    self._exc_info = ex
                else:
                    self._exc_info = (type(ex), ex, getattr(ex, "__traceback__", None))
            self._stop_event.set()

    def clear_stop(self) -> None:
        """Clear the stop request (and the kept exception), so the coordinator can be reused."""
        with self._lock:
            self._joined = False
            self._exc_info = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        """True once a stop has been requested."""
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        """Inside, an exception requests a stop (keeping the exception) instead of escaping."""
        try:
            yield
        except Exception:  # noqa: BLE001 - handed to the coordinator, re-raised by join()
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: Optional[float] = None) -> bool:
        """Block until a stop is requested or `timeout` seconds pass; True if stopped."""
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        """Join `thread` too when join() is called without a list."""
        with self._lock:
            self._registered_threads.add(thread)

    def join(self, threads: Optional[Sequence[threading.Thread]] = None,
             stop_grace_period_secs: float = 120, ignore_live_threads: bool = False) -> None:
        """Wait for the threads to finish once a stop is requested; then re-raise the kept
        exception. Threads still alive `stop_grace_period_secs` after the request raise
        RuntimeError unless `ignore_live_threads`."""
        with self._lock:
            threads = set(threads or ()) | self._registered_threads
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(0.05):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
            time.sleep(0.01)
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info:
                _, value, tb = self._exc_info
                raise value.with_traceback(tb)
        if stragglers and not ignore_live_threads:
            raise RuntimeError("Coordinator stopped with threads still running: "
                               + " ".join(stragglers))

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        """Re-raise the exception kept by request_stop, if any."""
        with self._lock:
            if self._exc_info:
                _, value, tb = self._exc_info
                raise value.with_traceback(tb)

    def loop(self, timer_interval_secs: float, target: Callable, args: Any = None,
             kwargs: Any = None) -> "LooperThread":
        """Start a thread calling `target(*args, **kwargs)` every `timer_interval_secs`
        until a stop is requested."""
        looper = LooperThread(self, timer_interval_secs, target, args, kwargs)
        looper.start()
        return looper


class LooperThread(threading.Thread):
    """A thread running `target` repeatedly until its coordinator stops (Coordinator.loop)."""

    def __init__(self, coord: Coordinator, timer_interval_secs: Optional[float],
                 target: Optional[Callable] = None, args: Any = None, kwargs: Any = None):
        super().__init__(daemon=True)
        self._coord, self._interval = coord, timer_interval_secs
        self._target_fn, self._args, self._kwargs = target, args or (), kwargs or {}
        coord.register_thread(self)

    def run(self) -> None:
        with self._coord.stop_on_exception():
            while not self._coord.should_stop():
                if self._target_fn is not None:
                    self._target_fn(*self._args, **self._kwargs)
                if self._interval is not None and self._coord.wait_for_stop(self._interval):
                    break
                if self._interval is None:
                    break
