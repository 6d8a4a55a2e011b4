"""Linear algebra: matmul (BLAS through NumPy), einsum and tensordot. Each op is one defop()
beside its public function.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, reshaping
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor
from kilnflow.ops.math import NUMERIC


# ---------------------------------------------------------------- matmul and einsum

def _matmul_rule(a: Any, b: Any, *, transpose_a: bool, transpose_b: bool) -> TensorSpec:
    if a.shape.rank is None or b.shape.rank is None:
        return TensorSpec(None, a.dtype)
    if a.shape.rank < 2 or b.shape.rank < 2:
        raise ValueError(f"In[0] and In[1] must have rank >= 2, got shapes {a.shape} and "
                         f"{b.shape}")
    m, k = a.shape[-2:].as_list()[::-1] if transpose_a else a.shape[-2:].as_list()
    k2, n = b.shape[-2:].as_list()[::-1] if transpose_b else b.shape[-2:].as_list()
    if k is not None and k2 is not None and k != k2:
        raise ValueError(f"Matrix size-incompatible: In[0]: {a.shape.as_list()}, In[1]: "
                         f"{b.shape.as_list()}")
    from kilnflow.shapes import broadcast_shapes
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return TensorSpec(batch.concatenate([m, n]), a.dtype)


def _matmul_kernel(a: Any, b: Any, *, transpose_a: bool, transpose_b: bool) -> Any:
    if a.ndim < 2 or b.ndim < 2:  # np.matmul would accept vectors; TF does not
        raise ValueError("matmul needs inputs of rank >= 2")
    return (a.mT if transpose_a else a) @ (b.mT if transpose_b else b)


def _matmul_inline(op: Any) -> Optional[str]:
    """`a @ b.mT` in generated code once both ranks are known to be >= 2."""
    if any(t.shape.rank is None or t.shape.rank < 2 for t in op.inputs):
        return None
    a = "{0}.mT" if op.attrs["transpose_a"] else "{0}"
    b = "{1}.mT" if op.attrs["transpose_b"] else "{1}"
    return f"{a} @ {b}"


def _matmul_grad(op: Any, dy: Any) -> list:
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        return [matmul(dy, b, transpose_b=True), matmul(a, dy, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, dy, transpose_b=True), matmul(a, dy)]
    if not ta and tb:
        return [matmul(dy, b), matmul(dy, a, transpose_a=True)]
    return [matmul(b, dy, transpose_a=True, transpose_b=True),
            matmul(dy, a, transpose_a=True, transpose_b=True)]


MATMUL = defop("MatMul", shape=_matmul_rule, kernel=_matmul_kernel, grad=_matmul_grad,
               dtypes=NUMERIC, transpose_flags=("transpose_a", "transpose_b"),
               inline=_matmul_inline, fresh_output=True)


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False,
           name: Optional[str] = None) -> Tensor:
    """Matrix product of the last two dims of a and b (batched over leading dims).

    >>> import kilnflow as kf
    >>> kf.matmul(kf.constant([[1., 2.]]), kf.constant([[3.], [4.]])).numpy().tolist()
    [[11.0]]
    """
    a, b = binary(a, b)
    return bind(MATMUL, (a, b), {"transpose_a": bool(transpose_a),
                                 "transpose_b": bool(transpose_b)}, name=name)


def _einsum_parse(equation: str, count: int) -> tuple:
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, out = equation.split("->")
    else:
        lhs = equation
        letters = lhs.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    if len(terms) != count:
        raise ValueError(f"einsum: equation {equation!r} names {len(terms)} operands, "
                         f"got {count}")
    if "." in equation:
        raise ValueError("einsum: ellipsis ('...') is not supported")
    return terms, out


def _einsum_rule(*xs: Any, equation: str) -> TensorSpec:
    terms, out = _einsum_parse(equation, len(xs))
    sizes: dict = {}
    for term, x in zip(terms, xs):
        if x.shape.rank is not None and x.shape.rank != len(term):
            raise ValueError(f"einsum: operand with subscripts {term!r} has rank "
                             f"{x.shape.rank}")
        dims = x.shape.as_list() if x.shape.rank is not None else [None] * len(term)
        for c, d in zip(term, dims):
            if d is not None and sizes.get(c) not in (None, d) and d != 1 and sizes[c] != 1:
                raise ValueError(f"einsum: dimension {c!r} is {sizes[c]} in one operand and "
                                 f"{d} in another")
            if d is not None and (sizes.get(c) in (None, 1)):
                sizes[c] = d
    return TensorSpec([sizes.get(c) for c in out], xs[0].dtype)


def _einsum_grad(op: Any, dy: Any) -> list:
    terms, out = _einsum_parse(op.attrs["equation"], len(op.inputs))
    grads = []
    for i, (term, x) in enumerate(zip(terms, op.inputs)):
        others = [(t, v) for j, (t, v) in enumerate(zip(terms, op.inputs)) if j != i]
        available = set(out).union(*[set(t) for t, _ in others])
        kept = "".join(c for c in term if c in available)
        if len(set(term)) != len(term):
            raise NotImplementedError("einsum gradient with a repeated index in one operand")
        equation = ",".join([out] + [t for t, _ in others]) + "->" + kept
        g = einsum(equation, dy, *[v for _, v in others])
        if kept != term:  # indices summed out of x alone: broadcast back over them
            for position, c in enumerate(term):
                if c not in kept:
                    g = reshaping.expand_dims(g, position)
            target = x.shape.as_list() if x.shape.is_fully_defined() else array.shape(x)
            g = reshaping.broadcast_to(g, target)
        grads.append(g)
    return grads


EINSUM = defop("Einsum", shape=_einsum_rule, kernel=lambda *xs, equation: np.einsum(
    equation, *xs), grad=_einsum_grad, dtypes=NUMERIC)


def einsum(equation: str, *inputs: Any, name: Optional[str] = None) -> Tensor:
    """Tensor contraction in Einstein notation, e.g. einsum('ij,jk->ik', a, b)."""
    tensors = [convert_to_tensor(x) for x in inputs]
    return bind(EINSUM, tensors, {"equation": equation.replace(" ", "")}, name=name)


def tensordot(a: Any, b: Any, axes: Any, name: Optional[str] = None) -> Tensor:
    """Contracts `axes` of a with `axes` of b (an int N means the last N of a, first N of b).

    With known shapes it is a transpose + reshape + one matmul (BLAS); otherwise an einsum.
    """
    a, b = binary(a, b)
    ra, rb = a.shape.rank, b.shape.rank
    if ra is None or rb is None:
        raise ValueError("tensordot needs inputs of known rank")
    if isinstance(axes, int):
        axes_a, axes_b = list(range(ra - axes, ra)), list(range(axes))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if isinstance(axes_a, int) else list(axes_a)
        axes_b = [axes_b] if isinstance(axes_b, int) else list(axes_b)
    axes_a = [x % ra for x in axes_a] if ra else axes_a
    axes_b = [x % rb for x in axes_b] if rb else axes_b
    free_a = [i for i in range(ra) if i not in axes_a]
    free_b = [j for j in range(rb) if j not in axes_b]
    if a.shape.is_fully_defined() and b.shape.is_fully_defined():
        da, db = a.shape.as_list(), b.shape.as_list()
        size = 1
        for i in axes_a:
            size *= da[i]
        left = reshaping.reshape(reshaping.transpose(a, free_a + axes_a) if free_a + axes_a !=
                             list(range(ra)) else a, [-1, size])
        right = reshaping.reshape(reshaping.transpose(b, axes_b + free_b) if axes_b + free_b !=
                              list(range(rb)) else b, [size, -1])
        out = matmul(left, right)
        return reshaping.reshape(out, [da[i] for i in free_a] + [db[j] for j in free_b],
                             name=name)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    sa = list(letters[:ra])
    sb = list(letters[ra:ra + rb])
    for i, j in zip(axes_a, axes_b):
        sb[j] = sa[i]
    out = [sa[i] for i in free_a] + [sb[j] for j in free_b]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b, name=name)
