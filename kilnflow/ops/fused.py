"""FusedElementwise: one op that evaluates a whole group of elementwise ops.

passes/fuse_elementwise.py builds a FusedProgram from the ops' `fusable` templates: a
straight-line list of steps, each a NumPy ufunc (or a cast, or a select) writing with
`out=` into a scratch buffer. The engine runs the steps over cache-sized blocks of the
output, spread over a thread pool (ufuncs release the GIL), so intermediates never touch
main memory; it was chosen by measurement (kilnflow/passes/ENGINE.md). Small outputs skip
the blocks and evaluate one NumPy expression. Codegen emits the block function into the
generated source, so `concrete.code` shows the fused evaluation. Imports ops only.
"""
from __future__ import annotations

import ast
import math
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.ops import rules
from kilnflow.ops.opdef import defop
from kilnflow.shapes import TensorShape, TensorSpec

# Engine parameters, chosen by tests/passes/measure_engine.py (figures in ENGINE.md).
BLOCK_BYTES = 1 << 17          # one block of the widest value: a few of them stay in L2
PARALLEL_MIN_BLOCKS = 4        # below this many blocks a thread hand-off costs more than it saves
SMALL_ELEMENTS = 1 << 15       # up to this, plain NumPy expressions: malloc is cheap there,
                               # and one block would gain nothing

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

    REDUCERS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
                "any": np.logical_or, "all": np.logical_and, "mean": np.add}

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

    def spec(self, input_shapes: Sequence[TensorShape]) -> TensorSpec:
        shape = TensorShape([])
        for s in input_shapes:
            shape = _broadcast_static(shape, s)
        if self.reduce is not None:
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


# ---------------------------------------------------------------- the engine

def _default_threads() -> int:
    return max(1, os.cpu_count() or 1)


_pool: Optional[ThreadPoolExecutor] = None
_threads = _default_threads()
_pool_lock = threading.Lock()


def set_num_threads(n: int) -> None:
    """Threads the fused engine spreads big groups over (default: the CPU count)."""
    global _threads
    _threads = max(1, int(n))


def get_num_threads() -> int:
    return _threads


def _get_pool() -> ThreadPoolExecutor:
    """Worker threads (the calling thread does one share of the work itself)."""
    global _pool
    if _pool is None or _pool._max_workers < _threads - 1:
        with _pool_lock:
            if _pool is None or _pool._max_workers < _threads - 1:
                _pool = ThreadPoolExecutor(max(1, _threads - 1),
                                           thread_name_prefix="kilnflow-fused")
    return _pool


