"""Tracing a Python function into a FuncGraph: placeholders for its tensor arguments,
AutoGraph conversion, the variable-creation hook, and the ConcreteFunction that results.
Function (api.py) decides when to trace; this module does one trace.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, List, Optional

import numpy as np

from kilnflow import errors, nest
from kilnflow.context import ctx
from kilnflow.function.concrete import CompositeSlot, ConcreteFunction, OutputSlot
from kilnflow.function.func_graph import FuncGraph
from kilnflow.function.trace_key import composite_spec
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import EagerTensor, SymbolicTensor, Tensor


def trace(name: str, python_function: Callable, args: tuple, kwargs: dict, trace_key: Any,
          arg_names: List[str], autograph: bool,
          on_variable: Callable[[Any], None],
          concrete_class: type = ConcreteFunction) -> ConcreteFunction:
    """Trace `python_function(*args, **kwargs)` once into a new FuncGraph.

    Tensor-like leaves of the arguments become placeholders (relaxed to the TensorSpecs a
    reduce_retracing key records); `on_variable(v)` runs for every Variable created.
    """
    graph = FuncGraph(name)
    input_specs: List[tuple] = []
    with graph.as_default():
        placeholders = Placeholders(graph, input_specs, specs_in_key(trace_key))
        graph_args = tuple(placeholders.make(a, n) for a, n in zip(args, arg_names))
        graph_kwargs = {k: placeholders.make(kwargs[k], k) for k in sorted(kwargs)}
        graph.inputs = [graph.get_operation_by_name(n).outputs[0]
                        for n in placeholders.op_names]
        ctx.variable_hooks.append(on_variable)
        try:
            result = call_python(python_function, graph_args, graph_kwargs, autograph)
        finally:
            ctx.variable_hooks.remove(on_variable)
        outputs: List[SymbolicTensor] = []
        template = output_template(result, graph, outputs)
    graph.outputs = outputs
    return concrete_class(name, graph, arg_names, input_specs, template, (args, kwargs))


class BoundPython:
    """A method bound to its instance that still exposes the original function."""

    def __init__(self, function: Callable, instance: Any):
        self.__func__ = function
        self.__self__ = instance
        functools.update_wrapper(self, function)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__func__(self.__self__, *args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        sig = inspect.signature(self.__func__)
        return sig.replace(parameters=list(sig.parameters.values())[1:])


def flatten_up_to(spec: Any, value: Any, position: int) -> list:
    """(value, TensorSpec) pairs: `value` split only as deep as `spec` is nested (a nested
    Python list against one TensorSpec stays one value)."""
    if isinstance(spec, TensorSpec):
        return [(value, spec)]
    if composite_spec(spec) is spec and isinstance(value, spec.value_type):
        return list(zip(spec._to_components(value), spec._component_specs))
    if isinstance(spec, dict) and isinstance(value, dict) and set(spec) == set(value):
        return [p for k in sorted(spec, key=repr)
                for p in flatten_up_to(spec[k], value[k], position)]
    if isinstance(spec, (list, tuple)) and isinstance(value, (list, tuple)) and \
            len(spec) == len(value):
        return [p for s, v in zip(spec, value) for p in flatten_up_to(s, v, position)]
    raise TypeError(errors.with_location(
        f"argument {position} ({value!r}) does not match the structure of input_signature "
        f"{spec}"))


def signature_of(fn: Callable) -> Optional[inspect.Signature]:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def call_python(fn: Callable, args: tuple, kwargs: dict, autograph: bool) -> Any:
    target = fn.__func__ if isinstance(fn, BoundPython) else fn
    if inspect.isgeneratorfunction(target) or inspect.iscoroutinefunction(target):
        code = target.__code__
        raise NotImplementedError(
            f"kf.function cannot trace {target.__name__!r} at {code.co_filename}:"
            f"{code.co_firstlineno}: it is a generator (or async) function, and a traced "
            "graph returns tensors, not a generator; collect the values in a list or a "
            "kf.TensorArray and return them, or feed a generator through "
            "kf.data.Dataset.from_generator")
    if autograph:
        # AutoGraph sits above function/ (its operators build graphs through it): the one
        # sanctioned late import of this layer
        from kilnflow.autograph import api as autograph_api
        target = fn.__func__ if isinstance(fn, BoundPython) else fn
        if isinstance(fn, BoundPython):
            args = (fn.__self__,) + tuple(args)
        return autograph_api.converted_call(target, args, kwargs)
    return fn(*args, **kwargs)


def specs_in_key(trace_key: Any) -> List[TensorSpec]:
    """Relaxed TensorSpecs recorded in a key, in argument order (for reduce_retracing)."""
    found: List[TensorSpec] = []

    def walk(k: Any) -> None:
        if isinstance(k, tuple) and k and k[0] == "S" and len(k) == 3 and \
                isinstance(k[1], TensorShape):
            found.append(TensorSpec(k[1], k[2]))
        elif isinstance(k, tuple):
            for part in k:
                walk(part)
    walk(trace_key)
    return found


class Placeholders:
    """Replaces each tensor-like argument leaf with a graph placeholder, in key order."""

    def __init__(self, graph: FuncGraph, input_specs: list, relaxed: List[TensorSpec]):
        self.graph = graph
        self.input_specs = input_specs
        self.op_names: List[str] = []
        self._relaxed = list(relaxed)

    def make(self, value: Any, name: str) -> Any:
        if isinstance(value, (EagerTensor, np.ndarray, TensorSpec, SymbolicTensor)):
            if isinstance(value, TensorSpec):
                spec = value
            else:
                array_like = value
                spec = TensorSpec(array_like.shape, array_like.dtype)
            if self._relaxed:
                relaxed = self._relaxed.pop(0)
                spec = TensorSpec(relaxed.shape, spec.dtype)
            return self._placeholder(spec, value.name if isinstance(value, TensorSpec) and
                                     value.name else name)
        composite = composite_spec(value)
        if composite is not None:  # one placeholder per component, of the spec's shapes
            return composite._from_components([
                self._placeholder(s, f"{name}_{i}")
                for i, s in enumerate(composite._component_specs)])
        if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
            return type(value)(self.make(v, f"{name}_{i}") for i, v in enumerate(value))
        if isinstance(value, tuple):
            return type(value)(*[self.make(v, f"{name}_{f}") for f, v in
                                 zip(value._fields, value)])
        if isinstance(value, dict):
            return type(value)((k, self.make(value[k], f"{name}_{k}"))
                               for k in sorted(value, key=repr))
        return value

    def _placeholder(self, spec: TensorSpec, name: str) -> SymbolicTensor:
        p = self.graph.placeholder(spec.dtype, spec.shape, name=name)
        self.op_names.append(p.op.name)
        self.input_specs.append((p.op.name, spec))
        return p


def output_template(result: Any, graph: FuncGraph, outputs: list) -> Any:
    """The returned structure with tensor leaves replaced by _Slots (tensors -> outputs)."""
    def leaf(x: Any) -> Any:
        if x is None:
            return None
        spec = composite_spec(x)
        if spec is not None and spec is not x:  # its components become outputs
            return CompositeSlot(spec, [leaf(c) for c in spec._to_components(x)])
        if isinstance(x, Tensor) or hasattr(x, "_as_tensor") or \
                isinstance(x, (int, float, bool, np.ndarray, np.generic)):
            t = graph.capture(convert_to_tensor(x))
            outputs.append(t)
            return OutputSlot(len(outputs) - 1)
        return x
    if nest.is_nested(result):
        return nest.map_structure(leaf, result)
    return leaf(result)
