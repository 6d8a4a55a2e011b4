"""The fused-kernel engine: runs a FusedProgram's block function over an output.

Small results run as plain NumPy expressions. Big ones run block by block (sized so that
a block's buffers fit CACHE_BYTES: they stay in L2) over a thread pool (ufuncs release the
GIL), each thread with its own scratch; a final reduction is done per block and combined.
Arithmetic-only float groups run as one numba kernel when numba is installed. Results come
from a pool of reused buffers. The figures behind each choice: kilnflow/runtime/ENGINE.md.
Imports nothing from kilnflow but rules and shapes; programs are duck-typed.
"""
from __future__ import annotations

import math
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from kilnflow.core import rules
from kilnflow.runtime import profile
from kilnflow.shapes import TensorShape

# Chosen by benchmarks/measure_engine.py (figures in kilnflow/runtime/ENGINE.md).
CACHE_BYTES = 3 << 19          # one block's buffers (scratch, inputs, output): most of L2
BLOCK_BYTES: Optional[int] = None  # a fixed block size (of the widest value) for measuring
PARALLEL_MIN_BLOCKS = 4        # below this many blocks a thread hand-off costs more than it saves
SMALL_ELEMENTS = 1 << 15       # up to this, plain NumPy expressions: malloc is cheap there,
                               # and one block would gain nothing
SHORT_AXIS = 16                # a last axis this short that an operand broadcasts along is
                               # iterated outside the ufuncs (see _by_last_index)
REDUCERS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
            "any": np.logical_or, "all": np.logical_and, "mean": np.add}


def default_num_threads() -> int:
    """The engine's thread count when none is set: one per CPU."""
    return max(1, os.cpu_count() or 1)


_pool: Optional[ThreadPoolExecutor] = None
_threads = default_num_threads()
_pool_lock = threading.Lock()


def set_num_threads(n: int) -> None:
    """Threads the fused engine spreads big groups over (default: the CPU count)."""
    global _threads
    _threads = max(1, int(n))


def get_num_threads() -> int:
    return _threads


def _forget_pool() -> None:
    global _pool
    _pool = None  # a forked child has the pool object but none of its threads


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _get_pool() -> ThreadPoolExecutor:
    """Worker threads (the calling thread does one share of the work itself)."""
    global _pool
    if _pool is None or _pool._max_workers < _threads - 1:
        with _pool_lock:
            if _pool is None or _pool._max_workers < _threads - 1:
                _pool = ThreadPoolExecutor(max(1, _threads - 1),
                                           thread_name_prefix="kilnflow-fused")
    return _pool


