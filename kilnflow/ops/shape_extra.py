"""Top-level ops about shapes, bits and indices: unravel_index, bitcast, broadcast_dynamic_shape
(BroadcastArgs) and timestamp as ops; broadcast_static_shape, shape_n, sequence_mask,
strided_slice (TF's masks, onto the StridedSlice op of x[...]), parallel_stack,
histogram_fixed_width_bins, approx_top_k and required_space_to_batch_paddings composed of
existing ops, as TF composes them. Imports ops.array, math, slicing, joining, sorting, core.
"""
from __future__ import annotations

import time
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, joining, math, reduction, reshaping, slicing, sorting
from kilnflow.ops.args import INTEGERS, int_vector, invalid_argument, python_int
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec, broadcast_shapes
from kilnflow.tensor import Tensor


# ---------------------------------------------------------------- unravel_index

def _unravel_rule(indices: Any, dims: Any) -> TensorSpec:
    if indices.dtype not in INTEGERS or dims.dtype != indices.dtype:
        raise TypeError(f"unravel_index: `indices` and `dims` must be ints of one dtype, got "
                        f"{indices.dtype.name} and {dims.dtype.name}")
    if indices.shape.rank not in (0, 1, None) or dims.shape.rank not in (1, None):
        raise ValueError(f"unravel_index: `indices` must be a scalar or vector and `dims` a "
                         f"vector, got shapes {indices.shape} and {dims.shape}")
    n = dims.shape[0] if dims.shape.rank == 1 else None
    if indices.shape.rank is None:
        return TensorSpec(None, indices.dtype)
    return TensorSpec([n] + indices.shape.as_list(), indices.dtype)


def _unravel_kernel(indices: Any, dims: Any) -> Any:
    if indices.size == 0:  # TF refuses an empty `indices`
        raise ValueError(f"unravel_index: received empty tensor `indices` of shape "
                         f"{list(indices.shape)}")
    if np.any(dims <= 0):
        raise ValueError(f"Input dims must be positive, got {dims.tolist()}")
    total = int(np.prod(dims.astype(np.int64)))
    if np.any((indices < 0) | (indices >= total)):
        raise ValueError(f"index out of bounds: every index must be in [0, {total}), got "
                         f"{indices.tolist()}")
    return np.array(np.unravel_index(indices, tuple(int(d) for d in dims)), indices.dtype)


UNRAVEL_INDEX = defop("UnravelIndex", shape=_unravel_rule, kernel=_unravel_kernel,
                      same_dtype=False, check_eager=True)


def unravel_index(indices: Any, dims: Any, name: Optional[str] = None) -> Tensor:
    """The coordinates in an array of shape `dims` of the flat `indices`, one row per dim.

    >>> import kilnflow as kf
    >>> kf.unravel_index([1, 5, 7], [3, 3]).numpy().tolist()
    [[0, 1, 2], [1, 2, 1]]
    """
    i = convert_to_tensor(indices)
    return bind(UNRAVEL_INDEX, (i, convert_to_tensor(dims, i.dtype)), name=name)


# ---------------------------------------------------------------- bitcast

