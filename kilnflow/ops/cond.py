"""cond (If / StatelessIf), case and switch_case, as TF's cond_v2.

Eagerly these are plain Python. While a graph is built, both branches are traced into
subgraphs held in the If op's attrs; codegen emits them as a Python `if`, the kernel
evaluates them for the interpreter, and the gradient replays the taken branch under a
tape (reusing what random ops drew in the forward pass).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from kilnflow import dtypes, errors, nest
from kilnflow.context import ctx
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, math
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import is_symbolic
from kilnflow.ops.subgraph import Subgraph, any_stateful, random_outputs, replay, trace_subgraph, \
    unify_captures
from kilnflow.ops.logging import Assert
from kilnflow.ops import joining
from kilnflow.ops import reduction


# ---------------------------------------------------------------- cond

def _if_rule(pred: Any, *captured: Any, then_branch: Subgraph, else_branch: Subgraph,
             output_specs: tuple, recorded: tuple = (0, 0)) -> list:
    if pred.shape.rank not in (None, 0):
        raise ValueError(f"cond: the predicate must be a scalar, got shape {pred.shape}")
    return list(output_specs)


def _if_kernel(pred: Any, *captured: Any, then_branch: Subgraph, else_branch: Subgraph,
               output_specs: tuple, recorded: tuple = (0, 0)) -> tuple:
    return (then_branch if pred else else_branch).run((), captured)


def _if_codegen(op: Any, emitter: Any, env: dict, indent: str) -> None:
    from kilnflow.runtime.codegen import emit_body
    pred = env[id(op.inputs[0])]
    outs = [emitter.namer.fresh(op.name) for _ in op.outputs]
    captured = [env[id(t)] for t in op.inputs[1:]]
    for keyword, branch in (("if", op.attrs["then_branch"]), ("else", op.attrs["else_branch"])):
        emitter.lines.append(f"{indent}{keyword} {pred}:" if keyword == "if" else
                             f"{indent}else:")
        inner = indent + "    "
        g = branch.graph
        benv = {id(p): v for p, v in zip(g.inputs, branch.feed((), captured))}
        keep = {id(t) for t in g.outputs} | {id(p) for p in g.inputs}
        start = len(emitter.lines)
        emit_body(g.operations, emitter, benv, inner, keep)
        if outs:
            values = [benv[id(t)] for t in g.outputs]
            emitter.lines.append(f"{inner}{', '.join(outs)} = {', '.join(values)}")
        elif len(emitter.lines) == start:
            emitter.lines.append(f"{inner}pass")
    for t, name in zip(op.outputs, outs):
        env[id(t)] = name


def _if_grad(op: Any, *dys: Any) -> list:
    pred, captured = op.inputs[0], list(op.inputs[1:])
    n_then, n_else = op.attrs.get("recorded", (0, 0))
    n_user = len(op.outputs) - n_then - n_else
    dys = [d if d is not None else array.zeros_like(o)
           for d, o in zip(dys[:n_user], op.outputs[:n_user])]

    connected = [False] * len(captured)  # a differentiable path in some traced branch

    def branch_grads(branch: Subgraph, first: int, count: int) -> Callable:
        def grads() -> list:
            from kilnflow.autodiff.tape import GradientTape
            inputs = branch.feed((), captured)
            drawn = branch.graph.outputs[first:first + count]
            known = {id(t): v for t, v in zip(drawn, op.outputs[first:first + count])}
            with GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(captured)
                outs = replay(branch.graph, inputs, known)[:n_user]
            found = tape.gradient(outs, captured, output_gradients=dys)
            for index, g in enumerate(found):
                connected[index] = connected[index] or g is not None
            return [g if g is not None else array.zeros_like(c)
                    for g, c in zip(found, captured)]
        return grads

    differentiable = [c.dtype.is_floating for c in captured]
    if not captured:
        return [None]
    grads = cond(pred, branch_grads(op.attrs["then_branch"], n_user, n_then),
                 branch_grads(op.attrs["else_branch"], n_user + n_then, n_else))
    grads = grads if isinstance(grads, (list, tuple)) else [grads]
    # None, not zeros, for an input no branch reaches: the rule eager mode follows too
    return [None] + [g if ok and linked else None
                     for g, ok, linked in zip(grads, differentiable, connected)]


IF = defop("If", shape=_if_rule, kernel=_if_kernel, grad=_if_grad, multi_output=True,
           same_dtype=False, stateful=True, codegen=_if_codegen)
STATELESS_IF = defop("StatelessIf", shape=_if_rule, kernel=_if_kernel, grad=_if_grad,
                     multi_output=True, same_dtype=False, codegen=_if_codegen)


def _merge_specs(a: Any, b: Any, what: str) -> TensorSpec:
    if a.dtype is not b.dtype:
        raise TypeError(errors.with_location(
            f"cond: {what} has dtype {a.dtype.name} in the true branch but {b.dtype.name} in "
            f"the false branch; both branches must return the same dtypes"))
    return TensorSpec(a.shape.most_specific_common_supertype(b.shape), a.dtype)


def cond(pred: Any, true_fn: Optional[Callable] = None, false_fn: Optional[Callable] = None,
         name: Optional[str] = None) -> Any:
    """Returns true_fn() if pred is true, else false_fn(); a graph If op when building.

    >>> import kilnflow as kf
    >>> kf.cond(kf.constant(3) > 2, lambda: kf.constant(1), lambda: kf.constant(0)).numpy()
    np.int32(1)
    """
    if true_fn is None or false_fn is None:
        raise TypeError("cond: true_fn and false_fn are required")
    if callable(pred) and not is_symbolic(pred) and not hasattr(pred, "numpy"):
        raise TypeError(errors.with_location(
            f"cond: `pred` must be a boolean scalar tensor or Python bool, got the callable "
            f"{pred!r} (did you mean to call it?)"))
    if not is_symbolic(pred):
        if type(pred) is not bool and not hasattr(pred, "numpy"):
            # TF converts the predicate: None, objects, dicts and ragged lists raise, an
            # empty or longer list is ambiguous (never a silent False)
            pred = convert_to_tensor(pred)
        return true_fn() if bool(pred) else false_fn()
    outer = ctx.graph
    pred = convert_to_tensor(pred)
    if not pred.dtype.is_bool:
        raise TypeError(f"cond: pred must be a bool tensor, got {pred.dtype.name}")
    then_graph, then_result, then_flat = trace_subgraph("cond_true", true_fn, (), outer)
    else_graph, else_result, else_flat = trace_subgraph("cond_false", false_fn, (), outer)
    try:
        nest.assert_same_structure(then_result, else_result)
    except ValueError:
        raise ValueError(errors.with_location(
            f"cond: true_fn and false_fn must return the same structure, got "
            f"{then_result!r} and {else_result!r}")) from None
    if any((a is None) != (b is None) for a, b in zip(then_flat, else_flat)):
        raise ValueError(errors.with_location("cond: a branch returned None where the other "
                                              "returned a value"))
    then_graph.outputs = [t for t in then_flat if t is not None]
    else_graph.outputs = [t for t in else_flat if t is not None]
    recorded = _record_random_draws(then_graph, else_graph) if ctx.tapes else (0, 0)
    specs = tuple(_merge_specs(a, b, f"output {i}")
                  for i, (a, b) in enumerate(zip(then_graph.outputs, else_graph.outputs)))
    captured, (then_pos, else_pos) = unify_captures([then_graph, else_graph])
    opdef = IF if any_stateful(then_graph, else_graph) else STATELESS_IF
    attrs = {"then_branch": Subgraph(then_graph, 0, then_pos),
             "else_branch": Subgraph(else_graph, 0, else_pos), "output_specs": specs}
    if recorded != (0, 0):
        attrs["recorded"] = recorded
    outs = iter(bind(opdef, [pred] + captured, attrs, name=name or "cond"))
    return nest.pack_sequence_as(then_result, [next(outs) if t is not None else None
                                               for t in then_flat])


def _record_random_draws(then_graph: Any, else_graph: Any) -> tuple:
    """When a tape may differentiate the cond, each branch also returns what its random
    ops drew (then's draws, then else's; the branch not taken returns scalar zeros in the
    other's places), so the gradient reuses those numbers instead of drawing new ones."""
    from kilnflow.context import building
    from kilnflow.ops.convert import constant
    drawn = [random_outputs(then_graph), random_outputs(else_graph)]
    for k, graph in enumerate((then_graph, else_graph)):
        with building(graph):
            fillers = [[constant(0, dtype=t.dtype) for t in ts] for ts in drawn]
        fillers[k] = drawn[k]
        graph.outputs = graph.outputs + fillers[0] + fillers[1]
    return len(drawn[0]), len(drawn[1])


def case(pred_fn_pairs: Sequence, default: Optional[Callable] = None,
         exclusive: bool = False, strict: bool = False, name: str = "case") -> Any:
    """The fn of the first pair whose predicate is true (else default), as nested conds."""
    pairs = list(pred_fn_pairs.items() if isinstance(pred_fn_pairs, dict) else pred_fn_pairs)
    if not pairs:
        if default is None:
            raise ValueError("case: needs at least one (pred, fn) pair or a default")
        return default()
    if exclusive and any(is_symbolic(p) for p, _ in pairs):
        count = reduction.reduce_sum(joining.stack([math.cast(p, dtypes.int32) for p, _ in pairs]))
        Assert(math.less_equal(count, 1), ["case: more than one predicate is true with "
                                           "exclusive=True"])
    elif exclusive and sum(bool(p) for p, _ in pairs) > 1:
        raise errors.InvalidArgumentError("case: more than one predicate is true with "
                                          "exclusive=True")
    if default is None:
        default = pairs[-1][1]
        pairs = pairs[:-1]
    result = default
    for pred, fn in reversed(pairs):
        result = (lambda p, f, rest: lambda: cond(p, f, rest))(pred, fn, result)
    return result()


def switch_case(branch_index: Any, branch_fns: Any, default: Optional[Callable] = None,
                name: str = "switch_case") -> Any:
    """branch_fns[branch_index]() (out-of-range indices run default, else the last)."""
    fns = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(
        enumerate(branch_fns))
    if not is_symbolic(branch_index):
        index = int(branch_index)
        for key, fn in fns:
            if key == index:
                return fn()
        return (default or fns[-1][1])()
    index = convert_to_tensor(branch_index)
    pairs = [(math.equal(index, key), fn) for key, fn in fns]
    return case(pairs, default=default or fns[-1][1], name=name)
