"""Graph utilities TF keeps at top level: ensure_shape (the EnsureShape op), identity_n,
group, no_op, tuple, init_scope, inside_function, is_symbolic_tensor,
get_current_name_scope and get_static_value.

Eagerly the grouping helpers return None or their inputs (everything already ran); while a
graph is being built they add NoOp / Identity ops with control dependencies.
get_static_value evaluates a graph tensor from the Const ops feeding it, reading only
OpDef flags (stateful ops and placeholders have no static value). Imports ops and graph.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, List, Optional, Sequence

import numpy as np

from kilnflow import errors
from kilnflow.context import building, ctx, eager_mode, no_tapes
from kilnflow.core.opdef import bind, defop
from kilnflow.graph import NO_OP, PLACEHOLDER, control_dependencies, current_name_scope
from kilnflow.ops import array
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import EagerTensor, SymbolicTensor


# ---------------------------------------------------------------- ensure_shape

def _shape_text(shape: TensorShape) -> str:
    if shape.rank is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def _ensure_rule(x: Any, *, shape: TensorShape) -> TensorSpec:
    if not x.shape.is_compatible_with(shape):
        raise ValueError(f"Shape {_shape_text(x.shape)} of the input is not compatible with "
                         f"the expected shape {_shape_text(shape)}")
    return TensorSpec(x.shape.merge_with(shape), x.dtype)


def _ensure_kernel(x: Any, *, shape: TensorShape) -> Any:
    actual = TensorShape(list(np.shape(x)))
    if not actual.is_compatible_with(shape):
        raise errors.InvalidArgumentError(errors.with_location(
            f"Shape of tensor input {_shape_text(actual)} is not compatible with expected "
            f"shape {_shape_text(shape)}. [Op:EnsureShape]"))
    return x


ENSURE_SHAPE = defop("EnsureShape", shape=_ensure_rule, kernel=_ensure_kernel,
                     grad=lambda op, dy: [dy], same_dtype=False)


def ensure_shape(x: Any, shape: Any, name: Optional[str] = None) -> Any:
    """Checks at run time that `x` has a shape compatible with `shape` (None dims match
    anything) and gives the result that static shape; a mismatch raises
    InvalidArgumentError when the op runs (ValueError while tracing, if already known).

    >>> import kilnflow as kf
    >>> kf.ensure_shape(kf.constant([1.0, 2.0]), [None]).shape
    TensorShape([2])
    """
    return bind(ENSURE_SHAPE, (convert_to_tensor(x),), {"shape": TensorShape(shape)},
                name=name)


# ---------------------------------------------------------------- grouping

def no_op(name: Optional[str] = None) -> Any:
    """An op that does nothing (a place to hang control dependencies); None eagerly."""
    if ctx.graph is None:
        return None
    bind(NO_OP, (), name=name or "NoOp")
    return ctx.graph.operations[-1]


def group(*inputs: Any, name: Optional[str] = None) -> Any:
    """One op that runs after all of `inputs` (None eagerly, where everything already ran).

    >>> import kilnflow as kf
    >>> kf.group(kf.constant(1)) is None
    True
    """
    if ctx.graph is None:
        return None
    with control_dependencies([x for x in inputs if x is not None]):
        return no_op(name=name or "group_deps")


def tuple(tensors: Sequence, name: Optional[str] = None,  # noqa: A001 - TF's name
          control_inputs: Optional[Sequence] = None) -> List[Any]:
    """The same tensors, each available only after all of them (and `control_inputs`) are
    computed; None entries stay None. Eagerly the tensors themselves, as a list."""
    values = list(tensors)
    if ctx.graph is None:
        return values
    deps = [t for t in values if t is not None] + list(control_inputs or [])
    gate = group(*deps, name=name or "tuple")
    with control_dependencies([gate]):
        return [None if t is None else array.identity(t) for t in values]


def identity_n(input: Sequence, name: Optional[str] = None) -> List[Any]:  # noqa: A002
    """A list of tensors with the same values and shapes as `input`.

    >>> import kilnflow as kf
    >>> [int(t) for t in kf.identity_n([kf.constant(1), kf.constant(2)])]
    [1, 2]
    """
    return [array.identity(convert_to_tensor(x)) for x in input]


# ---------------------------------------------------------------- where we are

@contextlib.contextmanager
def init_scope() -> Iterator[None]:
    """Lift ops out of every function being traced: into the outermost graph that is not
    a function's (a compat.v1 Graph), or to eager execution. Control dependencies are
    cleared and gradient tapes paused inside, as in TF.

    >>> import kilnflow as kf
    >>> seen = []
    >>> @kf.function
    ... def f():
    ...     with kf.init_scope():
    ...         seen.append(kf.executing_eagerly())
    ...     return kf.constant(1)
    >>> _ = f()
    >>> seen
    [True]
    """
    target = None
    for graph in [ctx.graph] + ctx.graph_stack[::-1]:
        if graph is None or not graph.is_function:
            target = graph
            break
    saved_deps = ctx.control_deps
    ctx.control_deps = []
    try:
        with (eager_mode() if target is None else building(target)), no_tapes():
            yield
    finally:
        ctx.control_deps = saved_deps


def inside_function() -> bool:
    """True while a kf.function is being traced (not in a compat.v1 Graph, not eagerly)."""
    return ctx.graph is not None and ctx.graph.is_function


def is_symbolic_tensor(tensor: Any) -> bool:
    """True for graph tensors (kf.function tracing, compat.v1 graphs), False for eager
    tensors and anything else."""
    return isinstance(tensor, SymbolicTensor)


def get_current_name_scope() -> str:
    """The current name scope, without its trailing slash ('' at top level).

    >>> import kilnflow as kf
    >>> with kf.name_scope("outer"):
    ...     kf.get_current_name_scope()
    'outer'
    """
    return current_name_scope().rstrip("/")


# ---------------------------------------------------------------- static values

_STATIC_LIMIT = 1 << 20  # elements: a larger intermediate is not folded at trace time


def get_static_value(tensor: Any, partial: bool = False) -> Any:
    """The value of `tensor` as an ndarray if it can be known without running the graph,
    else None: eager tensors give their value, graph tensors the value computed from the
    constants feeding them (shapes of fully known static shape included); placeholders,
    variables and stateful ops have none. Non-tensors are returned as they are.

    >>> import kilnflow as kf
    >>> kf.get_static_value(kf.constant([1, 2])).tolist()
    [1, 2]
    """
    if isinstance(tensor, EagerTensor):
        return tensor.numpy()
    if isinstance(tensor, SymbolicTensor):
        try:
            return _static(tensor, {})
        except Exception:  # noqa: BLE001 - a kernel that cannot run here: no static value
            return None
    if hasattr(tensor, "read_value"):  # a Variable: its value may change
        return None
    return tensor


def _static(t: SymbolicTensor, memo: dict) -> Optional[np.ndarray]:
    op = t.op
    if id(op) not in memo:
        memo[id(op)] = _evaluate(op, memo)
    values = memo[id(op)]
    return None if values is None else values[t.value_index]


def _evaluate(op: Any, memo: dict) -> Optional[list]:
    opdef = op.opdef
    if opdef is PLACEHOLDER or opdef.stateful or opdef.watch_attr is not None:
        return None
    if opdef.shape_only:  # Shape, Size, Rank: the static shape is enough
        x = op.inputs[0]
        if not x.shape.is_fully_defined():
            return None
        arrays = [np.zeros(x.shape.as_list(), x.dtype.as_numpy_dtype)]
    else:
        arrays = []
        for x in op.inputs:
            value = _static(x, memo)
            if value is None or np.size(value) > _STATIC_LIMIT:
                return None
            arrays.append(value)
    with eager_mode(), no_tapes():
        out = opdef.kernel(*arrays, **op.attrs)
    out = list(out) if opdef.multi_output else [out]
    return [np.asarray(o) for o in out]
