"""Array ops: shapes, reshaping, joining, slicing, filling, selection.

Each op is one defop() beside its public function. Shape rules accept unknown dims;
ops whose output shape depends on a tensor's value read it with rules.constant_value.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops import rules
from kilnflow.ops.convert import binary, constant, convert_to_tensor
from kilnflow.ops.opdef import bind, defop
from kilnflow.shapes import TensorShape, TensorSpec, broadcast_shapes
from kilnflow.tensor import EagerTensor, Tensor, wrap

ANY_DTYPE = None


# ---------------------------------------------------------------- shape, size, rank

def _shape_rule(x: Any, *, out_type: _dtypes.DType) -> TensorSpec:
    return TensorSpec([x.shape.rank], out_type)


SHAPE = defop("Shape", shape=_shape_rule,
              kernel=lambda x, *, out_type: np.array(x.shape, out_type.as_numpy_dtype))
SIZE = defop("Size", shape=lambda x, *, out_type: TensorSpec([], out_type),
             kernel=lambda x, *, out_type: np.asarray(x.size, out_type.as_numpy_dtype))
RANK = defop("Rank", shape=lambda x: TensorSpec([], _dtypes.int32),
             kernel=lambda x: np.asarray(x.ndim, np.int32))


def shape(input: Any, out_type: Any = _dtypes.int32, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The shape of a tensor, as a 1-D int tensor (dynamic: known only when run)."""
    x = convert_to_tensor(input)
    return bind(SHAPE, (x,), {"out_type": _dtypes.as_dtype(out_type)}, name=name)


