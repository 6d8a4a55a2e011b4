"""keras.ops' products and differences: matmul, dot, einsum, tensordot, kron, cross, and the
1-D signal helpers (diff, trapezoid, correlate, corrcoef)."""
from __future__ import annotations

from typing import Any

import kilnflow as kf
from kilnflow.keras.ops.convert import promote, to_float, to_tensor

_SMALL = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int32"}


def _pair(x1: Any, x2: Any) -> Any:
    a, b = promote(x1, x2)
    wide = _SMALL.get(a.dtype.name)
    return (kf.cast(a, wide), kf.cast(b, wide)) if wide else (a, b)


def matmul(x1: Any, x2: Any) -> Any:
    """Matrix product with NumPy's rules for 1-D operands (int8/int16 give int32; bool and
    unsigned products are computed in int32 and keep their dtype, as in Keras)."""
    dt = promote(x1, x2)[0].dtype.name
    out = _matmul(*_pair(x1, x2))
    if dt in ("bool", "uint8", "uint16"):
        return kf.cast(kf.not_equal(out, 0), "bool") if dt == "bool" else kf.cast(out, dt)
    return out


def _matmul(a: Any, b: Any) -> Any:
    if a.shape.rank == 1 and b.shape.rank == 1:
        return kf.reduce_sum(a * b)
    if a.shape.rank == 1:
        return kf.squeeze(kf.matmul(kf.expand_dims(a, 0), b), [-2])
    if b.shape.rank == 1:
        return kf.squeeze(kf.matmul(a, kf.expand_dims(b, -1)), [-1])
    return kf.matmul(a, b)


def dot(x1: Any, x2: Any) -> Any:
    """NumPy's dot: products of scalars, inner products of vectors, sums over x1's last axis
    and x2's second-to-last axis otherwise."""
    a, b = _pair(x1, x2)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    if b.shape.rank == 1:
        return kf.tensordot(a, b, [[a.shape.rank - 1], [0]])
    return kf.tensordot(a, b, [[a.shape.rank - 1], [b.shape.rank - 2]])


def vdot(x1: Any, x2: Any) -> Any:
    """Dot product of the flattened inputs (x1 conjugated)."""
    a, b = _pair(x1, x2)
    if a.dtype.is_complex:
        a = kf.math.conj(a)
    return kf.reduce_sum(kf.reshape(a, [-1]) * kf.reshape(b, [-1]))


def inner(x1: Any, x2: Any) -> Any:
    """Sum product over the last axes."""
    a, b = _pair(x1, x2)
    if a.shape.rank == 0 or b.shape.rank == 0:
        return a * b
    return kf.tensordot(a, b, [[a.shape.rank - 1], [b.shape.rank - 1]])


def outer(x1: Any, x2: Any) -> Any:
    """Outer product of the flattened inputs."""
    a, b = promote(x1, x2)
    return kf.reshape(a, [-1, 1]) * kf.reshape(b, [1, -1])


def tensordot(x1: Any, x2: Any, axes: Any = 2) -> Any:
    a, b = _pair(x1, x2)
    return kf.tensordot(a, b, axes)


def einsum(subscripts: str, *operands: Any, **kwargs: Any) -> Any:
    """Einstein summation over the operands (one common dtype; int8 gives int32). A letter
    repeated within one operand ('ii->i') takes that operand's diagonal first, so the
    gradient is the plain einsum's."""
    ops = promote(*operands)
    wide = _SMALL.get(ops[0].dtype.name)
    if wide:
        ops = [kf.cast(o, wide) for o in ops]
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    terms = lhs.split(",")
    if "." not in spec:
        if not arrow:  # NumPy's implicit output: letters used once overall, sorted
            arrow, rhs = "->", "".join(sorted(c for c in set(lhs) if c.isalpha() and
                                              lhs.count(c) == 1))
        for i, term in enumerate(terms):
            terms[i], ops[i] = _diagonals(term, ops[i])
    return kf.einsum(",".join(terms) + arrow + rhs, *ops)


def _diagonals(term: str, x: Any) -> tuple:
    """(term without repeated letters, x with the repeated axes reduced to diagonals)."""
    while len(set(term)) < len(term):
        letter = next(c for c in term if term.count(c) > 1)
        first = term.index(letter)
        second = term.index(letter, first + 1)
        rest = [i for i in range(len(term)) if i not in (first, second)]
        x = kf.linalg.diag_part(kf.transpose(x, rest + [first, second]))
        term = "".join(term[i] for i in rest) + letter
    return term, x


