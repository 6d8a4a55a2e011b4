"""NumPy's own BLAS for the jit backend's matrix products, and its thread count.

numba's `np.dot` reaches BLAS through SciPy's bindings, i.e. SciPy's OpenBLAS: a second
copy, often another version, measured 11% slower than NumPy's on the MLP's 64x784x256
product. When NumPy ships its own OpenBLAS with 64-bit-integer CBLAS symbols (the PyPI
wheels: `scipy_cblas_sgemm64_`), the generated code calls that `cblas_?gemm` directly,
through a symbol registered with LLVM under a fixed name: the compiled code refers to the
name, not an address, so numba's disk cache stays valid across processes. Elsewhere
(another BLAS, no such symbols) `available()` is False and the generated code uses
`np.dot` as before.

The thread count is NumPy's (kf.config.threading.set_intra_op_parallelism_threads sets it
through threadpoolctl): compiled code does not raise it on its own, since on a loaded
machine two OpenBLAS threads can be many times slower than one (a worker spin-waits for a
descheduled peer). `set_threads` changes it for the calling thread only (OpenBLAS's
`openblas_set_num_threads_local`), for NumPy and compiled code alike: the benchmarks use
it to time both at two threads. Imports nothing from kilnflow.
"""
from __future__ import annotations

import ctypes
import glob
import os
from typing import Any, Dict, Optional

import numpy as np

# LLVM names the generated code calls -> the candidate exported names (ILP64 only: the
# suffix says the integers are 64-bit, which the declared signatures assume)
SYMBOLS = {"kf_cblas_sgemm": ("scipy_cblas_sgemm64_", "cblas_sgemm64_"),
           "kf_cblas_dgemm": ("scipy_cblas_dgemm64_", "cblas_dgemm64_")}
_state: Dict[str, Any] = {"found": None}


def _library_paths() -> list:
    """NumPy's bundled BLAS libraries (Linux wheels: numpy.libs; macOS: numpy/.dylibs)."""
    here = os.path.dirname(np.__file__)
    found = []
    for pattern in (os.path.join(os.path.dirname(here), "numpy.libs", "*openblas*"),
                    os.path.join(here, ".dylibs", "*openblas*")):
        found += sorted(glob.glob(pattern))
    return found


def _find() -> Dict[str, Any]:
    """{'library': CDLL, 'addresses': {llvm name: address}, 'set_local': fn or None}; an
    empty dict when NumPy's BLAS cannot be called directly."""
    if os.environ.get("KF_JIT_NUMPY_BLAS", "1") == "0":  # the np.dot path, for comparing
        return {}
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        addresses = {}
        for name, candidates in SYMBOLS.items():
            for symbol in candidates:
                fn = getattr(lib, symbol, None)
                if fn is not None:
                    addresses[name] = ctypes.cast(fn, ctypes.c_void_p).value
                    break
        if len(addresses) == len(SYMBOLS):
            set_local = getattr(lib, "openblas_set_num_threads_local", None)
            if set_local is not None:
                set_local.argtypes, set_local.restype = [ctypes.c_int], ctypes.c_int
            return {"library": lib, "addresses": addresses, "set_local": set_local}
    return {}


def found() -> Dict[str, Any]:
    if _state["found"] is None:
        _state["found"] = _find()
    return _state["found"]


def available() -> bool:
    """Whether generated code may call NumPy's cblas_?gemm (see `register`)."""
    return bool(found())


def register() -> bool:
    """Make the kf_cblas_* names resolvable by LLVM (once per process, before any
    generated module that calls them is compiled or loaded from the disk cache)."""
    info = found()
    if not info:
        return False
    if not info.get("registered"):
        import llvmlite.binding as llvm
        for name, address in info["addresses"].items():
            llvm.add_symbol(name, address)
        info["registered"] = True
    return True


def set_threads(count: int) -> Optional[int]:
    """Set the calling thread's BLAS thread count; returns the previous one (None when
    OpenBLAS has no thread-local setting: the process-wide one applies)."""
    set_local = found().get("set_local")
    return None if set_local is None else set_local(count)
