"""FusedElementwise groups as numba loops: one pass over the elements, no temporaries.

Each program step becomes one scalar statement pinned to the step's dtype (so float32
stays float32 and int32 wraps as NumPy's does). A group of scalars is emitted inline in
the graph function; a group over arrays becomes a helper that flattens its inputs
(broadcasting when shapes differ) and runs a loop, in parallel with `prange` for large
inputs. A final reduction over all axes is accumulated inside the loop; one over some
axes reduces the loop's values with the row helpers. Reads the program's fields only.
"""
from __future__ import annotations

import math
from typing import Any, List, Sequence, Tuple

import numpy as np

PARALLEL_MIN = 1 << 20   # elements: below this waking threads costs more than they save
_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/",
              "power": "**", "bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^",
              "left_shift": "<<", "right_shift": ">>", "less": "<", "less_equal": "<=",
              "greater": ">", "greater_equal": ">=", "equal": "==", "not_equal": "!="}
_ACCUMULATE = {"sum": "{acc} + {v}", "mean": "{acc} + {v}", "prod": "{acc} * {v}",
               "max": "{v} if ({v} > {acc} or {v} != {v}) else {acc}",
               "min": "{v} if ({v} < {acc} or {v} != {v}) else {acc}",
               "any": "{acc} or {v}", "all": "{acc} and {v}"}
_START = {"sum": "0", "mean": "0", "prod": "1", "any": "False", "all": "True"}


def _ref_dtype(program: Any, ref: tuple) -> str:
    kind, value = ref
    if kind == "in":
        return program.input_dtypes[value]
    if kind == "step":
        return program.steps[value].dtype
    if kind == "const":
        return np.dtype(value[1]).str
    return ""


def step_lines(program: Any, inputs: Sequence[str], prefix: str) -> Tuple[List[str], str]:
    """Scalar statements computing the program's values; returns (lines, root text)."""
    from kilnflow.runtime.jit.lower import dtype_text, literal
    lines = []

    def text(ref: tuple, sibling_dtype: str) -> str:
        kind, value = ref
        if kind == "in":
            return inputs[value]
        if kind == "step":
            return f"{prefix}{value}"
        if kind == "const":
            return literal(value[0], value[1])
        return literal(value, sibling_dtype)  # a weak literal takes its operand's dtype

    for j, step in enumerate(program.steps):
        typed = [_ref_dtype(program, a) for a in step.args if a[0] != "lit"]
        sibling = typed[0] if typed else step.dtype
        args = [text(a, sibling) for a in step.args]
        if step.fn == "cast":
            expression = args[0]
        elif step.fn == "where":
            expression = f"{args[1]} if {args[0]} else {args[2]}"
        elif step.fn in _OPERATORS:
            expression = f"{args[0]} {_OPERATORS[step.fn]} {args[1]}"
        elif step.fn == "tanh" and np.dtype(step.dtype) == np.float32:
            expression = f"kf_helpers.tanh_f32({args[0]})"  # vectorizes; libm's does not
        elif step.fn == "negative":
            expression = f"-{args[0]}"
        else:
            expression = f"np.{step.fn}({', '.join(args)})"
        lines.append(f"{prefix}{j} = {dtype_text(step.dtype)}({expression})")
    root_kind, root = program.root
    return lines, (f"{prefix}{root}" if root_kind == "step" else inputs[root])


def emit(op: Any, args: Sequence[str], lo: Any, indent: str) -> str:
    """Lower one FusedElementwise op; returns the expression of its result."""
    from kilnflow.runtime.jit.lower import Unsupported
    program = op.attrs["program"]
    tensors = op.inputs[:program.n_inputs]
    args = list(args[:program.n_inputs])
    if any(np.dtype(d).kind not in "biufc" for d in program.input_dtypes):
        raise Unsupported("fused group over a dtype numba does not have")
    rank = max(t.shape.rank for t in tensors)
    if rank == 0:  # scalars: inline statements, nothing to loop over
        prefix = lo.namer.fresh(op.name + "_t")
        lines, root = step_lines(program, args, prefix)
        lo.lines.extend(indent + line for line in lines)
        return root  # a reduction of one value is that value (the caller pins its dtype)
    return _emit_helper(op, program, tensors, args, rank, lo, indent)


def _reduce_all(program: Any, rank: int) -> bool:
    if program.reduce is None:
        return False
    axes = program.reduce[1]
    return axes is None or set(axes) == set(range(rank))


