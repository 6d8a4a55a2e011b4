"""FusedElementwise: one op that evaluates a whole group of elementwise ops.

passes/fuse_elementwise.py builds a FusedProgram from the ops' `fusable` templates: a
straight-line list of steps, each a NumPy ufunc (or a cast, or a select) writing with
`out=` into a scratch buffer, with scratch buffers assigned so dead values are reused.
runtime/fused_engine.py runs it (cache-sized blocks over a thread pool; chosen by measurement,
see kilnflow/runtime/ENGINE.md). Codegen emits the block function into the generated
source, so `concrete.code` shows the fused evaluation. Imports ops only.
"""
from __future__ import annotations

import ast
import math
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.runtime import fused_engine as engine
from kilnflow.core import rules
from kilnflow.core.opdef import defop
from kilnflow.shapes import TensorShape, TensorSpec


# ---------------------------------------------------------------- translating templates

# Python operators in templates -> the ufunc NumPy applies for them.
_BINARY = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "true_divide",
           ast.Pow: "power", ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or",
           ast.BitXor: "bitwise_xor", ast.LShift: "left_shift", ast.RShift: "right_shift"}
_COMPARE = {ast.Lt: "less", ast.LtE: "less_equal", ast.Gt: "greater", ast.GtE: "greater_equal",
            ast.Eq: "equal", ast.NotEq: "not_equal"}
_UNARY = {ast.USub: "negative", ast.Invert: "invert"}
_OPERATOR_TEXT = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/",
                  "power": "**", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
                  "left_shift": "<<", "right_shift": ">>", "less": "<", "less_equal": "<=",
                  "greater": ">", "greater_equal": ">=", "equal": "==", "not_equal": "!="}
_UNARY_TEXT = {"negative": "-", "invert": "~"}
_PLACEHOLDER = re.compile(r"\{(\w+)\}")

# A value inside a program: ("in", i) a group input, ("step", j) a step's result, or
# ("lit", v) a Python scalar written in a template (weak: it takes the other operand's dtype),
# or ("const", (v, dtype)) the same scalar typed as it will be used (a 0-d array at run time).
Ref = Tuple[str, Any]


class Step(tuple):
    """(fn, args, dtype): fn is a NumPy ufunc name, 'cast' or 'where'; dtype a numpy dtype str."""

    __slots__ = ()

    @property
    def fn(self) -> str:
        return self[0]

    @property
    def args(self) -> tuple:
        return self[1]

    @property
    def dtype(self) -> str:
        return self[2]


def parse_template(template: str) -> Optional[ast.expr]:
    """The template as a Python expression tree ({0} -> name `_in0`, {attr} -> `_at_attr`)."""
    text = _PLACEHOLDER.sub(lambda m: ("_in" if m.group(1).isdigit() else "_at_") + m.group(1),
                            template)
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError:
        return None