def _bitcast_dims(dims: Optional[list], source: Any, target: Any) -> Optional[list]:
    if dims is None:
        return None
    a, b = source.size, target.size
    if a == b:
        return dims
    if a > b:
        return dims + [a // b]
    if not dims or dims[-1] not in (None, b // a):
        raise ValueError(f"Cannot bitcast from {source.name} to {target.name}: the last dim "
                         f"must be {b // a}, got shape {dims}")
    return dims[:-1]


def _bitcast_rule(x: Any, *, type: Any) -> TensorSpec:  # noqa: A002 - TF's attr name
    if x.dtype.as_numpy_dtype == object or type.as_numpy_dtype == object:
        raise TypeError(f"bitcast: cannot bitcast {x.dtype.name} to {type.name}")
    dims = x.shape.as_list() if x.shape.rank is not None else None
    return TensorSpec(_bitcast_dims(dims, x.dtype, type), type)


def _bitcast_kernel(x: Any, *, type: Any) -> Any:  # noqa: A002
    target = np.dtype(type.as_numpy_dtype)
    if x.dtype.itemsize < target.itemsize:
        _bitcast_dims(list(x.shape), _dtypes.as_dtype(x.dtype), type)  # checks the last dim
        return np.ascontiguousarray(x).view(target).reshape(x.shape[:-1])
    out = np.ascontiguousarray(x).view(target)
    return out.reshape(x.shape + (x.dtype.itemsize // target.itemsize,)) \
        if x.dtype.itemsize > target.itemsize else out.reshape(x.shape)


BITCAST = defop("Bitcast", shape=_bitcast_rule, kernel=_bitcast_kernel, check_eager=True)


def bitcast(input: Any, type: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The bits of `input` read as `type`: a wider input gains a last dim, a narrower one
    loses its last dim (which must hold the ratio of the sizes).

    >>> import kilnflow as kf
    >>> kf.bitcast(kf.constant(1.0), kf.int32).numpy()
    np.int32(1065353216)
    """
    x = convert_to_tensor(input)
    target = _dtypes.as_dtype(type)
    if x.dtype == _dtypes.string or target == _dtypes.string or \
            x.dtype == _dtypes.bool or target == _dtypes.bool:
        raise TypeError(errors.with_location(
            f"bitcast: cannot bitcast {x.dtype.name} to {target.name} [Op:Bitcast]"))
    return bind(BITCAST, (x,), {"type": target}, name=name)


# ---------------------------------------------------------------- broadcast shapes

def _broadcast_args_rule(s0: Any, s1: Any) -> TensorSpec:
    if s0.dtype not in (_dtypes.int32, _dtypes.int64) or s0.shape.rank not in (1, None) or \
            s1.shape.rank not in (1, None):
        raise TypeError(f"broadcast_dynamic_shape: shapes must be 1-D int32/int64 tensors, "
                        f"got {s0.dtype.name} {s0.shape} and {s1.dtype.name} {s1.shape}")
    n0 = s0.shape[0] if s0.shape.rank == 1 else None
    n1 = s1.shape[0] if s1.shape.rank == 1 else None
    return TensorSpec([None if n0 is None or n1 is None else max(n0, n1)], s0.dtype)


def _broadcast_args_kernel(s0: Any, s1: Any) -> Any:
    try:
        out = np.broadcast_shapes(tuple(int(d) for d in s0), tuple(int(d) for d in s1))
    except ValueError:
        raise ValueError(f"Incompatible shapes: [{','.join(map(str, s0.tolist()))}] vs. "
                         f"[{','.join(map(str, s1.tolist()))}]") from None
    return np.array(out, s0.dtype)


BROADCAST_ARGS = defop("BroadcastArgs", shape=_broadcast_args_rule,
                       kernel=_broadcast_args_kernel, check_eager=True)


def broadcast_dynamic_shape(shape_x: Any, shape_y: Any, name: Optional[str] = None) -> Tensor:
    """The broadcast of two shapes given as 1-D int tensors.

    >>> import kilnflow as kf
    >>> kf.broadcast_dynamic_shape([1, 2, 3], [5, 1, 3]).numpy().tolist()
    [5, 2, 3]
    """
    x = convert_to_tensor(shape_x)
    return bind(BROADCAST_ARGS, (x, convert_to_tensor(shape_y, x.dtype)), name=name)


def broadcast_static_shape(shape_x: Any, shape_y: Any) -> TensorShape:
    """The broadcast of two TensorShapes (unknown dims allowed); ValueError if they
    are incompatible.

    >>> import kilnflow as kf
    >>> kf.broadcast_static_shape(kf.TensorShape([1, 2, 3]), kf.TensorShape([5, 1, 3]))
    TensorShape([5, 2, 3])
    """
    x, y = TensorShape(shape_x), TensorShape(shape_y)
    try:
        return TensorShape(broadcast_shapes(x, y))
    except (ValueError, TypeError):
        raise ValueError(errors.with_location(
            f"Incompatible shapes for broadcasting. Two shapes are compatible if for each "
            f"dimension pair they are either equal or one of them is 1. Received: {x} and {y}."
        )) from None


def shape_n(input: Sequence, out_type: Any = _dtypes.int32,  # noqa: A002 - TF's name
            name: Optional[str] = None) -> list:
    """The shapes of a list of tensors, as 1-D int tensors."""
    if not isinstance(input, (list, tuple)):
        raise TypeError(errors.with_location(
            f"shape_n: `input` must be a list of tensors, got {type(input).__name__}"))
    return [array.shape(t, out_type=out_type) for t in input]


# ---------------------------------------------------------------- timestamp

TIMESTAMP = defop("Timestamp", shape=lambda: TensorSpec([], _dtypes.float64), stateful=True,
                  kernel=lambda: np.asarray(time.time(), np.float64))


def timestamp(name: Optional[str] = None) -> Tensor:
    """Seconds since the Unix epoch as a float64 scalar, read when the op runs (stateful: a
    graph reads the clock on every call)."""
    return bind(TIMESTAMP, (), name=name)


# ---------------------------------------------------------------- compositions

def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = _dtypes.bool,
                  name: Optional[str] = None) -> Tensor:
    """mask[..., j] = j < lengths[...]: one row of `maxlen` (default: max(lengths)) per
    length.

    >>> import kilnflow as kf
    >>> kf.sequence_mask([1, 3], 4).numpy().astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 1, 0]]
    """
    n = convert_to_tensor(lengths)
    if n.dtype not in INTEGERS:
        raise TypeError(errors.with_location(
            f"sequence_mask: `lengths` must be an int tensor, got {n.dtype.name}"))
    if maxlen is None:
        limit = reduction.reduce_max(n) if n.shape.num_elements() != 0 else \
            convert_to_tensor(0, n.dtype)
        limit = math.maximum(limit, convert_to_tensor(0, n.dtype))
    else:
        limit = convert_to_tensor(maxlen)
        if limit.dtype not in INTEGERS or limit.shape.rank not in (0, None):
            raise TypeError(errors.with_location(
                f"sequence_mask: `maxlen` must be a scalar int, got {limit!r}"))
        limit = math.cast(limit, n.dtype)
    positions = array.range(convert_to_tensor(0, n.dtype), limit)
    mask = math.less(positions, reshaping.expand_dims(n, -1))
    dtype = _dtypes.as_dtype(dtype)
    return mask if dtype == _dtypes.bool else math.cast(mask, dtype, name=name)


def _bit(mask: int, i: int) -> bool:
    return bool((mask >> i) & 1)


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None,  # noqa: C901
                  begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0,
                  new_axis_mask: int = 0, shrink_axis_mask: int = 0, var: Any = None,
                  name: Optional[str] = None) -> Tensor:
    """input_[begin:end:strides] with TF's masks: bit i of begin_mask/end_mask ignores
    begin[i]/end[i], ellipsis_mask puts `...`, new_axis_mask a new dim and
    shrink_axis_mask takes the single index begin[i] (the dim goes away).

    >>> import kilnflow as kf
    >>> x = kf.reshape(kf.range(12), [3, 4])
    >>> kf.strided_slice(x, [0, 1], [3, 4], [2, 2]).numpy().tolist()
    [[1, 3], [9, 11]]
    """
    op = "StridedSlice"
    parts = []
    for what, arg in (("begin", begin), ("end", end), ("strides", strides)):
        if arg is None:
            parts.append(None)
            continue
        tensor, values = int_vector(arg, op, what)
        if tensor is not None:  # known only when the graph runs: one scalar per entry
            n = tensor.shape[0] if tensor.shape.rank == 1 else None
            if n is None:
                raise ValueError(errors.with_location(
                    f"strided_slice: the length of `{what}` must be known"))
            values = [tensor[i] for i in range(n)]
        parts.append(values)
    begin_v, end_v, stride_v = parts
    stride_v = stride_v if stride_v is not None else [1] * len(begin_v)
    if not len(begin_v) == len(end_v) == len(stride_v):
        raise invalid_argument(f"Expected begin, end, and strides to be 1D equal size tensors, "
                               f"got {len(begin_v)}, {len(end_v)} and {len(stride_v)}", op)
    masks = {}
    for what, mask in (("begin_mask", begin_mask), ("end_mask", end_mask),
                       ("ellipsis_mask", ellipsis_mask), ("new_axis_mask", new_axis_mask),
                       ("shrink_axis_mask", shrink_axis_mask)):
        masks[what] = python_int(mask, op, what)
    if bin(masks["ellipsis_mask"]).count("1") > 1:
        raise invalid_argument("Multiple ellipses in slice spec not allowed", op)
    key = []
    for i, (b, e, s) in enumerate(zip(begin_v, end_v, stride_v)):
        if _bit(masks["ellipsis_mask"], i):
            key.append(Ellipsis)
        elif _bit(masks["new_axis_mask"], i):
            key.append(None)
        elif _bit(masks["shrink_axis_mask"], i):
            key.append(b)
        else:
            key.append(slice(None if _bit(masks["begin_mask"], i) else b,
                             None if _bit(masks["end_mask"], i) else e, s))
    return slicing.getitem(convert_to_tensor(input_), tuple(key))


def parallel_stack(values: Sequence, name: str = "parallel_stack") -> Tensor:
    """Stacks `values` along a new first dim inside a graph (as stack; TF copies them in
    parallel). Eagerly it raises RuntimeError, as TF does."""
    from kilnflow.context import executing_eagerly
    if executing_eagerly():
        raise RuntimeError(errors.with_location(
            "tf.parallel_stack() is not compatible with eager execution."))
    return joining.stack(values, axis=0)


def histogram_fixed_width_bins(values: Any, value_range: Any, nbins: Any = 100,
                               dtype: Any = _dtypes.int32, name: Optional[str] = None) -> Tensor:
    """The bin index of each value for `nbins` equal bins over value_range; values below or
    above the range fall in the first or last bin.

    >>> import kilnflow as kf
    >>> kf.histogram_fixed_width_bins([-1.0, 0.0, 1.5, 2.0, 5.0, 15.0], [0.0, 5.0],
    ...                               nbins=5).numpy().tolist()
    [0, 0, 1, 2, 4, 4]
    """
    v = convert_to_tensor(values)
    if v.dtype not in _dtypes.REAL:
        raise TypeError(errors.with_location(
            f"histogram_fixed_width_bins: `values` must be real, got {v.dtype.name}"))
    bounds = convert_to_tensor(value_range, v.dtype)
    if bounds.shape.rank is not None and bounds.shape.as_list() != [2]:
        raise ValueError(errors.with_location(
            f"histogram_fixed_width_bins: `value_range` must have shape [2], got "
            f"{bounds.shape}"))
    count = python_int(nbins, "histogram_fixed_width_bins", "nbins")
    if count <= 0:
        raise invalid_argument(f"nbins should be a positive number, got {count}",
                               "HistogramFixedWidthBins")
    work = _dtypes.float64 if v.dtype == _dtypes.float64 else _dtypes.float32
    lo, hi = math.cast(bounds[0], work), math.cast(bounds[1], work)
    scaled = (math.cast(v, work) - lo) / (hi - lo) * count
    index = math.clip_by_value(math.floor(scaled), 0.0, float(count - 1))
    return math.cast(index, dtype, name=name)


def approx_top_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, is_max_k: bool = True,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True,
                 name: Optional[str] = None) -> tuple:
    """(values, indices) of the k largest (is_max_k) or smallest entries along
    reduction_dimension. On CPU TF computes them exactly, and so does this."""
    x = convert_to_tensor(operand)
    rank = x.shape.rank
    if rank is None:
        raise ValueError(errors.with_location("approx_top_k: `operand` needs a known rank"))
    from kilnflow.ops.args import axis_arg
    axis = axis_arg(reduction_dimension, rank, "ApproxTopK", "reduction_dimension")
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = reshaping.transpose(x, perm) if axis != rank - 1 else x
    values, indices = sorting.top_k(moved if is_max_k else -moved, k=k)
    if not is_max_k:
        values = -values
    if axis != rank - 1:
        back = list(np.argsort(perm))
        values, indices = reshaping.transpose(values, back), reshaping.transpose(indices, back)
    return values, indices


def required_space_to_batch_paddings(input_shape: Any, block_shape: Any,
                                     base_paddings: Any = None,
                                     name: Optional[str] = None) -> tuple:
    """(paddings, crops) for space_to_batch: the least padding past base_paddings that makes
    each padded spatial size divisible by its block size.

    >>> import kilnflow as kf
    >>> p, c = kf.required_space_to_batch_paddings([5, 6], [2, 4])
    >>> p.numpy().tolist(), c.numpy().tolist()
    ([[0, 1], [0, 2]], [[0, 1], [0, 2]])
    """
    shape_t = math.cast(convert_to_tensor(input_shape), _dtypes.int32)
    block = math.cast(convert_to_tensor(block_shape), _dtypes.int32)
    for what, t in (("input_shape", shape_t), ("block_shape", block)):
        if t.shape.rank != 1:
            raise ValueError(errors.with_location(
                f"required_space_to_batch_paddings: `{what}` must be a vector, got {t.shape}"))
    if shape_t.shape[0] is not None and block.shape[0] is not None and \
            shape_t.shape[0] != block.shape[0]:
        raise ValueError(errors.with_location(
            f"required_space_to_batch_paddings: `input_shape` and `block_shape` must have one "
            f"length, got {shape_t.shape[0]} and {block.shape[0]}"))
    if base_paddings is None:
        base = array.zeros(joining.stack([array.size(block), 2]), _dtypes.int32)
    else:
        base = math.cast(convert_to_tensor(base_paddings), _dtypes.int32)
    start, base_end = base[:, 0], base[:, 1]
    full = shape_t + start + base_end
    extra = math.floormod(block - math.floormod(full, block), block)
    paddings = joining.stack([start, base_end + extra], axis=1)
    crops = joining.stack([array.zeros_like(extra), extra], axis=1)
    return paddings, crops
