"""Linear algebra: matmul (BLAS through NumPy), einsum, tensordot, and matrix functions
(inverse, determinants, solves, Cholesky, diagonals and bands, QR, SVD, eigh) with
gradients where TF has them (QR, SVD and eigh have none yet). Each op is one defop()
beside its public function.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, reshaping
from kilnflow.ops.args import invalid_argument
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor
from kilnflow.ops.math import NUMERIC, conj_if_complex
from kilnflow.ops.math import abs as _abs
from kilnflow.ops.math import log as _log
from kilnflow.ops.math import pow as _pow
from kilnflow.ops.math import sqrt as _sqrt
from kilnflow.ops.reduction import reduce_max as _reduce_max
from kilnflow.ops.reduction import reduce_sum as _reduce_sum


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
    a, b = (conj_if_complex(x) for x in op.inputs)  # adjoints for complex, as TF
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


def _einsum_kernel(*xs: Any, equation: str) -> Any:
    if len(xs) == 2:
        product = _einsum_as_matmul(equation, xs[0], xs[1])
        if product is not None:
            return product
    return np.einsum(equation, *xs)


def _einsum_as_matmul(equation: str, a: Any, b: Any) -> Any:
    """A two-operand einsum whose indices are each batch (both operands and the output),
    contracted (both operands only) or free (one operand and the output) is one batched
    matmul: NumPy's einsum loops in C without BLAS, 10-50x slower on attention's shapes.
    None when the equation has another form (repeats, broadcasting, sums over one operand)."""
    (ta, tb), out = _einsum_parse(equation, 2)
    if len(set(ta)) != len(ta) or len(set(tb)) != len(tb) or len(set(out)) != len(out) or \
            a.dtype != b.dtype or a.dtype.kind not in "fc":
        return None
    batch = [c for c in out if c in ta and c in tb]
    contracted = [c for c in ta if c in tb and c not in out]
    free_a = [c for c in ta if c not in tb]
    free_b = [c for c in tb if c not in ta]
    if set(free_a + free_b) - set(out) or set(out) - set(batch + free_a + free_b):
        return None
    size = {c: n for term, x in ((ta, a), (tb, b)) for c, n in zip(term, x.shape)}
    if any(a.shape[ta.index(c)] != b.shape[tb.index(c)] for c in batch + contracted):
        return None  # broadcasting a size-1 dim: leave it to np.einsum
    count = [int(np.prod([size[c] for c in group], dtype=np.int64))
             for group in (batch, free_a, contracted, free_b)]
    left = a.transpose([ta.index(c) for c in batch + free_a + contracted]).reshape(
        count[0], count[1], count[2])
    right = b.transpose([tb.index(c) for c in batch + contracted + free_b]).reshape(
        count[0], count[2], count[3])
    product = np.matmul(left, right).reshape([size[c] for c in batch + free_a + free_b])
    order = batch + free_a + free_b
    return product.transpose([order.index(c) for c in out]).copy()


EINSUM = defop("Einsum", shape=_einsum_rule, kernel=_einsum_kernel, grad=_einsum_grad,
               dtypes=NUMERIC)


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
    if len(axes_a) != len(axes_b) or any(not -ra <= x < ra for x in axes_a) \
            or any(not -rb <= x < rb for x in axes_b):
        raise invalid_argument(f"tensordot: axes {axes!r} do not fit inputs of rank {ra} and "
                               f"{rb} (as many axes of `a` as of `b`, each within the rank)",
                               "MatMul")
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


# ---------------------------------------------------------------- matrix functions

def require_square(x: Any, op: str) -> None:
    """Matrix ops need [..., n, n] inputs (dims may be unknown)."""
    if x.shape.rank is not None:
        if x.shape.rank < 2:
            raise ValueError(f"{op}: input must have rank >= 2, got shape {x.shape}")
        m, n = x.shape.as_list()[-2:]
        if m is not None and n is not None and m != n:
            raise ValueError(f"{op}: input must be a square matrix, got shape {x.shape}")


def _square_rule(x: Any) -> TensorSpec:
    require_square(x, "matrix op")
    return TensorSpec(x.shape, x.dtype)


def _batch_rule(x: Any) -> TensorSpec:
    require_square(x, "matrix op")
    return TensorSpec(None if x.shape.rank is None else x.shape[:-2], x.dtype)


def _checked_linalg(fn: Any, what: str, op: str, nan_singular: bool = False) -> Any:
    """NumPy's LinAlgError as TF's InvalidArgumentError, naming the failure, the op and the
    user's line. `nan_singular`: a matrix holding NaN is not invertible, as TF's LU finds
    (NumPy would return NaNs)."""
    def kernel(*arrays: Any, **attrs: Any) -> Any:
        if nan_singular and np.isnan(arrays[0]).any():
            raise errors.InvalidArgumentError(errors.with_location(f"{what}. [Op:{op}]"))
        try:
            return fn(*arrays, **attrs)
        except np.linalg.LinAlgError as exc:
            raise errors.InvalidArgumentError(errors.with_location(
                f"{what}: {exc} [Op:{op}]")) from None
    return kernel


def _inverse_grad(op: Any, dy: Any) -> list:
    inverse = op.outputs[0]  # d(A^-1) = -A^-1 dA A^-1, so dA = -A^-T dy A^-T
    return [-matmul(inverse, matmul(dy, inverse, transpose_b=True), transpose_a=True)]


MATRIX_INVERSE = defop("MatrixInverse", shape=_square_rule, dtypes=_dtypes.INEXACT,
                       kernel=_checked_linalg(np.linalg.inv, "Input is not invertible",
                                              "MatrixInverse", nan_singular=True),
                       grad=_inverse_grad)


def _det_grad(op: Any, dy: Any) -> list:
    scale = reshaping.expand_dims(reshaping.expand_dims(dy * op.outputs[0], -1), -1)
    return [scale * matrix_transpose(inv(op.inputs[0]))]


MATRIX_DETERMINANT = defop("MatrixDeterminant", shape=_batch_rule, kernel=np.linalg.det,
                           dtypes=_dtypes.INEXACT, grad=_det_grad)


def _slogdet_rule(x: Any) -> list:
    spec = _batch_rule(x)
    return [spec, spec]


def _slogdet_grad(op: Any, d_sign: Any, d_log: Any) -> list:
    if d_log is None:
        return [None]
    scale = reshaping.expand_dims(reshaping.expand_dims(d_log, -1), -1)
    return [scale * matrix_transpose(inv(op.inputs[0]))]


LOG_MATRIX_DETERMINANT = defop(
    "LogMatrixDeterminant", shape=_slogdet_rule, multi_output=True, dtypes=_dtypes.INEXACT,
    kernel=lambda x: tuple(np.linalg.slogdet(x)), grad=_slogdet_grad)


def _solve_rule(a: Any, b: Any, *, adjoint: bool) -> TensorSpec:
    require_square(a, "MatrixSolve")
    if b.shape.rank is not None and b.shape.rank < 2:
        raise ValueError(f"MatrixSolve: rhs must have rank >= 2, got shape {b.shape}")
    return TensorSpec(b.shape, b.dtype)


def _solve_kernel(a: Any, b: Any, *, adjoint: bool) -> Any:
    return np.linalg.solve(np.conj(a.mT) if adjoint else a, b)


def _solve_grad(op: Any, dy: Any) -> list:
    a, x = op.inputs[0], op.outputs[0]
    adjoint = op.attrs["adjoint"]
    db = matrix_solve(a, dy, adjoint=not adjoint)
    da = -matmul(x, db, transpose_b=True) if adjoint else -matmul(db, x, transpose_b=True)
    return [da, db]


MATRIX_SOLVE = defop("MatrixSolve", shape=_solve_rule, dtypes=_dtypes.INEXACT,
                     kernel=_checked_linalg(_solve_kernel, "Input matrix is not invertible",
                                            "MatrixSolve", nan_singular=True),
                     grad=_solve_grad)


def _cholesky_grad(op: Any, dy: Any) -> list:
    """TF's rule: A's gradient from L's, symmetric (Murray 2016, as in TF's CholeskyGrad)."""
    lower = op.outputs[0]
    lower_inverse = inv(lower)
    middle = matmul(lower, dy, transpose_a=True)
    middle = band_part(middle - 0.5 * diag(diag_part(middle)), -1, 0)
    grad = matmul(matmul(lower_inverse, middle, transpose_a=True), lower_inverse)
    return [0.5 * (grad + matrix_transpose(grad))]


CHOLESKY = defop("Cholesky", shape=_square_rule, dtypes=_dtypes.INEXACT, grad=_cholesky_grad,
                 kernel=_checked_linalg(np.linalg.cholesky,
                                        "Cholesky decomposition was not successful: the input "
                                        "might not be valid (not positive definite)",
                                        "Cholesky"))


# ---------------------------------------------------------------- diagonals and bands

def _diag_rule(x: Any) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec(None, x.dtype)
    if x.shape.rank < 1:
        raise ValueError(f"MatrixDiag: input must be at least 1-D, got shape {x.shape}")
    n = x.shape[-1]
    return TensorSpec(x.shape.concatenate([n]), x.dtype)


def _diag_kernel(x: Any) -> Any:
    n = x.shape[-1]
    out = np.zeros(x.shape + (n,), x.dtype)
    out[..., np.arange(n), np.arange(n)] = x
    return out


MATRIX_DIAG = defop("MatrixDiag", check_eager=True, shape=_diag_rule, kernel=_diag_kernel,
                    grad=lambda op, dy: [diag_part(dy)])


def _diag_part_rule(x: Any) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec(None, x.dtype)
    if x.shape.rank < 2:
        raise ValueError(f"MatrixDiagPart: input must have rank >= 2, got shape {x.shape}")
    m, n = x.shape.as_list()[-2:]
    k = None if m is None or n is None else min(m, n)
    return TensorSpec(x.shape[:-2].concatenate([k]), x.dtype)


def _diag_part_grad(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    m, n = x.shape.as_list()[-2:]
    if m is None or n is None:
        raise NotImplementedError("the gradient of diag_part needs the matrix dims known")
    eye = array.eye(m, n, dtype=dy.dtype)
    spread = reshaping.expand_dims(dy, -1 if m <= n else -2)
    return [spread * eye]


MATRIX_DIAG_PART = defop("MatrixDiagPart", shape=_diag_part_rule, grad=_diag_part_grad,
                         kernel=lambda x: np.diagonal(x, axis1=-2, axis2=-1).copy())


def _band_rule(x: Any, *, num_lower: int, num_upper: int) -> TensorSpec:
    if x.shape.rank is not None and x.shape.rank < 2:
        raise ValueError(f"MatrixBandPart: input must have rank >= 2, got shape {x.shape}")
    return TensorSpec(x.shape, x.dtype)


def _band_kernel(x: Any, *, num_lower: int, num_upper: int) -> Any:
    m, n = x.shape[-2:]
    rows, cols = np.arange(m)[:, None], np.arange(n)[None, :]
    keep = np.ones((m, n), bool)
    if num_lower >= 0:
        keep &= rows - cols <= num_lower
    if num_upper >= 0:
        keep &= cols - rows <= num_upper
    return np.where(keep, x, np.zeros((), x.dtype))


MATRIX_BAND_PART = defop("MatrixBandPart", shape=_band_rule, kernel=_band_kernel,
                         grad=lambda op, dy: [bind(MATRIX_BAND_PART, (dy,), op.attrs)])


# ---------------------------------------------------------------- public functions

def inv(input: Any, adjoint: bool = False, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse of each square matrix in `input` (InvalidArgumentError if singular).

    >>> import kilnflow as kf
    >>> kf.linalg.inv(kf.constant([[2.0, 0.0], [0.0, 4.0]])).numpy().tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    x = convert_to_tensor(input)
    require_square(x, "MatrixInverse")
    out = bind(MATRIX_INVERSE, (x,), name=name)
    return matrix_transpose(out) if adjoint else out


def det(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The determinant of each square matrix in `input`."""
    x = convert_to_tensor(input)
    require_square(x, "MatrixDeterminant")
    return bind(MATRIX_DETERMINANT, (x,), name=name)