def run(block: Callable, program: Any, arrays: Sequence[Any], into: Any = None,
        silenced: bool = False) -> Any:
    """Evaluate `program` (its block function `block`) on `arrays`; write into `into` when
    it is a usable buffer of the result's shape and dtype. `silenced`: the caller already
    runs with NumPy warnings off."""
    if _small(arrays):
        return _run_small(program, arrays, silenced)
    arrays = [np.asarray(a) for a in arrays]
    shape = _result_shape(arrays)
    values_dtype = np.dtype(program.steps[program.root[1]].dtype)
    size = math.prod(shape)
    if BLOCK_BYTES:
        widest = max([np.dtype(d).itemsize for d in program.slots] + [values_dtype.itemsize])
        block_elems = max(1, BLOCK_BYTES // widest)
    else:  # as many elements as keep every buffer of a block in the cache at once
        per_element = sum(np.dtype(d).itemsize for d in program.slots) + \
            values_dtype.itemsize + sum(a.itemsize for a in arrays if a.size == size)
        block_elems = max(1, CACHE_BYTES // per_element)
    reduce = program.reduce
    if reduce is None:
        out = into if _usable(into, shape, values_dtype) else OUTPUTS.take(shape, values_dtype)
    by_index = reduce is None and _short_broadcast_last_axis(arrays, shape)
    # One call on whole arrays when there is one block, or when a single-step program
    # (no scratch: nothing to keep in cache) would not be worth a thread hand-off
    whole_call = size <= block_elems or (not program.slots and
                                         size < PARALLEL_MIN_BLOCKS * block_elems)
    if whole_call or not shape:
        with np.errstate(all="ignore"):
            if by_index:
                _by_last_index(block, out, arrays, program.slots)
                return out
            scratch = [np.empty(shape, d) for d in program.slots]
            if reduce is None:
                block(out, *arrays, *scratch)
                return out
            values = np.empty(shape, values_dtype)
            block(values, *arrays, *scratch)
            return _reduce_whole(program, values)
    whole = reduce is None or reduce[1] is None or set(reduce[1]) == set(range(len(shape)))
    flat = whole and all(a.size == 1 or (a.shape == shape and a.flags.c_contiguous)
                         for a in arrays)
    if flat:  # every operand is the full shape or one value: blocks of the flat arrays
        views = [a.reshape(()) if a.size == 1 else a.reshape(-1) for a in arrays]
        sliced = [a.ndim == 1 for a in views]
        rows, inner = size, ()
    else:     # blocks of rows; operands without the leading dim broadcast whole
        views = arrays
        sliced = [a.ndim == len(shape) and a.shape[0] == shape[0] != 1 for a in arrays]
        rows, inner = shape[0], shape[1:]
    if flat and reduce is None and size >= NUMBA_MIN_ELEMENTS:
        kernel = _numba_kernel(program, tuple(sliced))
        if kernel is not None:  # one compiled pass: see ENGINE.md for when it wins
            kernel(out.reshape(-1), *[v if s else v[()] for v, s in zip(views, sliced)])
            return out
    step = max(1, block_elems // max(1, math.prod(inner)))
    starts = list(range(0, rows, step))
    if reduce is None:
        target = out.reshape(-1) if flat else out
        combine = None
    else:
        kind, axes, _ = reduce
        combine = REDUCERS[kind]
        rows_reduced = flat or axes is None or 0 in axes
        if not rows_reduced:  # each block reduces to its own rows of the result
            keep_shape = rules.reduced_shape(TensorShape(shape), axes, True).as_list()
            target = np.empty(keep_shape, combine.reduce(np.zeros(1, values_dtype)).dtype)
            combine = None

    def part(first: int, last: int) -> Any:
        """Blocks starts[first:last]; returns their combined partial reduction (or None)."""
        scratch = [np.empty((step,) + inner, d) for d in program.slots]
        values = np.empty((step,) + inner, values_dtype) if reduce is not None else None
        partial = None
        with np.errstate(all="ignore"):
            for lo in starts[first:last]:
                hi = min(lo + step, rows)
                n = hi - lo
                args = [v[lo:hi] if s else v for v, s in zip(views, sliced)]
                tmp = scratch if n == step else [s[:n] for s in scratch]
                if by_index:
                    _by_last_index(block, target[lo:hi], args, program.slots)
                    continue
                if reduce is None:
                    block(target[lo:hi], *args, *tmp)
                    continue
                block(values[:n], *args, *tmp)
                reducer = REDUCERS[reduce[0]]
                if combine is None:
                    reducer.reduce(values[:n], axis=reduce[1], keepdims=True,
                                   out=target[lo:hi])
                    continue
                got = reducer.reduce(values[:n], axis=None if flat else reduce[1],
                                     keepdims=not flat)
                partial = got if partial is None else combine(partial, got)
        return partial

    threads = min(_threads, len(starts) // PARALLEL_MIN_BLOCKS)
    if threads <= 1:
        partials = [part(0, len(starts))]
    else:
        bounds = [len(starts) * t // threads for t in range(threads + 1)]
        task = profile.host_task(part, "fused block range")  # `part` unless profiling
        futures = [_get_pool().submit(task, bounds[t], bounds[t + 1])
                   for t in range(1, threads)]
        partials = [part(bounds[0], bounds[1])] + [f.result() for f in futures]
    if reduce is None:
        return out
    if combine is not None:
        target = partials[0]
        for p in partials[1:]:
            target = combine(target, p)
    _, axes, keepdims = reduce
    final_shape = rules.reduced_shape(TensorShape(shape), axes, keepdims).as_list()
    total = np.asarray(target).reshape(final_shape)
    return _finish(program, total, size // max(1, total.size))


def _result_shape(arrays: Sequence[Any]) -> tuple:
    """np.broadcast_shapes, without its ~3 us when operands are one shape and scalars."""
    shapes = {a.shape for a in arrays if a.ndim}
    if len(shapes) == 1:
        return shapes.pop()
    return tuple(np.broadcast_shapes(*[a.shape for a in arrays]))


def _short_broadcast_last_axis(arrays: Sequence[Any], shape: tuple) -> bool:
    """Is the last axis short (bits of a byte, RGB channels) and broadcast by an operand?
    NumPy would then run its inner loop over those few elements, once per position of
    the other axes: ~2x slower than a loop over them run once per last-axis index."""
    if len(shape) < 2 or not 1 < shape[-1] <= SHORT_AXIS:
        return False
    return any(a.size > 1 and a.shape[-1] == 1 for a in arrays)


def _by_last_index(block: Callable, out: Any, arrays: Sequence[Any], slots: Sequence) -> None:
    """block() once per index k of the last axis, on out[..., k] and each operand's
    matching slice (index 0 where it broadcasts)."""
    rank = out.ndim
    full = [a.reshape((1,) * (rank - a.ndim) + a.shape) for a in arrays]
    scratch = [np.empty(out.shape[:-1], d) for d in slots]
    for k in range(out.shape[-1]):
        block(out[..., k], *[a[..., k if a.shape[-1] > 1 else 0] for a in full], *scratch)


# ---------------------------------------------------------------- output buffers

class BufferPool:
    """Big result buffers, kept after their last user lets go and handed out again.

    A fresh big array is an mmap whose pages fault in on first write, which costs about
    as much as copying it; TF and JAX reuse memory through caching allocators, and this is
    ours for fused results. Results are views of pooled base buffers; a base is free again
    when nothing but the pool refers to it (CPython reference counts: every view, and every
    array or memoryview made from one, holds a reference to its base). At most
    `max_free_bytes` of free buffers are kept.
    """

    def __init__(self, min_bytes: int = 1 << 20, max_free_bytes: int = 1 << 28,
                 max_entries: int = 64):
        self.min_bytes = min_bytes
        self.max_free_bytes = max_free_bytes
        self.max_entries = max_entries  # buffers still in use beyond this are forgotten
        self._bases: List[Any] = []   # least recently handed out first
        self._lock = threading.Lock()

    def _is_free(self, i: int) -> bool:
        return sys.getrefcount(self._bases[i]) == 2  # the list's reference and the argument

    def take(self, shape: Sequence[int], dtype: np.dtype) -> Any:
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < self.min_bytes:
            return np.empty(shape, dtype)
        with self._lock:
            found = next((i for i in range(len(self._bases))
                          if self._bases[i].nbytes == nbytes and self._is_free(i)), None)
            if found is None:
                base = np.empty(nbytes, np.uint8)
                self._trim(len(self._bases))
            else:
                base = self._bases.pop(found)
            self._bases.append(base)
            return base.view(dtype).reshape(shape)

    def _trim(self, end: int) -> None:
        free = [i for i in range(end) if self._is_free(i)]
        excess = sum(self._bases[i].nbytes for i in free) - self.max_free_bytes
        drop = set()
        for i in free:  # oldest first
            if excess <= 0:
                break
            excess -= self._bases[i].nbytes
            drop.add(i)
        # results a caller keeps (a list of outputs) need not be scanned on every call
        in_use = [i for i in range(end) if i not in free]
        drop.update(in_use[:max(0, len(self._bases) - len(drop) - self.max_entries)])
        self._bases = [b for i, b in enumerate(self._bases) if i not in drop]

    def clear(self) -> None:
        with self._lock:
            self._bases = [b for i, b in enumerate(self._bases) if not self._is_free(i)]


OUTPUTS = BufferPool()


# ---------------------------------------------------------------- numba, when installed

# Steps numba compiles to the same IEEE results NumPy gives (floats only: numba widens
# small ints). NumPy's SIMD transcendentals beat numba's libm calls, so a group with any
# other step stays on the NumPy blocks. maximum/minimum propagate NaN as NumPy does.
_NUMBA_STEPS = {"add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
                "true_divide": "{0} / {1}", "negative": "-{0}",
                "maximum": "({0} if {0} >= {1} or {0} != {0} else {1})",
                "minimum": "({0} if {0} <= {1} or {0} != {0} else {1})", "cast": "{0}"}
NUMBA_MIN_ELEMENTS = 1 << 20   # below this the blocks are as fast; numba compiles slowly
_backend = {"name": "auto"}
_numba_state: Dict[str, Any] = {}
_numba_kernels: Dict[tuple, Any] = {}


def set_backend(name: str) -> None:
    """'auto' (numba for arithmetic-only groups when installed, else NumPy) or 'numpy'."""
    if name not in ("auto", "numpy"):
        raise ValueError(f"fused engine backend must be 'auto' or 'numpy', got {name!r}")
    _backend["name"] = name


def _numba() -> Any:
    if "module" not in _numba_state:
        try:
            import numba
        except ImportError:  # optional: the NumPy blocks are the fallback
            numba = None
        _numba_state["module"] = numba
    return _numba_state["module"]


def numba_source(program: Any, sliced: Sequence[bool]) -> Optional[str]:
    """A numba kernel for `program` (one pass over flat arrays), or None when its steps or
    dtypes are not ones numba reproduces exactly. `sliced[i]`: input i is an array (else a
    scalar)."""
    dtypes = list(program.input_dtypes) + [s.dtype for s in program.steps]
    if program.reduce is not None or any(np.dtype(d).kind != "f" for d in dtypes) or \
            any(s.fn not in _NUMBA_STEPS for s in program.steps):
        return None
    lines = [f"def kernel(out, {', '.join(f'a{i}' for i in range(program.n_inputs))}):",
             "    for i in numba.prange(out.size):"]
    for i, is_array in enumerate(sliced):
        lines.append(f"        v{i} = a{i}[i]" if is_array else f"        v{i} = a{i}")

    def arg(ref: tuple, dtype: str) -> str:
        kind, value = ref
        if kind == "in":
            return f"v{value}"
        if kind == "step":
            return f"t{value}"
        if kind == "const":
            value = value[0]
        return f"np.{np.dtype(dtype).name}({value!r})"  # typed: numba would widen a literal

    for j, step in enumerate(program.steps):
        args = [arg(a, step.dtype) for a in step.args]
        text = _NUMBA_STEPS[step.fn].format(*args)
        lines.append(f"        t{j} = np.{np.dtype(step.dtype).name}({text})")
    lines.append(f"        out[i] = t{program.root[1]}")
    return "\n".join(lines) + "\n"


def _numba_kernel(program: Any, sliced: tuple) -> Optional[Callable]:
    if _backend["name"] != "auto":
        return None
    key = (program, sliced)
    if key not in _numba_kernels:
        source = numba_source(program, sliced)
        numba = _numba() if source is not None else None
        kernel = None
        if numba is not None:
            namespace = {"np": np, "numba": numba}
            exec(compile(source, "<kilnflow fused numba>", "exec"), namespace)  # noqa: S102
            kernel = numba.njit(parallel=True, fastmath=False)(namespace["kernel"])
        _numba_kernels[key] = kernel
    kernel = _numba_kernels[key]
    if kernel is not None:
        numba = _numba()
        numba.set_num_threads(min(_threads, numba.config.NUMBA_NUM_THREADS))
    return kernel


def _small(arrays: Sequence[Any]) -> bool:
    """Is the result at most SMALL_ELEMENTS? (Cheap: no compatibility checks, which the
    expressions make anyway.)"""
    ndim = 0
    for a in arrays:
        if a.size > SMALL_ELEMENTS:
            return False
        ndim = max(ndim, a.ndim)
    dims = [1] * ndim
    for a in arrays:
        for i, d in enumerate(a.shape, ndim - a.ndim):
            if d != 1:
                dims[i] = d
    return math.prod(dims) <= SMALL_ELEMENTS


def _run_small(program: Any, arrays: Sequence[Any], silenced: bool) -> Any:
    """Plain NumPy expressions, as the ops would have run unfused (warnings included when
    every kernel was a bare ufunc; silenced otherwise, as those kernels do)."""
    if program.quiet or silenced:
        values = program.whole()(*arrays)
    else:
        with np.errstate(all="ignore"):
            values = program.whole()(*arrays)
    if program.reduce is None:
        return values
    return reduce_values(program, values)


def reduce_values(program: Any, values: Any) -> Any:
    """The program's final reduction of `values` (whole, not in blocks)."""
    return _reduce_whole(program, np.asarray(values))


def _reduce_whole(program: Any, values: Any) -> Any:
    kind, axes, keepdims = program.reduce
    total = np.asarray(REDUCERS[kind].reduce(values, axis=axes,
                                                          keepdims=keepdims))
    return _finish(program, total, values.size // max(1, total.size))


def _finish(program: Any, total: Any, count: int) -> Any:
    """Mean divides the sum by the count; every kind returns the declared dtype."""
    total = np.asarray(total)
    if program.reduce[0] == "mean":
        with np.errstate(all="ignore"):
            total = np.true_divide(total, count) if count else \
                np.full(total.shape, np.nan, total.dtype)
    return total.astype(np.dtype(program.dtype), copy=False)


def _usable(buffer: Any, shape: tuple, dtype: np.dtype) -> bool:
    return (isinstance(buffer, np.ndarray) and buffer.shape == tuple(shape)
            and buffer.dtype == dtype and buffer.flags.writeable and buffer.flags.c_contiguous)
