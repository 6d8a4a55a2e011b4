"""ConcreteFunction: one traced graph, optimized and compiled to generated Python.

Calling it feeds the flat input arrays to the generated function and packs the results
into the structure the Python function returned. `print(concrete)` lists Args and
Returns like TF; `.graph` is the optimized graph, `.code` the generated source.
"""
from __future__ import annotations

import sys
import traceback
from typing import Any, List, Sequence

import numpy as np

from kilnflow import errors, nest
from kilnflow.function import signature_text
from kilnflow.passes import pipeline
from kilnflow.passes.autocluster import autocluster
from kilnflow.runtime import codegen, loader, profile
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import EagerTensor, Tensor, wrap

_new_eager = EagerTensor.__new__


class OutputSlot:
    """Marks where output tensor number `index` goes in the returned structure."""

    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class CompositeSlot:
    """Marks where a composite tensor goes: its TypeSpec and the slots of its components."""

    __slots__ = ("spec", "slots")

    def __init__(self, spec: Any, slots: list):
        self.spec = spec
        self.slots = slots


class ConcreteFunction:
    def __init__(self, name: str, traced_graph: Any, arg_names: List[str], input_specs: list,
                 output_template: Any, structured_input: Any):
        self.name = name
        self.traced_graph = traced_graph
        self._arg_names = arg_names
        self._input_specs = input_specs           # one (name, TensorSpec) per fed tensor
        self._output_template = output_template   # returned structure with OutputSlot leaves
        self.traced_arguments = structured_input  # the (args, kwargs) it was traced with
        self.python_signature = None  # the Python function's, set by Function (printing)
        self.graph, self.pass_report = pipeline.optimize(traced_graph)
        self.graph = autocluster(self.graph)  # set_jit("autoclustering"): numba clusters
        source, globals_, self._origins = codegen.generate(
            _identifier(name), self.graph.operations, self.graph.inputs, self.graph.outputs)
        self.code = source
        self._fn = self._plain_fn = loader.load(source, globals_, name)
        self._filename = self._fn.__code__.co_filename
        self._single = isinstance(output_template, OutputSlot)
        self.argument_handles: tuple = ()  # the variable arguments it was traced with
        profile.register(self)  # while a profile records, _fn is a timed twin

    def with_variables(self, handles: tuple) -> "ConcreteFunction":
        """This trace for other variable arguments of the same specs (handles in argument
        order): the graph rebound to them, the Python function not run again."""
        from kilnflow.function.rebind import with_handles
        mapping = {id(old): new for old, new in zip(self.argument_handles, handles)}
        rebound = ConcreteFunction(self.name, with_handles(self.traced_graph, mapping),
                                   self._arg_names, self._input_specs,
                                   self._output_template, self.traced_arguments)
        rebound.argument_handles = tuple(handles)
        rebound.python_signature = self.python_signature
        return rebound

    # ---------------------------------------------------------------- calling

    def _call_flat(self, arrays: Sequence) -> Any:
        """Run on input arrays (in placeholder order); returns the packed structure."""
        try:
            outs = self._fn(*arrays)
        except errors.OpError:
            raise
        except Exception as exc:  # map the failing generated line back to the op
            # a new error keeps the kernel's own as its cause
            raise (mapped := self._runtime_error(exc)) from (None if mapped is exc else exc)
        if self._single:
            out = outs[0]
            if type(out) is np.ndarray:
                t = _new_eager(EagerTensor)
                t._value = out
                return t
            return wrap(out)
        return _pack(self._output_template, outs)

    def run_flat(self, arrays: Sequence) -> list:
        """The flat output arrays for input arrays given in placeholder order: no trace
        key, no input copies, no output packing (for callers that own their arrays and
        unpack the outputs themselves, like kf.data per element). Errors name the op."""
        try:
            return self._fn(*arrays)
        except errors.OpError:
            raise
        except Exception as exc:  # map the failing generated line back to the op
            # a new error keeps the kernel's own as its cause
            raise (mapped := self._runtime_error(exc)) from (None if mapped is exc else exc)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from kilnflow.function.trace_key import make_key
        if kwargs:  # keyword arguments go to their parameter's position
            unknown = sorted(set(kwargs) - set(self._arg_names[len(args):]))
            if unknown:
                raise TypeError(f"{self.name}() got unexpected keyword arguments {unknown}")
            args = tuple(args) + tuple(kwargs[n] for n in self._arg_names[len(args):]
                                       if n in kwargs)
            kwargs = {}
        key, tensors, _ = make_key(args, kwargs)
        if self.traced_arguments is not None:
            self._check_python_values(key)
        if len(tensors) != len(self._input_specs):
            raise TypeError(f"{self.name}() expected {len(self._input_specs)} tensor "
                            f"arguments ({', '.join(n for n, _ in self._input_specs)}), got "
                            f"{len(tensors)}")
        arrays = []
        for (name, spec), value in zip(self._input_specs, tensors):
            array = np.array(value)  # a copy: the caller's array must not alias graph values
            if array.dtype != spec.dtype.as_numpy_dtype:  # TF's class for this
                raise errors.InvalidArgumentError(errors.with_location(
                    f"{self.name}(): argument '{name}' must be a {spec.dtype.name} tensor, got "
                    f"{array.dtype}"))
            if not spec.shape.is_compatible_with(array.shape):
                raise ValueError(errors.with_location(
                    f"{self.name}(): argument '{name}' must have shape {spec.shape}, got "
                    f"{array.shape}"))
            arrays.append(array)
        return self._call_flat(arrays)

    def _check_python_values(self, key: Any) -> None:
        """A concrete function is specialised to the Python values it was traced with: a
        call with other ones raises (as in TF) instead of silently using the traced ones."""
        from kilnflow.function.trace_key import make_key, python_values
        traced_args, traced_kwargs = self.traced_arguments
        traced, _, _ = make_key(tuple(traced_args), dict(traced_kwargs))
        names = list(self._arg_names) + [k for k, _ in traced[1]]
        for name, was, now in zip(names, list(traced[0]) + [v for _, v in traced[1]],
                                  list(key[0]) + [v for _, v in key[1]]):
            if python_values(was) != python_values(now):
                raise TypeError(errors.with_location(
                    f"{self.name}(): argument '{name}' was traced with the Python value(s) "
                    f"{python_values(was)} but is called with {python_values(now)}; a "
                    f"ConcreteFunction is specialised to the Python values it was traced "
                    f"with (call the kf.function to trace the new values)"))

    def _runtime_error(self, exc: Exception) -> Exception:
        op = None
        for frame, lineno in traceback.walk_tb(sys.exc_info()[2]):
            if frame.f_code.co_filename == self._filename:
                op = self._origins.get(lineno, op)
        if op is None:
            return exc
        where = f" (created at {op.location[0]}:{op.location[1]})" if op.location else ""
        return errors.class_for(exc)(
            f"{type(exc).__name__}: {exc}\n\t [[node {op.name} ({op.type}){where}]] "
            f"[Op:{self.name}]")

    # ---------------------------------------------------------------- inspection

    @property
    def inputs(self) -> list:
        return list(self.graph.inputs)

    @property
    def outputs(self) -> list:
        return list(self.graph.outputs)

    @property
    def structured_outputs(self) -> Any:
        return _pack(self._output_template, self.traced_graph.outputs)

    @property
    def output_shapes(self) -> Any:
        return nest.map_structure(lambda t: t.shape if isinstance(t, Tensor) else None,
                                  self.structured_outputs)

    @property
    def variables(self) -> tuple:
        """The variables the graph reads or writes, in the order it first uses them."""
        found: dict = {}
        for op in self.traced_graph.get_operations():
            attr = op.opdef.watch_attr
            handle = op.attrs.get(attr) if attr else None
            owner = getattr(handle, "owner", None)
            if owner is not None:
                found.setdefault(id(owner), owner)
        return tuple(found.values())

    @property
    def trainable_variables(self) -> tuple:
        return tuple(v for v in self.variables if v.trainable)

    @property
    def output_dtypes(self) -> Any:
        return nest.map_structure(lambda t: t.dtype if isinstance(t, Tensor) else None,
                                  self.structured_outputs)

    @property
    def structured_input_signature(self) -> Any:
        """(args, kwargs) it was traced with, tensors as TensorSpecs named after their
        placeholders (as TF names them: the parameter's name)."""
        if self.traced_arguments is None:
            return None
        specs = [TensorSpec(spec.shape, spec.dtype, name) for name, spec in self._input_specs]
        args, kwargs = self.traced_arguments

        def as_spec(leaf: Any) -> Any:
            if isinstance(leaf, (Tensor, np.ndarray, TensorSpec)) and specs:
                return specs.pop(0)
            return leaf
        # placeholders were made for positional values first, then keywords in sorted order
        args = tuple(nest.map_structure(as_spec, a) for a in args)
        kwargs = {k: nest.map_structure(as_spec, kwargs[k]) for k in sorted(kwargs)}
        return args, kwargs

    def pretty_printed_signature(self, verbose: bool = True) -> str:
        """TF's printed signature: Input Parameters, Output Type and Captures (or, with
        verbose=False, one line `(x: TensorSpec(...)) -> TensorSpec(...)`)."""
        args, kwargs = self.traced_arguments or ((), {})
        params = signature_text.parameters(self.python_signature, self._arg_names, args,
                                           kwargs, [spec for _, spec in self._input_specs])
        output = signature_text.output_type(self._output_template, self.traced_graph.outputs,
                                            (OutputSlot, CompositeSlot))
        captured = signature_text.captures(self.traced_graph) if verbose else []
        return signature_text.render(params, output, captured, verbose)

    def __str__(self) -> str:
        return "ConcreteFunction " + self.pretty_printed_signature()

    def __repr__(self) -> str:
        return (f"<ConcreteFunction {self.pretty_printed_signature(verbose=False)} at "
                f"0x{id(self):X}>")

    def optimization_report(self) -> str:
        """One line per pass: ops before -> after (and fused groups)."""
        return "\n".join(str(entry) for entry in self.pass_report)


def _identifier(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name) or "fn"


def _pack(template: Any, flat: Sequence) -> Any:
    if isinstance(template, OutputSlot):
        value = flat[template.index]
        return wrap(value) if isinstance(value, (np.ndarray, np.generic)) else value
    if isinstance(template, CompositeSlot):
        return template.spec._from_components([_pack(s, flat) for s in template.slots])
    if nest.is_nested(template):
        leaves = nest.flatten(template)
        return nest.pack_sequence_as(template, [
            (wrap(flat[x.index]) if isinstance(flat[x.index], (np.ndarray, np.generic))
             else flat[x.index]) if isinstance(x, OutputSlot) else _pack(x, flat)
            for x in leaves])
    return template
