"""A `jit_compile=True` function called eagerly under an outer GradientTape.

TF runs such a call as one compiled op whose gradient is another compiled function. Here
the forward pass is the function's compiled graph, run once; one CustomGradient op then
stands for the whole call on the tapes, and its gradient is a second compiled function:
the traced graph replayed under a tape (the forward recomputed, as in rematerialisation)
followed by its VJP, taking the inputs, the variables' values as read at the call, and
the output gradients. Variable reads made at the call are what the tape differentiates
(they lead to the variables as any read does), so the gradient uses the values the
forward pass saw even if a variable changes before `tape.gradient`.

A function with side effects or random draws (variable writes, prints, random ops) is
not recomputed: it is inlined op by op as before (a recomputation would repeat or redraw
them). A backward graph the numba backend cannot lower runs on the Python runtime.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from kilnflow import errors, nest
from kilnflow.autodiff.tape import GradientTape, UnconnectedGradients
from kilnflow.context import ctx, no_tapes
from kilnflow.core.opdef import bind
from kilnflow.function.concrete import ConcreteFunction
from kilnflow.function.tracing import trace
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.custom_gradient import CUSTOM_GRADIENT
from kilnflow.ops.state import READ
from kilnflow.ops.subgraph import replay
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import EagerTensor, wrap

_UNSUPPORTED = object()  # cached on a concrete function that must be inlined


class JitGradient:
    """The compiled backward function of one compiled concrete function."""

    def __init__(self, concrete: ConcreteFunction, handles: List[Any]) -> None:
        self.concrete = concrete
        self.handles = handles
        self._backward: Optional[ConcreteFunction] = None
        self.compiled = False  # the backward graph runs natively (else: Python runtime)

    def backward(self) -> ConcreteFunction:
        if self._backward is None:
            self._backward = self._trace_backward()
        return self._backward

    def _trace_backward(self) -> ConcreteFunction:
        graph = self.concrete.traced_graph
        reads = _top_level_reads(graph)
        handles = self.handles
        top = {id(h) for _, h in reads}
        nested = [h for h in handles if id(h) not in top]  # read inside loops or branches

        def backward(inputs: list, values: list, seeds: list) -> list:
            position = {id(h): i for i, h in enumerate(handles)}
            known = {id(out): values[position[id(h)]] for out, h in reads}
            float_inputs = [x for x in inputs if x.dtype.is_floating]
            with GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(float_inputs)
                tape.watch(values)
                tape.watch([h.owner for h in nested])
                outs = replay(graph, inputs, known)
            pairs = [(o, s) for o, s in zip(outs, seeds) if o.dtype.is_floating]
            sources = float_inputs + list(values) + [h.owner for h in nested]
            grads = tape.gradient([o for o, _ in pairs], sources,
                                  output_gradients=[s for _, s in pairs],
                                  unconnected_gradients=UnconnectedGradients.ZERO)
            n_in, n_vars = len(float_inputs), len(handles)
            by_value = list(grads[n_in:n_in + n_vars])
            for h, g in zip(nested, grads[n_in + n_vars:]):
                i = position[id(h)]
                by_value[i] = by_value[i] + g
            return list(grads[:n_in]) + by_value

        inputs = [TensorSpec(t.shape, t.dtype) for t in graph.inputs]
        values = [TensorSpec(h.shape, h.dtype) for h in handles]
        seeds = [TensorSpec(t.shape, t.dtype) for t in self.concrete.graph.outputs]
        name = self.concrete.name + "_grad"
        backward_fn = trace(name, backward, (inputs, values, seeds), {}, None,
                            ["inputs", "values", "seeds"], False, _no_variables)
        from kilnflow.runtime import jit
        try:
            backward_fn._fn = jit.compile_graph(name, backward_fn.graph)
            self.compiled = True
        except errors.InvalidArgumentError:  # an op without a lowering: Python runtime
            pass
        return backward_fn


def _no_variables(variable: Any) -> None:
    raise ValueError("a jit function's gradient cannot create variables")


def _walk(graph: Any):
    for op in graph.operations:
        yield op
        for value in op.attrs.values():
            sub = getattr(value, "graph", None)
            if sub is not None and hasattr(sub, "operations"):
                yield from _walk(sub)


def _top_level_reads(graph: Any) -> list:
    return [(op.outputs[0], op.attrs["handle"]) for op in graph.operations
            if op.type == "ReadVariableOp"]


def _tensor_leaves(value: Any, found: list) -> None:
    """The tensor arguments in the order the trace key feeds them (trace_key.key_of):
    the caller's own EagerTensors, which the tapes watch."""
    if isinstance(value, (EagerTensor, np.ndarray)):
        found.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensor_leaves(v, found)
    elif isinstance(value, dict):
        for k in sorted(value, key=repr):
            _tensor_leaves(value[k], found)


