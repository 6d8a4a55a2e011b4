"""User functions of a pipeline (map, filter, reduce...), traced once as a kf.function.

As in tf.data, the function is traced when the transformation is created, over the
element_spec: Python side effects run once, at trace time; the traced graph then runs for
every element. A tuple element is unpacked into positional arguments, anything else is
passed as one argument. Returned lists become tuples (TF does the same, with a warning).
"""
from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

from kilnflow import errors, nest
from kilnflow.autograph import api as autograph_api
from kilnflow.data import structure
from kilnflow.function.api import function
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


DEBUG_MODE = {"enabled": False}  # kf.data.experimental.enable_debug_mode()


def enable_debug_mode() -> None:
    """tf.data.experimental.enable_debug_mode: functions of pipelines created from now on
    run as plain Python on EagerTensors, element by element (prints and breakpoints work,
    and each result is checked against the spec traced from the function)."""
    DEBUG_MODE["enabled"] = True


def _tuples(value: Any) -> Any:
    """Lists in a returned structure become tuples: a dataset element has no lists."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return type(value)((k, _tuples(v)) for k, v in value.items()) \
            if type(value) is not dict else {k: _tuples(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_tuples(v) for v in value])
    if isinstance(value, tuple):
        return tuple(_tuples(v) for v in value)
    return value


class StructuredFunction:
    """`fn` traced once over `input_spec`; called on flat arrays, returns flat arrays.

    `output_spec` is the structure fn returned, with TensorSpec leaves.
    """

    def __init__(self, fn: Any, input_spec: Any, what: str, unpack: bool = True,
                 autograph: bool = True):
        if not callable(fn):
            raise TypeError(f"{what}: expected a callable, got {fn!r}")
        self.fn = fn
        self.what = what
        self.input_spec = input_spec
        self._unpack = unpack
        self._autograph = autograph
        self.output_spec: Any = None
        self.runs_eagerly = DEBUG_MODE["enabled"]
        try:
            self._concrete = self._trace(input_spec)
        except Exception:  # noqa: BLE001 - debug mode: plain Python may not trace
            if not self.runs_eagerly:
                raise
            self._concrete = None
            self.output_spec = self._spec_from_zeros(input_spec)
        self.traced_graph = None if self._concrete is None else self._concrete.traced_graph

    def _trace(self, input_spec: Any) -> Any:
        specs = structure.flat_specs(input_spec)
        if not all(isinstance(s, TensorSpec) for s in specs):
            raise TypeError(f"{self.what}: elements holding datasets ({input_spec}) can only "
                            "be transformed by flat_map or interleave")

        def flat_function(*flat: Any) -> Any:
            args = structure.pack(input_spec, list(flat))
            args = args if self._unpack and type(args) is tuple else (args,)
            if self._autograph:
                result = autograph_api.converted_call(self.fn, args, {})
            else:
                result = self.fn(*args)
            result = _tuples(result)
            leaves = nest.flatten(result)
            tensors = [self._tensor(leaf) for leaf in leaves]
            self.output_spec = (nest.pack_sequence_as(result, [
                TensorSpec(t.shape, t.dtype) for t in tensors]) if nest.is_nested(result)
                else TensorSpec(tensors[0].shape, tensors[0].dtype))
            return tensors[0] if len(tensors) == 1 and not nest.is_nested(result) \
                else tuple(tensors)

        name = getattr(self.fn, "__name__", "fn").replace("<lambda>", "lambda")
        traced = function(flat_function, autograph=False, name=f"{self.what}_{name}")
        concrete = traced.get_concrete_function(*specs)
        return concrete

    def _tensor(self, leaf: Any) -> Tensor:
        try:
            return convert_to_tensor(leaf)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{self.what}: the function returned {leaf!r}, which is not a "
                            f"tensor ({exc})") from None

    def __call__(self, flat: Sequence[np.ndarray]) -> List[np.ndarray]:
        # The compiled graph itself, on arrays (run_flat): ConcreteFunction's __call__
        # re-derives a trace key, copies every input and packs tensors, which per element
        # costs more than the work; elements are read-only, so no copy is needed.
        if self.runs_eagerly:
            return self._call_eagerly(flat)
        return [_frozen(o) for o in self._concrete.run_flat(flat)]

    def _spec_from_zeros(self, input_spec: Any) -> Any:
        """Debug mode, for a function that does not trace: its output spec from one call
        on an all-zeros element (unknown dims 1)."""
        zeros = [np.zeros([1 if d is None else d for d in s.shape.as_list()],
                          s.dtype.as_numpy_dtype) for s in structure.flat_specs(input_spec)]
        args = structure.to_tensors(input_spec, zeros)
        args = args if self._unpack and type(args) is tuple else (args,)
        result = _tuples(self.fn(*args))
        arrays = [np.asarray(self._tensor(leaf)) for leaf in structure.flatten(result)]
        specs = [structure.spec_of(a) for a in arrays]
        if any(not s.shape.is_fully_defined() for s in structure.flat_specs(input_spec)):
            # which output dims follow the unknown input dims is not known: relax them all
            specs = [TensorSpec([None] * s.shape.rank, s.dtype) for s in specs]
        return structure.pack(result, specs)

    def _call_eagerly(self, flat: Sequence[np.ndarray]) -> List[np.ndarray]:
        """Debug mode: the Python function itself on EagerTensors, its result checked
        against the traced output_spec (a different structure per element is an error)."""
        args = structure.to_tensors(self.input_spec, flat)
        args = args if self._unpack and type(args) is tuple else (args,)
        result = _tuples(self.fn(*args))
        specs = structure.flat_specs(self.output_spec)
        leaves = structure.flatten(result)
        arrays = [np.asarray(self._tensor(leaf)) for leaf in leaves]
        if not structure.same_structure(self.output_spec, result) or any(
                a.dtype != s.dtype.as_numpy_dtype or not s.shape.is_compatible_with(a.shape)
                for a, s in zip(arrays, specs)):
            raise errors.InvalidArgumentError(
                f"{self.what}: the function returned {structure.describe(arrays)} in the "
                f"structure {result!r}, which does not match its traced output spec "
                f"{self.output_spec}")
        return arrays


def _frozen(value: Any) -> np.ndarray:
    """A read-only view: elements are shared (and may be a graph constant). An array that
    is already read-only (an input passed through) is returned as it is."""
    if type(value) is np.ndarray:
        if not value.flags.writeable:
            return value
        view = value.view()
    else:
        view = np.asarray(value).view()
    view.flags.writeable = False
    return view


def scalar_bool(spec: Any, what: str) -> None:
    """filter/take_while predicates must return a scalar bool tensor."""
    if not isinstance(spec, TensorSpec) or spec.dtype.name != "bool" or \
            spec.shape.rank not in (0, None):
        raise ValueError(f"{what}: the predicate must return a scalar bool tensor, got {spec}")


def state_function(fn: Any, state_spec: Any, element_spec: Any, what: str,
                   has_output: bool) -> tuple:
    """Trace fn(state, element) for reduce/scan, relaxing the state's shapes until the new
    state fits the old one (as TF does); returns (StructuredFunction, state_spec)."""
    for _ in range(8):
        traced = StructuredFunction(lambda state, element: fn(state, element),
                                    (state_spec, element_spec), what)
        new_state = traced.output_spec[0] if has_output else traced.output_spec
        if has_output and (not isinstance(traced.output_spec, tuple) or
                           len(traced.output_spec) != 2):
            raise TypeError(f"{what}: the function must return (new_state, output_element), "
                            f"got {traced.output_spec}")
        if nest.structure_signature(new_state) != nest.structure_signature(state_spec):
            raise TypeError(f"{what}: the new state {new_state} does not match the structure "
                            f"of the initial state {state_spec}")
        widened = structure.common_spec(state_spec, new_state, what)
        if widened == state_spec:
            return traced, state_spec
        state_spec = widened
    raise errors.InvalidArgumentError(f"{what}: the state's shape never settled")

