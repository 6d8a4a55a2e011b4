"""More of tf.math: cumprod and cumulative_logsumexp, bincount, in_top_k, invert_permutation
(each one defop with its rule, kernel and gradient), and the functions TF builds from other
ops (reduce_variance/std/euclidean_norm, count_nonzero, log_sigmoid, polyval, ...), which
add no op of their own. Imports ops.math, ops.reduction, ops.array, ops.args, core.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop, np_errors_ignored
from kilnflow.ops import array
from kilnflow.ops.args import axis_arg, python_int
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.math import (
    FLOATS, NUMERIC, REAL, add_n, cast, equal, exp, greater, greater_equal, is_finite, multiply,
    not_equal, sqrt, square, subtract, truediv)
from kilnflow.ops.reduction import reduce_all, reduce_mean, reduce_sum
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor


# ---------------------------------------------------------------- cumulative ops

def _scan(x: Any, axis: int, exclusive: bool, reverse: bool, accumulate: Any,
          identity: Any) -> Any:
    """A scan along `axis` (NumPy's ufunc.accumulate), reversed and/or shifted by one."""
    if reverse:
        x = np.flip(x, axis)
    out = accumulate(x, axis=axis)
    if exclusive:
        pad = np.full_like(np.take(out, [0], axis=axis), identity)
        out = np.concatenate([pad, np.take(out, np.arange(out.shape[axis] - 1), axis=axis)],
                             axis=axis)
    return np.flip(out, axis) if reverse else out


def _scan_rule(x: Any, *, axis: int, exclusive: bool, reverse: bool) -> TensorSpec:
    if x.shape.rank is not None and not -max(x.shape.rank, 1) <= axis < max(x.shape.rank, 1):
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {x.shape.rank}")
    return TensorSpec(x.shape, x.dtype)


def _cumprod_kernel(x: Any, *, axis: int, exclusive: bool, reverse: bool) -> Any:
    return _scan(x, axis, exclusive, reverse, np.multiply.accumulate, 1).astype(x.dtype)


def _cumprod_grad(op: Any, dy: Any) -> list:
    """TF's rule: cumsum(cumprod(x) * dy) run the other way, over x (inf/nan where x is 0)."""
    x = op.inputs[0]
    attrs = op.attrs
    prod = cumprod(x, attrs["axis"], attrs["exclusive"], attrs["reverse"])
    from kilnflow.ops.reduction import cumsum
    total = cumsum(prod * dy, attrs["axis"], attrs["exclusive"], not attrs["reverse"])
    return [truediv(total, x)]


def _logsumexp_kernel(x: Any, *, axis: int, exclusive: bool, reverse: bool) -> Any:
    return _scan(x, axis, exclusive, reverse, np.logaddexp.accumulate, -np.inf).astype(x.dtype)


def _logsumexp_grad(op: Any, dy: Any) -> list:
    """dx_i = sum over the outputs y_j that x_i enters of dy_j * exp(x_i - y_j): a cumsum run
    the other way, shifted by max(y) so no exp overflows; built from public ops, so it is
    differentiable again. Outputs of -inf (an exclusive scan's first) enter no sum."""
    from kilnflow.ops.reduction import cumsum, reduce_max
    x, y = op.inputs[0], op.outputs[0]
    attrs = op.attrs
    finite = is_finite(y)
    zeros = array.zeros_like(y)
    shift = array.stop_gradient(reduce_max(array.where(finite, y, zeros), attrs["axis"],
                                           keepdims=True))
    safe_y = array.where(finite, y, zeros + shift)
    total = cumsum(dy * exp(shift - safe_y), attrs["axis"], attrs["exclusive"],
                   not attrs["reverse"])
    return [exp(x - shift) * total]


CUMPROD = defop("Cumprod", shape=_scan_rule, kernel=_cumprod_kernel, grad=_cumprod_grad,
                dtypes=NUMERIC, check_eager=True)
CUMULATIVE_LOGSUMEXP = defop("CumulativeLogsumexp", shape=_scan_rule,
                             kernel=np_errors_ignored(_logsumexp_kernel), grad=_logsumexp_grad,
                             dtypes=FLOATS, check_eager=True)


def _scan_call(opdef: Any, x: Any, axis: Any, exclusive: bool, reverse: bool,
               name: Optional[str]) -> Tensor:
    x = convert_to_tensor(x)
    axis = python_int(axis, opdef.name, "axis")
    if x.shape.rank is not None:
        axis = axis_arg(axis, max(x.shape.rank, 1), opdef.name)
    return bind(opdef, (x,), {"axis": axis, "exclusive": bool(exclusive),
                              "reverse": bool(reverse)}, name=name)


def cumprod(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
            name: Optional[str] = None) -> Tensor:
    """Cumulative product along `axis`.

    >>> import kilnflow as kf
    >>> kf.math.cumprod([1, 2, 3, 4]).numpy().tolist()
    [1, 2, 6, 24]
    """
    return _scan_call(CUMPROD, x, axis, exclusive, reverse, name)


def cumulative_logsumexp(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
                         name: Optional[str] = None) -> Tensor:
    """log(cumsum(exp(x))) along `axis`, without overflow."""
    return _scan_call(CUMULATIVE_LOGSUMEXP, x, axis, exclusive, reverse, name)


# ---------------------------------------------------------------- bincount, in_top_k, permutations

def _bincount_rule(values: Any, weights: Any, *, minlength: int, maxlength: int,
                   binary_output: bool, dtype: _dtypes.DType) -> TensorSpec:
    rank = values.shape.rank
    if rank is not None and rank > 2:
        raise ValueError(f"bincount: input must be 1-D or 2-D, got rank {rank}")
    if rank == 2:
        return TensorSpec([values.shape[0], None], dtype)
    return TensorSpec([None] if rank is not None else None, dtype)


def _bincount_kernel(values: Any, weights: Any, *, minlength: int, maxlength: int,
                     binary_output: bool, dtype: _dtypes.DType) -> Any:
    if values.size and values.min() < 0:
        raise errors.InvalidArgumentError(errors.with_location(
            "bincount: input must be non-negative [Op:DenseBincount]"))
    size = max(int(values.max()) + 1 if values.size else 0, minlength)
    if maxlength >= 0:
        size = min(size, maxlength)
    rows = values.reshape(-1, values.shape[-1]) if values.ndim == 2 else values.reshape(1, -1)
    if weights.size and weights.size != values.size:  # TF never broadcasts the weights
        raise errors.InvalidArgumentError(errors.with_location(
            f"bincount: `weights` must be the same shape as `arr` or a length-0 Tensor, in "
            f"which case it acts as all weights equal to 1. Received {list(weights.shape)} "
            f"[Op:DenseBincount]"))
    w = None if weights.size == 0 else weights.reshape(rows.shape)
    out = np.zeros((rows.shape[0], size), dtype.as_numpy_dtype)
    for r in range(rows.shape[0]):
        keep = rows[r] < size
        counts = np.bincount(rows[r][keep], None if w is None else w[r][keep], size)
        out[r] = (counts > 0) if binary_output else counts
    return out if values.ndim == 2 else out[0]


BINCOUNT = defop("DenseBincount", shape=_bincount_rule, kernel=_bincount_kernel,
                 same_dtype=False, dtypes=frozenset((_dtypes.int32, _dtypes.int64)))


_WEIGHT_DTYPES = frozenset((_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64))


def bincount(arr: Any, weights: Any = None, minlength: Any = None, maxlength: Any = None,
             dtype: Any = _dtypes.int32, name: Optional[str] = None, axis: Any = None,
             binary_output: bool = False) -> Tensor:
    """Counts of each value in `arr` (weighted sums with `weights`); length max(arr) + 1,
    at least `minlength`, at most `maxlength`. axis=None counts all values, axis=-1 each row.

    >>> import kilnflow as kf
    >>> kf.math.bincount([1, 1, 3]).numpy().tolist()
    [0, 2, 0, 1]
    """
    if not isinstance(arr, Tensor) and isinstance(arr, (list, tuple, np.ndarray)) \
            and len(arr) == 0:
        arr = np.zeros(np.shape(arr), np.int32)  # an empty list counts as int32, as in TF
    arr = convert_to_tensor(arr)
    if axis is None:
        from kilnflow.ops.reshaping import reshape
        arr = reshape(arr, [-1])
    elif axis not in (-1, arr.shape.rank - 1 if arr.shape.rank else -1) or arr.shape.rank != 2:
        raise ValueError("bincount: axis must be None, or -1 for a 2-D input")
    if weights is None:
        weights_t = convert_to_tensor(np.zeros([0], _dtypes.as_dtype(dtype).as_numpy_dtype))
        out_dtype = _dtypes.as_dtype(dtype)
    else:
        weights_t = convert_to_tensor(weights)
        out_dtype = weights_t.dtype
        if out_dtype not in _WEIGHT_DTYPES:
            raise errors.InvalidArgumentError(errors.with_location(
                f"bincount: `weights` of dtype {out_dtype.name} is not in the list of allowed "
                f"values: int32, int64, float32, float64 [Op:DenseBincount]"))
    return bind(BINCOUNT, (arr, weights_t), {
        "minlength": -1 if minlength is None else int(minlength),
        "maxlength": -1 if maxlength is None else int(maxlength),
        "binary_output": bool(binary_output), "dtype": out_dtype}, name=name)


def _in_top_k_rule(predictions: Any, targets: Any, k: Any) -> TensorSpec:
    if predictions.shape.rank is not None and predictions.shape.rank != 2:
        raise ValueError(f"predictions must be 2-D, got shape {predictions.shape}")
    if targets.shape.rank is not None and targets.shape.rank != 1:
        raise ValueError(f"targets must be 1-D, got shape {targets.shape}")
    batch = predictions.shape[0] if predictions.shape.rank is not None else None
    return TensorSpec([batch], _dtypes.bool)


def _in_top_k_kernel(predictions: Any, targets: Any, k: Any) -> Any:
    rows = np.arange(predictions.shape[0])
    if np.any((targets < 0) | (targets >= predictions.shape[1])):
        raise errors.InvalidArgumentError(errors.with_location(
            f"targets must be in [0, {predictions.shape[1]}) [Op:InTopKV2]"))
    target = predictions[rows, targets]
    better = np.sum(predictions > target[:, None], axis=1)
    return (better < int(k)) & np.isfinite(target)


IN_TOP_K = defop("InTopKV2", shape=_in_top_k_rule, kernel=_in_top_k_kernel, same_dtype=(1, 2),
                 dtypes=REAL, check_eager=True)


def in_top_k(targets: Any, predictions: Any, k: Any, name: Optional[str] = None) -> Tensor:
    """Whether each row's `targets` class is among the `k` largest `predictions` of that
    row (a tie with the k-th value counts as in, as in TF)."""
    predictions = convert_to_tensor(predictions)
    targets = convert_to_tensor(targets)
    return bind(IN_TOP_K, (predictions, targets, convert_to_tensor(k, targets.dtype)),
                name=name)


def _invert_permutation_kernel(x: Any) -> Any:
    n = x.shape[0]
    if sorted(x.tolist()) != list(range(n)):
        raise errors.InvalidArgumentError(errors.with_location(
            f"invert_permutation: {x.tolist()} is not a permutation of 0..{n - 1} "
            f"[Op:InvertPermutation]"))
    out = np.empty_like(x)
    out[x] = np.arange(n, dtype=x.dtype)
    return out


def _vector_rule(x: Any) -> TensorSpec:
    if x.shape.rank is not None and x.shape.rank != 1:
        raise ValueError(f"invert_permutation expects a 1-D vector, got shape {x.shape}")
    return TensorSpec(x.shape, x.dtype)


INVERT_PERMUTATION = defop("InvertPermutation", shape=_vector_rule,
                           kernel=_invert_permutation_kernel, check_eager=True,
                           dtypes=frozenset((_dtypes.int32, _dtypes.int64)))


def invert_permutation(x: Any, name: Optional[str] = None) -> Tensor:
    """y with y[x[i]] = i.

    >>> import kilnflow as kf
    >>> kf.math.invert_permutation([3, 4, 0, 2, 1]).numpy().tolist()
    [2, 4, 3, 0, 1]
    """
    return bind(INVERT_PERMUTATION, (convert_to_tensor(x),), name=name)


# ---------------------------------------------------------------- composites

def reduce_variance(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                    name: Optional[str] = None) -> Tensor:
    """The variance over `axis`: mean((x - mean(x)) ** 2) (population variance, as TF)."""
    x = convert_to_tensor(input_tensor)
    if not x.dtype.is_floating:
        raise TypeError(f"reduce_variance: input must be floating, got {x.dtype.name}")
    mean = reduce_mean(x, axis, keepdims=True)
    return reduce_mean(square(subtract(x, mean)), axis, keepdims=keepdims, name=name)


def reduce_std(input_tensor: Any, axis: Any = None, keepdims: bool = False,
               name: Optional[str] = None) -> Tensor:
    """The standard deviation over `axis` (square root of reduce_variance)."""
    return sqrt(reduce_variance(input_tensor, axis, keepdims), name=name)


def reduce_euclidean_norm(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                          name: Optional[str] = None) -> Tensor:
    """sqrt(sum(x ** 2)) over `axis`."""
    x = convert_to_tensor(input_tensor)
    return sqrt(reduce_sum(square(x), axis, keepdims=keepdims), name=name)


def count_nonzero(input: Any, axis: Any = None, keepdims: bool = False,  # noqa: A002
                  dtype: Any = _dtypes.int64, name: Optional[str] = None) -> Tensor:
    """The number of non-zero elements over `axis` (True counts for bools, non-empty
    for strings is not supported here)."""
    x = convert_to_tensor(input)
    nonzero = not_equal(x, array.zeros_like(x))
    return reduce_sum(cast(nonzero, dtype), axis, keepdims=bool(keepdims), name=name)


def scalar_mul(scalar: Any, x: Any, name: Optional[str] = None) -> Tensor:
    """scalar * x, where `scalar` must be a scalar (0-D)."""
    scalar = convert_to_tensor(scalar)
    if scalar.shape.rank not in (0, None):
        raise ValueError(f"scalar_mul: scalar must be 0-D, got shape {scalar.shape}")
    x = convert_to_tensor(x)
    return multiply(cast(scalar, x.dtype), x, name=name)


def accumulate_n(inputs: Sequence, shape: Any = None, tensor_dtype: Any = None,
                 name: Optional[str] = None) -> Tensor:
    """The elementwise sum of `inputs` (TF 2 runs it as add_n)."""
    return add_n(inputs, name=name)


def log_sigmoid(x: Any, name: Optional[str] = None) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), without overflow."""
    from kilnflow.ops.nn import softplus
    return -softplus(-convert_to_tensor(x))


def polyval(coeffs: Sequence, x: Any, name: Optional[str] = None) -> Tensor:
    """coeffs[0] * x**(n-1) + ... + coeffs[n-1], by Horner's rule (0 for no coeffs)."""
    x = convert_to_tensor(x)
    if not coeffs:
        return array.zeros_like(x)
    result = convert_to_tensor(coeffs[0], x.dtype)
    for c in coeffs[1:]:
        result = result * x + convert_to_tensor(c, x.dtype)
    return result