def gradient_for(concrete: ConcreteFunction) -> Optional[JitGradient]:
    """The JitGradient of `concrete`, or None when its calls must be inlined."""
    found = getattr(concrete, "jit_gradient", None)
    if found is None:
        handles, seen, found = [], set(), _UNSUPPORTED
        ops = list(_walk(concrete.traced_graph))
        if not any(op.opdef.stateful and op.type != "ReadVariableOp" for op in ops):
            for op in ops:
                if op.type == "ReadVariableOp" and id(op.attrs["handle"]) not in seen:
                    seen.add(id(op.attrs["handle"]))
                    handles.append(op.attrs["handle"])
            found = JitGradient(concrete, handles)
        concrete.jit_gradient = found
    return None if found is _UNSUPPORTED else found


def call(function: Any, args: tuple, kwargs: dict) -> Any:
    """Run a jit function eagerly under the active tapes: the compiled forward pass, one
    CustomGradient op on the tapes, the compiled backward pass when a tape asks."""
    concrete, tensors = function._concrete_for(args, kwargs)
    grad = gradient_for(concrete)
    if grad is None:
        return function._inline(args, kwargs)
    if function.input_signature is None:
        args, kwargs = function._canonical(args, kwargs)
    leaves: list = []
    for value in list(args) + [kwargs[k] for k in sorted(kwargs)]:
        _tensor_leaves(value, leaves)
    if len(leaves) != len(tensors):  # structures matched against an input_signature
        leaves = tensors
    sources = [t if isinstance(t, EagerTensor) else convert_to_tensor(np.array(t))
               for t in leaves]
    reads = [bind(READ, (), {"handle": h}, name="ReadVariableOp") for h in grad.handles]
    with no_tapes():
        outs = concrete._call_flat([t._value for t in sources])
    leaves = nest.flatten(outs)
    flat = [o for o in leaves if isinstance(o, EagerTensor)]
    floats = [i for i, t in enumerate(sources) if t.dtype.is_floating]

    def grad_fn(*dys: Any) -> list:
        seeds = [np.zeros(o.shape, o.dtype.as_numpy_dtype) if d is None else d._value
                 for d, o in zip(dys, flat)]
        backward = grad.backward()
        if ctx.tapes:  # this gradient is itself recorded (higher order): op by op
            found = replay(backward.traced_graph, sources + reads +
                           [d if d is not None else wrap(s) for d, s in zip(dys, seeds)])
        else:
            with no_tapes():
                found = backward._call_flat([t._value for t in sources] +
                                            [r._value for r in reads] + seeds)
            found = [wrap(g) for g in nest.flatten(found)]
        result: List[Any] = [None] * (len(sources) + len(reads))
        for i, g in zip(floats + list(range(len(sources), len(sources) + len(reads))),
                        found):
            result[i] = g
        return result

    passed = bind(CUSTOM_GRADIENT, sources + reads + flat,
                  {"grad_fn": grad_fn, "n_sources": len(sources) + len(reads)})
    # each tensor leaf of the result is replaced by the CustomGradient output standing for it
    it = iter(list(passed))
    leaves = [next(it) if isinstance(o, EagerTensor) else o for o in leaves]
    return nest.pack_sequence_as(outs, leaves) if nest.is_nested(outs) else leaves[0]


__all__ = ["call", "gradient_for", "JitGradient"]