def size(input: Any, out_type: Any = _dtypes.int32, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The number of elements of a tensor, as a scalar int tensor."""
    x = convert_to_tensor(input)
    return bind(SIZE, (x,), {"out_type": _dtypes.as_dtype(out_type)}, name=name)


def rank(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The number of dimensions of a tensor, as a scalar int32 tensor."""
    return bind(RANK, (convert_to_tensor(input),), name=name)


# ---------------------------------------------------------------- identity, stop_gradient

IDENTITY = defop("Identity", shape=rules.same_as(0), kernel=lambda x: x,
                 grad=lambda op, dy: [dy], same_dtype=False)
STOP_GRADIENT = defop("StopGradient", shape=rules.same_as(0), kernel=lambda x: x,
                      same_dtype=False)


def identity(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Returns a tensor with the same value as `input` (a graph node of its own)."""
    return bind(IDENTITY, (convert_to_tensor(input),), name=name)


def stop_gradient(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The same value as `input`, but gradients do not flow through it."""
    return bind(STOP_GRADIENT, (convert_to_tensor(input),), name=name)


# ---------------------------------------------------------------- reshape and friends

def _static_shape_arg(shape_arg: Any, op: str) -> tuple:
    """(shape tensor or None, list of dims or None) from a shape argument."""
    if isinstance(shape_arg, Tensor):
        value = rules.constant_value(shape_arg)
        if value is None:
            return shape_arg, None
        return None, [int(d) for d in np.asarray(value).reshape(-1)]
    if isinstance(shape_arg, TensorShape):
        return None, shape_arg.as_list()
    try:
        dims = [int(d) if not isinstance(d, Tensor) else d for d in shape_arg]
    except TypeError:
        raise TypeError(f"{op}: `shape` must be a list of ints or an int tensor, "
                        f"got {shape_arg!r}") from None
    if any(isinstance(d, Tensor) for d in dims):
        return stack([convert_to_tensor(d, _dtypes.int32) for d in dims]), None
    return None, dims


def _reshape_dims(x_shape: TensorShape, dims: Sequence) -> list:
    if sum(1 for d in dims if d == -1) > 1:
        raise ValueError(f"Only one input size may be -1, not both in shape {list(dims)}")
    if any(d < -1 for d in dims):
        raise ValueError(f"Size of a dimension must be non-negative or -1, got {list(dims)}")
    total = x_shape.num_elements()
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1]))
        if total is None:
            return [None if d == -1 else d for d in dims]
        if known == 0 or total % known:
            raise ValueError(f"Input to reshape is a tensor with {total} values, but the "
                             f"requested shape {list(dims)} is not compatible")
        return [total // known if d == -1 else d for d in dims]
    if total is not None and total != int(np.prod(dims)):
        raise ValueError(f"Input to reshape is a tensor with {total} values, but the requested "
                         f"shape has {int(np.prod(dims))}")
    return list(dims)


RESHAPE = defop(
    "Reshape",
    shape=lambda x, *, shape: TensorSpec(_reshape_dims(x.shape, shape), x.dtype),
    kernel=lambda x, *, shape: np.reshape(x, shape),
    grad=lambda op, dy: [_reshape_like(dy, op.inputs[0])], same_dtype=False)
DYNAMIC_RESHAPE = defop(
    "DynamicReshape",
    shape=lambda x, s: TensorSpec([None] * (s.shape[0] if s.shape.rank == 1 and
                                            s.shape[0] is not None else 0)
                                  if s.shape.rank == 1 and s.shape[0] is not None else None,
                                  x.dtype),
    kernel=lambda x, s: np.reshape(x, tuple(int(d) for d in s)),
    grad=lambda op, dy: [_reshape_like(dy, op.inputs[0]), None], same_dtype=False)


def _reshape_like(dy: Tensor, x: Tensor) -> Tensor:
    if x.shape.is_fully_defined():
        return reshape(dy, x.shape.as_list())
    return reshape(dy, shape(x))


def reshape(tensor: Any, shape: Any, name: Optional[str] = None) -> Tensor:
    """Reshapes a tensor; one dim may be -1 and is then inferred.

    >>> import kilnflow as kf
    >>> kf.reshape(kf.range(6), [2, -1]).shape
    TensorShape([2, 3])
    """
    x = convert_to_tensor(tensor)
    shape_tensor, dims = _static_shape_arg(shape, "reshape")
    if dims is None:
        return bind(DYNAMIC_RESHAPE, (x, cast_int32(shape_tensor)), name=name)
    return bind(RESHAPE, (x,), {"shape": tuple(dims)}, name=name)


def cast_int32(t: Tensor) -> Tensor:
    from kilnflow.ops.math import cast
    return cast(t, _dtypes.int32)


def _broadcast_to_rule(x: Any, *, shape: tuple) -> TensorSpec:
    try:
        out = broadcast_shapes(x.shape, TensorShape(shape))
    except ValueError:
        raise ValueError(f"Unable to broadcast tensor of shape {x.shape} to {list(shape)}") \
            from None
    if out.rank is not None and out.as_list() != [d for d in shape]:
        if out.rank != len(shape) or any(d is not None and s is not None and d != s
                                         for d, s in zip(out.as_list(), shape)):
            raise ValueError(f"Unable to broadcast tensor of shape {x.shape} to {list(shape)}")
    return TensorSpec(shape, x.dtype)


BROADCAST_TO = defop("BroadcastTo", shape=_broadcast_to_rule,
                     kernel=lambda x, *, shape: np.broadcast_to(x, shape),
                     grad=lambda op, dy: [sum_to_shape(dy, op.inputs[0])], same_dtype=False)
DYNAMIC_BROADCAST_TO = defop(
    "DynamicBroadcastTo",
    shape=lambda x, s: TensorSpec([None] * s.shape[0] if s.shape.rank == 1 and
                                  s.shape[0] is not None else None, x.dtype),
    kernel=lambda x, s: np.broadcast_to(x, tuple(int(d) for d in s)),
    grad=lambda op, dy: [sum_to_shape(dy, op.inputs[0]), None], same_dtype=False)


def broadcast_to(input: Any, shape: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Broadcasts `input` to `shape` with NumPy rules."""
    x = convert_to_tensor(input)
    shape_tensor, dims = _static_shape_arg(shape, "broadcast_to")
    if dims is None:
        return bind(DYNAMIC_BROADCAST_TO, (x, cast_int32(shape_tensor)), name=name)
    if x.shape.is_fully_defined() and x.shape.as_list() == dims:
        return x
    return bind(BROADCAST_TO, (x,), {"shape": tuple(dims)}, name=name)


def _sum_to_shape_kernel(dy: Any, target: Any) -> Any:
    target = tuple(int(d) for d in target)
    lead = dy.ndim - len(target)
    axes = tuple(builtins.range(lead)) + tuple(
        lead + i for i, d in enumerate(target) if d == 1 and dy.shape[lead + i] != 1)
    out = np.sum(dy, axis=axes, dtype=dy.dtype) if axes else dy
    return np.reshape(out, target)


SUM_TO_SHAPE = defop(
    "SumToShape",
    shape=lambda dy, s: TensorSpec([None] * s.shape[0] if s.shape.rank == 1 and
                                   s.shape[0] is not None else None, dy.dtype),
    kernel=_sum_to_shape_kernel, same_dtype=False,
    grad=lambda op, g: [broadcast_to(g, shape(op.inputs[0])), None])


def sum_to_shape(dy: Tensor, like: Tensor) -> Tensor:
    """Sums `dy` over broadcast dims so it has `like`'s shape (undoes broadcasting)."""
    if like.shape.is_fully_defined() and dy.shape.is_fully_defined():
        target = like.shape.as_list()
        dims = dy.shape.as_list()
        if dims == target:
            return dy
        from kilnflow.ops.math import reduce_sum
        lead = len(dims) - len(target)
        axes = list(builtins.range(lead)) + [lead + i for i, d in enumerate(target)
                                    if d == 1 and dims[lead + i] != 1]
        out = reduce_sum(dy, axes) if axes else dy
        return reshape(out, target)
    return bind(SUM_TO_SHAPE, (dy, shape(like)))


def _expand_dims_rule(x: Any, *, axis: int) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec(None, x.dtype)
    rank = x.shape.rank
    if not -rank - 1 <= axis <= rank:
        raise ValueError(f"Invalid axis {axis}: must be in range [{-rank - 1}, {rank}]")
    dims = x.shape.as_list()
    dims.insert(axis % (rank + 1), 1)
    return TensorSpec(dims, x.dtype)


EXPAND_DIMS = defop("ExpandDims", shape=_expand_dims_rule,
                    kernel=lambda x, *, axis: np.expand_dims(x, axis),
                    grad=lambda op, dy: [_reshape_like(dy, op.inputs[0])], same_dtype=False,
                    check_eager=True)


def expand_dims(input: Any, axis: int, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Inserts a dimension of size 1 at `axis`."""
    x = convert_to_tensor(input)
    return bind(EXPAND_DIMS, (x,), {"axis": int(axis)}, name=name)


def _transpose_rule(x: Any, *, perm: tuple) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec([None] * len(perm), x.dtype)
    if sorted(perm) != list(builtins.range(x.shape.rank)):
        raise ValueError(f"transpose: perm {list(perm)} is not a permutation of the "
                         f"{x.shape.rank} dims of the input")
    dims = x.shape.as_list()
    return TensorSpec([dims[p] for p in perm], x.dtype)


TRANSPOSE = defop("Transpose", shape=_transpose_rule,
                  kernel=lambda x, *, perm: np.transpose(x, perm),
                  grad=lambda op, dy: [transpose(dy, list(np.argsort(op.attrs["perm"])))],
                  same_dtype=False, check_eager=True)


def transpose(a: Any, perm: Optional[Sequence] = None, conjugate: bool = False,
              name: Optional[str] = None) -> Tensor:
    """Permutes the dims of `a` (reverses them when `perm` is None)."""
    x = convert_to_tensor(a)
    if perm is None:
        if x.shape.rank is None:
            raise ValueError("transpose needs a known rank when perm is None")
        perm = list(builtins.range(x.shape.rank))[::-1]
    perm = tuple(int(p) for p in (rules.constant_value(perm) if isinstance(perm, Tensor)
                                  else perm))
    return bind(TRANSPOSE, (x,), {"perm": perm}, name=name)


# ---------------------------------------------------------------- filling

def _fill_rule(*, shape: tuple, value: Any, dtype: _dtypes.DType) -> TensorSpec:
    return TensorSpec(shape, dtype)


FILL = defop("Fill", shape=_fill_rule,
             kernel=lambda *, shape, value, dtype: np.full(shape, value, dtype.as_numpy_dtype))
DYNAMIC_FILL = defop(
    "DynamicFill",
    shape=lambda s, *, value, dtype: TensorSpec(
        [None] * s.shape[0] if s.shape.rank == 1 and s.shape[0] is not None else None, dtype),
    kernel=lambda s, *, value, dtype: np.full(tuple(int(d) for d in s), value,
                                              dtype.as_numpy_dtype))


def _filled(shape_arg: Any, value: Any, dtype: Any, name: Optional[str]) -> Tensor:
    dtype = _dtypes.as_dtype(dtype)
    shape_tensor, dims = _static_shape_arg(shape_arg if not isinstance(shape_arg, int)
                                           else [shape_arg], "fill")
    if dims is None:
        return bind(DYNAMIC_FILL, (cast_int32(shape_tensor),), {"value": value, "dtype": dtype},
                    name=name)
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(errors.with_location(
            f"Dimension -1 must be >= 0 in shape {dims} [Op:Fill]"))
    return bind(FILL, (), {"shape": tuple(dims), "value": value, "dtype": dtype}, name=name)


def zeros(shape: Any, dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of zeros."""
    return _filled(shape, 0, dtype, name)


def ones(shape: Any, dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
    """A tensor of ones."""
    return _filled(shape, 1, dtype, name)


def fill(dims: Any, value: Any, name: Optional[str] = None) -> Tensor:
    """A tensor of shape `dims` filled with the scalar `value`."""
    v = convert_to_tensor(value)
    if isinstance(v, EagerTensor):
        return _filled(dims, v._value.item(), v.dtype, name)
    return broadcast_to(v, dims, name=name)


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
    return _like(input, 1, dtype, name)


# ---------------------------------------------------------------- where / select

def _select_grad(op: Any, dy: Any) -> list:
    from kilnflow.ops.math import cast
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
    """With x and y: elementwise select (broadcasting). Alone: indices of true elements."""
    c = convert_to_tensor(condition)
    if x is None and y is None:
        if not c.dtype.is_bool:
            from kilnflow.ops.math import not_equal
            c = not_equal(c, 0)
        return bind(WHERE_INDICES, (c,), name=name)
    if x is None or y is None:
        raise ValueError("where: x and y must both be given, or neither")
    if not c.dtype.is_bool:
        raise TypeError(f"where: `condition` must be a bool tensor, got {c.dtype.name}")
    x, y = binary(x, y)
    return bind(SELECT, (c, x, y), name=name)


# ---------------------------------------------------------------- concat and stack

def _concat_rule(*xs: Any, axis: int) -> TensorSpec:
    known = [x for x in xs if x.shape.rank is not None]
    if not known:
        return TensorSpec(None, xs[0].dtype)
    rank = known[0].shape.rank
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use kf.stack instead)")
    axis = rules.normalize_axis(axis, rank)
    dims = list(known[0].shape.as_list())
    total: Optional[int] = 0
    for x in known:
        if x.shape.rank != rank:
            raise ValueError(f"Ranks of all input tensors should match: shape[0] = "
                             f"{known[0].shape} vs. {x.shape}")
        for i, d in enumerate(x.shape.as_list()):
            if i == axis:
                continue
            if dims[i] is None:
                dims[i] = d
            elif d is not None and d != dims[i]:
                raise ValueError(f"Dimension {i} in both shapes must be equal: "
                                 f"{known[0].shape} vs. {x.shape}")
    for x in xs:
        d = x.shape[axis] if x.shape.rank is not None else None
        total = None if total is None or d is None else total + d
    dims[axis] = total
    return TensorSpec(dims, xs[0].dtype)


def _concat_grad(op: Any, dy: Any) -> list:
    axis = op.attrs["axis"]
    sizes = [x.shape[axis] if x.shape.rank is not None else None for x in op.inputs]
    if None in sizes:
        sizes = [shape(x)[axis] for x in op.inputs]
    return list(split(dy, sizes, axis=axis))


CONCAT = defop("ConcatV2", shape=_concat_rule,
               kernel=lambda *xs, axis: np.concatenate(xs, axis=axis), grad=_concat_grad)


def concat(values: Sequence, axis: int, name: Optional[str] = None) -> Tensor:
    """Joins tensors along an existing `axis`."""
    tensors = [convert_to_tensor(v) for v in values]
    if len(tensors) == 1:
        return identity(tensors[0], name=name)
    rank = next((t.shape.rank for t in tensors if t.shape.rank is not None), None)
    axis = int(axis)
    if rank:
        if not -rank <= axis < rank:
            raise errors.InvalidArgumentError(errors.with_location(
                f"ConcatOp : Expected concatenating dimensions in the range [{-rank}, {rank}), "
                f"but got {axis} [Op:ConcatV2]"))
        axis %= rank
    return bind(CONCAT, tensors, {"axis": axis}, name=name)


def _stack_rule(*xs: Any, axis: int) -> TensorSpec:
    first = xs[0].shape
    for x in xs[1:]:
        if not x.shape.is_compatible_with(first):
            raise ValueError(f"Shapes of all inputs must match: values[0].shape = {first} != "
                             f"values[i].shape = {x.shape}")
        first = first.merge_with(x.shape)
    if first.rank is None:
        return TensorSpec(None, xs[0].dtype)
    dims = first.as_list()
    dims.insert(rules.normalize_axis(axis, len(dims) + 1), len(xs))
    return TensorSpec(dims, xs[0].dtype)


PACK = defop("Pack", shape=_stack_rule, kernel=lambda *xs, axis: np.stack(xs, axis=axis),
             grad=lambda op, dy: list(unstack(dy, num=len(op.inputs), axis=op.attrs["axis"])))


def stack(values: Sequence, axis: int = 0, name: Optional[str] = None) -> Tensor:
    """Stacks tensors of equal shape along a new `axis`."""
    tensors = [convert_to_tensor(v) for v in values]
    if not tensors:
        raise ValueError("stack: values must be a non-empty list")
    if len({t.dtype for t in tensors}) > 1:
        tensors = [convert_to_tensor(v, tensors[0].dtype) if not isinstance(v, Tensor) else t
                   for v, t in zip(values, tensors)]
    rank = tensors[0].shape.rank
    axis = int(axis)
    if rank is not None:
        axis = rules.normalize_axis(axis, rank + 1)
    return bind(PACK, tensors, {"axis": axis}, name=name)


def _unstack_rule(x: Any, *, num: int, axis: int) -> list:
    dims = x.shape.as_list()
    del dims[axis]
    return [TensorSpec(dims, x.dtype) for _ in builtins.range(num)]


UNPACK = defop("Unpack", shape=_unstack_rule, multi_output=True,
               kernel=lambda x, *, num, axis: tuple(np.moveaxis(x, axis, 0)),
               grad=lambda op, *dys: [stack([d if d is not None else zeros_like(o)
                                             for d, o in zip(dys, op.outputs)],
                                            axis=op.attrs["axis"])])


def unstack(value: Any, num: Optional[int] = None, axis: int = 0,
            name: Optional[str] = None) -> list:
    """Splits a tensor into a list of tensors along `axis` (which is removed)."""
    x = convert_to_tensor(value)
    if x.shape.rank is None:
        raise ValueError("unstack needs a tensor of known rank")
    axis = rules.normalize_axis(int(axis), x.shape.rank)
    n = x.shape[axis] if num is None else num
    if n is None:
        raise ValueError(f"Cannot infer argument `num` from shape {x.shape}")
    return list(bind(UNPACK, (x,), {"num": int(n), "axis": axis}, name=name))


def _split_rule(x: Any, *, sizes: tuple, axis: int) -> list:
    dims = x.shape.as_list()
    if dims[axis] is not None and sum(sizes) != dims[axis]:
        raise ValueError(f"Determined shape must either match input shape along split_dim "
                         f"exactly if fully specified, or be less than the size of the input "
                         f"along split_dim: sizes {list(sizes)} vs dim {dims[axis]}")
    out = []
    for s in sizes:
        d = list(dims)
        d[axis] = s
        out.append(TensorSpec(d, x.dtype))
    return out


SPLIT = defop("SplitV", shape=_split_rule, multi_output=True,
              kernel=lambda x, *, sizes, axis: tuple(np.split(x, np.cumsum(sizes)[:-1], axis)),
              grad=lambda op, *dys: [concat([d if d is not None else zeros_like(o)
                                             for d, o in zip(dys, op.outputs)],
                                            op.attrs["axis"])])


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: Optional[int] = None,
          name: Optional[str] = None) -> list:
    """Splits a tensor into `num_or_size_splits` pieces (an int: equal pieces) along `axis`."""
    x = convert_to_tensor(value)
    if x.shape.rank is None:
        raise ValueError("split needs a tensor of known rank")
    axis = rules.normalize_axis(int(axis), x.shape.rank)
    if isinstance(num_or_size_splits, Tensor):
        num_or_size_splits = rules.constant_value(num_or_size_splits).tolist()
    if isinstance(num_or_size_splits, int):
        d = x.shape[axis]
        if d is None:
            raise ValueError("split into equal pieces needs a known dimension")
        if d % num_or_size_splits:
            raise errors.InvalidArgumentError(errors.with_location(
                f"Number of ways to split should evenly divide the split dimension, but got "
                f"split_dim {axis} (size = {d}) and num_split {num_or_size_splits} [Op:Split]"))
        sizes = [d // num_or_size_splits] * num_or_size_splits
    else:
        sizes = [int(s) for s in num_or_size_splits]
        if -1 in sizes:
            d = x.shape[axis]
            sizes[sizes.index(-1)] = d - (sum(sizes) + 1)
    return list(bind(SPLIT, (x,), {"sizes": tuple(sizes), "axis": axis}, name=name))


# ---------------------------------------------------------------- range

def _range_rule(*, start: Any, limit: Any, delta: Any, dtype: _dtypes.DType) -> TensorSpec:
    if delta == 0:
        raise ValueError("Requires delta != 0")
    n = max(0, int(np.ceil((limit - start) / delta)))
    return TensorSpec([n], dtype)


RANGE = defop("Range", shape=_range_rule,
              kernel=lambda *, start, limit, delta, dtype: np.arange(
                  start, limit, delta, dtype=dtype.as_numpy_dtype))
DYNAMIC_RANGE = defop(
    "DynamicRange", shape=lambda s, l, d: TensorSpec([None], s.dtype),
    kernel=lambda s, l, d: np.arange(s, l, d, dtype=s.dtype))


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,  # noqa: A001
          name: str = "range") -> Tensor:
    """A 1-D tensor [start, start + delta, ...) up to but excluding `limit`.

    >>> import kilnflow as kf
    >>> kf.range(7, -1, -1).numpy().tolist()
    [7, 6, 5, 4, 3, 2, 1, 0]
    """
    if limit is None:
        start, limit = 0, start
    values = [start, limit, delta]
    if any(isinstance(v, Tensor) and rules.constant_value(v) is None for v in values) or \
            any(hasattr(v, "_as_tensor") for v in values):
        tensors = [convert_to_tensor(v) for v in values]
        target = _dtypes.as_dtype(dtype) if dtype is not None else next(
            (t.dtype for t in tensors if t.dtype.is_floating), tensors[0].dtype)
        from kilnflow.ops.math import cast
        tensors = [cast(t, target) for t in tensors]
        return bind(DYNAMIC_RANGE, tensors, name=name)
    plain = [rules.constant_value(v).item() if isinstance(v, Tensor) else v for v in values]
    if dtype is None:
        dtype = _dtypes.float32 if any(isinstance(v, float) for v in plain) else _dtypes.int32
        inferred = [v for v in values if isinstance(v, Tensor)]
        if inferred:
            dtype = inferred[0].dtype
    dtype = _dtypes.as_dtype(dtype)
    if plain[2] == 0:
        raise errors.InvalidArgumentError(errors.with_location("Requires delta != 0 [Op:Range]"))
    return bind(RANGE, (), {"start": plain[0], "limit": plain[1], "delta": plain[2],
                            "dtype": dtype}, name=name)


# ---------------------------------------------------------------- slicing: x[...]

def _normalize_index(key: Any) -> tuple:
    """Static index entries: int, slice (as a tuple), None (newaxis) or Ellipsis."""
    if not isinstance(key, tuple):
        key = (key,)
    spec = []
    for k in key:
        if isinstance(k, Tensor):
            value = rules.constant_value(k)
            if value is None:
                raise _DynamicIndex()
            if value.dtype.kind not in "iu" or value.ndim != 0:
                raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), newaxis "
                                f"(`None`) and scalar int32/int64 tensors are valid indices, "
                                f"got {k!r}")
            spec.append(int(value))
        elif k is None or k is Ellipsis:
            spec.append(k)
        elif isinstance(k, slice):
            parts = []
            for p in (k.start, k.stop, k.step):
                if isinstance(p, Tensor):
                    value = rules.constant_value(p)
                    if value is None:
                        raise _DynamicIndex()
                    p = int(value)
                elif p is not None:
                    p = int(p)
                parts.append(p)
            if parts[2] == 0:
                raise ValueError("slice step cannot be zero")
            spec.append(("slice",) + tuple(parts))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            spec.append(int(k))
        else:
            raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) "
                            f"and scalar int32/int64 tensors are valid indices, got {k!r}")
    return tuple(spec)