def slogdet(input: Any, name: Optional[str] = None) -> tuple:  # noqa: A002
    """(sign, log|det|) of each square matrix in `input`, stable for large determinants."""
    x = convert_to_tensor(input)
    require_square(x, "LogMatrixDeterminant")
    return bind(LOG_MATRIX_DETERMINANT, (x,), name=name)


def logdet(matrix: Any, name: Optional[str] = None) -> Tensor:
    """log(det(matrix)) of Hermitian positive-definite matrices, through their Cholesky
    factor as TF computes it."""
    lower = cholesky(matrix)
    return 2.0 * _reduce_sum(_log(diag_part(lower)), -1)


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False,
                 name: Optional[str] = None) -> Tensor:
    """X with matrix @ X = rhs (adjoint: matrix^H @ X = rhs)."""
    a, b = binary(matrix, rhs)
    require_square(a, "MatrixSolve")
    return bind(MATRIX_SOLVE, (a, b), {"adjoint": bool(adjoint)}, name=name)


def triangular_solve(matrix: Any, rhs: Any, lower: bool = True, adjoint: bool = False,
                     name: Optional[str] = None) -> Tensor:
    """X with matrix @ X = rhs, reading only matrix's lower (or upper) triangle."""
    a = convert_to_tensor(matrix)
    triangle = band_part(a, -1, 0) if lower else band_part(a, 0, -1)
    return matrix_solve(triangle, rhs, adjoint=adjoint, name=name)


