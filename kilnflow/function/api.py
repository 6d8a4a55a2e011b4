"""@kf.function: Function (trace cache, retracing reasons, variable-creation rule) and
get_concrete_function.

A call computes a trace key from its arguments; a hit runs the cached ConcreteFunction,
a miss traces the (AutoGraph-converted) Python function into a FuncGraph first. Called
while another graph is being built, or under an active GradientTape, the Python function
is inlined instead, so the outer graph or tape sees its ops.
"""
from __future__ import annotations

import functools
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from kilnflow import errors
from kilnflow.context import ctx
from kilnflow.function import diagnostics, tracing
from kilnflow.function.tracing import BoundPython, call_python, flatten_up_to, signature_of
from kilnflow.function.concrete import ConcreteFunction
from kilnflow.function.func_graph import FuncGraph
from kilnflow.function.trace_key import key_matches, make_key, relax, variable_handles
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.runtime import profile
from kilnflow.tensor import EagerTensor

RETRACE_WARNING_THRESHOLD = 5
RECENT_TRACES_COMPARED = 32


class Function:
    """A Python function compiled to graphs, one per distinct input signature.

    >>> import kilnflow as kf
    >>> @kf.function
    ... def f(x):
    ...     return x * 2 + 1
    >>> f(kf.constant([1.0, 2.0])).numpy().tolist()
    [3.0, 5.0]
    """

    def __init__(self, python_function: Callable, input_signature: Optional[Sequence] = None,
                 autograph: bool = True, reduce_retracing: bool = False,
                 jit_compile: Optional[bool] = None, name: Optional[str] = None,
                 experimental_profile: bool = False):
        self.python_function = python_function
        # per-op timings of every call, kept here (runtime/profile.py; kf.profiler reads it)
        self.experimental_profile = profile.Recorder() if experimental_profile else None
        self._autograph = autograph
        self._reduce_retracing = reduce_retracing
        self.jit_compile = jit_compile
        self._name = name or getattr(python_function, "__name__", "function")
        self._signature = signature_of(python_function)
        if input_signature is not None and not hasattr(input_signature, "__iter__"):
            raise TypeError(f"function: `input_signature` must be a tuple or a list of "
                            f"TensorSpec objects, got {input_signature!r}")
        self.input_signature = None if input_signature is None else tuple(input_signature)
        self._cache: Dict[Any, ConcreteFunction] = {}
        self._general: List[tuple] = []   # (relaxed key, concrete) for reduce_retracing
        self._keepers: Dict[Any, list] = {}
        self._trace_log: List[tuple] = []  # (key, reasons)
        self._tracing_count = 0
        self._inline_keys: set = set()  # signatures inlined into other traces (counting)
        self._variables_created = False
        self._warned: set = set()
        self._bound: Dict[int, tuple] = {}
        self._rebound: Dict[tuple, ConcreteFunction] = {}  # (trace, handles) -> rebound
        self._lock = threading.RLock()  # held while tracing: one trace per signature
        functools.update_wrapper(self, python_function)

    # ---------------------------------------------------------------- calling

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not ctx.plain_call:
            if ctx.run_functions_eagerly:
                return self.python_function(*args, **kwargs)
            if self.jit_compile and ctx.graph is None:  # eager under a tape: one compiled op
                from kilnflow.function import jit_grad
                return jit_grad.call(self, args, kwargs)
            return self._inline(args, kwargs)
        if not kwargs and self.input_signature is None:
            if len(args) == 1 and type(args[0]) is EagerTensor:  # the commonest call
                value = args[0]._value
                concrete = self._cache.get(((("T", value.shape, value.dtype),), ()))
                if concrete is not None:
                    return concrete._call_flat((value,))
            else:
                for a in args:  # only eager tensors: the key needs no walk
                    if type(a) is not EagerTensor:
                        break
                else:
                    arrays = [a._value for a in args]
                    key = (tuple([("T", v.shape, v.dtype) for v in arrays]), ())
                    concrete = self._cache.get(key)
                    if concrete is not None:
                        return concrete._call_flat(arrays)
        concrete, tensors = self._concrete_for(args, kwargs)
        # ndarrays are copied at the boundary: graph values must not alias caller arrays
        return concrete._call_flat([t._value if isinstance(t, EagerTensor) else np.array(t)
                                    for t in tensors])

    def _inline(self, args: tuple, kwargs: dict) -> Any:
        self._count_inline_trace(args, kwargs)
        return call_python(self.python_function, args, kwargs, self._autograph)

    def _count_inline_trace(self, args: tuple, kwargs: dict) -> None:
        """TF traces a function called from another trace (or under a tape) once per
        signature; kilnflow inlines it instead, and counts a trace the same way."""
        try:
            key = _numpy_dtypes(make_key(*self._canonical(args, kwargs))[0])
            hash(key)
        except (TypeError, ValueError):
            return
        if key not in self._inline_keys and key not in self._cache:
            self._inline_keys.add(key)
            self._tracing_count += 1

    def _canonical(self, args: tuple, kwargs: dict) -> tuple:
        """Arguments as positional values in parameter order (defaults applied)."""
        if self._signature is None:
            return args, kwargs
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self._name}(): {exc}") from None
        bound.apply_defaults()
        return bound.args, bound.kwargs


    def _concrete_for(self, args: tuple, kwargs: dict) -> tuple:
        if self.input_signature is not None:
            return self._concrete_for_signature(args, kwargs)
        args, kwargs = self._canonical(args, kwargs)
        key, tensors, keep = make_key(args, kwargs)
        concrete = self._cache.get(key)
        if concrete is None:
            with self._lock:  # concurrent first calls of one signature trace it once
                concrete = self._concrete_for_locked(args, kwargs, key, tensors, keep)
        if keep:
            concrete = self._for_variables(concrete, variable_handles(keep))
        return concrete, tensors

    def _for_variables(self, concrete: ConcreteFunction, handles: tuple) -> ConcreteFunction:
        """The trace for these variable arguments: variables are traced by spec, so a
        trace made with others of the same dtype and shape is rebound to these."""
        traced = concrete.argument_handles
        if len(traced) == len(handles) and all(a is b for a, b in zip(traced, handles)):
            return concrete
        key = (id(concrete), tuple(id(h) for h in handles))
        found = self._rebound.get(key)
        if found is None:
            with self._lock:
                found = self._rebound.get(key)
                if found is None:
                    # the entry holds the handles (argument_handles): their ids stay unique
                    found = concrete.with_variables(handles)
                    if self.experimental_profile is not None:
                        profile.register(found, pinned=self.experimental_profile)
                    self._rebound[key] = found
        return found

    def _concrete_for_locked(self, args: tuple, kwargs: dict, key: Any, tensors: list,
                             keep: list) -> ConcreteFunction:
        concrete = self._cache.get(key)
        if concrete is None:  # a trace with unknown dims (or relaxed) may cover this call
            for general, candidate in self._general:
                if key_matches(general, key):
                    concrete = candidate
                    break
        if concrete is None:
            trace_key = key
            if self._reduce_retracing and self._trace_log:
                relaxed = relax(self._trace_log[-1][0], key)
                if relaxed is not None:
                    trace_key = relaxed
            concrete = self._trace(args, kwargs, key, trace_key)
            concrete.argument_handles = variable_handles(keep)
            self._keepers[key] = keep
            if trace_key is not key:
                self._general.append((trace_key, concrete))
        self._cache[key] = concrete
        return concrete

    def _concrete_for_signature(self, args: tuple, kwargs: dict) -> tuple:
        specs = self.input_signature
        if len(args) + len(kwargs) == len(specs):
            args, kwargs = self._canonical(args, kwargs)
        flat_args = list(args) + [kwargs[k] for k in sorted(kwargs)]
        if len(flat_args) != len(specs):
            raise TypeError(errors.with_location(
                f"{self._name}(): called with {len(flat_args)} arguments, but its "
                f"input_signature has {len(specs)}: {specs}"))
        tensors = []
        for i, (value, spec) in enumerate(zip(flat_args, specs)):
            for leaf, leaf_spec in flatten_up_to(spec, value, i):
                try:
                    t = convert_to_tensor(leaf, leaf_spec.dtype)
                except (TypeError, ValueError) as exc:
                    raise TypeError(errors.with_location(
                        f"{self._name}(): argument {i} is incompatible with input_signature "
                        f"{leaf_spec}: {exc}")) from None
                if not leaf_spec.shape.is_compatible_with(t.shape):
                    raise TypeError(errors.with_location(
                        f"{self._name}(): argument {i} of shape {t.shape} is incompatible "
                        f"with input_signature {leaf_spec}"))
                tensors.append(t)
        return self._signature_concrete(), tensors

    def _signature_concrete(self) -> ConcreteFunction:
        key = ("signature",)
        concrete = self._cache.get(key)
        if concrete is None:
            with self._lock:
                concrete = self._cache.get(key)
                if concrete is None:
                    concrete = self._trace(tuple(self.input_signature), {}, key, key)
                    self._cache[key] = concrete
        return concrete

    # ---------------------------------------------------------------- tracing

    def _trace(self, args: tuple, kwargs: dict, key: Any, trace_key: Any) -> ConcreteFunction:
        reasons = self._retrace_reasons(key)
        if not self._trace_log:
            for message in diagnostics.scan_source(self.python_function):
                diagnostics.warn(message, diagnostics.TraceTimeSideEffectWarning)
        concrete = self._trace_once(args, kwargs, trace_key)
        if key in self._inline_keys:  # counted when it was inlined into another trace
            self._inline_keys.discard(key)
            self._tracing_count -= 1
        if self._created_on_last_trace and not self._variables_created:
            # Like TF: a first trace that created variables is traced again, and this time
            # creating variables is an error (they would be created on every call).
            self._variables_created = True
            concrete = self._trace_once(args, kwargs, trace_key)
        self._variables_created = True
        self._warn_pruned(concrete.traced_graph)  # the trace kept (not one retraced away)
        self._trace_log.append((key, reasons))  # only traces that succeeded count
        if len(self._trace_log) > RETRACE_WARNING_THRESHOLD and "retrace" not in self._warned:
            self._warned.add("retrace")
            diagnostics.warn(
                f"kf.function '{self._name}' has been traced {len(self._trace_log)} times; "
                f"tracing is expensive. Why it retraced:\n{self.explain_retracing()}\nPass "
                f"tensors instead of Python values, use input_signature with None dims, or "
                f"reduce_retracing=True.", diagnostics.RetracingWarning)
        return concrete

    def _retrace_reasons(self, key: Any) -> List[str]:
        count = len(key[0]) if isinstance(key, tuple) and key and isinstance(key[0], tuple) \
            else 0
        # the closest of the latest traces: comparing with all of them would make each
        # retrace cost grow with the number of traces
        recent = [k for k, _ in self._trace_log[-RECENT_TRACES_COMPARED:]]
        return diagnostics.retrace_reasons(recent, key, self._arg_names(count))

    def _arg_names(self, count: int) -> List[str]:
        names = []
        if self._signature is not None:
            for p in self._signature.parameters.values():
                if p.kind == p.VAR_POSITIONAL:
                    break
                names.append(p.name)
        while len(names) < count:
            names.append(f"args_{len(names)}")
        return names[:count]

    def _trace_once(self, args: tuple, kwargs: dict, trace_key: Any) -> ConcreteFunction:
        self._created_on_last_trace = False

        def on_variable(variable: Any) -> None:
            if self._variables_created:
                raise ValueError(errors.with_location(
                    f"kf.function '{self._name}' tried to create variables on non-first "
                    f"call: a kf.Variable is created every time the function is traced. "
                    f"Create it outside the function, pass it in as an argument, or "
                    f"create it once (`if self.v is None: self.v = kf.Variable(...)`)"))
            self._created_on_last_trace = True

        concrete = tracing.trace(self._name, self.python_function, args, kwargs, trace_key,
                                 self._arg_names(len(args)), self._autograph, on_variable)
        concrete.python_signature = self._signature
        if self.jit_compile:  # TF's flag: the whole graph compiles (numba) or this raises
            from kilnflow.runtime import jit
            concrete._fn = jit.compile_graph(self._name, concrete.graph)
        if self.experimental_profile is not None:
            profile.register(concrete, pinned=self.experimental_profile)
        self._tracing_count += 1
        return concrete

    def _warn_pruned(self, graph: FuncGraph) -> None:
        if "pruned" not in self._warned and diagnostics.warn_pruned(self._name, graph):
            self._warned.add("pruned")

    # ---------------------------------------------------------------- public API

    def get_concrete_function(self, *args: Any, **kwargs: Any) -> ConcreteFunction:
        """The ConcreteFunction for these arguments (TensorSpecs or values), tracing if
        needed."""
        if self.input_signature is not None and not args and not kwargs:
            args = tuple(self.input_signature)
        if self.input_signature is not None:
            return self._signature_concrete()
        args, kwargs = self._canonical(args, kwargs)
        key, _, keep = make_key(args, kwargs)
        # as a call would: a trace with unknown dims that covers these arguments serves
        concrete = self._cache.get(key) or next(
            (c for general, c in self._general if key_matches(general, key)), None)
        if concrete is None:
            with self._lock:
                concrete = self._cache.get(key)
                if concrete is None:
                    concrete = self._trace(args, kwargs, key, key)
                    concrete.argument_handles = variable_handles(keep)
                    self._cache[key] = concrete
                    self._keepers[key] = keep
                    if _has_unknown_dims(key):  # later calls of any matching size use it
                        self._general.append((key, concrete))
        if keep:
            concrete = self._for_variables(concrete, variable_handles(keep))
        return concrete

    def experimental_get_compiler_ir(self, *args: Any, **kwargs: Any) -> Callable:
        """As TF's: `f.experimental_get_compiler_ir(x)(stage="numba")` is the source the
        jit backend generates for these arguments."""
        from kilnflow.runtime import jit
        graph = self.get_concrete_function(*args, **kwargs).graph
        return lambda stage="numba": jit.compiler_ir(self._name, graph, stage)

    def traced_concrete_functions(self) -> list:
        """The distinct ConcreteFunctions traced so far, oldest first."""
        seen: Dict[int, ConcreteFunction] = {}
        for concrete in self._cache.values():
            seen.setdefault(id(concrete), concrete)
        return list(seen.values())

    def pretty_printed_concrete_signatures(self, verbose: bool = True) -> str:
        """Every traced signature, oldest first, in TF's printed form."""
        return "\n\n".join(c.pretty_printed_signature(verbose)
                           for c in self.traced_concrete_functions())

    def experimental_get_tracing_count(self) -> int:
        return self._tracing_count

    def explain_retracing(self) -> str:
        """One line per trace: which argument changed and how."""
        lines = []
        for i, (_, reasons) in enumerate(self._trace_log, 1):
            lines.append(f"  trace {i}: " + "; ".join(reasons))
        return "\n".join(lines)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        entry = self._bound.get(id(instance))
        if entry is not None and entry[0]() is instance:
            return entry[1]
        bound = Function(functools.partial(self.python_function, instance),
                         input_signature=self.input_signature, autograph=self._autograph,
                         reduce_retracing=self._reduce_retracing, name=self._name,
                         jit_compile=self.jit_compile)
        bound.python_function = BoundPython(self.python_function, instance)
        bound.experimental_profile = self.experimental_profile  # one profile per method
        bound._signature = signature_of(bound.python_function)
        try:
            ref = weakref.ref(instance, lambda _, k=id(instance): self._bound.pop(k, None))
        except TypeError:
            ref = lambda: instance  # noqa: E731 - objects without weakref support
        self._bound[id(instance)] = (ref, bound)
        return bound

    def __repr__(self) -> str:
        return f"<kilnflow.function {self._name}>"


