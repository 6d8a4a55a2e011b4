"""Control-flow ops: cond (If), while_loop (While), case, switch_case, Assert.

Eagerly these are plain Python. While a graph is built, branches and loop bodies are
traced into subgraphs held in attrs; codegen emits them as a Python `if` / `while` in the
generated source (the `codegen` hooks), and the kernels evaluate them for the interpreter.
Gradients replay a subgraph's stateless ops under a tape (If) or recompute the forward
states and run the body's vector-Jacobian product backwards (While).
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence

import numpy as np

from kilnflow import errors, nest
from kilnflow.context import ctx
from kilnflow.ops import array, math
from kilnflow.ops.tensor_array import TensorArray
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.core.opdef import bind, defop
from kilnflow.dtypes import variant
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import SymbolicTensor, is_symbolic


# ---------------------------------------------------------------- subgraphs

class Subgraph:
    """A traced function graph used as an attr (hashable by identity).

    `capture_positions[i]` is the position, among the op's captured inputs, of the outer
    tensor that feeds this graph's i-th captured placeholder.
    """

    def __init__(self, graph: Any, n_args: int, capture_positions: tuple):
        self.graph = graph
        self.n_args = n_args
        self.capture_positions = capture_positions
        self._compiled: Optional[Callable] = None

    def feed(self, args: Sequence, captured: Sequence) -> list:
        return list(args) + [captured[p] for p in self.capture_positions]

    def run(self, args: Sequence, captured: Sequence) -> tuple:
        """Run on arrays: compiled to generated Python on first use."""
        if self._compiled is None:
            from kilnflow.runtime import codegen, loader
            g = self.graph
            source, globals_, _ = codegen.generate(g.name, g.operations, g.inputs, g.outputs)
            self._compiled = loader.load(source, globals_, g.name)
        return self._compiled(*self.feed(args, captured))

    def __repr__(self) -> str:
        return f"<Subgraph {self.graph.name}: {len(self.graph.operations)} ops>"


def _writes_hoisted(graph: Any) -> bool:
    """True if the graph updates a variable whose reads were hoisted out of it."""
    for op in graph.operations:
        if op.opdef.stateful and op.opdef.watch_attr is None:
            if any(id(v) in graph.hoisted for v in op.attrs.values()):
                return True
    return False


def _trace(name: str, fn: Callable, arg_specs: Sequence[TensorSpec], outer: Any) -> tuple:
    """Trace fn(*placeholders) into a FuncGraph nested in `outer`; returns (graph, result).

    Variable reads are hoisted into `outer` (so their gradients flow through the op's
    inputs) unless the body also updates that variable; then it is traced again as is."""
    graph, result, flat = _trace_once(name, fn, arg_specs, outer, hoist=True)
    if _writes_hoisted(graph):
        graph, result, flat = _trace_once(name, fn, arg_specs, outer, hoist=False)
    return graph, result, flat


def _trace_once(name: str, fn: Callable, arg_specs: Sequence[TensorSpec], outer: Any,
                hoist: bool) -> tuple:
    from kilnflow.function.func_graph import FuncGraph
    graph = FuncGraph(outer.unique_name(name, mark_as_used=False).replace("/", "_"),
                      outer_graph=outer)
    graph.hoist_reads = hoist
    with graph.as_default():
        args = [graph.placeholder(s.dtype, s.shape, name=s.name or f"arg{i}")
                for i, s in enumerate(arg_specs)]
        graph.inputs = list(args)
        result = fn(*args)
        flat = [graph.capture(convert_to_tensor(x)) if x is not None else None
                for x in nest.flatten(result)]
    return graph, result, flat


def _unify_captures(graphs: Sequence) -> tuple:
    """Outer tensors captured by any of `graphs` (deduplicated), and each graph's positions."""
    outer: List[SymbolicTensor] = []
    index: dict = {}
    positions = []
    for g in graphs:
        mine = []
        for t, placeholder in g.captures:
            if id(t) not in index:
                index[id(t)] = len(outer)
                outer.append(t)
            mine.append(index[id(t)])
            g.inputs.append(placeholder)
        positions.append(tuple(mine))
    return outer, positions


def _any_stateful(*graphs: Any) -> bool:
    return any(op.opdef.stateful for g in graphs for op in g.operations)


def replay(graph: Any, inputs: Sequence, known: Optional[dict] = None) -> list:
    """Re-apply graph's ops (except output-less side effects) to `inputs` in the current
    mode; returns the values of graph.outputs. Used to differentiate subgraphs. `known`
    maps id(tensor) of an op's output to the value to use instead of re-running the op
    (what a random op drew in the forward pass)."""
    env = {id(p): x for p, x in zip(graph.inputs, inputs)}
    known = known or {}
    for op in graph.operations:
        if op.type == "Placeholder" or not op.outputs:
            continue
        if all(id(t) in known for t in op.outputs):
            env.update((id(t), known[id(t)]) for t in op.outputs)
            continue
        result = bind(op.opdef, [env[id(t)] for t in op.inputs], op.attrs)
        outs = result if op.opdef.multi_output else (result,)
        for t, value in zip(op.outputs, outs):
            env[id(t)] = value
    return [env[id(t)] for t in graph.outputs]