def _monotone(x: Any, strict: bool, what: str) -> Tensor:
    from kilnflow.ops.reshaping import reshape
    flat = reshape(convert_to_tensor(x), [-1])
    if not flat.dtype.is_floating and not flat.dtype.is_integer:
        raise TypeError(f"{what}: expected a numeric tensor, got {flat.dtype.name}")
    compare = greater if strict else greater_equal
    return reduce_all(compare(flat[1:], flat[:-1]))


def is_non_decreasing(x: Any, name: Optional[str] = None) -> Tensor:
    """True when x (flattened) never decreases; True for fewer than two elements."""
    return _monotone(x, False, "is_non_decreasing")


def is_strictly_increasing(x: Any, name: Optional[str] = None) -> Tensor:
    """True when x (flattened) always increases; True for fewer than two elements."""
    return _monotone(x, True, "is_strictly_increasing")


def zero_fraction(value: Any, name: Optional[str] = None) -> Tensor:
    """The fraction of zeros in `value`, as a float32 scalar."""
    value = convert_to_tensor(value)
    return reduce_mean(cast(equal(value, array.zeros_like(value)), _dtypes.float32), name=name)


def unsorted_segment_sqrt_n(data: Any, segment_ids: Any, num_segments: Any,
                            name: Optional[str] = None) -> Tensor:
    """Per-segment sums divided by sqrt(segment size) (empty segments give 0)."""
    from kilnflow.ops.segment import unsorted_segment_sum
    data = convert_to_tensor(data)
    segment_ids = convert_to_tensor(segment_ids)
    sums = unsorted_segment_sum(data, segment_ids, num_segments)
    counts = unsorted_segment_sum(cast(array.ones_like(segment_ids), data.dtype), segment_ids,
                                  num_segments)
    if data.shape.rank is None or segment_ids.shape.rank is None:
        raise ValueError("unsorted_segment_sqrt_n: data and segment_ids need known ranks")
    from kilnflow.ops.math import maximum
    from kilnflow.ops.reshaping import reshape
    counts = maximum(counts, convert_to_tensor(1, data.dtype))  # empty segments: 0 / 1
    counts = reshape(counts, [-1] + [1] * (data.shape.rank - segment_ids.shape.rank))
    return truediv(sums, sqrt(counts), name=name)


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None,
                     weights: Any = None, dtype: Any = _dtypes.int32,
                     name: Optional[str] = None) -> Tensor:
    """[num_classes, num_classes] counts (or summed weights) of (label, prediction) pairs."""
    from kilnflow.ops.joining import stack
    from kilnflow.ops.scatter import scatter_nd
    from kilnflow.ops.reduction import reduce_max
    from kilnflow.ops.math import maximum
    dtype = _dtypes.as_dtype(dtype)
    labels = cast(convert_to_tensor(labels), _dtypes.int64)
    predictions = cast(convert_to_tensor(predictions), _dtypes.int64)
    if num_classes is None:
        num_classes = maximum(reduce_max(labels), reduce_max(predictions)) + 1
    n = cast(convert_to_tensor(num_classes), _dtypes.int64)
    values = array.ones_like(labels) if weights is None else convert_to_tensor(weights)
    indices = stack([labels, predictions], axis=1)
    return scatter_nd(indices, cast(values, dtype), stack([n, n]), name=name)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True, name: Optional[str] = None) -> tuple:
    """(values, indices) of the k largest entries along the last dimension. On CPUs TF
    computes these exactly; so does kilnflow (recall 1)."""
    from kilnflow.ops.sorting import top_k
    operand = convert_to_tensor(operand)
    if reduction_dimension not in (-1, (operand.shape.rank or 0) - 1):
        raise ValueError("approx_max_k: only the last dimension is supported")
    values, indices = top_k(operand, k)
    return values, indices


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True, name: Optional[str] = None) -> tuple:
    """(values, indices) of the k smallest entries along the last dimension (exact)."""
    values, indices = approx_max_k(-convert_to_tensor(operand), k, reduction_dimension)
    return -values, indices