def _numpy_dtypes(key: Any) -> Any:
    """A key with graph tensors' dtypes (NumPy scalar types) written as eager tensors'
    (np.dtype), so an inlined call and a direct call with the same specs share one key."""
    if isinstance(key, tuple):
        return tuple(_numpy_dtypes(k) for k in key)
    if isinstance(key, type) and issubclass(key, np.generic):
        return np.dtype(key)
    return key


def _has_unknown_dims(key: Any) -> bool:
    """True when a trace key holds a TensorSpec with an unknown dim or rank."""
    if isinstance(key, tuple) and len(key) == 3 and key[0] == "S":
        return not key[1].is_fully_defined()
    return isinstance(key, tuple) and any(_has_unknown_dims(part) for part in key)


def function(func: Optional[Callable] = None, input_signature: Optional[Sequence] = None,
             autograph: bool = True, jit_compile: Optional[bool] = None,
             reduce_retracing: bool = False, experimental_relax_shapes: Optional[bool] = None,
             name: Optional[str] = None, experimental_profile: bool = False,
             **unused_tf_args: Any) -> Any:
    """Compiles a Python function into graphs: `@kf.function` or `kf.function(f)`.

    Python side effects run only while tracing; kf.print, kf.random and variable updates
    run on every call, in program order. See Function. `experimental_profile=True` records
    per-op timings of every call in `f.experimental_profile` (kf.profiler formats them).
    """
    if experimental_relax_shapes is not None:
        reduce_retracing = reduce_retracing or experimental_relax_shapes

    def decorate(f: Callable) -> Function:
        return Function(f, input_signature=input_signature, autograph=autograph,
                        reduce_retracing=reduce_retracing, jit_compile=jit_compile, name=name,
                        experimental_profile=experimental_profile)
    return decorate if func is None else decorate(func)


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Debugging switch: run kf.function-decorated functions as plain Python."""
    ctx.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return ctx.run_functions_eagerly
