"""Reductions (reduce_sum/mean/max/min/prod/any/all), argmax/argmin and cumsum. Each op is
one defop() beside its public function; reduction ops declare their kind, which constant
folding and the fused engine read.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, ragged_hooks, reshaping
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import EagerTensor, Tensor
from kilnflow.ops.args import axis_arg, python_int
from kilnflow.ops.math import (BOOL, NUMERIC, REAL, cast, equal, exp, is_finite, log, maximum,
                               sqrt)


# ---------------------------------------------------------------- reductions

def _reduce_kernel(fn: Any, keep_dtype: bool = True):
    def kernel(x: Any, *, axis: Any = None, keepdims: bool = False) -> Any:
        out = fn(x, axis=axis, keepdims=keepdims)
        if keep_dtype and out.dtype != x.dtype:
            out = out.astype(x.dtype)
        return np.asarray(out) if not isinstance(out, (np.ndarray, np.generic)) else out
    return kernel


def _broadcast_back(dy: Tensor, x: Tensor, axis: Any, keepdims: bool) -> Tensor:
    """Reshape a reduction's gradient to keepdims form and broadcast it over x."""
    if not keepdims and x.shape.rank is not None:
        axes = rules.normalize_axes(axis, x.shape.rank)
        axes = range(x.shape.rank) if axes is None else axes
        for a in sorted(axes):
            dy = reshaping.expand_dims(dy, a)
    target = x.shape.as_list() if x.shape.is_fully_defined() else array.shape(x)
    return reshaping.broadcast_to(dy, target)


def _sum_grad(op: Any, dy: Any) -> list:
    return [_broadcast_back(dy, op.inputs[0], **op.attrs)]


def _mean_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs[0], op.outputs[0]
    if x.shape.is_fully_defined() and y.shape.is_fully_defined():  # a number, not two ops
        count: Any = x.shape.num_elements() // max(y.shape.num_elements(), 1)
    else:
        count = cast(array.size(x), dy.dtype) / cast(array.size(y), dy.dtype)
    return [_broadcast_back(dy, x, **op.attrs) / count]


def _extremum_grad(op: Any, dy: Any) -> list:
    x, y = op.inputs[0], op.outputs[0]
    y_full = _broadcast_back(y, x, **op.attrs)
    mask = cast(equal(x, y_full), dy.dtype)
    count = _broadcast_back(reduce_sum(mask, op.attrs["axis"], op.attrs["keepdims"]), x,
                            **op.attrs)
    return [_broadcast_back(dy, x, **op.attrs) * mask / count]