class ProgramBuilder:
    """Collects the steps of one group; add_op() appends one op's template.

    Steps are typed by running them on one-element samples, so NumPy's own promotion rules
    decide each scratch buffer's dtype; add_op() refuses (returns None) when the template
    cannot be translated or does not give the dtype the op declares.
    """

    def __init__(self) -> None:
        self.steps: List[Step] = []
        self.input_dtypes: List[np.dtype] = []
        self._samples: List[Any] = []     # one-element sample per input, then per step
        self._step_samples: List[Any] = []
        self._input_index: Dict[Any, int] = {}

    def input(self, key: Any, dtype: np.dtype, value: Any = None) -> Ref:
        """The ref of group input `key` (deduplicated); `value`: its constant value if known."""
        if key not in self._input_index:
            self._input_index[key] = len(self.input_dtypes)
            self.input_dtypes.append(np.dtype(dtype))
            sample = np.ones((1,), dtype)
            self._samples.append((sample, value))
        return ("in", self._input_index[key])

    def add_op(self, template: str, operands: Sequence[Ref], attrs: dict,
               out_dtype: np.dtype) -> Optional[Ref]:
        tree = parse_template(template)
        if tree is None:
            return None
        mark = len(self.steps)
        try:
            ref = self._translate(tree, list(operands), attrs)
        except _Untranslatable:
            ref = None
        if ref is None or ref[0] != "step" or self._sample(ref).dtype != np.dtype(out_dtype):
            del self.steps[mark:]
            del self._step_samples[mark:]
            return None
        return ref

    def build(self, root: Ref, reduce: Optional[tuple], dtype: np.dtype, quiet: bool,
              n_ops: int = 1) -> Tuple["FusedProgram", list]:
        """The program and the keys of the inputs it reads, in its input order (inputs that
        no step reads any more, like a folded-away exponent, are dropped)."""
        keys = sorted(self._input_index, key=self._input_index.get)
        used = sorted({v for step in self.steps for kind, v in step.args if kind == "in"})
        renumber = {old: new for new, old in enumerate(used)}
        steps = tuple(Step((s.fn, tuple(("in", renumber[v]) if kind == "in" else (kind, v)
                                        for kind, v in s.args), s.dtype))
                      for s in self.steps)
        program = FusedProgram(steps, tuple(self.input_dtypes[i].str for i in used), root,
                               reduce, np.dtype(dtype).str, quiet)
        program.n_ops = n_ops
        return program, [keys[i] for i in used]

    # ------------------------------------------------------------ internals

    def _sample(self, ref: Ref) -> Any:
        kind, value = ref
        if kind == "in":
            return self._samples[value][0]
        if kind == "step":
            return self._step_samples[value]
        if kind == "const":
            return np.array(value[0], value[1])
        return value

    def _constant(self, ref: Ref) -> Any:
        if ref[0] == "in":
            return self._samples[ref[1]][1]
        if ref[0] == "const":
            return ref[1][0]
        return ref[1] if ref[0] == "lit" else None

    def _emit(self, fn: str, args: Sequence[Ref], target: Any = None) -> Ref:
        args = self._typed(fn, list(args))
        samples = [self._sample(a) for a in args]
        with np.errstate(all="ignore"):
            if fn == "cast":
                result = np.asarray(samples[0]).astype(target)
            elif fn == "where":
                result = np.where(*samples)
            else:
                result = getattr(np, fn)(*samples)
        result = np.asarray(result)
        if result.dtype == object or result.dtype.kind in "OSUV":
            raise _Untranslatable(fn)
        self.steps.append(Step((fn, tuple(args), result.dtype.str)))
        self._step_samples.append(result.reshape(-1)[:1])
        return ("step", len(self.steps) - 1)

    def _typed(self, fn: str, args: list) -> list:
        """Template literals as 0-d arrays of the dtype NumPy would give them (that of the
        other operand): ufuncs take a typed 0-d array faster than a Python scalar."""
        if fn == "cast" or all(kind != "lit" for kind, _ in args):
            return args
        others = [np.asarray(self._sample(a)).dtype for k, a in enumerate(args)
                  if a[0] != "lit" and not (fn == "where" and k == 0)]
        typed = []
        for k, (kind, value) in enumerate(args):
            if kind != "lit" or not others or (fn == "where" and k == 0):
                typed.append((kind, value))
                continue
            dtype = others[0]
            if np.asarray(value, dtype).item() != value:  # not exactly representable
                typed.append((kind, value))
                continue
            typed.append(("const", (value, dtype.str)))
        return typed

    def _translate(self, node: ast.expr, operands: list, attrs: dict) -> Ref:
        if isinstance(node, ast.Name):
            if node.id.startswith("_in"):
                return operands[int(node.id[3:])]
            if node.id.startswith("_at_"):
                value = attrs[node.id[4:]]
                if isinstance(value, (bool, int, float)):
                    return ("lit", value)
            raise _Untranslatable(node.id)
        if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int, float)):
            return ("lit", node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left = self._translate(node.left, operands, attrs)
            right = self._translate(node.right, operands, attrs)
            if isinstance(node.op, ast.Pow):
                return self._power(left, right)
            return self._emit(_BINARY[type(node.op)], [left, right])
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return self._emit(_UNARY[type(node.op)], [self._translate(node.operand, operands,
                                                                      attrs)])
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            left = self._translate(node.left, operands, attrs)
            right = self._translate(node.comparators[0], operands, attrs)
            return self._emit(_COMPARE[type(node.ops[0])], [left, right])
        if isinstance(node, ast.Call) and not node.keywords:
            return self._call(node, operands, attrs)
        raise _Untranslatable(ast.dump(node))

    def _call(self, node: ast.Call, operands: list, attrs: dict) -> Ref:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "astype" and len(node.args) == 1:
            value = self._translate(func.value, operands, attrs)
            target = node.args[0]
            if isinstance(target, ast.Name) and target.id.startswith("_at_"):
                dtype = attrs[target.id[4:]]
                np_dtype = getattr(dtype, "as_numpy_dtype", dtype)
                return self._emit("cast", [value], np.dtype(np_dtype))
            raise _Untranslatable("astype")
        if not isinstance(func, ast.Name):
            raise _Untranslatable(ast.dump(func))
        args = [self._translate(a, operands, attrs) for a in node.args]
        if func.id == "where" and len(args) == 3:
            return self._emit("where", args)
        ufunc = getattr(np, func.id, None)
        if not isinstance(ufunc, np.ufunc) or ufunc.nin != len(args) or ufunc.nout != 1:
            raise _Untranslatable(func.id)
        return self._emit(ufunc.__name__, args)

    def _power(self, base: Ref, exponent: Ref) -> Ref:
        """x ** 2, 3, 4 as multiplications: NumPy's pow is a transcendental call per element."""
        value = self._constant(exponent)
        if value is not None and np.ndim(value) == 0 and float(value) in (2.0, 3.0, 4.0):
            square = self._emit("multiply", [base, base])
            if float(value) == 2.0:
                return square
            if float(value) == 3.0:
                return self._emit("multiply", [square, base])
            return self._emit("multiply", [square, square])
        return self._emit("power", [base, exponent])


class _Untranslatable(Exception):
    pass


# ---------------------------------------------------------------- the program

class FusedProgram:
    """An immutable fused group: steps, the root value, an optional final reduction.

    reduce: None or (kind, axes, keepdims) with kind one of sum, prod, max, min, any, all,
    mean and axes None (all) or a tuple of non-negative ints. Hashable by content.
    """

    def __init__(self, steps: tuple, input_dtypes: tuple, root: Ref, reduce: Optional[tuple],
                 dtype: str, quiet: bool):
        self.steps = steps
        self.input_dtypes = input_dtypes
        self.root = root
        self.reduce = reduce
        self.dtype = dtype
        self.quiet = quiet    # every member kernel was a bare ufunc: NumPy warnings as unfused
        self._key = (steps, input_dtypes, root, reduce, dtype, quiet)
        self._hash = hash(self._key)
        self.n_ops = 1       # how many graph ops the program stands for (for reports)
        self._compiled: Optional[Callable] = None
        self._whole: Optional[Callable] = None
        self._constants: Optional[list] = None
        self.slots, self.targets = _allocate(steps, root)

    @property
    def n_inputs(self) -> int:
        return len(self.input_dtypes)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, FusedProgram) and self._key == other._key

    def __repr__(self) -> str:
        names = [f"a{i}" for i in range(self.n_inputs)]
        text = "; ".join(f"t{j} = {_step_text(s, names, None)}" for j, s in
                         enumerate(self.steps))
        if self.reduce is not None:
            kind, axes, keepdims = self.reduce
            text += f"; {kind}(t{self.root[1]}, axis={axes}, keepdims={keepdims})"
        return f"'{text}'"

    # ------------------------------------------------------------ source

    def constants(self) -> list:
        """The typed literals, as 0-d arrays made once (in step order)."""
        if self._constants is None:
            refs = dict.fromkeys(a for step in self.steps for a in step.args if a[0] == "const")
            self._constants = [(ref, np.array(ref[1][0], ref[1][1])) for ref in refs]
        return self._constants

    def block_source(self, fn_name: str, params: Sequence[str], numpy: str = "np",
                     constant_names: Optional[Sequence[str]] = None) -> List[str]:
        """`def fn_name(out, *params, s0, s1, ...)`: the steps for one block, no allocation.
        Typed literals are globals named k0, k1 ... (or `constant_names`)."""
        scratch = [f"s{k}" for k in range(len(self.slots))]
        refs = [ref for ref, _ in self.constants()]
        names = dict(zip(refs, constant_names or [f"k{i}" for i in range(len(refs))]))
        lines = [f"def {fn_name}(out, {', '.join(list(params) + scratch)}):"]
        where = {j: ("out" if t == "out" else f"s{t}") for j, t in enumerate(self.targets)}

        def arg(ref: Ref) -> str:
            kind, value = ref
            if kind == "in":
                return params[value]
            if kind == "step":
                return where[value]
            if kind == "const":
                return names[ref]
            return _literal(value, numpy)

        for j, step in enumerate(self.steps):
            out = where[j]
            args = [arg(a) for a in step.args]
            if step.fn == "cast":
                lines.append(f"    {numpy}.copyto({out}, {args[0]}, casting='unsafe')")
            elif step.fn == "where":
                lines.append(f"    {numpy}.copyto({out}, {args[2]}, casting='no')")
                lines.append(f"    {numpy}.copyto({out}, {args[1]}, where={args[0]})")
            else:
                lines.append(f"    {numpy}.{step.fn}({', '.join(args)}, out={out})")
        return lines

    def expression_lines(self, params: Sequence[str], result: str, temp: Callable[[], str],
                         numpy: str = "np") -> List[str]:
        """Plain NumPy statements (no out=) computing the root into `result`: small arrays."""
        uses: Dict[int, int] = {}
        for step in self.steps:
            for kind, value in step.args:
                if kind == "step":
                    uses[value] = uses.get(value, 0) + 1
        texts: Dict[int, str] = {}
        lines: List[str] = []
        names = list(params)
        for j, step in enumerate(self.steps):
            text = _step_text(step, names, texts, numpy)
            if j == self.root[1]:
                lines.append(f"{result} = {text}")
            elif uses.get(j, 0) > 1:
                name = temp()
                lines.append(f"{name} = {text}")
                texts[j] = name
            elif step.fn in _OPERATOR_TEXT or step.fn in _UNARY_TEXT:
                texts[j] = f"({text})"
            else:
                texts[j] = text
        return lines

    def compiled(self) -> Callable:
        """The block function, compiled once (the interpreter and the kernel use it)."""
        if self._compiled is None:
            params = [f"a{i}" for i in range(self.n_inputs)]
            constants = {f"k{i}": array for i, (_, array) in enumerate(self.constants())}
            self._compiled = _compile(self.block_source("block", params), "block", constants)
        return self._compiled

    def whole(self) -> Callable:
        """The values (before any reduction) as plain NumPy expressions: for small arrays,
        where allocating is cheaper than blocks and scratch buffers."""
        if self._whole is None:
            params = [f"a{i}" for i in range(self.n_inputs)]
            names = iter(f"t{k}" for k in range(len(self.steps)))
            body = self.expression_lines(params, "result", lambda: next(names))
            self._whole = _compile([f"def whole({', '.join(params)}):"] +
                                   ["    " + line for line in body] + ["    return result"],
                                   "whole")
        return self._whole

    # ------------------------------------------------------------ shapes

    def spec(self, input_shapes: Sequence[TensorShape], values: bool = False) -> TensorSpec:
        """The result's spec (with values=True: before the final reduction)."""
        shape = TensorShape([])
        for s in input_shapes:
            shape = _broadcast_static(shape, s)
        if self.reduce is not None and not values:
            _, axes, keepdims = self.reduce
            shape = rules.reduced_shape(shape, axes, keepdims)
        return TensorSpec(shape, _dtypes.from_numpy(np.dtype(self.dtype)))