class _DynamicIndex(Exception):
    pass


def _numpy_index(spec: tuple) -> tuple:
    return tuple(slice(*e[1:]) if isinstance(e, tuple) else e for e in spec)


def _strided_slice_rule(x: Any, *, spec: tuple) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec(None, x.dtype)
    dims = x.shape.as_list()
    consumed = sum(1 for e in spec if e is not None and e is not Ellipsis)
    if consumed > len(dims):
        raise ValueError(f"Index out of range: too many indices ({consumed}) for a tensor of "
                         f"rank {len(dims)}")
    out, i = [], 0
    for e in spec:
        if e is None:
            out.append(1)
        elif e is Ellipsis:
            n = len(dims) - consumed
            out.extend(dims[i:i + n])
            i += n
        elif isinstance(e, tuple):
            d = dims[i]
            out.append(None if d is None else len(np.arange(d)[slice(*e[1:])]))
            i += 1
        else:
            d = dims[i]
            if d is not None and not -d <= e < d:
                raise ValueError(f"slice index {e} of dimension {i} out of bounds for shape "
                                 f"{x.shape}")
            i += 1
    out.extend(dims[i:])
    return TensorSpec(out, x.dtype)


def _strided_slice_kernel(x: Any, *, spec: tuple) -> Any:
    out = x[_numpy_index(spec)]
    return out


