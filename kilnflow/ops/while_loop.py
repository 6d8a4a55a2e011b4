"""while_loop (While / StatelessWhile) and WhileGrad, as TF's while_v2.

Eagerly a plain Python loop. While a graph is built, cond and body are traced into
subgraphs; codegen emits a Python `while`. Gradients: with a tape active at trace time
the loop records each iteration's starting state and WhileGrad runs the body's
vector-Jacobian product backwards over that history; second order is built from public
loops (`_while_grad_as_loops`).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from kilnflow import errors, nest
from kilnflow.context import ctx
from kilnflow.core.opdef import bind, defop
from kilnflow.dtypes import variant
from kilnflow.ops import array, math
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.tensor_array import TensorArray
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import is_symbolic
from kilnflow.ops.subgraph import Subgraph, any_stateful, random_outputs, replay, trace_subgraph, \
    unify_captures


# ---------------------------------------------------------------- while_loop

def _while_rule(*inputs: Any, cond_graph: Subgraph, body_graph: Subgraph, n_vars: int,
                maximum_iterations: Any, output_specs: tuple,
                record_history: bool = False) -> list:
    history = [TensorSpec([], variant)] if record_history else []
    return list(output_specs) + history


def _while_kernel(*inputs: Any, cond_graph: Subgraph, body_graph: Subgraph, n_vars: int,
                  maximum_iterations: Any, output_specs: tuple,
                  record_history: bool = False) -> tuple:
    state, captured = tuple(inputs[:n_vars]), inputs[n_vars:]
    history: list = []
    while maximum_iterations is None or len(history) < maximum_iterations:
        if not cond_graph.run(state, captured)[0]:
            break
        outs = body_graph.run(state, captured)
        history.append(state + tuple(outs[n_vars:]))  # + what random ops drew
        state = tuple(outs[:n_vars])
    return state + (history,) if record_history else state


def _while_codegen(op: Any, emitter: Any, env: dict, indent: str) -> None:
    from kilnflow.runtime.codegen import emit_body
    n = op.attrs["n_vars"]
    cond_graph, body_graph = op.attrs["cond_graph"], op.attrs["body_graph"]
    limit = op.attrs["maximum_iterations"]
    state = [emitter.namer.fresh(op.name) for _ in range(n)]
    captured = [env[id(t)] for t in op.inputs[n:]]
    inner = indent + "    "
    if state:
        initial = [env[id(t)] for t in op.inputs[:n]]
        emitter.lines.append(f"{indent}{', '.join(state)} = {', '.join(initial)}")
    counter = emitter.namer.fresh("iterations") if limit is not None else None
    if counter:
        emitter.lines.append(f"{indent}{counter} = 0")
    history = emitter.namer.fresh("history") if op.attrs.get("record_history") else None
    if history:  # the states each iteration starts from, for the gradient
        emitter.lines.append(f"{indent}{history} = []")
    emitter.lines.append(f"{indent}while True:")
    if counter:
        emitter.lines.append(f"{inner}if {counter} >= {int(limit)}:")
        emitter.lines.append(f"{inner}    break")
    for sub, is_cond in ((cond_graph, True), (body_graph, False)):
        g = sub.graph
        benv = {id(p): v for p, v in zip(g.inputs, sub.feed(state, captured))}
        keep = {id(t) for t in g.outputs} | {id(p) for p in g.inputs}
        emit_body(g.operations, emitter, benv, inner, keep)
        values = [benv[id(t)] for t in g.outputs]
        if is_cond:
            emitter.lines.append(f"{inner}if not {values[0]}:")
            emitter.lines.append(f"{inner}    break")
            continue
        if history:  # the state this iteration started from, and what random ops drew
            entry = "".join(f"{v}, " for v in state + values[n:])
            emitter.lines.append(f"{inner}{history}.append(({entry}))")
        if state:
            emitter.lines.append(f"{inner}{', '.join(state)} = {', '.join(values[:n])}")
    if counter:
        emitter.lines.append(f"{inner}{counter} += 1")
    for t, name in zip(op.outputs, state + ([history] if history else [])):
        env[id(t)] = name


def _differentiable_sources(graph: Any, output: Any) -> set:
    """ids of the tensors `output` reaches backwards through floating tensors and ops
    with a gradient rule (a static over-approximation of where its gradient can flow)."""
    seen, stack = set(), [output]
    while stack:
        t = stack.pop()
        if id(t) in seen or not t.dtype.is_floating:
            continue
        seen.add(id(t))
        op = getattr(t, "op", None)
        if op is not None and op.graph is graph and op.opdef.grad is not None \
                and op.opdef.name != "StopGradient":
            stack.extend(op.inputs)
    return seen


def _connected_inputs(body: Subgraph, n: int, n_captured: int, seeded: list) -> list:
    """Which of the loop's inputs (n loop vars, then the captures) a gradient can reach
    from the outputs in `seeded` (those given a gradient): the loop may run zero times,
    so each seeded output reaches its own initial value; each iteration carries a
    dependency of a new state on the previous one. Unreached inputs get None."""
    inputs = body.graph.inputs
    outputs = body.graph.outputs[:n]
    reach = [_differentiable_sources(body.graph, o) for o in outputs]
    live = set(i for i in range(n) if seeded[i])
    connected = [False] * len(inputs)
    changed = True
    while changed:
        changed = False
        for j in list(live):
            for i, placeholder in enumerate(inputs):
                if id(placeholder) in reach[j] and not connected[i]:
                    connected[i] = changed = True
                    if i < n:
                        live.add(i)
    for i in live:
        connected[i] = True
    by_capture = [False] * n_captured  # the body reads captured[p] as input n + k
    for k, p in enumerate(body.capture_positions):
        by_capture[p] = by_capture[p] or connected[n + k]
    return connected[:n] + by_capture


def _while_grad(op: Any, *dys: Any) -> list:
    n = op.attrs["n_vars"]
    loop_vars, captured = list(op.inputs[:n]), list(op.inputs[n:])
    body = op.attrs["body_graph"]
    connected = _connected_inputs(body, n, len(captured), [d is not None for d in dys[:n]])
    grads = _while_grad_dense(op, n, loop_vars, captured, body, dys)
    return [g if linked else None for g, linked in zip(grads, connected)]


def _while_grad_dense(op: Any, n: int, loop_vars: list, captured: list, body: Subgraph,
                      dys: tuple) -> list:
    from kilnflow.autodiff.accumulate import needed_inputs
    dys = [d if d is not None else array.zeros_like(o) for d, o in zip(dys[:n], op.outputs)]
    needed = needed_inputs() or (True,) * len(op.inputs)
    recorded = [op.outputs[n]] if op.attrs.get("record_history") else []
    # Only captured inputs whose gradient is wanted: a captured input sequence read one
    # row per step would otherwise cost a full-size zero gradient on every iteration.
    wanted = [i for i, c in enumerate(captured) if needed[n + i] and c.dtype.is_floating]
    if ctx.tapes:  # an outer tape records this gradient: build it from differentiable ops
        return _while_grad_as_loops(op, loop_vars, captured, dys, wanted)
    vjp = _body_vjp(body, loop_vars, captured, wanted)
    attrs = {"cond_graph": op.attrs["cond_graph"], "body_graph": body, "vjp_graph": vjp,
             "n_vars": n, "n_captured": len(captured), "wanted": tuple(wanted),
             "maximum_iterations": op.attrs["maximum_iterations"],
             "output_specs": tuple(TensorSpec(t.shape, t.dtype) for t in
                                   loop_vars + [captured[i] for i in wanted])}
    finals = list(op.outputs[:n])  # the last iteration's new state, for the VJP
    grads = bind(WHILE_GRAD, loop_vars + captured + dys + finals + recorded, attrs,
                 name="while_grad")
    result = [g if t.dtype.is_floating else None for g, t in zip(grads[:n], loop_vars)]
    by_capture = dict(zip(wanted, grads[n:]))
    return result + [by_capture.get(i) for i in range(len(captured))]


def _while_grad_as_loops(op: Any, loop_vars: list, captured: list, dys: list,
                         wanted: list) -> list:
    """The same gradient as WhileGrad, but built from public ops (two while loops and
    TensorArrays), so that a tape recording it can differentiate it again (second order).

    Loop 1 re-runs the forward loop, writing each iteration's starting state into a
    TensorArray; loop 2 walks the iterations backwards, replaying the body under a tape
    to get that step's vector-Jacobian product."""
    from kilnflow.autodiff.tape import GradientTape
    n = len(loop_vars)
    cond_graph, body = op.attrs["cond_graph"], op.attrs["body_graph"]
    limit = op.attrs["maximum_iterations"]
    arrays = [TensorArray(v.dtype, size=0, dynamic_size=True, element_shape=v.shape)
              for v in loop_vars]

    def forward_cond(i: Any, *rest: Any) -> Any:
        keep_going = replay(cond_graph.graph, cond_graph.feed(rest[:n], captured))[0]
        return keep_going if limit is None else math.logical_and(keep_going, i < limit)

    def forward_body(i: Any, *rest: Any) -> tuple:
        state, history = rest[:n], rest[n:]
        history = [ta.write(i, s) for ta, s in zip(history, state)]
        new = replay(body.graph, body.feed(state, captured))[:n]
        return (i + 1,) + tuple(new) + tuple(history)

    start = convert_to_tensor(0)
    out = while_loop(forward_cond, forward_body, [start] + loop_vars + arrays)
    count, history = out[0], out[1 + n:]
    wanted_caps = [captured[i] for i in wanted]

    def backward_body(j: Any, *rest: Any) -> tuple:
        d_state, d_caps = list(rest[:n]), list(rest[n:])
        state = [ta.read(j) for ta in history]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(state + wanted_caps)
            outs = replay(body.graph, body.feed(state, captured))[:n]
        pairs = [(o, d) for o, d in zip(outs, d_state) if o.dtype.is_floating]
        found = tape.gradient([o for o, _ in pairs], state + wanted_caps,
                              output_gradients=[d for _, d in pairs])
        new_state = [g if g is not None else array.zeros_like(s)
                     for g, s in zip(found[:n], state)]
        new_caps = [c + g if g is not None else c for c, g in zip(d_caps, found[n:])]
        return (j - 1,) + tuple(new_state) + tuple(new_caps)

    zeros = [array.zeros_like(c) for c in wanted_caps]
    back = while_loop(lambda j, *rest: j >= 0, backward_body,
                      [count - 1] + list(dys) + zeros)
    d_state, d_caps = back[1:1 + n], back[1 + n:]
    result = [g if t.dtype.is_floating else None for g, t in zip(d_state, loop_vars)]
    by_capture = dict(zip(wanted, d_caps))
    return result + [by_capture.get(i) for i in range(len(captured))]


