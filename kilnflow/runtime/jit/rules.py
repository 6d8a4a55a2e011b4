"""Per-op lowering rules of the jit backend: an op's node -> a numba expression.

Elementwise ops need no rule: their `fusable` template (or a bare NumPy ufunc kernel) is
rewritten into numba source, with every numeric literal typed like the op's first input.
The table below covers ops whose kernels are not one expression (reductions, matmul,
shape ops, softmax...). A rule returns the expression, an Alias (the output is an input),
or None when this node cannot be lowered (an attr value it does not handle).
Reads op types and attrs as data; never imports ops/.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from kilnflow.runtime.jit import indexing
from kilnflow.runtime.jit import random_ops
from kilnflow.runtime.jit import array_ops
from kilnflow.runtime.jit import conv

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


class Alias:
    """The op's output is its input number `index` (Identity)."""

    def __init__(self, index: int) -> None:
        self.index = index


def _np(kind: Any) -> str:
    from kilnflow.runtime.jit.lower import dtype_text
    return dtype_text(kind)


def _literal(value: Any, dtype: Any) -> str:
    from kilnflow.runtime.jit.lower import literal
    return literal(value, dtype)


# ---------------------------------------------------------------- elementwise templates

class _Template(ast.NodeTransformer):
    """`{0} * 2` -> `x * np.float32(2.0)`; `maximum(...)` -> `np.maximum(...)`."""

    def __init__(self, args: Sequence[str], attrs: dict, dtype: Any) -> None:
        self.args = args
        self.attrs = attrs
        self.dtype = dtype
        self.ok = True

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id.startswith("_in"):
            return ast.Name(id=self.args[int(node.id[3:])], ctx=ast.Load())
        if node.id.startswith("_at_"):
            value = self.attrs.get(node.id[4:])
            if not isinstance(value, (bool, int, float)):
                self.ok = False
                return node
            return ast.parse(_literal(value, self.dtype), mode="eval").body
        self.ok = False
        return node

    def visit_Constant(self, node: ast.Constant) -> Any:
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            return node
        return ast.parse(_literal(node.value, self.dtype), mode="eval").body

    def visit_Call(self, node: ast.Call) -> Any:
        if not isinstance(node.func, ast.Name) or node.keywords:
            self.ok = False
            return node
        name = "absolute" if node.func.id == "abs" else node.func.id
        if not hasattr(np, name):
            self.ok = False
            return node
        node.args = [self.visit(a) for a in node.args]
        node.func = ast.Attribute(value=ast.Name(id="np", ctx=ast.Load()), attr=name,
                                  ctx=ast.Load())
        return node

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        self.ok = False  # `.astype(...)` and friends have rules of their own
        return node


def template_expression(op: Any, args: Sequence[str], scalar: bool = False) -> Optional[str]:
    """The op's fusable template (or ufunc kernel) as numba source, or None. `scalar`: the
    args are scalars (one element of each input), whatever the op's output rank."""
    opdef = op.opdef
    template = opdef.fusable
    if template is None:
        kernel = opdef.kernel
        if isinstance(kernel, np.ufunc) and not op.attrs and kernel.nin == len(args):
            return f"np.{kernel.__name__}({', '.join(args)})"
        return None
    text = _PLACEHOLDER.sub(lambda m: ("_in" if m.group(1).isdigit() else "_at_") +
                            m.group(1), template)
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    if (scalar or op.outputs and op.outputs[0].shape.rank == 0) and \
            isinstance(tree.body, ast.Call) and \
            getattr(tree.body.func, "id", "") == "where":
        # scalars: np.where would give a 0-d array; a conditional expression is the same
        c, x, y = tree.body.args
        tree.body = ast.IfExp(test=c, body=x, orelse=y)
    dtype = op.inputs[0].dtype if op.inputs else op.outputs[0].dtype
    if op.type == "SelectV2":
        dtype = op.inputs[1].dtype
    rewriter = _Template(args, op.attrs, dtype)
    tree = rewriter.visit(tree)
    if not rewriter.ok:
        return None
    return ast.unparse(ast.fix_missing_locations(tree))


# ---------------------------------------------------------------- reductions

def _axes(axis: Any, rank: int) -> tuple:
    if axis is None:
        return tuple(range(rank))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(sorted({int(a) % rank for a in axes})) if rank else ()