def _emit_helper(op: Any, program: Any, tensors: Sequence, args: List[str], rank: int,
                 lo: Any, indent: str) -> str:
    from kilnflow.runtime.jit.lower import JIT_OPTIONS, dtype_text
    from kilnflow.runtime.jit.rules import reduce_text
    name = lo.namer.fresh("fused_" + op.name)
    arrays = [i for i, t in enumerate(tensors) if t.shape.rank > 0]
    params = [f"a{i}" for i in range(len(tensors))]
    values_dtype = program.steps[program.root[1]].dtype if program.root[0] == "step" \
        else program.input_dtypes[program.root[1]]
    reduce_all = _reduce_all(program, rank)
    static = [t.shape for t in tensors]
    values_shape = program.spec(static, values=True).shape
    size = math.prod(values_shape.as_list()) if values_shape.is_fully_defined() else None
    kinds = ["serial"]
    if (size is None or size >= lo.parallel_min) and (
            not reduce_all or program.reduce[0] in ("sum", "mean")):
        kinds.append("parallel")
    for kind in kinds:
        lo.helpers += _loop_source(f"{name}_{kind}", program, params, arrays, reduce_all,
                                   kind == "parallel", values_dtype) + [""]
    donor = lo.donors.get(id(op.outputs[0])) if not reduce_all else None
    signature = params + (["parallel"] if len(kinds) == 2 else []) + \
        (["donated"] if donor else [])
    body = [f"@numba.njit({JIT_OPTIONS})", f"def {name}({', '.join(signature)}):"]
    lines, flats = _flattened(tensors, rank)
    body += lines
    if not reduce_all:
        if donor:  # the caller's spare array of the right shape, else a new one
            body.append("    if donated.shape == shape:")
            body.append("        out = donated")
            body.append("    else:")
            body.append(f"        out = np.empty(shape, {dtype_text(values_dtype)})")
        else:
            body.append(f"    out = np.empty(shape, {dtype_text(values_dtype)})")
        target = "out.reshape(out.size)"
        call = "{fn}(" + ", ".join([target] + flats) + ")"
    else:
        body.append("    size = 1")
        body.append("    for d in shape:")
        body.append("        size *= d")
        call = "{fn}(" + ", ".join(["size"] + flats) + ")"
    result = "out" if not reduce_all else "total"
    assign = "" if not reduce_all else "total = "
    if len(kinds) == 2:
        count = "out.size" if not reduce_all else "size"
        # `parallel` comes from the caller: numba.get_num_threads() in here would make the
        # function uncacheable (a ctypes global)
        body.append(f"    if parallel and {count} >= {lo.parallel_min}:")
        body.append(f"        {assign}{call.format(fn=name + '_parallel')}")
        body.append("    else:")
        body.append(f"        {assign}{call.format(fn=name + '_serial')}")
    else:
        body.append(f"    {assign}{call.format(fn=name + '_serial')}")
    if reduce_all and program.reduce[0] == "mean":
        body.append("    total = total / size if size else np.nan")
    body.append(f"    return {result}")
    lo.helpers += body + [""]
    expression = f"{name}({', '.join(args + (['kf_parallel'] if len(kinds) == 2 else []) + ([donor] if donor else []))})"
    if program.reduce is None:
        return expression
    kind, axes, keepdims = program.reduce
    if reduce_all:
        if keepdims:
            return f"np.full({(1,) * rank!r}, {expression}, {dtype_text(program.dtype)})"
        return expression
    values = lo.namer.fresh(op.name + "_values")
    lo.lines.append(f"{indent}{values} = {expression}")
    return reduce_text(kind, values, rank, tuple(axes), keepdims, program.dtype)


def _flattened(tensors: Sequence, rank: int) -> Tuple[List[str], List[str]]:
    """Helper lines flattening parameters a0, a1... to `shape`, their broadcast shape, and
    the name standing for each (f<i> for an array, a<i> itself for a scalar)."""
    shapes = [f"a{i}.shape" for i, t in enumerate(tensors) if t.shape.rank > 0]
    lines = [f"    shape = np.broadcast_shapes({', '.join(shapes)})" if len(shapes) > 1
             else f"    shape = {shapes[0]}"]
    flats = []
    for i, t in enumerate(tensors):
        if t.shape.rank == 0:
            flats.append(f"a{i}")
        else:
            helper = "flat" if t.shape.rank == rank else "flat_broadcast"
            lines.append(f"    f{i} = kf_helpers.{helper}(a{i}, shape)")
            flats.append(f"f{i}")
    return lines, flats


