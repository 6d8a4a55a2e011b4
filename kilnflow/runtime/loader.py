"""Compile generated source into a function, registered in linecache so tracebacks and
`concrete.code` show the generated lines."""
from __future__ import annotations

import itertools
import linecache
import threading
import weakref
from typing import Any, Callable, Dict, List

_counter = itertools.count()
# Filenames of collected functions, dropped from linecache on the next load(): removing
# them inside the garbage collector could race a linecache.getlines() that has just seen
# the entry (a KeyError in whatever code was formatting a traceback).
_dead: List[str] = []
_dead_lock = threading.Lock()


def _forget(filename: str) -> None:
    with _dead_lock:
        _dead.append(filename)


def drop_collected() -> None:
    """Remove the linecache entries of generated functions already collected."""
    with _dead_lock:
        dead, _dead[:] = list(_dead), []
    for filename in dead:
        linecache.cache.pop(filename, None)


def load(source: str, globals_: Dict[str, Any], label: str) -> Callable:
    drop_collected()
    filename = f"<kilnflow-generated {label} #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(globals_)
    fn_name = namespace.pop("__fn_name__")
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    fn = namespace[fn_name]
    fn.__kilnflow_source__ = source
    # the source stays visible to tracebacks as long as the function lives (and is dropped
    # at the next load after it is collected)
    weakref.finalize(fn, _forget, filename)
    return fn
