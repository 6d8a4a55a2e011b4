"""kf.debugging.enable_traceback_filtering / disable_traceback_filtering /
is_traceback_filtering_enabled: hide kilnflow's own frames from the tracebacks of errors
raised to user code, as TF hides its frames (on by default, as in TF).

Where the traceback is shown: an uncaught error goes through sys.excepthook, which this
module chains so the traceback printed lists the user's frames only (with the innermost
frame kept when every frame is kilnflow's, so the raise site stays visible). Errors caught
by user code can be filtered with `filter_exception(e)`; `filtered(fn)` is the decorator
an API entry point uses to re-raise with the filtered traceback, as TF's are.
"""
from __future__ import annotations

import functools
import os
import sys
import types
from typing import Any, Callable, Optional

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_enabled = [True]


def enable_traceback_filtering() -> None:
    """Hide kilnflow's internal frames from the tracebacks of errors it raises (default)."""
    _enabled[0] = True


def disable_traceback_filtering() -> None:
    """Show full tracebacks, kilnflow's own frames included (for debugging kilnflow)."""
    _enabled[0] = False


def is_traceback_filtering_enabled() -> bool:
    """Whether kilnflow's frames are hidden from error tracebacks.

    >>> import kilnflow as kf
    >>> kf.debugging.is_traceback_filtering_enabled()
    True
    """
    return _enabled[0]


def is_internal(filename: str) -> bool:
    """A frame of kilnflow's source or of the code it generates."""
    return filename.startswith(_PACKAGE_DIR) or filename.startswith("<kilnflow")


def filter_traceback(tb: Optional[types.TracebackType],
                     keep_innermost: bool = True) -> Optional[types.TracebackType]:
    """`tb` without kilnflow's frames; its innermost frame when all of them are kilnflow's
    (unless not `keep_innermost`: a chained cause then shows its message only)."""
    frames = []
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    kept = [f for f in frames if not is_internal(f[0].f_code.co_filename)] or \
        (frames[-1:] if keep_innermost else [])
    new: Optional[types.TracebackType] = None
    for frame, lasti, lineno in reversed(kept):
        new = types.TracebackType(new, frame, lasti, lineno)
    return new


def filter_exception(exc: BaseException) -> BaseException:
    """`exc` (and the errors chained to it) with filtered tracebacks, when filtering is on."""
    seen = set()
    current: Optional[BaseException] = exc
    while _enabled[0] and current is not None and id(current) not in seen:
        seen.add(id(current))
        current.with_traceback(filter_traceback(current.__traceback__, current is exc))
        current = current.__cause__ or current.__context__
    return exc


def filtered(fn: Callable) -> Callable:
    """Decorator for an API entry point: errors leave it with kilnflow's frames hidden."""
    @functools.wraps(fn)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not _enabled[0]:
                raise
            raise filter_exception(exc) from exc.__cause__
    return entry


def _install_excepthook() -> None:
    previous = sys.excepthook
    if getattr(previous, "kilnflow_filter", False):
        return

    def hook(kind: type, value: BaseException, tb: Any) -> None:
        if _enabled[0] and value is not None:
            value.__traceback__ = tb
            filter_exception(value)
            tb = value.__traceback__
        previous(kind, value, tb)

    hook.kilnflow_filter = True  # type: ignore[attr-defined]
    sys.excepthook = hook


_install_excepthook()