def reduce_text(kind: str, x: str, rank: int, axes: tuple, keepdims: bool, dtype: Any) -> str:
    """`x` reduced over `axes` with the row helper of `kind`: transpose the reduced axes
    last, view as (kept, reduced) rows, reduce each row, reshape to the kept dims."""
    kept = [d for d in range(rank) if d not in axes]
    if kind == "sum" and kept and axes == tuple(range(len(axes))):  # leading axes: by columns
        reduced = " * ".join(f"{x}.shape[{d}]" for d in axes)
        kept_size = " * ".join(f"{x}.shape[{d}]" for d in kept)
        dims = ["1"] * len(axes) if keepdims else []
        shape = ", ".join(dims + [f"{x}.shape[{d}]" for d in kept])
        return (f"kf_helpers.columns_sum(np.ascontiguousarray({x}).reshape(({reduced}, "
                f"{kept_size}))).astype({_np(dtype)}).reshape(({shape},))")
    order = tuple(kept + list(axes))
    moved = x if order == tuple(range(rank)) else f"{x}.transpose({order!r})"
    kept_size = " * ".join(f"{x}.shape[{d}]" for d in kept) or "1"
    reduced_size = " * ".join(f"{x}.shape[{d}]" for d in axes) or "1"
    rows = f"np.ascontiguousarray({moved}).reshape(({kept_size}, {reduced_size}))"
    reduced = f"kf_helpers.rows_{kind}({rows})"
    out_dtype = _np(dtype)
    if keepdims:
        dims = [f"{x}.shape[{d}]" if d in kept else "1" for d in range(rank)]
        shape = f"({', '.join(dims)},)"
    else:
        dims = [f"{x}.shape[{d}]" for d in kept]
        shape = f"({', '.join(dims)},)" if dims else None
    if shape is None:  # a scalar result
        return f"{reduced}[0]"
    return f"{reduced}.astype({out_dtype}).reshape({shape})"


def _reduction(kind: str) -> Callable:
    def rule(op: Any, args: List[str]) -> Optional[str]:
        x = op.inputs[0]
        rank = x.shape.rank
        if rank == 0:
            return args[0]
        axes = _axes(op.attrs.get("axis"), rank)
        return reduce_text(kind, args[0], rank, axes, bool(op.attrs.get("keepdims")),
                           op.outputs[0].dtype)
    return rule


# ---------------------------------------------------------------- the table

def _cast(op: Any, args: List[str]) -> str:
    target = _np(op.attrs["dtype"])
    return args[0] if op.inputs[0].shape.rank == 0 else f"{args[0]}.astype({target})"


def matmul_text(x: str, y: str, ta: bool, tb: bool, dtype: Any, lo: Any) -> str:
    """`x @ y` (transposed as flagged) of 2-D floating matrices: NumPy's own BLAS where
    blas.py can reach it (the generated code says which path, so the disk cache keys on
    it), else numba's np.dot (SciPy's BLAS). Operands are made C-contiguous (free when
    they already are); a transpose is a BLAS flag, never a copy."""
    from kilnflow.runtime.jit import blas
    kind = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
    x, y = f"np.ascontiguousarray({x})", f"np.ascontiguousarray({y})"
    if kind in (np.float32, np.float64) and blas.available():
        lo.uses_blas = True
        return f"kf_helpers.matmul_f{kind.itemsize * 8}({x}, {y}, {ta}, {tb})"
    return f"np.dot({x}{'.T' if ta else ''}, {y}{'.T' if tb else ''})"


def _matmul(op: Any, args: List[str], lo: Any) -> Optional[str]:
    a, b = op.inputs
    if a.shape.rank != 2 or b.shape.rank != 2 or np.dtype(
            a.dtype.as_numpy_dtype).kind not in "fc":
        return None  # numba's np.dot: 2-D floating only
    tb = bool(op.attrs.get("transpose_b"))
    y = lo.transposed.get(args[1]) if tb else None  # W^T hoisted before a loop
    return matmul_text(args[0], y or args[1], bool(op.attrs.get("transpose_a")),
                       tb and y is None, a.dtype, lo)


def _shape_tuple(dims: Sequence[str]) -> str:
    return f"({', '.join(dims)},)" if dims else "()"