def _compile(lines: List[str], name: str, constants: Optional[dict] = None) -> Callable:
    namespace = {"np": np, **(constants or {})}
    exec(compile("\n".join(lines) + "\n", f"<kilnflow fused {name}>", "exec"),  # noqa: S102
         namespace)
    return namespace[name]


def _broadcast_static(a: TensorShape, b: TensorShape) -> TensorShape:
    from kilnflow.shapes import broadcast_shapes
    return broadcast_shapes(a, b)


def _literal(value: Any, numpy: str) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return f"{numpy}.nan" if value != value else f"{'-' if value < 0 else ''}{numpy}.inf"
    return repr(value)


def _step_text(step: Step, names: Sequence[str], texts: Optional[dict],
               numpy: str = "np") -> str:
    def arg(ref: Ref) -> str:
        kind, value = ref
        if kind == "in":
            return names[value]
        if kind == "step":
            return texts[value] if texts is not None else f"t{value}"
        if kind == "const":
            return _literal(value[0], numpy)  # a weak literal gives the same dtype here
        return _literal(value, numpy)

    args = [arg(a) for a in step.args]
    if step.fn in _OPERATOR_TEXT:
        return f"{args[0]} {_OPERATOR_TEXT[step.fn]} {args[1]}"
    if step.fn in _UNARY_TEXT:
        return f"{_UNARY_TEXT[step.fn]}{args[0]}"
    if step.fn == "cast":
        return f"{args[0]}.astype({numpy}.{np.dtype(step.dtype).name})"
    return f"{numpy}.{step.fn}({', '.join(args)})"