def _strided_slice_grad(op: Any, dy: Any) -> list:
    x = op.inputs[0]
    return [bind(STRIDED_SLICE_GRAD, (dy, shape(x)), {"spec": op.attrs["spec"]})]


def _strided_slice_grad_kernel(dy: Any, x_shape: Any, *, spec: tuple) -> Any:
    out = np.zeros(tuple(int(d) for d in x_shape), dy.dtype)
    out[_numpy_index(spec)] = dy
    return out


STRIDED_SLICE = defop("StridedSlice", shape=_strided_slice_rule, kernel=_strided_slice_kernel,
                      grad=_strided_slice_grad, same_dtype=False, check_eager=True)
STRIDED_SLICE_GRAD = defop(
    "StridedSliceGrad", shape=lambda dy, s, *, spec: TensorSpec(
        [None] * s.shape[0] if s.shape.rank == 1 and s.shape[0] is not None else None,
        dy.dtype),
    kernel=_strided_slice_grad_kernel, same_dtype=False,
    grad=lambda op, g: [bind(STRIDED_SLICE, (g,), {"spec": op.attrs["spec"]}), None])


def getitem(x: Any, key: Any) -> Tensor:
    """x[key] with TF's strided-slice semantics (ints, slices, Ellipsis, newaxis)."""
    x = convert_to_tensor(x)
    try:
        spec = _normalize_index(key)
    except _DynamicIndex:
        return _dynamic_getitem(x, key)
    return bind(STRIDED_SLICE, (x,), {"spec": spec}, name="strided_slice")