def _reshape_to(op: Any, x: str, dims: Sequence[str]) -> str:
    if op.inputs[0].shape.rank == 0:
        return f"np.full({_shape_tuple(dims)}, {x})"
    if not dims:  # to a scalar
        return f"np.ascontiguousarray({x}).reshape(1)[0]"
    return f"np.ascontiguousarray({x}).reshape({_shape_tuple(dims)})"


def _reshape(op: Any, args: List[str]) -> Optional[str]:
    shape = op.attrs.get("shape")
    if not isinstance(shape, tuple) or any(not isinstance(d, int) for d in shape):
        return None
    return _reshape_to(op, args[0], [str(d) for d in shape])


def _dynamic_reshape(op: Any, args: List[str]) -> Optional[str]:
    """Reshape to a shape tensor of static length (the output's rank); numba's reshape
    takes one -1 as NumPy's does."""
    rank = op.outputs[0].shape.rank
    if rank is None:
        return None
    return _reshape_to(op, args[0], [f"np.intp({args[1]}[{d}])" for d in range(rank)])


def _expand_dims(op: Any, args: List[str]) -> str:
    rank = op.inputs[0].shape.rank
    axis = op.attrs["axis"] % (rank + 1)
    dims = [f"{args[0]}.shape[{d}]" for d in range(rank)]
    dims.insert(axis, "1")
    return _reshape_to(op, args[0], dims)


def _squeeze(op: Any, args: List[str]) -> Optional[str]:
    shape = op.inputs[0].shape
    axis = op.attrs.get("axis")
    if axis:
        dropped = {a % shape.rank for a in axis}
    else:
        if any(d is None for d in shape.as_list()):
            return None
        dropped = {i for i, d in enumerate(shape.as_list()) if d == 1}
    dims = [f"{args[0]}.shape[{d}]" for d in range(shape.rank) if d not in dropped]
    return _reshape_to(op, args[0], dims)


def _transpose(op: Any, args: List[str]) -> str:
    perm = tuple(int(p) for p in op.attrs["perm"])
    return f"{args[0]}.transpose({perm!r})" if len(perm) > 1 else args[0]


def _concat(op: Any, args: List[str]) -> Optional[str]:
    rank = op.outputs[0].shape.rank
    if rank == 0 or any(t.shape.rank == 0 for t in op.inputs):
        return None
    axis = op.attrs["axis"] % rank
    return f"np.concatenate(({', '.join(args)},), axis={axis})"


def _pack(op: Any, args: List[str]) -> Optional[str]:
    rank = op.outputs[0].shape.rank
    axis = op.attrs["axis"] % rank
    if op.inputs and op.inputs[0].shape.rank == 0:
        return f"np.array([{', '.join(args)}], dtype={_np(op.outputs[0].dtype)})"
    return f"np.stack(({', '.join(args)},), axis={axis})"


def _fill(op: Any, args: List[str]) -> Optional[str]:
    shape = op.attrs.get("shape")
    if not isinstance(shape, tuple):
        return None
    value = _literal(op.attrs["value"], op.attrs["dtype"])
    return value if not shape else f"np.full({shape!r}, {value})"


def _softmax(op: Any, args: List[str]) -> Optional[str]:
    rank = op.inputs[0].shape.rank
    if op.attrs.get("axis", -1) % rank != rank - 1:
        return None
    x = args[0]
    rows = " * ".join(f"{x}.shape[{d}]" for d in range(rank - 1)) or "1"
    return (f"kf_helpers.softmax_rows(np.ascontiguousarray({x}).reshape(({rows}, "
            f"{x}.shape[{rank - 1}]))).reshape({x}.shape)")


def _sparse_xent(op: Any, args: List[str]) -> Optional[str]:
    if op.inputs[0].shape.rank != 2:
        return None
    return f"kf_helpers.sparse_softmax_cross_entropy(np.ascontiguousarray({args[0]}), " \
           f"{args[1]})"