def _loop_source(fn: str, program: Any, params: Sequence[str], arrays: Sequence[int],
                 reduce_all: bool, parallel: bool, values_dtype: str) -> List[str]:
    from kilnflow.runtime.jit.lower import JIT_OPTIONS, dtype_text
    options = JIT_OPTIONS + (", parallel=True" if parallel else "")
    first = "n" if reduce_all else "out"
    lines = [f"@numba.njit({options})", f"def {fn}({', '.join([first] + list(params))}):"]
    inner = "        "
    count = "n" if reduce_all else "out.size"
    loop = "prange" if parallel else "range"
    if reduce_all:
        kind = program.reduce[0]
        start = _START.get(kind)
        if kind in ("sum", "mean"):  # floats accumulate in float64, integers in int64
            start = {"f": "0.0", "c": "0j"}.get(np.dtype(values_dtype).kind, "0")
        if start is None:  # max/min start from the first value, computed below
            start = f"{dtype_text(values_dtype)}(0)"
        lines.append(f"    acc = {start}")
        if kind in ("max", "min"):
            lines.append("    first = True")
    lines.append(f"    for i in {loop}({count}):")
    names = [f"a{i}[i]" if i in arrays else f"a{i}" for i in range(len(params))]
    steps, root = step_lines(program, names, "t")
    lines += [inner + line for line in steps]
    if not reduce_all:
        lines.append(f"{inner}out[i] = {root}")
        return lines
    kind = program.reduce[0]
    if kind in ("max", "min"):
        lines.append(f"{inner}if first:")
        lines.append(f"{inner}    acc = {root}")
        lines.append(f"{inner}    first = False")
        lines.append(f"{inner}else:")
        lines.append(f"{inner}    acc = " + _ACCUMULATE[kind].format(acc="acc", v=root))
    elif parallel:
        lines.append(f"{inner}acc += {root}")  # the form numba parallelises
    else:
        lines.append(f"{inner}acc = " + _ACCUMULATE[kind].format(acc="acc", v=root))
    lines.append("    return acc")
    return lines


# ---------------------------------------------------------------- one elementwise op, rank >= 3

LOOP_MIN_RANK = 3  # numba compiles array expressions over 3-D and 4-D arrays very slowly
_LOOPED_DTYPES = {"float32", "float64", "bool"}  # scalar math pins to these as arrays do


def loops_elementwise(op: Any) -> bool:
    """True when `op` is one elementwise op over float or bool arrays of rank >= 3, emitted
    as a flat loop: numba types a 4-D array expression for minutes, a loop in a second."""
    if len(op.outputs) != 1 or not op.inputs or op.outputs[0].shape.rank is None or \
            op.outputs[0].shape.rank < LOOP_MIN_RANK:
        return False
    tensors = list(op.inputs) + list(op.outputs)
    return all(t.shape.rank is not None and np.dtype(getattr(t.dtype, "as_numpy_dtype",
               t.dtype)).name in _LOOPED_DTYPES for t in tensors)


def emit_elementwise(op: Any, args: Sequence[str], lo: Any) -> Any:
    """A helper looping over the flattened (broadcast) inputs of one elementwise op (or
    AddN); returns the call's text, or None when the op has no scalar form."""
    from kilnflow.runtime.jit.lower import JIT_OPTIONS, dtype_text
    from kilnflow.runtime.jit.rules import element_expression
    rank = op.outputs[0].shape.rank
    flatten, flats = _flattened(op.inputs, rank)
    element = element_expression(op, [f"{value}[i]" if t.shape.rank else value
                                      for value, t in zip(flats, op.inputs)])
    if element is None:
        return None
    out_dtype = dtype_text(op.outputs[0].dtype)
    key = (element, tuple(t.shape.rank for t in op.inputs), out_dtype)
    if key in lo.loops:  # the same op over the same ranks: one helper, compiled once
        return f"{lo.loops[key]}({', '.join(args)})"
    name = lo.loops[key] = lo.namer.fresh("loop_" + op.type)
    params = [f"a{i}" for i in range(len(op.inputs))]
    body = [f"@numba.njit({JIT_OPTIONS})", f"def {name}({', '.join(params)}):"] + flatten
    body += [f"    out = np.empty(shape, {out_dtype})",
             "    flat_out = out.reshape(out.size)",
             "    for i in range(flat_out.size):",
             f"        flat_out[i] = {out_dtype}({element})",
             "    return out", ""]
    lo.helpers += body
    return f"{name}({', '.join(args)})"
