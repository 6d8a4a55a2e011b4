"""Graph -> numba-compilable Python source: the jit backend's emitter.

One `@numba.njit` function per graph: rank-0 tensors are numba scalars (pinned to their
dtype after every op, since numba widens int32 arithmetic), other tensors arrays of static
rank; While and If become native `while`/`if` statements, so a tensor loop runs without
the interpreter. Variables enter as arguments and leave as extra results (an assignment
rebinds a local, which keeps program order inside loops). Non-scalar constants are
arguments too, so the source holds no data and numba's disk cache can key on it.
Every op that cannot be lowered is collected, so one error lists them all.
Reads graphs and OpDef facts only; never imports ops/, passes/ or function/.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from kilnflow import errors
from kilnflow.runtime import codegen
from kilnflow.runtime.jit import analysis, blas, fused, indexing, rules
from kilnflow.runtime.jit import conv
from kilnflow.runtime.jit.analysis import VARIABLE_OPS
from kilnflow.runtime.jit import tensorlist

JIT_OPTIONS = 'cache=True, error_model="numpy"'  # numpy: x/0 gives inf, as the kernels do
CONTROL_FLOW = {"While", "StatelessWhile", "If", "StatelessIf"}


def dtype_text(dtype: Any) -> str:
    """`np.float32` for a kf or NumPy dtype (bool is `np.bool_`)."""
    name = np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).name
    return "np.bool_" if name == "bool" else f"np.{name}"


def literal(value: Any, dtype: Any) -> str:
    """A scalar typed as `dtype`: numba would otherwise widen a bare literal."""
    np_dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    if np_dtype.kind == "b":
        return repr(bool(value))
    value = np.asarray(value).astype(np_dtype)[()]
    if np_dtype.kind == "f":
        value = float(value)
        text = "np.nan" if value != value else ("np.inf" if value == np.inf else
                                                "-np.inf" if value == -np.inf else repr(value))
    elif np_dtype.kind == "c":
        text = repr(complex(value))
    else:
        text = repr(int(value))
    return f"{dtype_text(np_dtype)}({text})"


def supported_dtype(dtype: Any) -> bool:
    try:
        return np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).kind in "biufc"
    except TypeError:
        return False


class Unsupported(Exception):
    """Raised by a rule for an op it cannot lower (the reason goes in the error)."""


class Lowering:
    """Source lines of one graph function plus the helpers, constants and variables it uses."""

    def __init__(self, name: str) -> None:
        self.namer = codegen.Namer(["np", "numba", "kf_helpers", "prange", "kf_parallel",
                                     "kf_inplace",
                                     "kf_random", "kf_lists", "kf_array", "kf_conv"])
        self.name = self.namer.fresh(name)
        self.lines: List[str] = []
        self.helpers: List[str] = []            # top-level njit functions (fused loops)
        self.constants: List[tuple] = []        # (parameter name, array)
        self.variables: Dict[int, tuple] = {}   # id(handle) -> (local name, handle)
        self.assigned: Dict[int, Any] = {}      # id(handle) -> handle written somewhere
        self.unsupported: List[tuple] = []      # (op, reason)
        self.parallel_min = fused.PARALLEL_MIN
        self.in_place: set = set()              # id(op) of updates that may write in place
        self.donors: Dict[int, str] = {}        # id(output tensor) -> its donated buffer
        self.substitutes: Dict[int, Any] = {}   # id(op) -> env -> expression replacing it
        self.uses_blas = False                  # calls NumPy's BLAS (blas.py: threads)
        self.transposed: Dict[str, str] = {}    # loop-invariant W -> W.T made contiguous
        self.clustering = False                 # probing an op for autoclustering
        self.scaled: Dict[int, tuple] = {}      # id(in-place update) -> (scale, tensor)
        self.folded: set = set()                # id(op) of products folded into those
        self.gemm: Dict[int, tuple] = {}        # id(update) -> (id(op) before it, MatMul)
        self.after: Dict[int, list] = {}        # id(op) -> gemm updates emitted after it
        self.epilogues: Dict[int, tuple] = {}   # id(op) -> (product, bias, relu) in place
        self.loops: Dict[tuple, str] = {}       # (element, ranks, dtype) -> its loop helper

    # ------------------------------------------------------------ values

    def constant(self, op: Any) -> str:
        array = np.asarray(op.attrs["value"].array)
        if not supported_dtype(array.dtype):
            raise Unsupported(f"constant of dtype {array.dtype}")
        if array.ndim == 0:
            return literal(array[()], array.dtype)
        name = self.namer.fresh("c_" + op.name)
        self.constants.append((name, np.ascontiguousarray(array)))
        return name

    def variable(self, handle: Any) -> str:
        entry = self.variables.get(id(handle))
        if entry is None:
            entry = (self.namer.fresh("var_" + handle.name), handle)
            self.variables[id(handle)] = entry
        return entry[0]

    def pinned(self, expression: str, tensor: Any) -> str:
        if tensor.shape.rank == 0:  # pin the scalar's dtype (numba widens int arithmetic)
            return f"{dtype_text(tensor.dtype)}({expression})"
        return expression

    def assign(self, name: str, expression: str, tensor: Any, indent: str) -> None:
        self.lines.append(f"{indent}{name} = {self.pinned(expression, tensor)}")

    # ------------------------------------------------------------ ops

    def emit(self, operations: Sequence, env: Dict[int, str], indent: str) -> None:
        for op in operations:
            self._emit_step(op, env, indent)
            for update in self.after.get(id(op), ()):  # v -= s * (A @ B) as one GEMM
                self._emit_gemm_update(update, env, indent)

    def _emit_step(self, op: Any, env: Dict[int, str], indent: str) -> None:
        if op.outputs and id(op.outputs[0]) in env:  # fed from outside: an input
            return
        if id(op) in self.folded:  # `s * g` computed by the update that uses it
            env[id(op.outputs[0])] = "None"
            return
        substitute = self.substitutes.get(id(op))
        if substitute is not None:  # computed before the loop (a hoisted projection)
            env[id(op.outputs[0])] = substitute(env)
            return
        try:
            self._emit_op(op, env, indent)
        except Unsupported as exc:
            self.unsupported.append((op, str(exc)))
            for t in op.outputs:  # keep going: the error lists every unsupported op
                env[id(t)] = "None"

    def _emit_gemm_update(self, op: Any, env: Dict[int, str], indent: str) -> None:
        """`v -= s * op(A) op(B)` (or +=) into v's array: one ?gemm with beta 1, on a copy
        when the caller says the array is shared (analysis.gemm_updates: where and when)."""
        handle, matmul = op.attrs["handle"], self.gemm[id(op)][1]
        local = self.variable(handle)
        self.assigned[id(handle)] = handle
        a, b = (f"np.ascontiguousarray({env[id(t)]})" for t in matmul.inputs)
        flags = f"{bool(matmul.attrs.get('transpose_a'))}, {bool(matmul.attrs.get('transpose_b'))}"
        sign = "-" if op.type == "AssignSubVariableOp" else ""
        kind, scale = dtype_text(handle.dtype), env[id(self.scaled[id(op)][0])]
        bits = np.dtype(handle.dtype.as_numpy_dtype).itemsize * 8
        self.lines.append(f"{indent}if not kf_inplace or not {local}.flags.c_contiguous:")
        self.lines.append(f"{indent}    {local} = {local}.copy()")
        self.lines.append(f"{indent}kf_helpers.gemm_update_f{bits}({a}, {b}, {flags}, "
                          f"{kind}({sign}{scale}), {local})")

    def _emit_op(self, op: Any, env: Dict[int, str], indent: str) -> None:
        kind = op.type
        for t in op.outputs:
            if t.dtype.name == "variant" and kind in ("While", "StatelessWhile"):
                continue  # the recorded history, a list the gradient loop reads
            if not supported_dtype(t.dtype):
                raise Unsupported(f"output of dtype {t.dtype.name}")
            if t.shape.rank is None:
                raise Unsupported("output of unknown rank (numba needs static ranks)")
        if kind == "Const":
            env[id(op.outputs[0])] = self.constant(op)
        elif kind in ("NoOp",):
            return
        elif kind in ("While", "StatelessWhile"):
            self._emit_while(op, env, indent)
        elif kind == "WhileGrad":
            self._emit_while_grad(op, env, indent)
        elif kind in ("If", "StatelessIf"):
            self._emit_if(op, env, indent)
        elif kind in VARIABLE_OPS:
            self._emit_variable(op, env, indent)
        elif kind == "JitCluster":  # autoclustering ran first: inline the cluster's ops
            cluster = op.attrs["cluster"]
            env.update((id(inner), env[id(outer)]) for outer, inner in
                       zip(op.inputs, cluster.inputs))
            self.emit(cluster.operations, env, indent)
            env.update((id(new), env[id(old)]) for new, old in
                       zip(op.outputs, cluster.outputs))
        elif id(op) in self.epilogues and id(self.epilogues[id(op)][0].op) not in \
                self.folded.union(self.substitutes):  # + b (and relu) over the GEMM's output
            product, bias, relu = self.epilogues[id(op)]
            self.lines.append(f"{indent}kf_helpers.bias_add({env[id(product)]}, "
                              f"{env[id(bias)]}, {relu}, {literal(0, bias.dtype)})")
            env[id(op.outputs[0])] = env[id(product)]
        elif kind == "FusedElementwise":
            args = [env[id(t)] for t in op.inputs]
            name = self.namer.fresh(op.name)
            expression = fused.emit(op, args, self, indent)
            self.assign(name, expression, op.outputs[0], indent)
            env[id(op.outputs[0])] = name
        else:
            self._emit_rule(op, env, indent)

    def _emit_rule(self, op: Any, env: Dict[int, str], indent: str) -> None:
        if self.clustering and op.type in conv.RULES and not conv.clusterable(op):
            raise Unsupported("left to the Python runtime under autoclustering")
        args = [env[id(t)] for t in op.inputs]
        for t in op.inputs:
            if t.shape.rank is None:
                raise Unsupported("input of unknown rank (numba needs static ranks)")
        expression = None
        if fused.loops_elementwise(op):
            expression = fused.emit_elementwise(op, args, self)
        if expression is None:
            expression = rules.lower(op, args, self)
        if expression is None:
            raise Unsupported("no numba lowering for this op")
        if isinstance(expression, rules.Alias):  # Identity and friends: no statement
            env[id(op.outputs[0])] = args[expression.index]
            return
        names = [self.namer.fresh(op.name) for _ in op.outputs]
        if len(names) == 1:
            self.assign(names[0], expression, op.outputs[0], indent)
        elif names:
            self.lines.append(f"{indent}{', '.join(names)} = {expression}")
            for name, t in zip(names, op.outputs):
                if t.shape.rank == 0:
                    self.lines.append(f"{indent}{name} = {dtype_text(t.dtype)}({name})")
        else:
            self.lines.append(f"{indent}{expression}")
        for t, name in zip(op.outputs, names):
            env[id(t)] = name

    def _emit_variable(self, op: Any, env: Dict[int, str], indent: str) -> None:
        handle = op.attrs["handle"]
        if not supported_dtype(handle.dtype) or handle.shape.rank is None:
            raise Unsupported(f"variable of dtype {handle.dtype.name}, shape {handle.shape}")
        local = self.variable(handle)
        update = VARIABLE_OPS[op.type]
        if update is None:  # a read: the local holds the value the program order gives
            name = self.namer.fresh(op.name)
            self.lines.append(f"{indent}{name} = {local}")
            env[id(op.outputs[0])] = name
            return
        self.assigned[id(handle)] = handle
        value = update.format(local, env[id(op.inputs[0])])
        if handle.shape.rank == 0:
            value = f"{dtype_text(handle.dtype)}({value})"
        elif op.type == "AssignVariableOp":  # a copy: later writes must not alias the value
            value = f"np.asarray({value}, dtype={dtype_text(handle.dtype)}).copy()"
        elif id(op) in self.gemm:  # emitted as one GEMM after the op analysis chose
            return
        elif id(op) in self.in_place:  # no value read from it is used later: update in place
            ufunc = "np.add" if op.type == "AssignAddVariableOp" else "np.subtract"
            self.lines.append(f"{indent}if kf_inplace:")
            if id(op) in self.scaled:  # v -= s * g: one loop, no array for s * g
                scale, tensor = (env[id(t)] for t in self.scaled[id(op)])
                value = update.format(local, f"({scale} * {tensor})")
                self.lines.append(f"{indent}    kf_helpers.scaled_update({local}, {scale}, "
                                  f"{tensor}, {op.type == 'AssignSubVariableOp'})")
            else:
                self.lines.append(f"{indent}    {ufunc}({local}, {env[id(op.inputs[0])]}, "
                                  f"{local})")
            self.lines.append(f"{indent}else:")
            self.lines.append(f"{indent}    {local} = {value}")
            return
        self.lines.append(f"{indent}{local} = {value}")

    def _emit_subgraph(self, sub: Any, args: Sequence[str], captured: Sequence[str],
                       indent: str, env: Optional[Dict[int, str]] = None) -> List[str]:
        g = sub.graph
        env = {} if env is None else env  # may hold ops' outputs to skip
        env.update((id(p), v) for p, v in zip(g.inputs, sub.feed(list(args), list(captured))))
        self.emit(g.operations, env, indent)
        return [env[id(t)] for t in g.outputs]

    def _emit_while(self, op: Any, env: Dict[int, str], indent: str) -> None:
        n = op.attrs["n_vars"]
        state = self._emit_loop(op, [env[id(t)] for t in op.inputs[:n]],
                                [env[id(t)] for t in op.inputs[n:]], op.outputs[:n],
                                bool(op.attrs.get("record_history")), indent)
        for t, name in zip(op.outputs, state):
            env[id(t)] = name

    def _emit_loop(self, op: Any, initial: List[str], captured: List[str], specs: Sequence,
                   record: bool, indent: str) -> List[str]:
        """The forward loop of a While (or WhileGrad's replay): the final state names, then
        with `record` the name of the list of states each iteration started from."""
        n = op.attrs["n_vars"]
        limit = op.attrs["maximum_iterations"]
        state = [self.namer.fresh(op.name) for _ in range(n)]
        inner = indent + "    "
        loop_vars = op.attrs["body_graph"].graph.inputs
        for k, (name, value, spec) in enumerate(zip(state, initial, specs)):
            value = tensorlist.retyped(value, op.inputs[k], loop_vars[k],
                                       dtype_text(spec.dtype))  # an empty TensorArray
            self.assign(name, value, spec, indent)
        counter = self.namer.fresh("iterations") if limit is not None else None
        if counter:
            self.lines.append(f"{indent}{counter} = 0")
        history = self.namer.fresh("history") if record else None
        if history:  # a list of state tuples: numba types it from the append below
            self.lines.append(f"{indent}{history} = []")
        self._hoist_projections(op.attrs["body_graph"], state, captured, indent)
        body = op.attrs["body_graph"]
        owned = [] if record else tensorlist.owned_writes(body.graph, n)
        for k, m in owned:  # the loop's own copy, then TensorArray writes in place
            self.lines.append(f"{indent}{state[k]} = {state[k]}.copy()")
            self.substitutes[id(m)] = lambda env, m=m: indexing.set_item(
                m, [env[id(t)] for t in m.inputs], in_place=True)
        fed = body.feed(list(state), list(captured))
        hoisted = self._hoist_transposes(body.graph, fed, set(captured) - set(state), indent)
        self.lines.append(f"{indent}while True:")
        if counter:
            self.lines.append(f"{inner}if {counter} >= {int(limit)}:")
            self.lines.append(f"{inner}    break")
        keep_going = self._emit_subgraph(op.attrs["cond_graph"], state, captured, inner)[0]
        self.lines.append(f"{inner}if not {keep_going}:")
        self.lines.append(f"{inner}    break")
        values = self._emit_subgraph(op.attrs["body_graph"], state, captured, inner)
        if len(values) > n:
            raise Unsupported("a loop body whose random draws a gradient must replay")
        if history:
            self.lines.append(f"{inner}{history}.append(({''.join(v + ', ' for v in state)}))")
        changed = [(name, self.pinned(value, spec)) for name, value, spec
                   in zip(state, values, op.outputs) if value != name]
        if changed:  # one tuple assignment: a body may swap its loop variables
            self.lines.append(f"{inner}{', '.join(n for n, _ in changed)} = "
                              f"{', '.join(v for _, v in changed)}")
        if counter:
            self.lines.append(f"{inner}{counter} += 1")
        for name in hoisted:
            del self.transposed[name]
        for _, m in owned:
            del self.substitutes[id(m)]
        return state + ([history] if history else [])

    def _hoist_transposes(self, g: Any, fed: Sequence[str], invariant: set,
                          indent: str) -> List[str]:
        """`A @ W^T` in a loop body with W loop-invariant: W^T is made contiguous once
        before the loop and the body's GEMMs run untransposed (OpenBLAS's transposed-B
        path costs 2.5x on an RNN's [16,128] x [128,128]^T: 14 vs 5.6 us). Only for bodies
        that write no variable and run no inner loop, so W cannot change under the copy.
        Returns the names registered in `self.transposed` (dropped after the loop)."""
        if any(m.type in VARIABLE_OPS or m.type in ("While", "StatelessWhile", "If",
                                                       "StatelessIf") for m in g.operations):
            return []
        names = {id(p): v for p, v in zip(g.inputs, fed)}
        hoisted = []
        for m in g.operations:
            if m.type != "MatMul" or not m.attrs.get("transpose_b"):
                continue
            w = names.get(id(m.inputs[1]))
            if w not in invariant or w in self.transposed or m.inputs[1].shape.rank != 2:
                continue
            name = self.namer.fresh(w + "_t")
            self.lines.append(f"{indent}{name} = np.ascontiguousarray({w}.T)")
            self.transposed[w] = name
            hoisted.append(w)
        return hoisted

    def _hoist_projections(self, body: Any, state: List[str], captured: List[str],
                           indent: str) -> None:
        """`X[i] @ W` in a loop body, X [T, B, I] and W captured (loop-invariant): one GEMM
        of all T slices before the loop, and the body reads its slice i (an RNN's input
        projection: T small matmuls become one large one)."""
        g = body.graph
        fed = {id(p): v for p, v in zip(g.inputs, body.feed(list(state), list(captured)))}
        outer = set(captured) - set(state)
        for m in g.operations:
            if m.type != "MatMul" or m.attrs.get("transpose_a") or m.attrs.get("transpose_b"):
                continue
            sliced, w = m.inputs
            cut = sliced.op
            if cut.type != "StridedSlice" or cut.opdef.inline is None or \
                    cut.opdef.inline(cut) != "{0}[{1}]":
                continue
            x = cut.inputs[0]
            if fed.get(id(x)) not in outer or fed.get(id(w)) not in outer or \
                    x.shape.rank != 3 or w.shape.rank != 2 or x.dtype != w.dtype or \
                    not x.dtype.is_floating:
                continue
            xs, ws = fed[id(x)], fed[id(w)]
            name = self.namer.fresh(m.name + "_all")
            rows = f"np.ascontiguousarray({xs}).reshape(({xs}.shape[0] * {xs}.shape[1], " \
                f"{xs}.shape[2]))"
            product = rules.matmul_text(rows, ws, False, False, x.dtype, self)
            self.lines.append(f"{indent}{name} = {product}.reshape(({xs}.shape[0], "
                              f"{xs}.shape[1], {ws}.shape[1]))")
            index = cut.inputs[1]
            self.substitutes[id(m)] = lambda env, name=name, index=index: \
                f"{name}[kf_helpers.checked_index({env[id(index)]}, {name}.shape[0])]"

    def _emit_while_grad(self, op: Any, env: Dict[int, str], indent: str) -> None:
        """Backpropagation through a loop: the body's VJP graph, run for each recorded
        iteration from the last to the first, as a native loop."""
        n, n_captured = op.attrs["n_vars"], op.attrs["n_captured"]
        wanted = op.attrs["wanted"]
        args = [env[id(t)] for t in op.inputs]
        state, captured = args[:n], args[n:n + n_captured]
        seeds, finals = args[n + n_captured:2 * n + n_captured], \
            args[2 * n + n_captured:3 * n + n_captured]
        specs = op.inputs[:n]
        if len(args) > 3 * n + n_captured:
            history = args[-1]
        else:  # no recorded history: replay the forward loop to record it
            history = self._emit_loop(op, state, captured, specs, True, indent)[-1]
        inner = indent + "    "
        grads = [self.namer.fresh(op.name) for _ in range(n)]
        for name, value, spec in zip(grads, seeds, specs):
            self.assign(name, value, spec, indent)
        totals = [self.namer.fresh(op.name + "_captured") for _ in wanted]
        for name, i in zip(totals, wanted):
            t = op.inputs[n + i]
            zero = literal(0, t.dtype) if t.shape.rank == 0 else f"np.zeros_like({captured[i]})"
            self.lines.append(f"{indent}{name} = {zero}")
        vjp = op.attrs["vjp_graph"]
        deferred = analysis.deferred_products(vjp.graph, n, len(wanted))
        deferred.update(analysis.deferred_sums(vjp.graph, n, len(wanted), deferred))
        stacks: Dict[int, tuple] = {}
        stacked: Dict[int, str] = {}  # id(tensor) -> its stack (a tensor in two products)
        for j, matmul in deferred.items():  # sum_t A_t^T B_t is one GEMM of stacked A, B
            for t in matmul.inputs[:1 if matmul.type != "MatMul" else 2]:
                if id(t) not in stacked:
                    stacked[id(t)] = self.namer.fresh("stack")
                    rows, cols = t.shape.as_list()
                    self.lines.append(f"{indent}{stacked[id(t)]} = np.empty((len({history}) "
                                      f"* {rows}, {cols}), {dtype_text(t.dtype)})")
            stacks[j] = tuple(stacked[id(t)] for t in matmul.inputs)
        past = [self.namer.fresh("past") for _ in range(n)]
        new = [self.namer.fresh("new") for _ in range(n)]
        hoisted = self._hoist_transposes(vjp.graph, vjp.feed(
            past + captured + grads + new, []), set(captured), indent)
        step = self.namer.fresh("step")
        self.lines.append(f"{indent}{step} = len({history}) - 1")
        self.lines.append(f"{indent}while {step} >= 0:")
        for k, name in enumerate(past):
            self.lines.append(f"{inner}{name} = {history}[{step}][{k}]")
        self.lines.append(f"{inner}if {step} + 1 < len({history}):")
        for k, name in enumerate(new):
            self.lines.append(f"{inner}    {name} = {history}[{step} + 1][{k}]")
        self.lines.append(f"{inner}else:")
        for name, final in zip(new, finals):
            self.lines.append(f"{inner}    {name} = {final}")
        sub_env = {id(m.outputs[0]): "None" for m in deferred.values()}
        outs = self._emit_subgraph(vjp, past + captured + grads + new, (), inner, sub_env)
        pinned = [self.pinned(v, spec) for v, spec in zip(outs[:n], specs)]
        self.lines.append(f"{inner}{', '.join(grads)} = {', '.join(pinned)}")
        for key, stack in stacked.items():
            rows = next(t for m in deferred.values() for t in m.inputs if id(t) == key).shape[0]
            self.lines.append(f"{inner}{stack}[{step} * {rows}:({step} + 1) * {rows}] = "
                              f"{sub_env[key]}")
        for j, (name, value, i) in enumerate(zip(totals, outs[n:], wanted)):
            if j in deferred:
                continue
            if op.inputs[n + i].shape.rank:  # our own zeros: accumulate without a new array
                self.lines.append(f"{inner}np.add({name}, {value}, {name})")
            else:
                self.lines.append(f"{inner}{name} = {name} + {value}")
        self.lines.append(f"{inner}{step} -= 1")
        for name in hoisted:
            del self.transposed[name]
        for j, operands in stacks.items():
            if deferred[j].type != "MatMul":  # sum_t column sums of X_t: one over the stack
                self.lines.append(f"{indent}if len({history}) > 0:")
                self.lines.append(f"{indent}    {totals[j]} = kf_helpers.columns_sum("
                                  f"{operands[0]})")
                continue
            a, b = operands
            product = rules.matmul_text(a, b, True, False, deferred[j].inputs[0].dtype, self)
            self.lines.append(f"{indent}if len({history}) > 0:")
            self.lines.append(f"{indent}    {totals[j]} = {product}")
        for t, name in zip(op.outputs, grads + totals):
            env[id(t)] = name

    def _emit_if(self, op: Any, env: Dict[int, str], indent: str) -> None:
        pred = env[id(op.inputs[0])]
        captured = [env[id(t)] for t in op.inputs[1:]]
        outs = [self.namer.fresh(op.name) for _ in op.outputs]
        inner = indent + "    "
        for keyword, key in (("if", "then_branch"), ("else", "else_branch")):
            self.lines.append(f"{indent}if {pred}:" if keyword == "if" else f"{indent}else:")
            start = len(self.lines)
            values = self._emit_subgraph(op.attrs[key], (), captured, inner)
            for name, value, spec in zip(outs, values, op.outputs):
                self.assign(name, value, spec, inner)
            if len(self.lines) == start:
                self.lines.append(f"{inner}pass")
        for t, name in zip(op.outputs, outs):
            env[id(t)] = name


class Lowered:
    """The result: module source, the graph function's name, what to pass and return."""

    def __init__(self, source: str, fn_name: str, constants: list, variables: list,
                 assigned: list, scalar_inputs: list, output_dtypes: list) -> None:
        self.source = source
        self.fn_name = fn_name
        self.constants = constants          # arrays appended after the inputs
        self.variables = variables          # handles read (passed after the constants)
        self.assigned = assigned            # handles written (returned after the outputs)
        self.scalar_inputs = scalar_inputs  # per input: passed as a numba scalar
        self.output_dtypes = output_dtypes


def lower(name: str, graph: Any) -> Lowered:
    """Lower `graph` (inputs, operations, outputs) to one njit function, or raise
    InvalidArgumentError listing every op the backend cannot compile."""
    lo = Lowering(codegen.identifier(name))
    env: Dict[int, str] = {}
    params = []
    scalar_inputs = []
    for t in graph.inputs:
        if t.shape.rank is None or not supported_dtype(t.dtype):
            lo.unsupported.append((t.op, f"input of dtype {t.dtype.name}, shape {t.shape}"))
        param = lo.namer.fresh(t.op.name)
        env[id(t)] = param
        params.append(param)
        scalar_inputs.append(t.shape.rank == 0)
    lo.in_place = analysis.in_place_updates(graph)
    lo.scaled = analysis.scaled_updates(graph, lo.in_place)
    lo.folded = {id(op.inputs[0].op) for op in graph.operations if id(op) in lo.scaled}
    if blas.available():  # a weight update that is one GEMM into the variable
        lo.gemm = analysis.gemm_updates(graph, lo.scaled)
        for op in graph.operations:
            if id(op) in lo.gemm:
                lo.after.setdefault(lo.gemm[id(op)][0], []).append(op)
                lo.folded.add(id(lo.gemm[id(op)][1]))
                lo.uses_blas = True
    lo.epilogues = analysis.bias_epilogues(graph)
    donated = analysis.donated_outputs(graph)
    lo.donors = {id(graph.outputs[i]): f"kf_out{i}" for i in donated}
    with tensorlist.typed(graph):  # TensorArray loop variables get their writes' rank
        lo.emit(graph.operations, env, "    ")
    if lo.unsupported:
        raise errors.InvalidArgumentError(_unsupported_message(name, lo.unsupported))
    assigned = list(lo.assigned.values())
    returned = [env[id(t)] for t in graph.outputs] + [lo.variable(h) for h in assigned]
    variables = [handle for _, handle in lo.variables.values()]
    params += [c for c, _ in lo.constants] + [local for local, _ in lo.variables.values()]
    params.append("kf_parallel")  # may fused loops use prange (more than one thread set)
    params.append("kf_inplace")   # only the handles hold the variables' arrays
    params += [f"kf_out{i}" for i in donated]  # last call's outputs nobody holds any more
    result = f"({', '.join(returned)}{',' if len(returned) == 1 else ''})"
    header = [f'"""Generated by kilnflow\'s jit backend from graph {name!r}."""',
              "import numba", "import numpy as np", "from numba import prange",
              "from kilnflow.runtime.jit import helpers as kf_helpers",
              "from kilnflow.runtime.jit import random_ops as kf_random",
              "from kilnflow.runtime.jit import lists as kf_lists",  # TensorArrays
              "from kilnflow.runtime.jit import array_ops as kf_array",
              "from kilnflow.runtime.jit import conv as kf_conv", ""]
    body = [f"@numba.njit({JIT_OPTIONS})", f"def {lo.name}({', '.join(params)}):"] + \
        lo.lines + [f"    return {result}"]
    source = "\n".join(header + lo.helpers + body) + "\n"
    output_dtypes = [np.dtype(t.dtype.as_numpy_dtype) for t in graph.outputs]
    lowered = Lowered(source, lo.name, [a for _, a in lo.constants], variables, assigned,
                      scalar_inputs, output_dtypes)
    lowered.donated = [(i, graph.outputs[i].shape.rank) for i in donated]
    lowered.uses_blas = lo.uses_blas
    return lowered


def lowerable(op: Any) -> bool:
    """Whether the backend can lower `op` (fed by inputs of their static specs): what
    autoclustering asks of every op."""
    lo = Lowering("probe")
    lo.clustering = True  # conv.clusterable() applies inside loop bodies too
    env: Dict[int, str] = {}
    for t in op.inputs:
        if t.shape.rank is None or not supported_dtype(t.dtype):
            return False
        env[id(t)] = lo.namer.fresh("x")
    try:
        lo._emit_op(op, env, "    ")
    except Unsupported:
        return False
    except Exception:  # noqa: BLE001 - an op a rule does not understand stays in Python
        return False
    return not lo.unsupported


def _unsupported_message(name: str, found: List[tuple]) -> str:
    lines = [f"kf.function '{name}' has jit_compile=True, but these operations cannot be "
             f"compiled by the numba backend (TF's rule: the whole function must compile):"]
    for op, reason in found:
        where = f" at {op.location[0]}:{op.location[1]}" if getattr(op, "location", None) \
            else ""
        lines.append(f"  node '{op.name}' ({op.type}){where}: {reason}")
    lines.append("Remove jit_compile=True to run it with the Python runtime.")
    return "\n".join(lines)