def _sum_to_shape(op: Any, args: List[str]) -> Optional[str]:
    """A gradient summed back to an input's shape (undoing broadcasting), when both static
    shapes are known."""
    src, dst = op.inputs[0].shape, op.outputs[0].shape
    if src.rank is not None and dst.rank is not None and not dst.is_fully_defined():
        return array_ops.sum_to_dynamic_shape(op, args)  # a target known when run
    if src.rank is None or not dst.is_fully_defined() or src.rank < dst.rank:
        return None
    # an unknown source dim under a 1 of dst is summed too (a no-op when it is 1 as well)
    src, dst = src.as_list(), dst.as_list()
    lead = len(src) - len(dst)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(dst)
                                      if d == 1 and src[lead + i] != 1)
    if not axes:
        return args[0] if None not in src else \
            f"np.ascontiguousarray({args[0]}).reshape({tuple(dst)!r})"
    summed = reduce_text("sum", args[0], len(src), axes, False, op.outputs[0].dtype)
    return f"np.ascontiguousarray({summed}).reshape({tuple(dst)!r})" if dst else summed


def _broadcast_to(op: Any, args: List[str]) -> Optional[str]:
    rank = op.outputs[0].shape.rank
    if op.type == "BroadcastTo":
        shape = op.attrs.get("shape")
        if not isinstance(shape, tuple) or any(not isinstance(d, int) for d in shape):
            return None
        dims = [str(d) for d in shape]
    else:  # DynamicBroadcastTo: the shape is a tensor of static length
        dims = [f"np.intp({args[1]}[{d}])" for d in range(rank)]
    if op.inputs[0].shape.rank == 0:
        return f"np.full({_shape_tuple(dims)}, {args[0]})" if dims else args[0]
    return f"np.broadcast_to({args[0]}, {_shape_tuple(dims)})"


def _erf(op: Any, args: List[str]) -> Optional[str]:
    if np.dtype(op.inputs[0].dtype.as_numpy_dtype).kind != "f":
        return None
    rank0 = op.inputs[0].shape.rank == 0
    return f"kf_helpers.erf{'_scalar' if rank0 else ''}({args[0]})"


def _add_n(op: Any, args: List[str]) -> str:
    return " + ".join(args)


def _shape(op: Any, args: List[str]) -> str:
    rank = op.inputs[0].shape.rank
    dims = ", ".join(f"{args[0]}.shape[{d}]" for d in range(rank))
    return f"np.array([{dims}], dtype={_np(op.attrs['out_type'])})" if rank else \
        f"np.zeros(0, {_np(op.attrs['out_type'])})"


RULES: Dict[str, Callable[[Any, List[str]], Optional[str]]] = {
    "Cast": _cast, "Reshape": _reshape, "DynamicReshape": _dynamic_reshape,
    "ExpandDims": _expand_dims,
    "Squeeze": _squeeze, "Transpose": _transpose, "ConcatV2": _concat, "Pack": _pack,
    "Fill": _fill, "Softmax": _softmax, "SparseSoftmaxCrossEntropyWithLogits": _sparse_xent,
    "SumToShape": _sum_to_shape, "AddN": _add_n,
    "Shape": _shape, "Erf": _erf, "BroadcastTo": _broadcast_to, "DynamicBroadcastTo": _broadcast_to,
    "Sum": _reduction("sum"), "Mean": _reduction("mean"), "Prod": _reduction("prod"),
    "Max": _reduction("max"), "Min": _reduction("min"), "Any": _reduction("any"),
    "All": _reduction("all"), **indexing.RULES,
    **random_ops.RULES,
    **array_ops.RULES,
    **conv.RULES,
}
ALIASES = {"Identity", "StopGradient"}


def templated(op: Any) -> bool:
    """True when lower() takes `op`'s expression from its elementwise template."""
    return op.type not in ALIASES and op.type != "MatMul" and op.type not in RULES and \
        not (op.opdef.stateful or op.opdef.random or op.opdef.codegen is not None)


def element_expression(op: Any, names: Sequence[str]) -> Optional[str]:
    """`op` on one element of each input (`names` are scalars), or None: the body of a flat
    loop over an elementwise op (fused.emit_elementwise)."""
    if op.type == "AddN":
        return " + ".join(names)
    return template_expression(op, names, scalar=True) if templated(op) else None


def lower(op: Any, args: List[str], lo: Any) -> Any:
    """The expression computing `op` from the expressions `args`, an Alias, or None."""
    if op.type in ALIASES and len(op.inputs) == 1:
        return Alias(0)
    if op.type == "MatMul":
        return _matmul(op, args, lo)
    rule = RULES.get(op.type)
    if getattr(rule, "with_lowering", False):  # random_ops: a stream passed in and out
        return rule(op, args, lo)
    if rule is not None:
        return rule(op, args)
    if not templated(op):
        return None
    return template_expression(op, args)