def _random_outputs(graph: Any) -> list:
    """What the graph's random ops draw: a gradient replaying the graph must reuse it."""
    return [t for op in graph.operations if op.opdef.random for t in op.outputs]


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
            return [g if g is not None else array.zeros_like(c)
                    for g, c in zip(found, captured)]
        return grads

    differentiable = [c.dtype.is_floating for c in captured]
    if not captured:
        return [None]
    grads = cond(pred, branch_grads(op.attrs["then_branch"], n_user, n_then),
                 branch_grads(op.attrs["else_branch"], n_user + n_then, n_else))
    grads = grads if isinstance(grads, (list, tuple)) else [grads]
    return [None] + [g if ok else None for g, ok in zip(grads, differentiable)]


IF = defop("If", shape=_if_rule, kernel=_if_kernel, grad=_if_grad, multi_output=True,
           same_dtype=False, stateful=True)
STATELESS_IF = defop("StatelessIf", shape=_if_rule, kernel=_if_kernel, grad=_if_grad,
                     multi_output=True, same_dtype=False)
IF.codegen = _if_codegen
STATELESS_IF.codegen = _if_codegen


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
    if not is_symbolic(pred):
        return true_fn() if bool(pred) else false_fn()
    outer = ctx.graph
    pred = convert_to_tensor(pred)
    if not pred.dtype.is_bool:
        raise TypeError(f"cond: pred must be a bool tensor, got {pred.dtype.name}")
    then_graph, then_result, then_flat = _trace("cond_true", true_fn, (), outer)
    else_graph, else_result, else_flat = _trace("cond_false", false_fn, (), outer)
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
    captured, (then_pos, else_pos) = _unify_captures([then_graph, else_graph])
    opdef = IF if _any_stateful(then_graph, else_graph) else STATELESS_IF
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
    drawn = [_random_outputs(then_graph), _random_outputs(else_graph)]
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
        count = math.reduce_sum(array.stack([math.cast(p, _int32()) for p, _ in pairs]))
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


def _int32() -> Any:
    from kilnflow import dtypes
    return dtypes.int32


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


def _while_grad(op: Any, *dys: Any) -> list:
    from kilnflow.autodiff.accumulate import needed_inputs
    n = op.attrs["n_vars"]
    loop_vars, captured = list(op.inputs[:n]), list(op.inputs[n:])
    body = op.attrs["body_graph"]
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
              multi_output=True, same_dtype=False, stateful=True)
STATELESS_WHILE = defop("StatelessWhile", shape=_while_rule, kernel=_while_kernel,
                        grad=_while_grad, multi_output=True, same_dtype=False)
WHILE.codegen = _while_codegen
STATELESS_WHILE.codegen = _while_codegen
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
    if maximum_iterations is not None and not is_symbolic(maximum_iterations):
        maximum_iterations = int(maximum_iterations)
    flat = nest.flatten(structure)
    arrays = [x if isinstance(x, TensorArray) else None for x in flat]
    flat = [x._buffer if isinstance(x, TensorArray) else x for x in flat]
    graph_mode = ctx.graph is not None and getattr(ctx.graph, "is_function", False) \
        or any(is_symbolic(x) for x in flat)
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

    cond_graph, _, cond_flat = _trace("while_cond", call_cond, specs, outer)
    body_graph, _, body_flat = _trace("while_body", call_body, specs, outer)
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
    body_graph.outputs = body_flat + (_random_outputs(body_graph) if record else [])
    captured, (cond_pos, body_pos) = _unify_captures([cond_graph, body_graph])
    opdef = WHILE if _any_stateful(cond_graph, body_graph) else STATELESS_WHILE
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




# ---------------------------------------------------------------- Assert

def _assert_kernel(condition: Any, *values: Any, template: tuple, summarize: int) -> tuple:
    if not np.all(condition):
        tensors = iter(values)
        parts = [str(part) if part is not None else
                 np.array2string(np.asarray(next(tensors)), threshold=summarize)
                 for part in template]
        raise errors.InvalidArgumentError("assertion failed: [" + "] [".join(parts) + "]")
    return ()


ASSERT = defop("Assert", shape=lambda *inputs, template, summarize: [], kernel=_assert_kernel,
               multi_output=True, same_dtype=False, stateful=True)


def Assert(condition: Any, data: Sequence, summarize: Optional[int] = None,  # noqa: N802
           name: Optional[str] = None) -> Any:
    """Raises InvalidArgumentError with `data` when `condition` is false (on every call of a
    compiled function; eagerly, at once)."""
    condition = convert_to_tensor(condition)
    tensors = [convert_to_tensor(d) for d in data if not isinstance(d, str)]
    template = tuple(d if isinstance(d, str) else None for d in data)
    attrs = {"template": template, "summarize": int(summarize or 3)}
    bind(ASSERT, [condition] + tensors, attrs, name=name or "Assert")
    return None