def _dynamic_getitem(x: Tensor, key: Any) -> Tensor:
    """Indexing with symbolic scalar tensors: x[i] and x[i, ...] via a gather."""
    if isinstance(key, Tensor):
        if key.dtype not in _dtypes.INTEGERS:
            raise TypeError(f"Only integer tensors can index, got {key.dtype.name}")
        return gather(x, key)
    raise NotImplementedError(
        "Indexing with symbolic tensors is supported for a single scalar index (x[i]); "
        f"got {key!r}")


def _gather_rule(params: Any, indices: Any, *, axis: int) -> TensorSpec:
    if indices.dtype not in _dtypes.INTEGERS:
        raise TypeError(f"gather: `indices` must be an integer tensor, got {indices.dtype.name}")
    if params.shape.rank is None or indices.shape.rank is None:
        return TensorSpec(None, params.dtype)
    dims = params.shape.as_list()
    axis = rules.normalize_axis(axis, len(dims))
    return TensorSpec(dims[:axis] + indices.shape.as_list() + dims[axis + 1:], params.dtype)


def _gather_kernel(params: Any, indices: Any, *, axis: int) -> Any:
    size = params.shape[axis]
    if indices.size and (indices.min() < 0 or indices.max() >= size):
        bad = indices[(indices < 0) | (indices >= size)].reshape(-1)[0]
        raise IndexError(f"indices = {bad} is not in [0, {size})")
    return np.take(params, indices, axis=axis)


