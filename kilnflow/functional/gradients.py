"""Gradient utilities at TF's top level: gradients and hessians (graph mode only, as in TF),
recompute_grad, grad_pass_through, RegisterGradient, no_gradient, AggregationMethod.

Symbolic gradients come from kilnflow/autodiff/symbolic.py; recompute_grad and
grad_pass_through are built on the CustomGradient op; registered gradients are consulted by
the reverse walk for ops declared without a gradient rule.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, List, Optional

from kilnflow import nest
from kilnflow.autodiff.accumulate import REGISTERED_GRADIENTS
from kilnflow.autodiff.custom_gradient import custom_gradient
from kilnflow.autodiff.symbolic import gradients as _symbolic_gradients
from kilnflow.autodiff.tape import GradientTape, UnconnectedGradients
from kilnflow.context import ctx, quiet_ops
from kilnflow.core.opdef import REGISTRY
from kilnflow.ops import array, joining, reshaping
from kilnflow.ops.convert import convert_to_tensor


class AggregationMethod:
    """How gradients reaching one tensor are summed (all methods give the same sum here)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def _mark_forward_quiet(ys: Any) -> None:
    """The ops computing ys may only matter to their gradients: not worth a pruning warning
    (as the tape marks the ops it records)."""
    stack = [y.op for y in nest.flatten(ys) if hasattr(y, "op")]
    seen = set()
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        op.quiet = True
        stack.extend(x.op for x in op.inputs if hasattr(x, "op") and x.op.graph is op.graph)


def _graph_only(name: str) -> None:
    if ctx.graph is None:
        raise RuntimeError(f"tf.{name} is not supported when eager execution is enabled. "
                           f"Use tf.GradientTape instead.")


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients",
              gate_gradients: bool = False, aggregation_method: Any = None,
              stop_gradients: Any = None,
              unconnected_gradients: Any = UnconnectedGradients.NONE) -> List[Any]:
    """Symbolic partial derivatives of sum(ys) w.r.t. each of xs, in a graph (inside
    kf.function or a compat.v1 Graph); eagerly it raises RuntimeError, as in TF.

    >>> import kilnflow as kf
    >>> @kf.function
    ... def f(x):
    ...     return kf.gradients(x * x, [x])[0]
    >>> float(f(kf.constant(3.0)))
    6.0
    """
    _graph_only("gradients")
    _mark_forward_quiet(ys)
    return _symbolic_gradients(ys, xs, grad_ys, unconnected_gradients, stop_gradients)


def hessians(ys: Any, xs: Any, name: str = "hessians", colocate_gradients_with_ops: bool = False,
             gate_gradients: bool = False, aggregation_method: Any = None) -> List[Any]:
    """The Hessian of sum(ys) w.r.t. each x of xs, shaped x.shape + x.shape (graph mode).

    >>> import kilnflow as kf
    >>> @kf.function
    ... def f(x):
    ...     return kf.hessians(kf.reduce_sum(x ** 3), x)[0]
    >>> f(kf.constant([1.0, 2.0])).numpy().tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    _graph_only("gradients")
    flat_xs = nest.flatten(xs)
    _mark_forward_quiet(ys)
    out = []
    for x, g in zip(flat_xs, _symbolic_gradients(ys, flat_xs)):
        if g is None:
            out.append(None)
            continue
        if not x.shape.is_fully_defined():
            raise ValueError(f"hessians: {x} needs a fully known static shape")
        n = x.shape.num_elements()
        with quiet_ops():  # the first-order gradient's own ops, needed only by the rows
            flat_g = reshaping.reshape(g, [-1])
            rows = [_symbolic_gradients(flat_g[i], x, unconnected_gradients="zero")[0]
                    for i in range(n)]
        h = joining.stack(rows) if rows else array.zeros([0] + x.shape.as_list(), x.dtype)
        out.append(reshaping.reshape(h, x.shape.as_list() * 2))
    return out


def recompute_grad(f: Callable) -> Callable:
    """Decorator: `f`'s intermediate values are not kept for the gradient; the backward
    pass runs `f` again under a tape. Functions that read variables are run recorded
    instead (their gradients then reach the variables; nothing is saved).

    >>> import kilnflow as kf
    >>> g = kf.recompute_grad(lambda x: kf.sin(x) * x)
    >>> x = kf.constant(1.0)
    >>> with kf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = g(x)
    >>> round(float(tape.gradient(y, x)), 4)
    1.3818
    """
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        variables: list = []

        @custom_gradient
        def inner(*xs: Any) -> Any:
            with GradientTape() as probe:  # (outer tapes are paused here) which variables?
                result = f(*xs, **kwargs)
            variables.extend(probe.watched_variables())

            def grad(*dys: Any) -> list:
                with GradientTape() as tape:
                    tape.watch(list(xs))
                    ys = [convert_to_tensor(y) for y in nest.flatten(f(*xs, **kwargs))]
                return tape.gradient(ys, list(xs), output_gradients=list(dys),
                                     unconnected_gradients=UnconnectedGradients.ZERO)
            return result, grad
        with quiet_ops():  # unused when f reads variables (then pruned in graphs)
            out = inner(*args)
        if variables:  # their gradients need the recorded computation
            return f(*args, **kwargs)
        return out
    return wrapper


def grad_pass_through(f: Callable) -> Callable:
    """`f` in the forward pass, the identity in the backward pass (the gradient of each
    output is handed to the matching input), e.g. to differentiate through a rounding.

    >>> import kilnflow as kf
    >>> v = kf.Variable(2.0)
    >>> with kf.GradientTape() as tape:
    ...     y = kf.grad_pass_through(lambda t: kf.round(t * 3.3))(v)
    >>> float(y), float(tape.gradient(y, v))
    (7.0, 1.0)
    """
    @functools.wraps(f)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        @custom_gradient
        def inner(*xs: Any) -> Any:
            return f(*xs, **kwargs), lambda *dys: list(dys)
        return inner(*args)
    return wrapper


def _check_op_type(op_type: Any) -> None:
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    opdef = REGISTRY.get(op_type)
    if op_type in REGISTERED_GRADIENTS or (opdef is not None and opdef.grad is not None):
        raise KeyError(f"Registering two gradient with name '{op_type}'!")


class RegisterGradient:
    """Decorator registering the gradient function of ops of type `op_type` that were
    declared without one: `fn(op, *output_grads)` returns one gradient per input.
    Registering an op type that already has a gradient raises KeyError, as in TF."""

    def __init__(self, op_type: str):
        _check_op_type(op_type)
        self._op_type = op_type

    def __call__(self, fn: Callable) -> Callable:
        _check_op_type(self._op_type)
        REGISTERED_GRADIENTS[self._op_type] = fn
        return fn


def no_gradient(op_type: str) -> None:
    """Declares ops of type `op_type` not differentiable (their inputs get no gradient)."""
    _check_op_type(op_type)
    REGISTERED_GRADIENTS[op_type] = None


NotDifferentiable: Optional[Callable] = no_gradient  # TF 1's name