def _allocate(steps: tuple, root: Ref) -> Tuple[tuple, tuple]:
    """Scratch buffers for the steps: (dtype per slot, slot index or 'out' per step).

    A step writes into the slot of an argument that dies there (same dtype) when it can:
    ufuncs handle exact aliasing, elementwise. A select copies its third operand first, so
    it never writes over an operand. The root writes straight into the `out` block (the
    result, or the values a final reduction reads).
    """
    last_use: Dict[int, int] = {}
    for j, step in enumerate(steps):
        for kind, value in step.args:
            if kind == "step":
                last_use[value] = j
    slots: List[str] = []
    free: List[int] = []
    targets: List[Any] = []
    for j, step in enumerate(steps):
        dying = [targets[v] for kind, v in step.args
                 if kind == "step" and last_use.get(v) == j and targets[v] != "out"]
        if j == root[1]:
            target: Any = "out"
        else:
            reusable = [] if step.fn == "where" else \
                [s for s in dying if slots[s] == step.dtype and s not in free]
            candidates = [s for s in free if slots[s] == step.dtype]
            if reusable:
                target = reusable[0]
            elif candidates:
                target = candidates[0]
                free.remove(target)
            else:
                target = len(slots)
                slots.append(step.dtype)
        for s in dying:
            if s != target and s not in free:
                free.append(s)
        if target != "out" and j not in last_use and j != root[1]:
            free.append(target)  # an unused result (cannot happen for built programs)
        targets.append(target)
    return tuple(slots), tuple(targets)


