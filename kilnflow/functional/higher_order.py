"""Higher-order functions over the leading dimension: map_fn, scan, foldl, foldr,
vectorized_map.

Eagerly each is a Python loop (results stacked once at the end); while a graph is being
built it is one while_loop whose outputs are TensorArrays, as in TF, so gradients come
from the loop's own rule. vectorized_map calls `fn` once on the whole batch when the
function it traces is elementwise only (OpDef `fusable` facts), else falls back to map_fn.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional

from kilnflow import dtypes as _dtypes
from kilnflow import errors, nest
from kilnflow.context import ctx, no_tapes
from kilnflow.graph import Graph
from kilnflow.ops import array, joining, slicing
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.graph_utils import ensure_shape
from kilnflow.ops.subgraph import trace_once
from kilnflow.ops.tensor_array import TensorArray
from kilnflow.ops.while_loop import while_loop
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import is_symbolic


def _flat_elems(elems: Any, caller: str) -> list:
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{caller}: elems must be a Tensor or a (possibly nested) "
                         f"sequence of Tensors, got {elems!r}")
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    first = TensorShape(flat[0].shape[:1]) if flat[0].shape.rank is not None \
        else TensorShape([None])
    for e in flat[1:]:
        dims = TensorShape(e.shape[:1]) if e.shape.rank is not None else TensorShape([None])
        if not first.is_compatible_with(dims):
            raise ValueError(f"Dimensions {first[0]} and {dims[0]} are not compatible")
        first = first.merge_with(dims)
    return flat


def _length(flat: list) -> Any:
    n = flat[0].shape[0] if flat[0].shape.rank is not None else None
    return n if n is not None else array.shape(flat[0])[0]


def _graph_mode(flat: list) -> bool:
    return ctx.graph is not None or any(is_symbolic(x) for x in flat)


def _check_dtypes(values: list, dtypes: list) -> None:
    for v, d in zip(values, dtypes):
        if v.dtype is not d:
            raise errors.InvalidArgumentError(
                f"TensorArray dtype is {d.name} but Op is trying to write dtype {v.dtype.name}")


def _iterate(n: Any, step: Callable, state: list, out_dtypes: List[Any], reverse: bool,
             graph: bool, start: int = 0, head: Optional[list] = None,
             out_shapes: Optional[list] = None) -> tuple:
    """Run `state, outs = step(i, state)` for the indices from `start` on (backwards when
    reverse); `head` holds the outputs of the first index when the caller made them.

    Returns (final state, one stacked tensor per output, None when nothing ran and its
    element shape is unknown). Eager: a Python loop; graph: one while_loop of TensorArrays.
    """
    if not graph:
        order = list(range(n - 1 - start, -1, -1)) if reverse else list(range(start, n))
        rows: List[list] = [[] for _ in out_dtypes] if head is None else \
            [[h] for h in head]
        for i in order:
            state, outs = step(convert_to_tensor(i), state)
            _check_dtypes(outs, out_dtypes)
            for r, o in zip(rows, outs):
                r.append(o)
        if reverse:
            rows = [r[::-1] for r in rows]
        stacked = [joining.stack(r) if r else None for r in rows]
        return state, stacked
    shapes: List[Optional[TensorShape]] = [None] * len(out_dtypes)
    # A buffer that starts with its element shape keeps one shape through the loop (which
    # the loop's gradient needs): from the head, the caller, or a probe trace of `step`.
    if head is not None:
        out_shapes = [h.shape for h in head]
    elif out_shapes is None:
        out_shapes = _probe(step, state)
    arrays = [TensorArray(d, size=n, element_shape=s if s is not None and
                          s.is_fully_defined() else None)
              for d, s in zip(out_dtypes, out_shapes)]
    if head is not None:
        arrays = [ta.write((n - 1) if reverse else 0, h) for ta, h in zip(arrays, head)]
        shapes = list(out_shapes)

    def body(i: Any, s: list, tas: list) -> tuple:
        index = (n - 1 - i) if reverse else i
        s, outs = step(index, s)
        _check_dtypes(outs, out_dtypes)
        for k, o in enumerate(outs):
            shapes[k] = o.shape
        tas = [ta.write(index, o) for ta, o in zip(tas, outs)]
        return i + 1, list(s), tas

    i0 = convert_to_tensor(start)
    _, state, arrays = while_loop(lambda i, s, tas: i < n, body, [i0, list(state), arrays])
    length = n if isinstance(n, int) else None
    stacked = []
    for ta, shape in zip(arrays, shapes):
        value = ta.stack()
        if shape is not None and shape.rank is not None:
            value = ensure_shape(value, TensorShape([length]).concatenate(shape))
        stacked.append(value)
    return list(state), stacked


def _probe(step: Callable, state: list) -> list:
    """The static shapes of step's outputs, from a throwaway trace (no tape records it;
    Python side effects of `fn` happen once more at trace time)."""
    specs = [TensorSpec(x.shape, x.dtype) for x in state]
    outs: list = []

    def traced(*args: Any) -> list:
        outs.extend(step(convert_to_tensor(0), list(args))[1])
        return []
    with no_tapes():
        trace_once("probe", traced, specs, ctx.graph, hoist=False)
    return [o.shape for o in outs]


def _signature_dtypes(signature: Any) -> list:
    out = []
    for s in nest.flatten(signature):
        out.append(s.dtype if isinstance(s, TensorSpec) else _dtypes.as_dtype(s))
    return out


def map_fn(fn: Callable, elems: Any, dtype: Any = None, parallel_iterations: Any = None,
           back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
           name: Optional[str] = None, fn_output_signature: Any = None) -> Any:
    """Applies `fn` to each element of `elems` unstacked on dimension 0, and stacks.

    `elems` may be a nested structure of tensors of equal first dimension; `fn` receives
    the same structure. Without `fn_output_signature` the output must have the structure
    and dtypes of `elems`, as in TF.

    >>> import kilnflow as kf
    >>> kf.map_fn(lambda t: t * 2, kf.constant([1, 2, 3])).numpy().tolist()
    [2, 4, 6]
    """
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat = _flat_elems(elems, "map_fn")
    if signature is None:
        signature = nest.pack_sequence_as(elems, [e.dtype for e in flat])
    out_dtypes = _signature_dtypes(signature)
    n = _length(flat)
    graph = _graph_mode(flat)

    def step(i: Any, state: list) -> tuple:
        element = nest.pack_sequence_as(elems, [slicing.gather(e, i) for e in flat])
        result = fn(element)
        try:
            nest.assert_same_structure(signature, result)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"map_fn: the structure of fn's output does not match "
                             f"fn_output_signature ({exc})") from None
        return state, [convert_to_tensor(r) for r in nest.flatten(result)]

    if not graph and n == 0:
        specs = nest.flatten(signature)
        empty = [array.zeros([0] + (s.shape.as_list() if isinstance(s, TensorSpec) and
                                    s.shape.is_fully_defined() else []), d)
                 for s, d in zip(specs, out_dtypes)]
        return nest.pack_sequence_as(signature, empty)
    shapes = [s.shape if isinstance(s, TensorSpec) else None for s in nest.flatten(signature)]
    known = shapes if all(s is not None and s.is_fully_defined() for s in shapes) else None
    _, stacked = _iterate(n, step, [], out_dtypes, False, graph, out_shapes=known)
    return nest.pack_sequence_as(signature, stacked)


def _fold(fn: Callable, elems: Any, initializer: Any, reverse: bool, keep: bool,
          caller: str) -> Any:
    flat = _flat_elems(elems, caller)
    n = _length(flat)
    graph = _graph_mode(flat)
    if initializer is None:
        if not graph and n == 0:
            raise errors.OutOfRangeError("Tried to read from index 0 but array size is: 0")
        first = (n - 1) if reverse else 0
        acc = nest.pack_sequence_as(elems, [slicing.gather(e, first) for e in flat])
        start = 1
    else:
        acc = nest.map_structure(convert_to_tensor, initializer)
        start = 0
    acc_flat = [convert_to_tensor(a) for a in nest.flatten(acc)]
    acc_dtypes = [a.dtype for a in acc_flat]

    def step(i: Any, state: list) -> tuple:
        element = nest.pack_sequence_as(elems, [slicing.gather(e, i) for e in flat])
        result = fn(nest.pack_sequence_as(acc, state), element)
        try:
            nest.assert_same_structure(acc, result)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{caller}: fn must return a value of the accumulator's "
                             f"structure ({exc})") from None
        values = [convert_to_tensor(r) for r in nest.flatten(result)]
        _check_dtypes(values, acc_dtypes)
        return values, (values if keep else [])

    # without an initializer the first element is the first output, as in TF
    head = acc_flat if start and keep else None
    state, stacked = _iterate(n, step, acc_flat, acc_dtypes if keep else [], reverse, graph,
                              start, head, [a.shape for a in acc_flat] if keep else [])
    if not keep:
        return nest.pack_sequence_as(acc, state)
    stacked = [array.zeros([0] + a.shape.as_list(), a.dtype) if s is None else s
               for a, s in zip(acc_flat, stacked)]
    return nest.pack_sequence_as(acc, stacked)


def scan(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
         back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
         reverse: bool = False, name: Optional[str] = None) -> Any:
    """The accumulated values of `a = fn(a, x)` over the elements of `elems`, stacked.

    >>> import kilnflow as kf
    >>> kf.scan(lambda a, x: a + x, kf.constant([1, 2, 3])).numpy().tolist()
    [1, 3, 6]
    """
    return _fold(fn, elems, initializer, reverse, True, "scan")


def foldl(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """`a = fn(a, x)` over the elements of `elems` from first to last; returns the last `a`.

    >>> import kilnflow as kf
    >>> int(kf.foldl(lambda a, x: a * 10 + x, kf.constant([1, 2, 3])))
    123
    """
    return _fold(fn, elems, initializer, False, False, "foldl")


def foldr(fn: Callable, elems: Any, initializer: Any = None, parallel_iterations: int = 10,
          back_prop: bool = True, swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """`a = fn(a, x)` over the elements of `elems` from last to first; returns the last `a`.

    >>> import kilnflow as kf
    >>> int(kf.foldr(lambda a, x: a * 10 + x, kf.constant([1, 2, 3])))
    321
    """
    return _fold(fn, elems, initializer, True, False, "foldr")


# ---------------------------------------------------------------- vectorized_map

def _trace_element(fn: Callable, elems: Any, flat: list) -> tuple:
    """fn traced on one element's specs, in a throwaway graph: (graph, result)."""
    specs = [TensorSpec(e.shape[1:], e.dtype) for e in flat]
    outer = ctx.graph if ctx.graph is not None else Graph()

    def traced(*args: Any) -> Any:
        return fn(nest.pack_sequence_as(elems, list(args)))
    with no_tapes():
        graph, result, outputs = trace_once("vectorized_map", traced, specs, outer, hoist=False)
    return graph, result, outputs


