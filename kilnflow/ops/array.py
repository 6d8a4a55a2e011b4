"""Array ops that make or describe tensors: shape, size, rank, identity, stop_gradient,
zeros/ones/fill/eye/linspace/range, one_hot and where. (reshaping.py changes a tensor's
shape, joining.py concatenates and splits, slicing.py indexes, sorting.py sorts.)

Each op is one defop() beside its public function. Shape rules accept unknown dims;
arguments that fix an output shape are attrs when known at build time, and the Dynamic*
variants take them as int tensors instead.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import binary, constant, convert_to_tensor, operand
from kilnflow.shapes import TensorSpec, broadcast_shapes
from kilnflow.tensor import EagerTensor, Tensor
from kilnflow.ops import reshaping
from kilnflow.ops.args import (INTEGERS, REAL, axis_arg, dims_from, int_vector, invalid_argument,
                               is_int, is_tensorish, python_int, type_error)


# ---------------------------------------------------------------- shape, size, rank

def _index_dtype(dtype: Any, what: str) -> _dtypes.DType:
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise type_error(f"`{what}` must be int32 or int64, got {dtype.name}")
    return dtype


def _shape_rule(x: Any, *, out_type: _dtypes.DType) -> TensorSpec:
    rules.require((_dtypes.int32, _dtypes.int64), TensorSpec([], out_type), "shape",
                  "out_type")
    return TensorSpec([x.shape.rank], out_type)


def _size_rule(x: Any, *, out_type: _dtypes.DType) -> TensorSpec:
    rules.require((_dtypes.int32, _dtypes.int64), TensorSpec([], out_type), "size", "out_type")
    return TensorSpec([], out_type)


# shape_only: with a known static shape, constant_fold turns these into constants
SHAPE = defop("Shape", shape=_shape_rule, shape_only=True,
              kernel=lambda x, *, out_type: np.array(x.shape, out_type.as_numpy_dtype))
SIZE = defop("Size", shape=_size_rule, shape_only=True,
             kernel=lambda x, *, out_type: np.asarray(x.size, out_type.as_numpy_dtype))
RANK = defop("Rank", shape=lambda x: TensorSpec([], _dtypes.int32), shape_only=True,
             kernel=lambda x: np.asarray(x.ndim, np.int32))


def shape(input: Any, out_type: Any = _dtypes.int32,  # noqa: A002
          name: Optional[str] = None) -> Tensor:
    """The shape of a tensor as a 1-D int tensor (dynamic: the value when run).

    >>> import kilnflow as kf
    >>> kf.shape(kf.zeros([2, 3])).numpy().tolist()
    [2, 3]
    """
    if _is_sparse(input):  # a SparseTensor's shape is its dense_shape, as in TF
        from kilnflow.ops import math as math_ops  # math builds on this module
        return math_ops.cast(input.dense_shape, _index_dtype(out_type, "out_type"), name=name)
    x = convert_to_tensor(input)
    return bind(SHAPE, (x,), {"out_type": _index_dtype(out_type, "out_type")}, name=name)


def size(input: Any, out_type: Any = _dtypes.int32,  # noqa: A002
         name: Optional[str] = None) -> Tensor:
    """The number of elements of a tensor, as a scalar int tensor (of a SparseTensor: its
    dense shape's product; of a RaggedTensor: its values' count, as in TF)."""
    if _is_sparse(input):
        from kilnflow.ops import math as math_ops, reduction  # both build on this module
        dense_size = reduction.reduce_prod(input.dense_shape)
        return math_ops.cast(dense_size, _index_dtype(out_type, "out_type"), name=name)
    if hasattr(input, "flat_values"):
        input = input.flat_values
    x = convert_to_tensor(input)
    return bind(SIZE, (x,), {"out_type": _index_dtype(out_type, "out_type")}, name=name)


def rank(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The number of dimensions of a tensor, as a scalar int32 tensor."""
    if _is_sparse(input) or hasattr(input, "flat_values"):
        return _composite_rank(input, name)
    return bind(RANK, (convert_to_tensor(input),), name=name)


def _composite_rank(input: Any, name: Optional[str]) -> Tensor:  # noqa: A002
    """A SparseTensor's rank is its dense shape's length; a RaggedTensor's, its ragged
    dims plus its values' rank (as TF gives them)."""
    from kilnflow.ops import math as math_ops  # math builds on this module
    if _is_sparse(input):
        return math_ops.cast(shape(input.dense_shape)[0], _dtypes.int32, name=name)
    values = convert_to_tensor(input.flat_values)
    return math_ops.add(bind(RANK, (values,)), input.ragged_rank, name=name)