# ---------------------------------------------------------------- the op

def _fused_rule(*inputs: Any, program: FusedProgram, into: Optional[int]) -> TensorSpec:
    operands = inputs[:program.n_inputs]
    if len(operands) != program.n_inputs:
        raise ValueError(f"FusedElementwise expects {program.n_inputs} inputs, got "
                         f"{len(operands)}")
    for i, (t, dtype) in enumerate(zip(operands, program.input_dtypes)):
        if t.dtype.as_numpy_dtype != np.dtype(dtype):
            raise ValueError(f"FusedElementwise input {i} must be {np.dtype(dtype).name}, "
                             f"got {t.dtype.name}")
    if into is not None and not 0 <= into < len(inputs):
        raise ValueError(f"FusedElementwise: `into` {into} is not an input position")
    return program.spec([t.shape for t in operands])


def _fused_kernel(*arrays: Any, program: FusedProgram, into: Optional[int]) -> Any:
    buffer = arrays[into] if into is not None else None
    return engine.run(program.compiled(), program, arrays[:program.n_inputs], buffer)


def _fused_codegen(op: Any, emitter: Any, env: dict, indent: str) -> None:
    """Emit plain NumPy expressions when the shapes are known and small, else a call to the
    engine with the program's block function (compiled once), shown as comment lines."""
    program: FusedProgram = op.attrs["program"]
    into = op.attrs["into"]
    emitter.globals.setdefault("np", np)
    # kernels that silence NumPy run inside one np.errstate the generated function enters
    silenced = not program.quiet and hasattr(emitter, "silenced")
    if silenced:
        emitter.silenced = True
    params = [env[id(t)] for t in op.inputs[:program.n_inputs]]
    result = emitter.namer.fresh(op.name)
    prog = emitter.global_ref(program, "program_" + op.name)
    static = [t.shape for t in op.inputs[:program.n_inputs]]
    start = len(emitter.lines)
    if (program.quiet or silenced) and all(s.is_fully_defined() for s in static) and \
            math.prod(program.spec(static, values=True).shape.as_list()) <= \
            engine.SMALL_ELEMENTS:
        temps: List[str] = []

        def temp() -> str:
            temps.append(emitter.namer.fresh(op.name + "_t"))
            return temps[-1]

        values = result if program.reduce is None else temp()
        lines = program.expression_lines(params, values, temp)
        if program.reduce is not None:
            reduce = emitter.global_ref(engine.reduce_values, "fused_reduce")
            lines.append(f"{result} = {reduce}({prog}, {values})")
        if temps:
            lines.append(f"del {', '.join(temps)}")
    else:
        block = emitter.global_ref(program.compiled(), "block_" + op.name)
        shown = program.block_source(block, [f"a{i}" for i in range(program.n_inputs)])
        runner = emitter.global_ref(engine.run, "fused_run")
        buffer = env[id(op.inputs[into])] if into is not None else "None"
        lines = ["# " + line for line in shown] + [
            f"{result} = {runner}({block}, {prog}, ({', '.join(params)},), {buffer}"
            f"{', True' if silenced else ''})"]
    # origins map assignment lines to the op (codegen marked our first line, which may be a
    # comment); errors inside the block surface through the call line
    emitter.origins.pop(start + 2, None)
    for k, line in enumerate(lines):
        emitter.lines.append(indent + line)
        if " = " in line and not line.startswith("#"):
            emitter.origins[start + k + 2] = op
    env[id(op.outputs[0])] = result


FUSED = defop("FusedElementwise", shape=_fused_rule, kernel=_fused_kernel, same_dtype=False,
              codegen=_fused_codegen)
