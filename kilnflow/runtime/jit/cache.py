"""Where compiled jit modules live: generated source files in a cache directory, imported
as modules whose functions carry numba's `cache=True`, so a second process loads the
machine code from disk instead of compiling again.

A module's file name is a digest of its source, the numba version and the backend's own
files, so equal graphs share one file and one on-disk cache entry. The backend's files are
in the digest because numba's cache does not notice a change in a helper that compiled code
inlined: after an upgrade that fixed a helper, the old machine code would still load. The directory is `KILNFLOW_JIT_CACHE_DIR`,
else `~/.cache/kilnflow/jit`; `set_cache_dir` and `clear_cache` change and empty it.
Imports nothing from kilnflow.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import threading
from types import ModuleType
from typing import Any, Dict, Optional


_state: Dict[str, Any] = {"dir": None, "fingerprint": None}
_modules: Dict[str, ModuleType] = {}
_lock = threading.Lock()


def numba() -> Any:
    """The numba module, or an error naming the extra that provides it."""
    try:
        import numba as module
    except ImportError:
        raise ImportError(
            "kf.function(jit_compile=True) compiles with numba, which is not installed: "
            "install the 'fast' extra (pip install 'kilnflow[fast]', or pip install numba "
            "scipy), or drop jit_compile=True") from None
    return module


def cache_dir() -> str:
    """The directory holding generated modules and numba's compiled code."""
    chosen = _state["dir"] or os.environ.get("KILNFLOW_JIT_CACHE_DIR")
    return chosen or os.path.join(os.path.expanduser("~"), ".cache", "kilnflow", "jit")


def set_cache_dir(path: Optional[str]) -> None:
    """Use `path` for the jit cache from now on (None: back to the default)."""
    with _lock:
        _state["dir"] = None if path is None else os.fspath(path)
        _modules.clear()


def clear_cache() -> None:
    """Forget compiled modules and delete the cache directory's generated files."""
    with _lock:
        _modules.clear()
        shutil.rmtree(cache_dir(), ignore_errors=True)


def forget_modules() -> None:
    """Drop the modules loaded in this process (the files stay): the next compile of a
    graph loads numba's machine code from disk, as a new process would."""
    with _lock:
        for digest in _modules:
            sys.modules.pop(f"kf_jit_{digest}", None)
        _modules.clear()


def backend_fingerprint() -> str:
    """A digest of this package's source files (the helpers generated code calls), read
    once per process."""
    if _state["fingerprint"] is None:
        folder = os.path.dirname(os.path.abspath(__file__))
        digest = hashlib.sha256()
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    digest.update(name.encode() + b"\0" + f.read() + b"\0")
        _state["fingerprint"] = digest.hexdigest()
    return _state["fingerprint"]


def load(source: str) -> ModuleType:
    """The module built from `source` (imported once per process, compiled lazily)."""
    key = "\n".join([numba().__version__, backend_fingerprint(), source])
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    with _lock:
        module = _modules.get(digest)
        if module is not None:
            return module
        folder = cache_dir()
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"kf_jit_{digest}.py")
        if not _same_file(path, source):
            _write_atomically(path, source)
        spec = importlib.util.spec_from_file_location(f"kf_jit_{digest}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # numba's disk cache finds functions by module
        spec.loader.exec_module(module)
        _modules[digest] = module
        return module


def _same_file(path: str, source: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == source
    except OSError:
        return False


def _write_atomically(path: str, source: str) -> None:
    """Write to a temporary name and rename: a reader never sees half a module (and a
    rewrite of equal text never happens, so numba's index keyed on the file stays valid)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(source)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