def run(block: Callable, program: FusedProgram, arrays: Sequence[Any],
        into: Any = None) -> Any:
    """Evaluate `program` (its block function `block`) on `arrays`; write into `into` when
    it is a usable buffer of the result's shape and dtype."""
    if _small(arrays):
        return _run_small(program, arrays)
    arrays = [np.asarray(a) for a in arrays]
    shape = tuple(np.broadcast_shapes(*[a.shape for a in arrays]))
    values_dtype = np.dtype(program.steps[program.root[1]].dtype)
    size = math.prod(shape)
    widest = max([np.dtype(d).itemsize for d in program.slots] + [values_dtype.itemsize])
    block_elems = max(1, BLOCK_BYTES // widest)
    reduce = program.reduce
    if reduce is None:
        out = into if _usable(into, shape, values_dtype) else np.empty(shape, values_dtype)
    if size <= block_elems or not shape:  # one call on whole arrays
        with np.errstate(all="ignore"):
            scratch = [np.empty(shape, d) for d in program.slots]
            if reduce is None:
                block(out, *arrays, *scratch)
                return out
            values = np.empty(shape, values_dtype)
            block(values, *arrays, *scratch)
            return _reduce_whole(program, values)
    whole = reduce is None or reduce[1] is None or set(reduce[1]) == set(range(len(shape)))
    flat = whole and all(a.size == 1 or (a.shape == shape and a.flags.c_contiguous)
                         for a in arrays)
    if flat:  # every operand is the full shape or one value: blocks of the flat arrays
        views = [a.reshape(()) if a.size == 1 else a.reshape(-1) for a in arrays]
        sliced = [a.ndim == 1 for a in views]
        rows, inner = size, ()
    else:     # blocks of rows; operands without the leading dim broadcast whole
        views = arrays
        sliced = [a.ndim == len(shape) and a.shape[0] == shape[0] != 1 for a in arrays]
        rows, inner = shape[0], shape[1:]
    if flat and reduce is None and size >= NUMBA_MIN_ELEMENTS:
        kernel = _numba_kernel(program, tuple(sliced))
        if kernel is not None:  # one compiled pass: see ENGINE.md for when it wins
            kernel(out.reshape(-1), *[v if s else v[()] for v, s in zip(views, sliced)])
            return out
    step = max(1, block_elems // max(1, math.prod(inner)))
    starts = list(range(0, rows, step))
    if reduce is None:
        target = out.reshape(-1) if flat else out
        combine = None
    else:
        kind, axes, _ = reduce
        combine = FusedProgram.REDUCERS[kind]
        rows_reduced = flat or axes is None or 0 in axes
        if not rows_reduced:  # each block reduces to its own rows of the result
            keep_shape = rules.reduced_shape(TensorShape(shape), axes, True).as_list()
            target = np.empty(keep_shape, combine.reduce(np.zeros(1, values_dtype)).dtype)
            combine = None

    def part(first: int, last: int) -> Any:
        """Blocks starts[first:last]; returns their combined partial reduction (or None)."""
        scratch = [np.empty((step,) + inner, d) for d in program.slots]
        values = np.empty((step,) + inner, values_dtype) if reduce is not None else None
        partial = None
        with np.errstate(all="ignore"):
            for lo in starts[first:last]:
                hi = min(lo + step, rows)
                n = hi - lo
                args = [v[lo:hi] if s else v for v, s in zip(views, sliced)]
                tmp = scratch if n == step else [s[:n] for s in scratch]
                if reduce is None:
                    block(target[lo:hi], *args, *tmp)
                    continue
                block(values[:n], *args, *tmp)
                reducer = FusedProgram.REDUCERS[reduce[0]]
                if combine is None:
                    reducer.reduce(values[:n], axis=reduce[1], keepdims=True,
                                   out=target[lo:hi])
                    continue
                got = reducer.reduce(values[:n], axis=None if flat else reduce[1],
                                     keepdims=not flat)
                partial = got if partial is None else combine(partial, got)
        return partial

    threads = min(_threads, len(starts) // PARALLEL_MIN_BLOCKS)
    if threads <= 1:
        partials = [part(0, len(starts))]
    else:
        bounds = [len(starts) * t // threads for t in range(threads + 1)]
        futures = [_get_pool().submit(part, bounds[t], bounds[t + 1])
                   for t in range(1, threads)]
        partials = [part(bounds[0], bounds[1])] + [f.result() for f in futures]
    if reduce is None:
        return out
    if combine is not None:
        target = partials[0]
        for p in partials[1:]:
            target = combine(target, p)
    _, axes, keepdims = reduce
    final_shape = rules.reduced_shape(TensorShape(shape), axes, keepdims).as_list()
    total = np.asarray(target).reshape(final_shape)
    return _finish(program, total, size // max(1, total.size))


# ---------------------------------------------------------------- numba, when installed

# Steps numba compiles to the same IEEE results NumPy gives (floats only: numba widens
# small ints). NumPy's SIMD transcendentals beat numba's libm calls, so a group with any
# other step stays on the NumPy blocks. maximum/minimum propagate NaN as NumPy does.
_NUMBA_STEPS = {"add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
                "true_divide": "{0} / {1}", "negative": "-{0}",
                "maximum": "({0} if {0} >= {1} or {0} != {0} else {1})",
                "minimum": "({0} if {0} <= {1} or {0} != {0} else {1})", "cast": "{0}"}
NUMBA_MIN_ELEMENTS = 1 << 20   # below this the blocks are as fast; numba compiles slowly
_backend = {"name": "auto"}
_numba_state: Dict[str, Any] = {}
_numba_kernels: Dict[tuple, Any] = {}


def set_backend(name: str) -> None:
    """'auto' (numba for arithmetic-only groups when installed, else NumPy) or 'numpy'."""
    if name not in ("auto", "numpy"):
        raise ValueError(f"fused engine backend must be 'auto' or 'numpy', got {name!r}")
    _backend["name"] = name


def _numba() -> Any:
    if "module" not in _numba_state:
        try:
            import numba
        except ImportError:  # optional: the NumPy blocks are the fallback
            numba = None
        _numba_state["module"] = numba
    return _numba_state["module"]


def numba_source(program: FusedProgram, sliced: Sequence[bool]) -> Optional[str]:
    """A numba kernel for `program` (one pass over flat arrays), or None when its steps or
    dtypes are not ones numba reproduces exactly. `sliced[i]`: input i is an array (else a
    scalar)."""
    dtypes = list(program.input_dtypes) + [s.dtype for s in program.steps]
    if program.reduce is not None or any(np.dtype(d).kind != "f" for d in dtypes) or \
            any(s.fn not in _NUMBA_STEPS for s in program.steps):
        return None
    lines = [f"def kernel(out, {', '.join(f'a{i}' for i in range(program.n_inputs))}):",
             "    for i in numba.prange(out.size):"]
    for i, is_array in enumerate(sliced):
        lines.append(f"        v{i} = a{i}[i]" if is_array else f"        v{i} = a{i}")

    def arg(ref: Ref, dtype: str) -> str:
        kind, value = ref
        if kind == "in":
            return f"v{value}"
        if kind == "step":
            return f"t{value}"
        if kind == "const":
            value = value[0]
        return f"np.{np.dtype(dtype).name}({value!r})"  # typed: numba would widen a literal

    for j, step in enumerate(program.steps):
        args = [arg(a, step.dtype) for a in step.args]
        text = _NUMBA_STEPS[step.fn].format(*args)
        lines.append(f"        t{j} = np.{np.dtype(step.dtype).name}({text})")
    lines.append(f"        out[i] = t{program.root[1]}")
    return "\n".join(lines) + "\n"


def _numba_kernel(program: FusedProgram, sliced: tuple) -> Optional[Callable]:
    if _backend["name"] != "auto":
        return None
    key = (program, sliced)
    if key not in _numba_kernels:
        source = numba_source(program, sliced)
        numba = _numba() if source is not None else None
        kernel = None
        if numba is not None:
            namespace = {"np": np, "numba": numba}
            exec(compile(source, "<kilnflow fused numba>", "exec"), namespace)  # noqa: S102
            kernel = numba.njit(parallel=True, fastmath=False)(namespace["kernel"])
        _numba_kernels[key] = kernel
    kernel = _numba_kernels[key]
    if kernel is not None:
        numba = _numba()
        numba.set_num_threads(min(_threads, numba.config.NUMBA_NUM_THREADS))
    return kernel


def _small(arrays: Sequence[Any]) -> bool:
    """Is the result at most SMALL_ELEMENTS? (Cheap: no compatibility checks, which the
    expressions make anyway.)"""
    ndim = 0
    for a in arrays:
        if a.size > SMALL_ELEMENTS:
            return False
        ndim = max(ndim, a.ndim)
    dims = [1] * ndim
    for a in arrays:
        for i, d in enumerate(a.shape, ndim - a.ndim):
            if d != 1:
                dims[i] = d
    return math.prod(dims) <= SMALL_ELEMENTS


def _run_small(program: FusedProgram, arrays: Sequence[Any]) -> Any:
    """Plain NumPy expressions, as the ops would have run unfused (warnings included when
    every kernel was a bare ufunc; silenced otherwise, as those kernels do)."""
    if program.quiet:
        values = program.whole()(*arrays)
    else:
        with np.errstate(all="ignore"):
            values = program.whole()(*arrays)
    if program.reduce is None:
        return values
    return _reduce_whole(program, np.asarray(values))


def _reduce_whole(program: FusedProgram, values: Any) -> Any:
    kind, axes, keepdims = program.reduce
    total = np.asarray(FusedProgram.REDUCERS[kind].reduce(values, axis=axes,
                                                          keepdims=keepdims))
    return _finish(program, total, values.size // max(1, total.size))


def _finish(program: FusedProgram, total: Any, count: int) -> Any:
    """Mean divides the sum by the count; every kind returns the declared dtype."""
    total = np.asarray(total)
    if program.reduce[0] == "mean":
        with np.errstate(all="ignore"):
            total = np.true_divide(total, count) if count else \
                np.full(total.shape, np.nan, total.dtype)
    return total.astype(np.dtype(program.dtype), copy=False)


def _usable(buffer: Any, shape: tuple, dtype: np.dtype) -> bool:
    return (isinstance(buffer, np.ndarray) and buffer.shape == tuple(shape)
            and buffer.dtype == dtype and buffer.flags.writeable and buffer.flags.c_contiguous)


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
    return run(program.compiled(), program, arrays[:program.n_inputs], buffer)


def _fused_codegen(op: Any, emitter: Any, env: dict, indent: str) -> None:
    """Emit the block function and the engine call (or, for small static shapes with no
    reduction, one NumPy expression)."""
    program: FusedProgram = op.attrs["program"]
    into = op.attrs["into"]
    emitter.globals.setdefault("np", np)
    params = [env[id(t)] for t in op.inputs[:program.n_inputs]]
    result = emitter.namer.fresh(op.name)
    spec = op.outputs[0]
    small = (program.reduce is None and program.quiet and spec.shape.is_fully_defined()
             and math.prod(spec.shape.as_list()) <= 64)
    start = len(emitter.lines)
    if small:
        lines = program.expression_lines(params, result,
                                         lambda: emitter.namer.fresh(op.name + "_t"))
    else:
        block = emitter.namer.fresh("block_" + op.name)
        # parameters get their own names: the caller's may be globals or repeat
        inner = [f"a{i}" for i in range(program.n_inputs)]
        constants = [emitter.global_ref(array, "k") for _, array in program.constants()]
        lines = program.block_source(block, inner, constant_names=constants)
        engine = emitter.global_ref(run, "fused_run")
        prog = emitter.global_ref(program, "program_" + op.name)
        buffer = env[id(op.inputs[into])] if into is not None else "None"
        lines.append(f"{result} = {engine}({block}, {prog}, ({', '.join(params)},), {buffer})")
    # origins map assignment lines to the op: not the `def` (codegen marked our first
    # line) nor the block body, whose errors surface through the call line
    emitter.origins.pop(start + 2, None)
    for k, line in enumerate(lines):
        emitter.lines.append(indent + line)
        if " = " in line and not line.startswith((" ", "def ")):
            emitter.origins[start + k + 2] = op
    env[id(op.outputs[0])] = result


FUSED = defop("FusedElementwise", shape=_fused_rule, kernel=_fused_kernel, same_dtype=False)
FUSED.codegen = _fused_codegen