def _body_vjp(body: Subgraph, loop_vars: list, captured: list, wanted: list) -> Subgraph:
    """A graph (state, captured, d_new_state, new_state, drawn) -> (d_state,
    d_captured[wanted]) for one iteration; `drawn` is what the body's random ops drew in
    that iteration (recorded with the state), which the replay reuses.

    The iteration's result `new_state` is known (it is the next iteration's start, or the
    loop's output), so gradient rules that read a body output (tanh, sigmoid, exp, ...)
    read that input instead: the forward ops feeding only those outputs are then pruned
    rather than replayed."""
    from kilnflow.autodiff.tape import GradientTape
    from kilnflow.function.func_graph import FuncGraph
    from kilnflow.context import building
    graph = FuncGraph("while_body_vjp")
    with building(graph):
        def placeholders(prefix: str, like: Sequence) -> list:
            return [graph.placeholder(t.dtype, p.shape, name=f"{prefix}{i}")
                    for i, (t, p) in enumerate(zip(loop_vars, like))]
        state = placeholders("state", body.graph.inputs)
        caps = [graph.placeholder(t.dtype, t.shape, name=f"captured{i}")
                for i, t in enumerate(captured)]
        seeds = placeholders("d_state", body.graph.inputs)
        known = placeholders("new_state", body.graph.outputs)
        drawn = body.graph.outputs[len(loop_vars):]  # what the body's random ops drew
        recorded = [graph.placeholder(t.dtype, t.shape, name=f"drawn{i}")
                    for i, t in enumerate(drawn)]
        graph.inputs = state + caps + seeds + known + recorded
        sources = state + [caps[i] for i in wanted]
        with GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(sources)
            outs = replay(body.graph, body.feed(state, caps),
                          {id(t): r for t, r in zip(drawn, recorded)})[:len(loop_vars)]
        replayed = len(graph.operations)
        float_outs = [(o, s) for o, s in zip(outs, seeds) if o.dtype.is_floating]
        found = tape.gradient([o for o, _ in float_outs], sources,
                              output_gradients=[s for _, s in float_outs]) \
            if float_outs else [None] * len(sources)
        graph.outputs = [graph.capture(g if g is not None else array.zeros_like(s))
                         for g, s in zip(found, sources)]
        _read_known_outputs(graph, replayed, outs, known)
    return Subgraph(graph, len(graph.inputs), ())