def _prod_grad(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    y_full = _broadcast_back(op.outputs[0], x, **op.attrs)
    return [_broadcast_back(dy, x, **op.attrs) * y_full / x]


def _ufunc_reduce(ufunc: np.ufunc, accumulate_in_dtype: bool) -> Callable:
    """ufunc.reduce, which skips np.sum/np.max's Python wrappers (about 2 us a call)."""
    def reduce(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
        dtype = x.dtype if accumulate_in_dtype else None
        return ufunc.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return reduce


def _mean(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """np.mean without its Python-level overhead (a sum and one division by a scalar of the
    sum's own dtype); float16 sums in float32, integers in float64 (cast back after)."""
    kind = x.dtype.kind
    accumulate = np.float32 if x.dtype == np.float16 else x.dtype if kind in "fc" \
        else np.float64
    total = np.add.reduce(x, axis=axis, keepdims=keepdims, dtype=accumulate)
    count = x.size // total.size if total.size else 0
    if count == 0:  # an empty reduction: NaN like TF, without NumPy's warning
        with np.errstate(all="ignore"):
            return total / total.dtype.type(0)
    return total / total.dtype.type(count)


def _reduce_op(name: str, kernel: Callable, dtypes: Any, grad: Optional[Callable] = None):
    return defop(name.capitalize(), shape=rules.reduce(), reduction=name,
                 kernel=_reduce_kernel(kernel), grad=grad, dtypes=dtypes)


SUM = _reduce_op("sum", _ufunc_reduce(np.add, True), NUMERIC, _sum_grad)
MEAN = _reduce_op("mean", _mean, NUMERIC, _mean_grad)
MAX = _reduce_op("max", _ufunc_reduce(np.maximum, False), REAL, _extremum_grad)
MIN = _reduce_op("min", _ufunc_reduce(np.minimum, False), REAL, _extremum_grad)
PROD = _reduce_op("prod", _ufunc_reduce(np.multiply, True), NUMERIC, _prod_grad)
ANY = _reduce_op("any", np.any, BOOL)
ALL = _reduce_op("all", np.all, BOOL)


def _reduction(opdef: Any, doc: str):
    kind = opdef.name.lower()
    def apply(input_tensor: Any, axis: Any = None, keepdims: bool = False,
              name: Optional[str] = None) -> Tensor:
        if type(input_tensor) is not EagerTensor and \
                isinstance(input_tensor, ragged_hooks.RAGGED):  # TF's ragged dispatch
            return ragged_hooks.reduce(kind, input_tensor, axis, keepdims)
        x = convert_to_tensor(input_tensor)
        if isinstance(axis, Tensor):
            axis = rules.constant_value(axis)
            if axis is None:
                raise NotImplementedError("reduction axis must be known when the graph is built")
            axis = axis.tolist()
        try:
            axes = rules.normalize_axes(axis, x.shape.rank)
        except ValueError as exc:
            raise errors.InvalidArgumentError(errors.with_location(
                f"{exc} [Op:{opdef.name}]")) from None
        return bind(opdef, (x,), {"axis": axes, "keepdims": bool(keepdims)}, name=name)
    apply.__doc__ = doc
    return apply


reduce_sum = _reduction(SUM, """Sum of elements across `axis` (all when None).

    >>> import kilnflow as kf
    >>> kf.reduce_sum(kf.constant([[1, 2], [3, 4]]), axis=0).numpy().tolist()
    [4, 6]
    """)
reduce_mean = _reduction(MEAN, "Mean of elements across `axis` (integer mean for integers).")
reduce_max = _reduction(MAX, "Maximum of elements across `axis`.")
reduce_min = _reduction(MIN, "Minimum of elements across `axis`.")
reduce_prod = _reduction(PROD, "Product of elements across `axis`.")
reduce_any = _reduction(ANY, "Logical OR of bool elements across `axis`.")
reduce_all = _reduction(ALL, "Logical AND of bool elements across `axis`.")


def _index_type(output_type: Any) -> _dtypes.DType:
    dtype = _dtypes.as_dtype(output_type)
    if dtype not in (_dtypes.int16, _dtypes.uint16, _dtypes.int32, _dtypes.int64):
        raise TypeError(f"Value for attr 'output_type' of {dtype.name} is not in the list of "
                        "allowed values: int16, uint16, int32, int64")
    return dtype


def _arg_rule(x: Any, *, axis: int, output_type: _dtypes.DType) -> TensorSpec:
    _index_type(output_type)
    if x.shape.rank is None:
        return TensorSpec(None, output_type)
    if x.shape.rank == 0:  # NumPy would answer 0 for a scalar; TF has no axis to reduce
        raise ValueError(f"Expected dimension in the range [0, 0), but got {axis}")
    axis = rules.normalize_axis(axis, x.shape.rank)
    dims = x.shape.as_list()
    return TensorSpec(dims[:axis] + dims[axis + 1:], output_type)


ARG_MAX = defop("ArgMax", shape=_arg_rule, dtypes=REAL,
                kernel=lambda x, *, axis, output_type: np.argmax(x, axis).astype(
                    output_type.as_numpy_dtype))
ARG_MIN = defop("ArgMin", shape=_arg_rule, dtypes=REAL,
                kernel=lambda x, *, axis, output_type: np.argmin(x, axis).astype(
                    output_type.as_numpy_dtype))


def argmax(input: Any, axis: Any = None, output_type: Any = _dtypes.int64,  # noqa: A002
           name: Optional[str] = None) -> Tensor:
    """Index of the largest value across `axis` (default 0)."""
    x = convert_to_tensor(input)
    if x.shape.rank == 0:  # NumPy answers 0 for a scalar: TF has no axis to reduce
        raise errors.InvalidArgumentError(errors.with_location(
            f"Expected dimension in the range [0, 0), but got {int(axis or 0)} "
            f"[Op:{ARG_MAX.name}]"))
    return bind(ARG_MAX, (x,), {"axis": int(axis or 0),
                                "output_type": _index_type(output_type)}, name=name)


def argmin(input: Any, axis: Any = None, output_type: Any = _dtypes.int64,  # noqa: A002
           name: Optional[str] = None) -> Tensor:
    """Index of the smallest value across `axis` (default 0)."""
    x = convert_to_tensor(input)
    if x.shape.rank == 0:  # NumPy answers 0 for a scalar: TF has no axis to reduce
        raise errors.InvalidArgumentError(errors.with_location(
            f"Expected dimension in the range [0, 0), but got {int(axis or 0)} "
            f"[Op:{ARG_MIN.name}]"))
    return bind(ARG_MIN, (x,), {"axis": int(axis or 0),
                                "output_type": _index_type(output_type)}, name=name)


def _cumsum_kernel(x: Any, *, axis: int, exclusive: bool, reverse: bool) -> Any:
    if reverse:
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        out = np.roll(out, 1, axis=axis)
        index = [slice(None)] * x.ndim
        index[axis] = 0
        out[tuple(index)] = 0
    return np.flip(out, axis) if reverse else out


def _cumsum_rule(x: Any, *, axis: int, exclusive: bool, reverse: bool) -> TensorSpec:
    rules.normalize_axis(axis, x.shape.rank)
    return TensorSpec(x.shape, x.dtype)


CUMSUM = defop("Cumsum", shape=_cumsum_rule, kernel=_cumsum_kernel, dtypes=NUMERIC,
               grad=lambda op, dy: [cumsum(dy, op.attrs["axis"], op.attrs["exclusive"],
                                           not op.attrs["reverse"])])


def cumsum(x: Any, axis: int = 0, exclusive: bool = False, reverse: bool = False,
           name: Optional[str] = None) -> Tensor:
    """Cumulative sum along `axis`."""
    x = convert_to_tensor(x)
    axis = python_int(axis, "Cumsum", "axis")
    if x.shape.rank is not None:
        axis = axis_arg(axis, max(x.shape.rank, 1), "Cumsum")
    return bind(CUMSUM, (x,), {"axis": axis, "exclusive": bool(exclusive),
                               "reverse": bool(reverse)}, name=name)


# ---------------------------------------------------------------- composites

def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: bool = False,
                     name: Optional[str] = None) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed stably (the maximum is taken out first).

    >>> import kilnflow as kf
    >>> float(kf.math.reduce_logsumexp(kf.constant([1000.0, 1000.0])))
    1000.6931...
    """
    ragged = type(input_tensor) is not EagerTensor and \
        isinstance(input_tensor, ragged_hooks.RAGGED)  # the same steps on its values
    x = input_tensor if ragged else convert_to_tensor(input_tensor)
    top = array.stop_gradient(reduce_max(x, axis, keepdims=True))
    top = array.where(is_finite(top), top, array.zeros_like(top))  # all -inf: stay -inf
    total = log(reduce_sum(exp(x - top), axis, keepdims=keepdims))
    return total + (top if keepdims else reduce_max(top, axis, keepdims=False))


def clip_by_norm(t: Any, clip_norm: Any, axes: Any = None, name: Optional[str] = None) -> Tensor:
    """t scaled so its L2 norm over `axes` is at most clip_norm."""
    t = convert_to_tensor(t)
    clip = convert_to_tensor(clip_norm, t.dtype)
    norm = sqrt(reduce_sum(t * t, axes, keepdims=True))
    return t * clip / maximum(norm, clip)


def global_norm(t_list: Any, name: Optional[str] = None) -> Tensor:
    """sqrt(sum of squares of every element of every tensor in t_list; None entries skipped)."""
    tensors = [convert_to_tensor(t) for t in t_list if t is not None]
    if not tensors:
        raise ValueError("global_norm: t_list holds no tensors")
    squares = [reduce_sum(t * t) for t in tensors]
    total = squares[0]
    for s in squares[1:]:
        total = total + cast(s, total.dtype)
    return sqrt(total, name=name)


def clip_by_global_norm(t_list: Any, clip_norm: Any, use_norm: Any = None,
                        name: Optional[str] = None) -> tuple:
    """(clipped tensors, global norm): every tensor scaled by clip_norm / max(global norm,
    clip_norm), as TF does (None entries stay None)."""
    if isinstance(t_list, Tensor) or not isinstance(t_list, (list, tuple)):
        raise TypeError("clip_by_global_norm: t_list should be a sequence of tensors")
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    clip = convert_to_tensor(clip_norm, norm.dtype)
    scale = clip / maximum(norm, clip)
    clipped = [None if t is None else convert_to_tensor(t) * cast(scale, convert_to_tensor(
        t).dtype) for t in t_list]
    return clipped, norm


def _histogram_rule(values: Any, value_range: Any, *, nbins: int, dtype: Any) -> TensorSpec:
    return TensorSpec([nbins], dtype)


def _histogram_kernel(values: Any, value_range: Any, *, nbins: int, dtype: Any) -> Any:
    low, high = float(value_range[0]), float(value_range[1])
    if not high > low:
        raise errors.InvalidArgumentError(f"value_range should satisfy value_range[0] < "
                                          f"value_range[1], got {[low, high]} "
                                          "[Op:HistogramFixedWidth]")
    # TF's rule: values below the range go to the first bin, above it to the last
    bins = np.floor((values.astype(np.float64) - low) / (high - low) * nbins)
    bins = np.clip(bins, 0, nbins - 1).astype(np.int64).reshape(-1)
    return np.bincount(bins, minlength=nbins).astype(dtype.as_numpy_dtype)


HISTOGRAM_FIXED_WIDTH = defop("HistogramFixedWidth", shape=_histogram_rule, same_dtype=True,
                              kernel=_histogram_kernel, dtypes=REAL)


def histogram_fixed_width(values: Any, value_range: Any, nbins: int = 100,
                          dtype: Any = _dtypes.int32, name: Optional[str] = None) -> Tensor:
    """Counts of `values` in `nbins` equal-width bins over value_range (values outside the
    range count in the first or last bin).

    >>> import kilnflow as kf
    >>> kf.histogram_fixed_width([-1.0, 0.0, 1.5, 2.0, 5.0], [0.0, 5.0], nbins=5).numpy()
    array([2, 1, 1, 0, 1], dtype=int32)
    """
    x = convert_to_tensor(values)
    r = convert_to_tensor(value_range, x.dtype)
    if int(nbins) < 1:
        raise errors.InvalidArgumentError(errors.with_location(
            f"nbins should be a positive number, got {nbins} [Op:HistogramFixedWidth]"))
    return bind(HISTOGRAM_FIXED_WIDTH, (x, r), {"nbins": int(nbins),
                                                "dtype": _dtypes.as_dtype(dtype)}, name=name)