def _batchable(graph: Any, n_args: int, outputs: list) -> bool:
    """True when running the traced ops on the whole batch computes every element at once:
    every op that sees an element is elementwise (its `fusable` form), its batched inputs
    have the output's rank and the others no more (so broadcasting aligns the trailing
    dims), and every output depends on the element."""
    batched = {id(p) for p in graph.inputs[:n_args]}
    for op in graph.operations:
        if not any(id(x) in batched for x in op.inputs):
            if op.opdef.stateful:
                return False  # would run once, not once per element
            continue
        if not op.opdef.fusable or op.opdef.stateful or len(op.outputs) != 1:
            return False
        rank = op.outputs[0].shape.rank
        for x in op.inputs:
            if x.shape.rank is None or rank is None:
                return False
            if (x.shape.rank != rank) if id(x) in batched else (x.shape.rank > rank):
                return False
        batched.add(id(op.outputs[0]))
    return all(o is not None and id(o) in batched for o in outputs)


def vectorized_map(fn: Callable, elems: Any, fallback_to_while_loop: bool = True,
                   warn: bool = True) -> Any:
    """Like map_fn, vectorised: when `fn` is elementwise it runs once on the whole batch,
    otherwise (with `fallback_to_while_loop`, the default) it runs as map_fn.

    >>> import kilnflow as kf
    >>> kf.vectorized_map(lambda t: t * t + 1.0, kf.constant([1.0, 2.0])).numpy().tolist()
    [2.0, 5.0]
    """
    flat = _flat_elems(elems, "vectorized_map")
    graph, result, outputs = _trace_element(fn, elems, flat)
    if _batchable(graph, len(flat), outputs):
        return fn(elems)
    if not fallback_to_while_loop:
        raise ValueError("vectorized_map: fn is not elementwise here and "
                         "fallback_to_while_loop is False")
    signature = nest.pack_sequence_as(
        result, [TensorSpec(o.shape, o.dtype) for o in outputs])
    return map_fn(fn, elems, fn_output_signature=signature)
