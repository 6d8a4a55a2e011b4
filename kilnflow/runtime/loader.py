"""Compile generated source into a function, registered in linecache so tracebacks and
`concrete.code` show the generated lines."""
from __future__ import annotations

import itertools
import linecache
import weakref
from typing import Any, Callable, Dict

_counter = itertools.count()


def load(source: str, globals_: Dict[str, Any], label: str) -> Callable:
    filename = f"<kilnflow-generated {label} #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(globals_)
    fn_name = namespace.pop("__fn_name__")
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    fn = namespace[fn_name]
    fn.__kilnflow_source__ = source
    # the source stays visible to tracebacks exactly as long as the function lives
    weakref.finalize(fn, linecache.cache.pop, filename, None)
    return fn
