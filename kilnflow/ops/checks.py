"""Run-time checks (tf.debugging): the assert_* family and check_numerics.

Each assert is an Assert op (stateful, so pruning never drops it; it runs on every call of
a compiled function) over the reduced condition; eagerly it raises at once. A failure is an
InvalidArgumentError naming the condition and showing the data. Checks that static shapes
or dtypes already decide raise at build time, as TF's do.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.core import rules
from kilnflow.ops import math as math_ops
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.ops.logging import Assert
from kilnflow.ops.reduction import reduce_all
from kilnflow.tensor import Tensor


def _check(condition: Any, message: Optional[str], description: str, data: list,
           summarize: Optional[int], name: Optional[str]) -> Any:
    text = f"{message + ' ' if message else ''}Condition {description} did not hold " \
        "element-wise:"
    return Assert(reduce_all(condition), [text] + data, summarize=summarize, name=name)


def _comparison(symbol: str, compare: Callable) -> Callable:
    def check(x: Any, y: Any, message: Optional[str] = None, summarize: Optional[int] = None,
              name: Optional[str] = None) -> Any:
        x, y = binary(x, y)
        return _check(compare(x, y), message, f"x {symbol} y",
                      ["x =", x, "y =", y], summarize, name)
    check.__doc__ = f"Asserts x {symbol} y element-wise (InvalidArgumentError otherwise)."
    return check


assert_equal = _comparison("==", math_ops.equal)
assert_none_equal = _comparison("!=", math_ops.not_equal)
assert_less = _comparison("<", math_ops.less)
assert_less_equal = _comparison("<=", math_ops.less_equal)
assert_greater = _comparison(">", math_ops.greater)
assert_greater_equal = _comparison(">=", math_ops.greater_equal)


def _sign_check(symbol: str, compare: Callable) -> Callable:
    def check(x: Any, message: Optional[str] = None, summarize: Optional[int] = None,
              name: Optional[str] = None) -> Any:
        x = convert_to_tensor(x)
        zero = convert_to_tensor(0, x.dtype)
        return _check(compare(x, zero), message, f"x {symbol} 0", ["x =", x],
                      summarize, name)
    check.__doc__ = f"Asserts x {symbol} 0 element-wise."
    return check


assert_positive = _sign_check(">", math_ops.greater)
assert_negative = _sign_check("<", math_ops.less)
assert_non_negative = _sign_check(">=", math_ops.greater_equal)
assert_non_positive = _sign_check("<=", math_ops.less_equal)


def assert_near(x: Any, y: Any, rtol: Any = None, atol: Any = None,
                message: Optional[str] = None, summarize: Optional[int] = None,
                name: Optional[str] = None) -> Any:
    """Asserts |x - y| <= atol + rtol * |y| element-wise (TF's defaults: 10 * eps)."""
    x, y = binary(x, y)
    eps = float(np.finfo(x.dtype.as_numpy_dtype).eps) if x.dtype.is_floating else 0.0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    tolerance = convert_to_tensor(atol, x.dtype) + convert_to_tensor(rtol, x.dtype) * \
        math_ops.abs(y)
    return _check(math_ops.less_equal(math_ops.abs(x - y), tolerance), message,
                  "x and y are near", ["x =", x, "y =", y], summarize, name)


def assert_rank(x: Any, rank: int, message: Optional[str] = None,
                name: Optional[str] = None) -> None:
    """Raises ValueError now when x's static rank is known and is not `rank`."""
    x = convert_to_tensor(x)
    if x.shape.rank is not None and x.shape.rank != int(rank):
        raise ValueError(errors.with_location(
            f"{message + ' ' if message else ''}Tensor must have rank {int(rank)}, got rank "
            f"{x.shape.rank} (shape {x.shape})"))


def assert_type(tensor: Any, tf_type: Any, message: Optional[str] = None,
                name: Optional[str] = None) -> None:
    """Raises TypeError unless `tensor` has dtype `tf_type`."""
    t = convert_to_tensor(tensor)
    expected = _dtypes.as_dtype(tf_type)
    if t.dtype != expected:
        raise TypeError(errors.with_location(
            f"{message + ' ' if message else ''}tensor has dtype {t.dtype.name}, expected "
            f"{expected.name}"))


def _check_numerics_kernel(x: Any, *, message: str) -> Any:
    if not np.all(np.isfinite(x)):
        bad = "NaN" if np.isnan(x).any() else "Inf"
        raise errors.InvalidArgumentError(errors.with_location(
            f"{message} : Tensor had {bad} values [Op:CheckNumerics]"))
    return x


# stateful as in TF: an unused check_numerics in a function still runs (and raises)
CHECK_NUMERICS = defop("CheckNumerics", shape=rules.same_as(0), kernel=_check_numerics_kernel,
                       dtypes=_dtypes.FLOATS, grad=lambda op, dy: [dy], stateful=True)


def check_numerics(tensor: Any, message: str, name: Optional[str] = None) -> Tensor:
    """`tensor`, after checking it holds no NaN or Inf (InvalidArgumentError naming
    `message` otherwise)."""
    return bind(CHECK_NUMERICS, (convert_to_tensor(tensor),), {"message": str(message)},
                name=name)


def assert_all_finite(t: Any, msg: str, name: Optional[str] = None) -> Tensor:
    """tf.debugging.assert_all_finite: check_numerics under TF 2's name."""
    return check_numerics(t, msg, name=name)


def _prefix(message: Optional[str]) -> str:
    return f"{message} " if message else ""


def assert_rank_at_least(x: Any, rank: int, message: Optional[str] = None,
                         name: Optional[str] = None) -> None:
    """Raises ValueError when x's static rank is below `rank`."""
    x = convert_to_tensor(x)
    if x.shape.rank is not None and x.shape.rank < int(rank):
        raise ValueError(errors.with_location(
            f"{_prefix(message)}Tensor must have rank at least {int(rank)}. Received rank "
            f"{x.shape.rank}, shape {x.shape}"))


def assert_rank_in(x: Any, ranks: Any, message: Optional[str] = None,
                   name: Optional[str] = None) -> None:
    """Raises ValueError when x's static rank is none of `ranks`."""
    x = convert_to_tensor(x)
    ranks = tuple(int(r) for r in ranks)
    if x.shape.rank is not None and x.shape.rank not in ranks:
        raise ValueError(errors.with_location(
            f"{_prefix(message)}Tensor must have rank in {ranks}. Received rank "
            f"{x.shape.rank}, shape {x.shape}"))


def assert_scalar(tensor: Any, message: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Returns `tensor` when its static shape is scalar; ValueError otherwise."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape.rank != 0:
        raise ValueError(errors.with_location(
            f"{_prefix(message)}Expected scalar shape, saw shape: {tensor.shape}."))
    return tensor


def assert_integer(x: Any, message: Optional[str] = None, name: Optional[str] = None) -> None:
    """Raises TypeError unless x has an integer dtype."""
    x = convert_to_tensor(x)
    if not x.dtype.is_integer:
        raise TypeError(errors.with_location(
            f"{_prefix(message)}Expected \"x\" to be integer type. Found: tensor of dtype "
            f"{x.dtype}"))


def assert_same_float_dtype(tensors: Any = None, dtype: Any = None) -> Any:
    """The one floating dtype of `tensors` (and `dtype`); float32 when there is none.
    ValueError when they differ or one is not floating."""
    expected = _dtypes.as_dtype(dtype) if dtype is not None else None
    for t in tensors or []:
        t = convert_to_tensor(t)
        if expected is None:
            expected = t.dtype
        elif t.dtype != expected:
            raise ValueError(errors.with_location(
                f"tensor of dtype {t.dtype} must be of the same type ({expected}) as the "
                "tensors before it"))
    if expected is None:
        return _dtypes.float32
    if not expected.is_floating:
        raise ValueError(errors.with_location(f"Expected floating point type, got {expected}."))
    return expected


def assert_proper_iterable(values: Any) -> None:
    """TypeError when `values` is a tensor, an array, a string or bytes: things a caller
    passing 'a list of values' most likely did not mean to iterate element by element."""
    if isinstance(values, (Tensor, np.ndarray, str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(errors.with_location(
            f"Expected argument \"values\" to be a \"proper\" iterable. Found: {type(values)}"))


def assert_shapes(shapes: Any, data: Any = None, summarize: Optional[int] = None,
                  message: Optional[str] = None, name: Optional[str] = None) -> None:
    """Checks the static shapes of (tensor, spec) pairs: a spec entry is a size, a symbol
    (the same symbol must have one size across all tensors), or a leading `...`."""
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes: dict = {}
    for tensor, spec in pairs:
        tensor = convert_to_tensor(tensor.deref() if hasattr(tensor, "deref") else tensor)
        spec = tuple(spec) if isinstance(spec, (list, tuple)) else (spec,)
        dims = tensor.shape.as_list() if tensor.shape.rank is not None else None
        if dims is None:
            continue
        ellipsis = bool(spec) and spec[0] is Ellipsis
        spec = spec[1:] if ellipsis else spec
        if (len(dims) < len(spec)) if ellipsis else (len(dims) != len(spec)):
            raise ValueError(errors.with_location(
                f"{_prefix(message)}Tensor {tensor.shape} must have rank "
                f"{'at least ' if ellipsis else ''}{len(spec)}. Received rank {len(dims)}"))
        for axis, (want, got) in enumerate(zip(spec, dims[len(dims) - len(spec):])):
            if got is None:
                continue
            if isinstance(want, str):
                want, origin = sizes.setdefault(want, (got, tensor.shape))
                where = f"Specified by tensor shape={origin}"
            else:
                want, where = int(want), "Specified explicitly"
            if got != want:
                raise ValueError(errors.with_location(
                    f"{_prefix(message)}{where} dimension {axis}. Tensor shape={tensor.shape} "
                    f"dimension {axis} must have size {want}. Received size {got}"))


def is_numeric_tensor(tensor: Any) -> bool:
    """True for a tensor of a numeric dtype (not bool, not string); False for non-tensors."""
    return isinstance(tensor, Tensor) and (tensor.dtype.is_floating or tensor.dtype.is_integer
                                           or tensor.dtype.is_complex)