def kron(x1: Any, x2: Any) -> Any:
    """Kronecker product: blocks of x2 scaled by x1's entries."""
    a, b = promote(x1, x2)
    nd = max(a.shape.rank, b.shape.rank)
    a = kf.reshape(a, [1] * (nd - a.shape.rank) + a.shape.as_list())
    b = kf.reshape(b, [1] * (nd - b.shape.rank) + b.shape.as_list())
    sa, sb = a.shape.as_list(), b.shape.as_list()
    ia, ib = [], []
    for d1, d2 in zip(sa, sb):
        ia += [d1, 1]
        ib += [1, d2]
    prod = kf.reshape(a, ia) * kf.reshape(b, ib)
    return kf.reshape(prod, [d1 * d2 for d1, d2 in zip(sa, sb)])


def cross(x1: Any, x2: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: Any = None) -> Any:
    """Cross product of 3-vectors (2-vectors count as z = 0) along the given axes."""
    from kilnflow.keras.ops.numpy_array import moveaxis
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(x1, x2)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    two = a.shape.as_list()[-1] == 2 and b.shape.as_list()[-1] == 2
    if a.shape.as_list()[-1] == 2:
        a = kf.pad(a, [[0, 0]] * (a.shape.rank - 1) + [[0, 1]])
    if b.shape.as_list()[-1] == 2:
        b = kf.pad(b, [[0, 0]] * (b.shape.rank - 1) + [[0, 1]])
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    z = a0 * b1 - a1 * b0
    if two:
        return z
    return moveaxis(kf.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], -1), -1, axisc)


def diff(a: Any, n: int = 1, axis: int = -1) -> Any:
    """The n-th discrete difference along `axis`."""
    x = to_tensor(a)
    ax = axis % x.shape.rank
    for _ in range(n):
        hi = [slice(None)] * ax + [slice(1, None)]
        lo = [slice(None)] * ax + [slice(None, -1)]
        x = x[tuple(hi)] - x[tuple(lo)]
    return x


def trapezoid(y: Any, x: Any = None, dx: float = 1.0, axis: int = -1) -> Any:
    """The trapezoidal rule along `axis` (sample points x, or spacing dx)."""
    y = to_float(y)
    ax = axis % y.shape.rank
    hi = y[tuple([slice(None)] * ax + [slice(1, None)])]
    lo = y[tuple([slice(None)] * ax + [slice(None, -1)])]
    if x is None:
        d = kf.cast(dx, y.dtype)
    else:
        d = diff(to_tensor(x, y.dtype.name), axis=-1 if to_tensor(x).shape.rank == 1 else ax)
        if d.shape.rank == 1:
            d = kf.reshape(d, [-1] + [1] * (y.shape.rank - 1 - ax))
    return kf.reduce_sum(d * (hi + lo) / 2.0, axis=ax)


def correlate(x1: Any, x2: Any, mode: str = "valid") -> Any:
    """Cross-correlation of two 1-D sequences, NumPy's modes 'valid', 'same', 'full'."""
    a, v = promote(x1, x2, dtype=to_float(x1).dtype.name)
    m = v.shape.as_list()[0]
    if mode == "full":
        a = kf.pad(a, [[m - 1, m - 1]])
    elif mode == "same":
        a = kf.pad(a, [[m // 2, m - 1 - m // 2]])
    elif mode != "valid":
        raise ValueError(f"correlate: mode must be 'valid', 'same' or 'full', got {mode!r}")
    frames = kf.signal.frame(a, m, 1)
    return kf.linalg.matvec(frames, v)


def corrcoef(x: Any) -> Any:
    """Pearson correlation coefficients between the rows of x."""
    x = to_float(x)
    x = kf.reshape(x, [1, -1]) if x.shape.rank == 1 else x
    c = x - kf.reduce_mean(x, axis=1, keepdims=True)
    cov = kf.matmul(c, c, transpose_b=True)
    d = kf.sqrt(kf.linalg.diag_part(cov))
    out = cov / (kf.reshape(d, [-1, 1]) * kf.reshape(d, [1, -1]))
    return kf.clip_by_value(out, -1.0, 1.0)


__all__ = [
    "corrcoef", "correlate", "cross", "diff", "dot", "einsum", "inner", "kron", "matmul",
    "outer", "tensordot", "trapezoid", "vdot",
]