def lstsq(matrix: Any, rhs: Any, l2_regularizer: Any = 0.0, fast: bool = True,
          name: Optional[str] = None) -> Tensor:
    """Least-squares solutions X of matrix @ X ~= rhs through the (regularized) normal
    equations, TF's fast path: (A^H A + l2 I) X = A^H rhs."""
    a, b = binary(matrix, rhs)
    gram = matmul(a, a, transpose_a=True)
    if l2_regularizer:
        n = a.shape.as_list()[-1]
        gram = gram + float(l2_regularizer) * array.eye(n, dtype=a.dtype)
    return matrix_solve(gram, matmul(a, b, transpose_a=True), name=name)


def cholesky(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The lower-triangular Cholesky factor L (L @ L^H = input) of each matrix."""
    x = convert_to_tensor(input)
    require_square(x, "Cholesky")
    return bind(CHOLESKY, (x,), name=name)


def matrix_transpose(a: Any, conjugate: bool = False, name: Optional[str] = None) -> Tensor:
    """Transposes the last two dims of `a` (the conjugate transpose with conjugate=True)."""
    x = convert_to_tensor(a)
    rank = x.shape.rank
    if rank is None or rank < 2:
        raise ValueError(errors.with_location(
            f"matrix_transpose: `a` needs a known rank >= 2, got shape {x.shape}"))
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return reshaping.transpose(x, perm, conjugate=conjugate, name=name)


def adjoint(matrix: Any, name: Optional[str] = None) -> Tensor:
    """The conjugate transpose of the last two dims."""
    return matrix_transpose(matrix, conjugate=True, name=name)


def diag(diagonal: Any, name: Optional[str] = None) -> Tensor:
    """Square matrices with `diagonal`'s last dim on their diagonal (tf.linalg.diag)."""
    return bind(MATRIX_DIAG, (convert_to_tensor(diagonal),), name=name)


def diag_part(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The main diagonal of each matrix in `input`."""
    return bind(MATRIX_DIAG_PART, (convert_to_tensor(input),), name=name)


def band_part(input: Any, num_lower: int, num_upper: int,  # noqa: A002
              name: Optional[str] = None) -> Tensor:
    """Zeroes everything outside the band of `num_lower` sub- and `num_upper`
    super-diagonals (negative: keep the whole triangle)."""
    x = convert_to_tensor(input)
    return bind(MATRIX_BAND_PART, (x,), {"num_lower": int(num_lower),
                                         "num_upper": int(num_upper)}, name=name)


def trace(x: Any, name: Optional[str] = None) -> Tensor:
    """The sum of each matrix's main diagonal."""
    return _reduce_sum(diag_part(x), -1, name=name)


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None,  # noqa: A002
         keepdims: bool = False, name: Optional[str] = None) -> Tensor:
    """Vector norms (ord 1, 2, inf or any p >= 1; 'euclidean' is 2) over `axis`, or the
    Frobenius norm ('fro'/'euclidean' over two axes)."""
    x = convert_to_tensor(tensor)
    magnitude = _abs(x)
    if ord in ("euclidean", "fro", 2, 2.0):
        return _sqrt(_reduce_sum(magnitude * magnitude, axis, keepdims=keepdims), name=name)
    if ord in (1, 1.0):
        return _reduce_sum(magnitude, axis, keepdims=keepdims, name=name)
    if ord in (np.inf, float("inf")):
        return _reduce_max(magnitude, axis, keepdims=keepdims, name=name)
    if isinstance(ord, (int, float)) and ord > 1:
        p = float(ord)
        return _pow(_reduce_sum(_pow(magnitude, p), axis, keepdims=keepdims), 1.0 / p,
                    name=name)
    raise ValueError(f"norm: 'ord' must be a supported vector norm (1, 2, inf, p >= 1, "
                     f"'euclidean' or 'fro'), got {ord!r}")