def _is_sparse(value: Any) -> bool:
    """A SparseTensor (duck-typed: ops sit below kilnflow.sparse in the layers)."""
    return hasattr(value, "dense_shape") and hasattr(value, "indices") and \
        not hasattr(value, "_as_tensor") and not isinstance(value, Tensor)


# ---------------------------------------------------------------- identity, stop_gradient

IDENTITY = defop("Identity", shape=rules.same_as(0), kernel=lambda x: x,
                 grad=lambda op, dy: [dy], same_dtype=False, identity=True)
STOP_GRADIENT = defop("StopGradient", shape=rules.same_as(0), kernel=lambda x: x,
                      same_dtype=False)


def identity(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Returns a tensor with the same value as `input` (a graph node of its own)."""
    return bind(IDENTITY, (convert_to_tensor(input),), name=name)


def stop_gradient(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The same value as `input`, but gradients do not flow through it."""
    return bind(STOP_GRADIENT, (convert_to_tensor(input),), name=name)


# ---------------------------------------------------------------- filling

FILL = defop("Fill", check_eager=True,
             shape=lambda *, shape, value, dtype: TensorSpec(shape, dtype),
             kernel=lambda *, shape, value, dtype: np.full(shape, value, dtype.as_numpy_dtype))
DYNAMIC_FILL = defop(
    "DynamicFill", shape=lambda s, *, value, dtype: TensorSpec(dims_from(s), dtype),
    kernel=lambda s, *, value, dtype: np.full(tuple(int(d) for d in s), value,
                                              dtype.as_numpy_dtype))


def _filled(shape_arg: Any, value: Any, dtype: Any, name: Optional[str]) -> Tensor:
    dtype = _dtypes.as_dtype(dtype)
    if dtype.kind == "s" and not isinstance(value, (bytes, str)):
        if value != 0:  # TF: zeros of strings are empty strings, ones have no meaning
            raise type_error(f"Cannot convert {value!r} to EagerTensor of dtype string")
        value = b""
    if is_int(shape_arg):
        shape_arg = [shape_arg]
    elif is_tensorish(shape_arg) and convert_to_tensor(shape_arg).shape.rank == 0:
        shape_arg = reshaping.reshape(shape_arg, [1])
    shape_tensor, dims = int_vector(shape_arg, "Fill", "shape")
    if dims is None:
        return bind(DYNAMIC_FILL, (shape_tensor,), {"value": value, "dtype": dtype},
                    name=name)
    bad = next((d for d in dims if d < 0), None)
    if bad is not None:
        raise invalid_argument(f"Dimension {bad} must be >= 0 in shape {dims}", "Fill")
    return bind(FILL, (), {"shape": tuple(dims), "value": value, "dtype": dtype}, name=name)


def zeros(shape: Any, dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of zeros; `shape` is a list, TensorShape, int or 1-D int tensor.

    >>> import kilnflow as kf
    >>> kf.zeros(kf.TensorShape([2, 1]), kf.int32).numpy().tolist()
    [[0], [0]]
    """
    return _filled(shape, 0, dtype, name)


def ones(shape: Any, dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of ones; `shape` is a list, TensorShape, int or 1-D int tensor."""
    return _filled(shape, 1, dtype, name)


def fill(dims: Any, value: Any, name: Optional[str] = None) -> Tensor:
    """A tensor of shape `dims` filled with the scalar `value` (whose dtype it takes).

    >>> import kilnflow as kf
    >>> kf.fill([2], 7).numpy().tolist()
    [7, 7]
    """
    v = convert_to_tensor(value)
    if v.shape.rank not in (0, None):
        raise invalid_argument(f"value must be a scalar, got a tensor of shape {v.shape}", "Fill")
    if isinstance(v, EagerTensor) and not is_tensorish(value):
        return _filled(dims, v._value.item(), v.dtype, name)
    # A tensor value may be differentiated (and may be symbolic): broadcast it instead.
    return reshaping.broadcast_to(v, [dims] if is_int(dims) else dims, name=name)


def _like(x: Any, value: int, dtype: Any, name: Optional[str]) -> Tensor:
    x = convert_to_tensor(x)
    dtype = _dtypes.as_dtype(dtype) if dtype is not None else x.dtype
    if x.shape.is_fully_defined():
        return _filled(x.shape.as_list(), value, dtype, name)
    return _filled(shape(x), value, dtype, name)


def zeros_like(input: Any, dtype: Any = None, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Zeros with the shape (and, unless given, dtype) of `input`."""
    return _like(input, 0, dtype, name)


def ones_like(input: Any, dtype: Any = None, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Ones with the shape (and, unless given, dtype) of `input`."""
    if dtype is None and getattr(getattr(input, "dtype", None), "kind", None) == "s":
        raise invalid_argument("Value for attr 'T' of string is not in the list of allowed "
                               "values (a string tensor has no ones)", "OnesLike")
    return _like(input, 1, dtype, name)


def gradient_seed(target: Tensor) -> Tensor:
    """The default output gradient of `target`: ones (zeros of a string target, which no
    gradient reaches, since a string has no ones)."""
    return _like(target, 0 if target.dtype.kind == "s" else 1, None, None)


def _eye_kernel(*, num_rows: int, num_columns: int, batch_shape: tuple,
                dtype: _dtypes.DType) -> Any:
    matrix = np.eye(num_rows, num_columns, dtype=dtype.as_numpy_dtype)
    return np.broadcast_to(matrix, batch_shape + matrix.shape).copy()


EYE = defop("Eye", check_eager=True, kernel=_eye_kernel,
            shape=lambda *, num_rows, num_columns, batch_shape, dtype: TensorSpec(
                list(batch_shape) + [num_rows, num_columns], dtype))


def eye(num_rows: Any, num_columns: Any = None, batch_shape: Any = None,
        dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
    """An identity matrix (or a batch of them, shape batch_shape + [rows, columns]).

    >>> import kilnflow as kf
    >>> kf.eye(2, 3, dtype=kf.int32).numpy().tolist()
    [[1, 0, 0], [0, 1, 0]]
    """
    if _dtypes.as_dtype(dtype).kind == "s":
        raise type_error("Cannot convert 1 to EagerTensor of dtype string")
    rows = python_int(num_rows, "Eye", "num_rows")
    columns = rows if num_columns is None else python_int(num_columns, "Eye", "num_columns")
    batch: list = []
    if batch_shape is not None:
        _, batch = int_vector(batch_shape, "Eye", "batch_shape")
        if batch is None:
            raise ValueError(errors.with_location(
                "eye: `batch_shape` must be known when the graph is built"))
    for what, d in [("num_rows", rows), ("num_columns", columns)] + [("batch_shape", b)
                                                                      for b in batch]:
        if d < 0:
            raise invalid_argument(f"`{what}` must be non-negative, got {d}", "Eye")
    return bind(EYE, (), {"num_rows": rows, "num_columns": columns,
                          "batch_shape": tuple(batch), "dtype": _dtypes.as_dtype(dtype)},
                name=name)


def _linspace_rule(start: Any, stop: Any, *, num: int, axis: int) -> TensorSpec:
    batch = broadcast_shapes(start.shape, stop.shape)
    if batch.rank is None:
        return TensorSpec(None, start.dtype)
    dims = batch.as_list()
    dims.insert(rules.normalize_axis(axis, len(dims) + 1), num)
    return TensorSpec(dims, start.dtype)


def _linspace_kernel(start: Any, stop: Any, *, num: int, axis: int) -> Any:
    return np.linspace(start, stop, num, axis=axis, dtype=start.dtype)


def _linspace_grad(op: Any, dy: Any) -> list:
    from kilnflow.ops.reduction import reduce_sum
    num, axis = op.attrs["num"], op.attrs["axis"]
    rank = op.outputs[0].shape.rank
    # Element i is start * (1 - t_i) + stop * t_i with t_i = i / (num - 1).
    fractions = np.linspace(0.0, 1.0, num) if num > 1 else np.zeros(num)
    t_shape = [1] * rank
    t_shape[axis] = num
    t = constant(fractions.reshape(t_shape), dy.dtype)
    return [reduce_sum(dy * (1 - t), axis), reduce_sum(dy * t, axis)]


LINSPACE = defop("LinSpace", check_eager=True, shape=_linspace_rule, kernel=_linspace_kernel,
                 grad=_linspace_grad, dtypes=_dtypes.FLOATS)


def linspace(start: Any, stop: Any, num: Any, name: Optional[str] = None,
             axis: int = 0) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` inclusive, along a new `axis`
    (start and stop may be tensors; they broadcast).

    >>> import kilnflow as kf
    >>> kf.linspace(0.0, 1.0, 5).numpy().tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    start_t = convert_to_tensor(start)
    if start_t.dtype.is_integer:  # TF: integer ends give float64 values
        from kilnflow.ops.math import cast  # math builds on this module: a late import
        start_t = cast(start_t, _dtypes.float64)
    _, stop_t = binary(start_t, stop)
    count = python_int(num, "LinSpace", "num")
    if count < 0:
        raise invalid_argument(f"Requires num >= 0, got {count}", "LinSpace")
    try:
        batch = broadcast_shapes(start_t.shape, stop_t.shape)
    except ValueError as exc:  # TF: BroadcastArgs of start and stop fails
        raise invalid_argument(f"`start` and `stop` do not broadcast: {exc}", "LinSpace") \
            from exc
    axis = axis_arg(axis, None if batch.rank is None else batch.rank + 1, "LinSpace")
    return bind(LINSPACE, (start_t, stop_t), {"num": count, "axis": axis}, name=name)


# ---------------------------------------------------------------- range

def _range_length(start: Any, limit: Any, delta: Any) -> int:
    if delta == 0:
        raise ValueError("Requires delta != 0")
    if delta > 0 and start > limit:
        raise ValueError(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise ValueError(f"Requires start >= limit when delta < 0: {start}/{limit}")
    return int(np.ceil((limit - start) / delta))


def _dynamic_range_kernel(start: Any, limit: Any, delta: Any) -> Any:
    _range_length(start, limit, delta)  # TF's messages for a bad delta or direction
    return np.arange(start, limit, delta, dtype=start.dtype)


RANGE = defop("Range", check_eager=True, shape=lambda *, start, limit, delta, dtype: TensorSpec(
    [_range_length(start, limit, delta)], dtype),
    kernel=lambda *, start, limit, delta, dtype: np.arange(start, limit, delta,
                                                           dtype=dtype.as_numpy_dtype))
DYNAMIC_RANGE = defop(
    "DynamicRange", shape=lambda start, limit, delta: TensorSpec([None], start.dtype),
    kernel=_dynamic_range_kernel)
# TF picks the widest of the arguments' dtypes, in this order.
_RANGE_DTYPES = (_dtypes.int32, _dtypes.int64, _dtypes.float16, _dtypes.float32,
                 _dtypes.float64)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,  # noqa: A001
          name: str = "range") -> Tensor:
    """A 1-D tensor [start, start + delta, ...) up to but excluding `limit`.

    >>> import kilnflow as kf
    >>> kf.range(7, -1, -1).numpy().tolist()
    [7, 6, 5, 4, 3, 2, 1, 0]
    """
    if limit is None:
        start, limit = 0, start
    tensors = [convert_to_tensor(v) for v in (start, limit, delta)]
    for what, t in zip(("start", "limit", "delta"), tensors):
        if t.shape.rank not in (0, None) or t.dtype not in REAL:
            raise invalid_argument(f"`{what}` must be a real scalar, got {t!r}", "Range")
    if dtype is None:
        dtype = max((t.dtype for t in tensors),
                    key=lambda d: _RANGE_DTYPES.index(d) if d in _RANGE_DTYPES else -1)
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in REAL:
        raise type_error(f"range: argument `dtype` must be a real dtype, got {dtype.name}")
    known = [rules.constant_value(t) for t in tensors]
    if any(k is None for k in known):
        from kilnflow.ops.math import cast
        return bind(DYNAMIC_RANGE, [cast(t, dtype) for t in tensors], name=name)
    plain = [k.item() for k in known]
    if dtype.is_integer:
        plain = [int(v) for v in plain]
    try:
        _range_length(*plain)
    except ValueError as exc:
        raise invalid_argument(str(exc), "Range") from None
    return bind(RANGE, (), {"start": plain[0], "limit": plain[1], "delta": plain[2],
                            "dtype": dtype}, name=name)


# ---------------------------------------------------------------- one_hot

def _one_hot_rule(indices: Any, on: Any, off: Any, *, depth: int, axis: int) -> TensorSpec:
    rules.require(INTEGERS, indices, "one_hot", "indices")
    for what, v in (("on_value", on), ("off_value", off)):
        if v.shape.rank not in (0, None):
            raise ValueError(f"one_hot: `{what}` must be a scalar, got shape {v.shape}")
    if indices.shape.rank is None:
        return TensorSpec(None, on.dtype)
    dims = indices.shape.as_list()
    dims.insert(axis, depth)
    return TensorSpec(dims, on.dtype)


def _one_hot_kernel(indices: Any, on: Any, off: Any, *, depth: int, axis: int) -> Any:
    hot = indices[..., None] == np.arange(depth)  # out-of-range indices match nothing
    return np.moveaxis(np.where(hot, on, off), -1, axis)


ONE_HOT = defop("OneHot", check_eager=True,
                shape=_one_hot_rule, kernel=_one_hot_kernel, same_dtype=(1, 2),
                dtypes=INTEGERS)


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None,
            axis: Any = None, dtype: Any = None, name: Optional[str] = None) -> Tensor:
    """A one-hot tensor: `on_value` where the new `axis` (default last) equals the index,
    `off_value` elsewhere (also for out-of-range indices). Not differentiable.

    >>> import kilnflow as kf
    >>> kf.one_hot([0, 2], 3).numpy().tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    i = convert_to_tensor(indices)
    if dtype is None:
        given = [v for v in (on_value, off_value) if is_tensorish(v)]
        given = given or [convert_to_tensor(v) for v in (on_value, off_value) if v is not None]
        dtype = convert_to_tensor(given[0]).dtype if given else _dtypes.float32
    dtype = _dtypes.as_dtype(dtype)
    on = operand(1 if on_value is None else on_value, dtype)
    off = operand(0 if off_value is None else off_value, dtype)
    if on.dtype is not dtype or off.dtype is not dtype:
        bad = on if on.dtype is not dtype else off
        raise type_error(f"one_hot: on_value and off_value must have dtype {dtype.name}, "
                          f"got {bad.dtype.name}")
    for what, v in (("on_value", on), ("off_value", off)):
        if v.shape.rank not in (0, None):  # np.where would broadcast it
            raise invalid_argument(f"`{what}` must be a scalar, got shape {v.shape}", "OneHot")
    count = python_int(depth, "OneHot", "depth")
    if count < 0:
        raise invalid_argument(f"depth must be non-negative, got: {count}", "OneHot")
    out_rank = None if i.shape.rank is None else i.shape.rank + 1
    where_ = -1 if axis is None else python_int(axis, "OneHot", "axis")
    if where_ == -1:
        if out_rank is None:
            raise ValueError(errors.with_location("one_hot needs indices of known rank"))
        where_ = out_rank - 1
    elif out_rank is not None and not 0 <= where_ < out_rank:
        raise invalid_argument(f"Expected axis to be -1 or between [0, {out_rank}). But received: "
                       f"{where_}", "OneHot")
    return bind(ONE_HOT, (i, on, off), {"depth": count, "axis": where_}, name=name)


# ---------------------------------------------------------------- where / select

def _select_grad(op: Any, dy: Any) -> list:
    mask = op.inputs[0]
    zeros = zeros_like(dy)
    return [None, where(mask, dy, zeros), where(mask, zeros, dy)]


SELECT = defop("SelectV2", shape=lambda c, x, y: TensorSpec(
    broadcast_shapes(broadcast_shapes(c.shape, x.shape), y.shape), x.dtype),
    kernel=np.where, grad=_select_grad, same_dtype=(1, 2),
    fusable="where({0}, {1}, {2})")
WHERE_INDICES = defop("Where", shape=lambda c: TensorSpec([None, c.shape.rank], _dtypes.int64),
                      kernel=lambda c: np.argwhere(c).astype(np.int64), same_dtype=False)


def where(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> Tensor:
    """With x and y: elementwise select (broadcasting). Alone: indices of true elements.

    >>> import kilnflow as kf
    >>> kf.where([True, False], 1, 2).numpy().tolist()
    [1, 2]
    """
    c = convert_to_tensor(condition)
    if x is None and y is None:
        if c.shape.rank == 0:  # NumPy answers a [1, 0] tensor; TF has no positions to list
            raise invalid_argument("WhereOp : Unhandled input dimensions: 0", "Where")
        if not c.dtype.is_bool:
            from kilnflow.ops.math import not_equal
            c = not_equal(c, 0)
        return bind(WHERE_INDICES, (c,), name=name)
    if x is None or y is None:
        raise ValueError(errors.with_location("where: x and y must both be given, or neither"))
    if not c.dtype.is_bool:
        raise type_error(f"where: `condition` must be a bool tensor, got {c.dtype.name}")
    x, y = binary(x, y)
    return bind(SELECT, (c, x, y), name=name)