def _read_known_outputs(graph: Any, first_grad_op: int, outs: list, known: list) -> None:
    """Gradient ops (those from `first_grad_op` on) read `known[i]` instead of `outs[i]`."""
    swap = {id(o): k for o, k in zip(outs, known) if o.op.type != "Placeholder"}
    for op in graph.operations[first_grad_op:]:
        if any(id(t) in swap for t in op.inputs):
            op.inputs = tuple(swap.get(id(t), t) for t in op.inputs)
    graph.outputs = [swap.get(id(t), t) for t in graph.outputs]


def _while_grad_kernel(*inputs: Any, cond_graph: Subgraph, body_graph: Subgraph,
                       vjp_graph: Subgraph, n_vars: int, n_captured: int, wanted: tuple,
                       maximum_iterations: Any, output_specs: tuple) -> tuple:
    state = tuple(inputs[:n_vars])
    captured = tuple(inputs[n_vars:n_vars + n_captured])
    at = n_vars + n_captured
    d_state = list(inputs[at:at + n_vars])
    finals = tuple(inputs[at + n_vars:at + 2 * n_vars])
    if len(inputs) > 3 * n_vars + n_captured:
        history = inputs[-1]  # recorded by the forward loop
    else:  # recompute the states each iteration started from
        history = []
        while maximum_iterations is None or len(history) < maximum_iterations:
            if not cond_graph.run(state, captured)[0]:
                break
            outs = body_graph.run(state, captured)
            history.append(state + tuple(outs[n_vars:]))
            state = tuple(outs[:n_vars])
    d_captured = [np.zeros_like(captured[i]) for i in wanted]
    nexts = [entry[:n_vars] for entry in history[1:]] + [finals]
    for past, new in zip(reversed(history), reversed(nexts)):
        # past: the iteration's starting state, then what its random ops drew
        args = list(past[:n_vars]) + list(captured) + d_state + list(new) + list(past[n_vars:])
        grads = vjp_graph.run(args, ())
        d_state = list(grads[:n_vars])
        for total, g in zip(d_captured, grads[n_vars:]):
            total += g  # our own zeros buffers: accumulate in place
    return tuple(d_state) + tuple(d_captured)


