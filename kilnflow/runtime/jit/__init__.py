"""The numba jit backend behind `kf.function(jit_compile=True)`.

`compile_graph(name, graph)` lowers an optimized graph to numba source (lower.py, with
fused.py for elementwise groups and rules.py per op), loads it through the on-disk cache
(cache.py) and returns a callable with the generated runtime's calling convention: input
arrays in, a tuple of output arrays out, variables read and written through their handles.
Compilation itself happens on the first call (numba specialises on dtype and rank, so a
new batch size reuses the machine code). Needs the optional `fast` extra (numba, scipy).
"""
from __future__ import annotations

import sys
from typing import Any, Sequence

import numpy as np

from kilnflow import errors
from kilnflow.runtime import fused_engine
from kilnflow.runtime.jit import cache
from kilnflow.runtime.jit.cache import clear_cache as clear_cache
from kilnflow.runtime.jit.cache import set_cache_dir as set_cache_dir
from kilnflow.runtime.jit.lower import Lowered, lower
from kilnflow.runtime.jit.lower import lowerable as lowerable


class JitFunction:
    """A compiled graph: call it with the input arrays, get the output tuple."""

    def __init__(self, lowered: Lowered, dispatcher: Any) -> None:
        self.lowered = lowered
        self.dispatcher = dispatcher
        self.source = lowered.source
        self._scalars = [i for i, s in enumerate(lowered.scalar_inputs) if s]
        self._extra = list(lowered.constants)
        self._handles = list(lowered.variables)
        self._assigned = list(lowered.assigned)
        self._assigned_dtypes = [np.dtype(h.dtype.as_numpy_dtype) for h in self._assigned]
        self._dtypes = list(lowered.output_dtypes)
        self._n_out = len(self._dtypes)
        # donated outputs: (output index, spare array or None, empty stand-in)
        self._donated = [[i, None, np.empty((0,) * rank, self._dtypes[i])]
                         for i, rank in getattr(lowered, "donated", [])]
        self.calls = 0  # native runs of this graph (tests check gradients run natively)

    def __call__(self, *arrays: Any) -> tuple:
        self.calls += 1
        stats["calls"] += 1
        args = list(arrays)
        for i in self._scalars:  # rank-0 tensors are numba scalars
            args[i] = np.asarray(args[i])[()]
        args += self._extra
        alone, value = True, None
        for h in self._handles:
            value = h.read()
            # the handle, `value` and getrefcount's argument: nobody else sees this array
            alone = alone and type(value) is np.ndarray and value.base is None and \
                value.flags.writeable and sys.getrefcount(value) <= 3
            args.append(value[()] if value.ndim == 0 else value)
        args.append(_use_threads())
        args.append(alone)
        del value
        for entry in self._donated:
            spare, entry[1] = entry[1], None
            # `spare` and getrefcount's argument: the caller dropped what we returned
            args.append(spare if spare is not None and sys.getrefcount(spare) <= 2
                        else entry[2])
            del spare
        try:
            results = self.dispatcher(*args)
        except cache.numba().core.errors.NumbaError as exc:  # ours to fix, not the user's
            raise errors.InternalError(
                f"the numba backend could not compile the code it generated for this "
                f"function ({self.dispatcher.py_func.__code__.co_filename}): "
                f"{str(exc).splitlines()[-1] if str(exc) else type(exc).__name__}") from exc
        except (ValueError, IndexError) as exc:  # raised by a kernel helper on bad values
            raise errors.InvalidArgumentError(
                f"{exc} [compiled function {self.lowered.fn_name}]") from None
        for entry in self._donated:
            out = results[entry[0]]
            if type(out) is np.ndarray and out.nbytes >= DONATE_MIN and \
                    out.dtype == self._dtypes[entry[0]] and out.flags.c_contiguous:
                entry[1] = out  # kept: the next call writes into it if nobody holds it
        for h, value, dtype in zip(self._assigned, results[self._n_out:], self._assigned_dtypes):
            h.value = _as_array(value, dtype)
        return tuple([_as_array(v, d) for v, d in zip(results[:self._n_out], self._dtypes)])


DONATE_MIN = 1 << 20  # bytes: smaller outputs come from malloc's warm free lists anyway
_threads = {"set": 0}
stats = {"calls": 0}  # native calls of every compiled graph in this process


def _use_threads() -> bool:
    """prange loops use kf.config.threading's intra-op thread count (the fused engine's);
    True when that is more than one (the generated code's `kf_parallel`)."""
    wanted = fused_engine.get_num_threads()
    if wanted != _threads["set"]:
        numba = cache.numba()
        numba.set_num_threads(max(1, min(wanted, numba.config.NUMBA_NUM_THREADS)))
        _threads["set"] = wanted
    return wanted > 1


def _as_array(value: Any, dtype: np.dtype) -> Any:
    if type(value) is np.ndarray and value.dtype == dtype:
        return value
    if dtype.kind == "O":  # a loop's recorded history, a list (passes/autocluster types it)
        return value
    return np.asarray(value, dtype)


def compile_graph(name: str, graph: Any) -> JitFunction:
    """Lower and load `graph` (raises InvalidArgumentError naming every op that cannot be
    compiled, ImportError naming the `fast` extra when numba is missing)."""
    cache.numba()
    lowered = lower(name, graph)
    module = cache.load(lowered.source)
    return JitFunction(lowered, getattr(module, lowered.fn_name))


def compiler_ir(name: str, graph: Any, stage: str = "numba") -> str:
    """What `f.experimental_get_compiler_ir(x)(stage)` shows: the generated numba source."""
    if stage not in ("numba", "hlo", "optimized_hlo"):  # TF's stage names map to our one IR
        raise ValueError(f"unknown compiler IR stage {stage!r}; this backend has 'numba'")
    return lower(name, graph).source


def available() -> bool:
    try:
        cache.numba()
    except ImportError:
        return False
    return True


__all__: Sequence[str] = ["compile_graph", "compiler_ir", "available", "JitFunction",
                          "set_cache_dir", "clear_cache", "stats", "lowerable"]