def _gather_grad(op: Any, dy: Any) -> list:
    params, indices = op.inputs
    return [bind(GATHER_GRAD, (dy, indices, shape(params)), {"axis": op.attrs["axis"]}), None]


def _gather_grad_kernel(dy: Any, indices: Any, params_shape: Any, *, axis: int) -> Any:
    out = np.zeros(tuple(int(d) for d in params_shape), dy.dtype)
    np.add.at(out, (slice(None),) * axis + (indices,), dy)  # repeated indices accumulate
    return out


GATHER = defop("GatherV2", shape=_gather_rule, kernel=_gather_kernel, grad=_gather_grad,
               same_dtype=False, check_eager=True)
GATHER_GRAD = defop(
    "GatherGrad", shape=lambda dy, i, s, *, axis: TensorSpec(
        [None] * s.shape[0] if s.shape.rank == 1 and s.shape[0] is not None else None,
        dy.dtype),
    kernel=_gather_grad_kernel, same_dtype=False,
    grad=lambda op, g: [gather(g, op.inputs[1], axis=op.attrs["axis"]), None, None])


def gather(params: Any, indices: Any, axis: int = 0, batch_dims: int = 0,
           name: Optional[str] = None) -> Tensor:
    """Gathers slices of `params` along `axis` at `indices`."""
    if batch_dims:
        raise NotImplementedError("gather: batch_dims other than 0 is not supported yet")
    p = convert_to_tensor(params)
    i = convert_to_tensor(indices)
    axis = int(axis)
    if p.shape.rank:
        axis %= p.shape.rank
    return bind(GATHER, (p, i), {"axis": axis}, name=name)