WHILE = defop("While", shape=_while_rule, kernel=_while_kernel, grad=_while_grad,
              multi_output=True, same_dtype=False, stateful=True, codegen=_while_codegen)
STATELESS_WHILE = defop("StatelessWhile", shape=_while_rule, kernel=_while_kernel,
                        grad=_while_grad, multi_output=True, same_dtype=False,
                        codegen=_while_codegen)
def _while_grad_grad(op: Any, *dys: Any) -> list:
    raise NotImplementedError(
        "Second-order gradients through kf.while_loop inside kf.function are not supported "
        "yet (the loop's gradient is one WhileGrad op, which has no gradient of its own)")


WHILE_GRAD = defop("WhileGrad", shape=lambda *inputs, output_specs, **attrs: list(output_specs),
                   kernel=_while_grad_kernel, grad=_while_grad_grad, multi_output=True,
                   same_dtype=False)


def while_loop(cond: Callable, body: Callable, loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False,
               maximum_iterations: Any = None, name: Optional[str] = None) -> Any:
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` is true.

    >>> import kilnflow as kf
    >>> kf.while_loop(lambda i: i < 10, lambda i: (i + 3,), [kf.constant(0)])[0].numpy()
    np.int32(12)
    """
    single = not isinstance(loop_vars, (list, tuple))
    structure = [loop_vars] if single else loop_vars
    if not structure:  # TF refuses an empty loop (cond would get no arguments)
        raise ValueError(errors.with_location("while_loop: `loop_vars` must be provided"))
    if maximum_iterations is not None and not is_symbolic(maximum_iterations):
        maximum_iterations = int(maximum_iterations)
    flat = nest.flatten(structure)
    arrays = [x if isinstance(x, TensorArray) else None for x in flat]
    flat = [x._buffer if isinstance(x, TensorArray) else x for x in flat]
    # building any graph (a function's or a compat.v1 Graph): the condition may read
    # placeholders even when every loop variable starts as a Python number
    graph_mode = ctx.graph is not None or any(is_symbolic(x) for x in flat)
    if not graph_mode:
        return _eager_while(cond, body, structure, single, maximum_iterations)
    if is_symbolic(maximum_iterations):
        raise NotImplementedError("while_loop: maximum_iterations must be a Python int")
    outer = ctx.graph
    tensors = [convert_to_tensor(x) for x in flat]
    invariants = nest.flatten(shape_invariants) if shape_invariants is not None else \
        [None] * len(tensors)
    specs = [TensorSpec(t.shape if inv is None else TensorShape(inv), t.dtype,
                        name=f"loop_var{i}") for i, (t, inv) in enumerate(zip(tensors,
                                                                               invariants))]

    for i, ta in enumerate(arrays):
        if ta is not None and invariants[i] is None:
            element = ta.element_shape if ta.element_shape.rank is not None else None
            shape = TensorShape([None]).concatenate(element) if element is not None \
                else TensorShape(None)
            specs[i] = TensorSpec(shape, specs[i].dtype, name=f"loop_var{i}")

    def rebuild(args: Sequence) -> Any:
        values = [ta._like(a) if ta is not None else a for ta, a in zip(arrays, args)]
        return nest.pack_sequence_as(structure, values)

    def call_cond(*args: Any) -> Any:
        return convert_to_tensor(cond(*rebuild(args)))

    def call_body(*args: Any) -> Any:
        out = body(*rebuild(args))
        if single and not isinstance(out, (list, tuple)):
            out = [out]
        return [x._buffer if isinstance(x, TensorArray) else x for x in nest.flatten(out)]

    cond_graph, _, cond_flat = trace_subgraph("while_cond", call_cond, specs, outer)
    body_graph, _, body_flat = trace_subgraph("while_body", call_body, specs, outer)
    cond_graph.outputs = cond_flat
    if cond_flat[0].dtype.name != "bool" or cond_flat[0].shape.rank not in (None, 0):
        raise TypeError(errors.with_location(
            f"while_loop: cond must return a scalar bool, got {cond_flat[0].dtype.name} of "
            f"shape {cond_flat[0].shape}"))
    if len(body_flat) != len(specs):
        raise ValueError(errors.with_location(
            f"while_loop: body returned {len(body_flat)} values for {len(specs)} loop "
            f"variables"))
    for i, (spec, out) in enumerate(zip(specs, body_flat)):
        if out.dtype is not spec.dtype:
            raise TypeError(errors.with_location(
                f"while_loop: loop variable {i} enters the loop as {spec.dtype.name} but the "
                f"body returns {out.dtype.name}; a loop variable must keep its dtype"))
        if not spec.shape.is_compatible_with(out.shape) or (
                spec.shape.rank is not None and out.shape.rank is not None and
                out.shape.most_specific_common_supertype(spec.shape) != spec.shape):
            raise ValueError(errors.with_location(
                f"while_loop: loop variable {i} enters the loop with shape {spec.shape}, but "
                f"has shape {out.shape} after one iteration. To allow the shape to vary "
                f"across iterations, pass shape_invariants (e.g. with None dims)."))
    record = bool(ctx.tapes) and back_prop  # it may be differentiated: keep the states
    body_graph.outputs = body_flat + (random_outputs(body_graph) if record else [])
    captured, (cond_pos, body_pos) = unify_captures([cond_graph, body_graph])
    opdef = WHILE if any_stateful(cond_graph, body_graph) else STATELESS_WHILE
    attrs = {"cond_graph": Subgraph(cond_graph, len(specs), cond_pos),
             "body_graph": Subgraph(body_graph, len(specs), body_pos), "n_vars": len(specs),
             "maximum_iterations": maximum_iterations, "output_specs": tuple(specs)}
    if record:
        attrs["record_history"] = True
    outs = bind(opdef, tensors + captured, attrs, name=name or "while")
    result = rebuild(list(outs)[:len(specs)])
    return result[0] if single else result


def _eager_while(cond: Callable, body: Callable, structure: Any, single: bool,
                 maximum_iterations: Optional[int]) -> Any:
    state = structure
    count = 0
    while maximum_iterations is None or count < maximum_iterations:
        if not bool(cond(*state)):
            break
        out = body(*state)
        if single and not isinstance(out, (list, tuple)):
            out = [out]
        state = list(out) if isinstance(state, list) else tuple(out)
        count += 1
    return state[0] if single else state