def saturate_cast(value: Any, dtype: Any, name: Optional[str] = None) -> Tensor:
    """Casts to `dtype`, clipping to its range first so values saturate instead of wrapping.

    >>> import kilnflow as kf
    >>> kf.saturate_cast([-5, 300], kf.uint8).numpy().tolist()
    [0, 255]
    """
    from kilnflow.ops.math import maximum, minimum
    value = convert_to_tensor(value)
    dtype = _dtypes.as_dtype(dtype)
    kinds = (value.dtype.is_integer or value.dtype.is_floating,
             dtype.is_integer or dtype.is_floating)
    if all(kinds):
        target = np.iinfo(dtype.as_numpy_dtype) if dtype.is_integer else \
            np.finfo(dtype.as_numpy_dtype)
        source = np.iinfo(value.dtype.as_numpy_dtype) if value.dtype.is_integer else \
            np.finfo(value.dtype.as_numpy_dtype)
        # the bounds both dtypes hold, in the source dtype (TF's rule)
        low = np.asarray(max(target.min, source.min)).astype(source.dtype)
        high = np.asarray(min(target.max, source.max)).astype(source.dtype)
        while dtype.is_integer and float(high) > target.max:  # float32(2**31 - 1) rounds up
            high = np.nextafter(high, source.dtype.type(0))
        value = minimum(maximum(value, convert_to_tensor(low)), convert_to_tensor(high))
    return cast(value, dtype, name=name)
