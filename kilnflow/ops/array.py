"""Array ops: shapes, reshaping, filling, joining, padding (slicing.py and sorting.py hold
indexing and sorting).

Each op is one defop() beside its public function. Shape rules accept unknown dims.
Arguments that fix an output shape (a reshape target, multiples, paddings) are attrs when
known at build time; the Dynamic* variants take them as int tensors instead. Indexing
with symbolic scalars (x[i], x[i:j]) feeds those values to StridedSlice as extra inputs.
Imports ops.convert, ops.opdef, ops.rules; ops.math only inside functions (it imports us).
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.ops.convert import binary, constant, convert_to_tensor, operand
from kilnflow.core.opdef import bind, defop
from kilnflow.shapes import TensorShape, TensorSpec, broadcast_shapes
from kilnflow.tensor import EagerTensor, Tensor

INTEGERS = _dtypes.INTEGERS
REAL = _dtypes.REAL
newaxis = None  # x[kf.newaxis] inserts a dim, as in TF

_BAD_INDEX = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
              "tf.int32/tf.int64 tensors are valid indices")


# ---------------------------------------------------------------- argument helpers

def _invalid(message: str, op: str) -> errors.InvalidArgumentError:
    """A bad argument found before bind(): TF's error class, naming the op and user's line."""
    return errors.InvalidArgumentError(errors.with_location(f"{message} [Op:{op}]"))


def _type_error(message: str) -> TypeError:
    return TypeError(errors.with_location(message))


def _is_tensorish(value: Any) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_tensor")


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _python_int(value: Any, op: str, what: str) -> int:
    """An int argument given as a Python int, NumPy integer or constant scalar int tensor."""
    if _is_tensorish(value):
        t = convert_to_tensor(value)
        known = rules.constant_value(t)
        if t.dtype not in INTEGERS or t.shape.rank not in (0, None):
            raise _type_error(f"{op}: `{what}` must be a scalar int, got {t!r}")
        if known is None:
            raise ValueError(errors.with_location(
                f"{op}: `{what}` must be known when the graph is built, got {t}"))
        return int(known)
    if not _is_int(value):
        raise _type_error(f"{op}: `{what}` must be an int, got {value!r}")
    return int(value)


def _axis(axis: Any, rank: Optional[int], op: str, what: str = "axis") -> int:
    """A scalar axis normalized to [0, rank) when the rank is known."""
    try:
        return rules.normalize_axis(_python_int(axis, op, what), rank, what)
    except ValueError as exc:
        raise _invalid(str(exc), op) from None


def _axes(axis: Any, rank: Optional[int], op: str) -> tuple:
    """A list (or int) of distinct axes, normalized when the rank is known."""
    _, values = _int_vector([axis] if _is_int(axis) or _is_tensorish(axis) and
                            convert_to_tensor(axis).shape.rank == 0 else axis, op, "axis")
    if values is None:
        raise ValueError(errors.with_location(f"{op}: `axis` must be known when the graph is "
                                              f"built"))
    out = tuple(_axis(a, rank, op) for a in values)
    if rank is not None and len(set(out)) != len(out):
        dup = next(a for a in out if out.count(a) > 1)
        raise _invalid(f"axis {dup} specified more than once", op)
    return out


def _int_vector(arg: Any, op: str, what: str = "shape") -> tuple:
    """(None, list of ints) when `arg` is known at build time, else (1-D int tensor, None).

    Accepts lists/tuples (which may hold scalar tensors), ndarrays, TensorShapes and 1-D
    int tensors; non-int entries raise TypeError naming the op and argument.
    """
    if type(arg) in (list, tuple) and all(type(d) is int for d in arg):
        return None, list(arg)  # the common case, kept cheap for eager calls
    if isinstance(arg, TensorShape):
        if not arg.is_fully_defined():
            raise ValueError(errors.with_location(
                f"{op}: `{what}` must be fully defined, got {arg}"))
        return None, arg.as_list()
    if _is_tensorish(arg):
        t = convert_to_tensor(arg)
        if t.dtype not in INTEGERS:
            raise _type_error(f"{op}: `{what}` must be an int32 or int64 tensor, got "
                              f"{t.dtype.name}")
        if t.shape.rank not in (1, None):
            raise ValueError(errors.with_location(
                f"{op}: `{what}` must be a 1-D tensor, got shape {t.shape}"))
        known = rules.constant_value(t)
        if known is None:
            return t, None
        return None, [int(d) for d in known.reshape(-1)]
    if isinstance(arg, np.ndarray) and arg.dtype.kind not in "iu" and arg.size:
        raise _type_error(f"{op}: `{what}` must hold ints, got an array of {arg.dtype}")
    try:
        items = list(arg)
    except TypeError:
        raise _type_error(f"{op}: `{what}` must be a list of ints or an int tensor, got "
                          f"{arg!r}") from None
    dims: list = []
    symbolic = False
    for d in items:
        if _is_tensorish(d):
            t = convert_to_tensor(d)
            if t.dtype not in INTEGERS or t.shape.rank not in (0, None):
                raise _type_error(f"{op}: entries of `{what}` must be ints or scalar int "
                                  f"tensors, got {t!r}")
            known = rules.constant_value(t)
            if known is None:
                symbolic = True
                dims.append(t)
                continue
            d = known
        elif not _is_int(d):
            raise _type_error(f"{op}: `{what}` must be a list of ints or an int tensor, got "
                              f"{arg!r}")
        dims.append(int(d))
    if symbolic:
        return stack([cast_int32(d) if isinstance(d, Tensor) else d for d in dims]), None
    return None, dims


def _dims_from(s: Any) -> Optional[list]:
    """Output dims given by the value of the 1-D int tensor `s`: only their count is known."""
    if s.shape.rank == 1 and s.shape[0] is not None:
        return [None] * s.shape[0]
    return None


def cast_int32(t: Tensor) -> Tensor:
    from kilnflow.ops.math import cast
    return cast(t, _dtypes.int32)


def _convert_list(values: Sequence, op: str) -> list:
    """Convert an op's list input the way TF does: Python values take the first tensor's
    dtype (so concat([x64, [1.0]]) works); tensors of different dtypes still raise."""
    if isinstance(values, Tensor):
        values = unstack(values)
    if not isinstance(values, (list, tuple)):
        raise _type_error(f"{op}: `values` must be a list of tensors, got {type(values)}")
    if not values:
        raise ValueError(errors.with_location(f"{op}: `values` must be a non-empty list"))
    if all(isinstance(v, Tensor) for v in values):
        return list(values)
    first = next((v for v in values if _is_tensorish(v)), None)
    if first is None:
        return [convert_to_tensor(v) for v in values]
    dtype = convert_to_tensor(first).dtype
    return [operand(v, dtype) if not _is_tensorish(v) else convert_to_tensor(v)
            for v in values]


# ---------------------------------------------------------------- shape, size, rank

def _index_dtype(dtype: Any, what: str) -> _dtypes.DType:
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.int32, _dtypes.int64):
        raise _type_error(f"`{what}` must be int32 or int64, got {dtype.name}")
    return dtype


def _shape_rule(x: Any, *, out_type: _dtypes.DType) -> TensorSpec:
    rules.require((_dtypes.int32, _dtypes.int64), TensorSpec([], out_type), "shape",
                  "out_type")
    return TensorSpec([x.shape.rank], out_type)


def _size_rule(x: Any, *, out_type: _dtypes.DType) -> TensorSpec:
    rules.require((_dtypes.int32, _dtypes.int64), TensorSpec([], out_type), "size", "out_type")
    return TensorSpec([], out_type)


_SHAPE_ONLY = {"shape_only": True}  # known static shape -> a constant (constant_fold)
SHAPE = defop("Shape", shape=_shape_rule, props=_SHAPE_ONLY,
              kernel=lambda x, *, out_type: np.array(x.shape, out_type.as_numpy_dtype))
SIZE = defop("Size", shape=_size_rule, props=_SHAPE_ONLY,
             kernel=lambda x, *, out_type: np.asarray(x.size, out_type.as_numpy_dtype))
RANK = defop("Rank", shape=lambda x: TensorSpec([], _dtypes.int32), props=_SHAPE_ONLY,
             kernel=lambda x: np.asarray(x.ndim, np.int32))


def shape(input: Any, out_type: Any = _dtypes.int32,  # noqa: A002
          name: Optional[str] = None) -> Tensor:
    """The shape of a tensor as a 1-D int tensor (dynamic: the value when run).

    >>> import kilnflow as kf
    >>> kf.shape(kf.zeros([2, 3])).numpy().tolist()
    [2, 3]
    """
    x = convert_to_tensor(input)
    return bind(SHAPE, (x,), {"out_type": _index_dtype(out_type, "out_type")}, name=name)


def size(input: Any, out_type: Any = _dtypes.int32,  # noqa: A002
         name: Optional[str] = None) -> Tensor:
    """The number of elements of a tensor, as a scalar int tensor."""
    x = convert_to_tensor(input)
    return bind(SIZE, (x,), {"out_type": _index_dtype(out_type, "out_type")}, name=name)


def rank(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The number of dimensions of a tensor, as a scalar int32 tensor."""
    return bind(RANK, (convert_to_tensor(input),), name=name)


# ---------------------------------------------------------------- identity, stop_gradient

IDENTITY = defop("Identity", shape=rules.same_as(0), kernel=lambda x: x,
                 grad=lambda op, dy: [dy], same_dtype=False, props={"identity": True})
STOP_GRADIENT = defop("StopGradient", shape=rules.same_as(0), kernel=lambda x: x,
                      same_dtype=False)


def identity(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Returns a tensor with the same value as `input` (a graph node of its own)."""
    return bind(IDENTITY, (convert_to_tensor(input),), name=name)


def stop_gradient(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The same value as `input`, but gradients do not flow through it."""
    return bind(STOP_GRADIENT, (convert_to_tensor(input),), name=name)


# ---------------------------------------------------------------- reshape and friends

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


def _dynamic_reshape_kernel(x: Any, s: Any) -> Any:
    dims = [int(d) for d in s]
    _reshape_dims(TensorShape(x.shape), dims)  # TF's message when the sizes disagree
    return np.reshape(x, dims)


RESHAPE = defop(
    "Reshape",
    shape=lambda x, *, shape: TensorSpec(_reshape_dims(x.shape, shape), x.dtype),
    kernel=lambda x, *, shape: np.reshape(x, shape),
    grad=lambda op, dy: [_reshape_like(dy, op.inputs[0])], same_dtype=False, props={"reshape_attr": "shape"})
DYNAMIC_RESHAPE = defop(
    "DynamicReshape", shape=lambda x, s: TensorSpec(_dims_from(s), x.dtype),
    kernel=_dynamic_reshape_kernel,
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
    shape_tensor, dims = _int_vector(shape, "Reshape", "shape")
    if dims is None:
        return bind(DYNAMIC_RESHAPE, (x, shape_tensor), name=name)
    return bind(RESHAPE, (x,), {"shape": tuple(dims)}, name=name)


def _broadcast_to_rule(x: Any, *, shape: tuple) -> TensorSpec:
    if x.shape.rank is not None:
        dims = x.shape.as_list()
        fits = len(dims) <= len(shape) and all(
            d in (1, None) or t is None or d == t for d, t in zip(dims[::-1], shape[::-1]))
        if not fits:
            raise ValueError(f"Unable to broadcast tensor of shape {x.shape} to tensor of "
                             f"shape {list(shape)}")
    return TensorSpec(shape, x.dtype)


BROADCAST_TO = defop("BroadcastTo", shape=_broadcast_to_rule,
                     kernel=lambda x, *, shape: np.broadcast_to(x, shape),
                     grad=lambda op, dy: [sum_to_shape(dy, op.inputs[0])], same_dtype=False)
DYNAMIC_BROADCAST_TO = defop(
    "DynamicBroadcastTo", shape=lambda x, s: TensorSpec(_dims_from(s), x.dtype),
    kernel=lambda x, s: np.broadcast_to(x, tuple(int(d) for d in s)),
    grad=lambda op, dy: [sum_to_shape(dy, op.inputs[0]), None], same_dtype=False)


def broadcast_to(input: Any, shape: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Broadcasts `input` to `shape` with NumPy rules.

    >>> import kilnflow as kf
    >>> kf.broadcast_to(kf.constant([1, 2]), [2, 2]).numpy().tolist()
    [[1, 2], [1, 2]]
    """
    x = convert_to_tensor(input)
    shape_tensor, dims = _int_vector(shape, "BroadcastTo", "shape")
    if dims is None:
        return bind(DYNAMIC_BROADCAST_TO, (x, shape_tensor), name=name)
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
    "SumToShape", shape=lambda dy, s: TensorSpec(_dims_from(s), dy.dtype),
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
    out = bind(SUM_TO_SHAPE, (dy, shape(like)))
    if hasattr(out, "set_shape") and hasattr(out, "op"):
        out.set_shape(like.shape)  # the dynamic target still has `like`'s static dims
    return out


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
                    grad=lambda op, dy: [_reshape_like(dy, op.inputs[0])], same_dtype=False)


def expand_dims(input: Any, axis: int, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Inserts a dimension of size 1 at `axis` (negative counts from the end).

    >>> import kilnflow as kf
    >>> kf.expand_dims(kf.zeros([2, 3]), -1).shape
    TensorShape([2, 3, 1])
    """
    x = convert_to_tensor(input)
    return bind(EXPAND_DIMS, (x,), {"axis": _python_int(axis, "ExpandDims", "axis")},
                name=name)


def _squeeze_rule(x: Any, *, axis: Optional[tuple]) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec(None, x.dtype)
    dims = x.shape.as_list()
    if axis is None:
        if None in dims:  # an unknown dim may or may not be 1
            return TensorSpec(None, x.dtype)
        return TensorSpec([d for d in dims if d != 1], x.dtype)
    axes = {rules.normalize_axis(a, len(dims)) for a in axis}
    for a in sorted(axes):
        if dims[a] not in (1, None):
            raise ValueError(f"Can not squeeze dim[{a}], expected a dimension of 1, got "
                             f"{dims[a]}")
    return TensorSpec([d for i, d in enumerate(dims) if i not in axes], x.dtype)


SQUEEZE = defop("Squeeze", shape=_squeeze_rule,
                kernel=lambda x, *, axis: np.squeeze(x, axis),
                grad=lambda op, dy: [_reshape_like(dy, op.inputs[0])], same_dtype=False)


def squeeze(input: Any, axis: Any = None, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Removes dims of size 1: all of them, or only those in `axis` (which must be 1).

    >>> import kilnflow as kf
    >>> kf.squeeze(kf.zeros([1, 2, 1, 3]), axis=[2]).shape
    TensorShape([1, 2, 3])
    """
    x = convert_to_tensor(input)
    axes = None if axis is None else _axes(axis, x.shape.rank, "Squeeze")
    return bind(SQUEEZE, (x,), {"axis": axes}, name=name)


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
                  grad=lambda op, dy: [transpose(dy, np.argsort(op.attrs["perm"]).tolist())],
                  same_dtype=False, props={"permutation_attr": "perm"})
CONJUGATE_TRANSPOSE = defop(
    "ConjugateTranspose", shape=_transpose_rule, same_dtype=False,
    kernel=lambda x, *, perm: np.conj(np.transpose(x, perm)),
    grad=lambda op, dy: [transpose(dy, np.argsort(op.attrs["perm"]).tolist(), conjugate=True)])


def transpose(a: Any, perm: Optional[Sequence] = None, conjugate: bool = False,
              name: Optional[str] = None) -> Tensor:
    """Permutes the dims of `a` (reverses them when `perm` is None); `conjugate` also
    conjugates complex values.

    >>> import kilnflow as kf
    >>> kf.transpose(kf.zeros([2, 3, 4]), [2, 0, 1]).shape
    TensorShape([4, 2, 3])
    """
    x = convert_to_tensor(a)
    if perm is None:
        if x.shape.rank is None:
            raise ValueError(errors.with_location(
                "transpose needs a tensor of known rank when `perm` is None"))
        perm = list(builtins.range(x.shape.rank))[::-1]
    _, values = _int_vector(perm, "Transpose", "perm")
    if values is None:
        raise ValueError(errors.with_location(
            "transpose: `perm` must be known when the graph is built"))
    rank = x.shape.rank
    if rank is not None and sorted(values) != list(builtins.range(rank)):
        # np.transpose would accept negative entries; TF does not
        raise _invalid(f"transpose: perm {list(values)} is not a permutation of the {rank} "
                       f"dims of the input", "Transpose")
    opdef = CONJUGATE_TRANSPOSE if conjugate and x.dtype.is_complex else TRANSPOSE
    return bind(opdef, (x,), {"perm": tuple(values)}, name=name)


# ---------------------------------------------------------------- filling

FILL = defop("Fill", shape=lambda *, shape, value, dtype: TensorSpec(shape, dtype),
             kernel=lambda *, shape, value, dtype: np.full(shape, value, dtype.as_numpy_dtype))
DYNAMIC_FILL = defop(
    "DynamicFill", shape=lambda s, *, value, dtype: TensorSpec(_dims_from(s), dtype),
    kernel=lambda s, *, value, dtype: np.full(tuple(int(d) for d in s), value,
                                              dtype.as_numpy_dtype))


def _filled(shape_arg: Any, value: Any, dtype: Any, name: Optional[str]) -> Tensor:
    dtype = _dtypes.as_dtype(dtype)
    if _is_int(shape_arg):
        shape_arg = [shape_arg]
    elif _is_tensorish(shape_arg) and convert_to_tensor(shape_arg).shape.rank == 0:
        shape_arg = reshape(shape_arg, [1])
    shape_tensor, dims = _int_vector(shape_arg, "Fill", "shape")
    if dims is None:
        return bind(DYNAMIC_FILL, (shape_tensor,), {"value": value, "dtype": dtype},
                    name=name)
    bad = next((d for d in dims if d < 0), None)
    if bad is not None:
        raise _invalid(f"Dimension {bad} must be >= 0 in shape {dims}", "Fill")
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
        raise _invalid(f"value must be a scalar, got a tensor of shape {v.shape}", "Fill")
    if isinstance(v, EagerTensor) and not _is_tensorish(value):
        return _filled(dims, v._value.item(), v.dtype, name)
    # A tensor value may be differentiated (and may be symbolic): broadcast it instead.
    return broadcast_to(v, [dims] if _is_int(dims) else dims, name=name)


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


def _eye_kernel(*, num_rows: int, num_columns: int, batch_shape: tuple,
                dtype: _dtypes.DType) -> Any:
    matrix = np.eye(num_rows, num_columns, dtype=dtype.as_numpy_dtype)
    return np.broadcast_to(matrix, batch_shape + matrix.shape).copy()


EYE = defop("Eye", kernel=_eye_kernel,
            shape=lambda *, num_rows, num_columns, batch_shape, dtype: TensorSpec(
                list(batch_shape) + [num_rows, num_columns], dtype))


def eye(num_rows: Any, num_columns: Any = None, batch_shape: Any = None,
        dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Tensor:
    """An identity matrix (or a batch of them, shape batch_shape + [rows, columns]).

    >>> import kilnflow as kf
    >>> kf.eye(2, 3, dtype=kf.int32).numpy().tolist()
    [[1, 0, 0], [0, 1, 0]]
    """
    rows = _python_int(num_rows, "Eye", "num_rows")
    columns = rows if num_columns is None else _python_int(num_columns, "Eye", "num_columns")
    batch: list = []
    if batch_shape is not None:
        _, batch = _int_vector(batch_shape, "Eye", "batch_shape")
        if batch is None:
            raise ValueError(errors.with_location(
                "eye: `batch_shape` must be known when the graph is built"))
    for what, d in [("num_rows", rows), ("num_columns", columns)] + [("batch_shape", b)
                                                                      for b in batch]:
        if d < 0:
            raise _invalid(f"`{what}` must be non-negative, got {d}", "Eye")
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
    from kilnflow.ops.math import reduce_sum
    num, axis = op.attrs["num"], op.attrs["axis"]
    rank = op.outputs[0].shape.rank
    # Element i is start * (1 - t_i) + stop * t_i with t_i = i / (num - 1).
    fractions = np.linspace(0.0, 1.0, num) if num > 1 else np.zeros(num)
    t_shape = [1] * rank
    t_shape[axis] = num
    t = constant(fractions.reshape(t_shape), dy.dtype)
    return [reduce_sum(dy * (1 - t), axis), reduce_sum(dy * t, axis)]


LINSPACE = defop("LinSpace", shape=_linspace_rule, kernel=_linspace_kernel,
                 grad=_linspace_grad, dtypes=_dtypes.FLOATS)


def linspace(start: Any, stop: Any, num: Any, name: Optional[str] = None,
             axis: int = 0) -> Tensor:
    """`num` evenly spaced values from `start` to `stop` inclusive, along a new `axis`
    (start and stop may be tensors; they broadcast).

    >>> import kilnflow as kf
    >>> kf.linspace(0.0, 1.0, 5).numpy().tolist()
    [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    start_t = convert_to_tensor(start, dtype_hint=_dtypes.float32)
    _, stop_t = binary(start_t, stop)
    count = _python_int(num, "LinSpace", "num")
    if count < 0:
        raise _invalid(f"Requires num >= 0, got {count}", "LinSpace")
    batch = broadcast_shapes(start_t.shape, stop_t.shape)
    axis = _axis(axis, None if batch.rank is None else batch.rank + 1, "LinSpace")
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


RANGE = defop("Range", shape=lambda *, start, limit, delta, dtype: TensorSpec(
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
            raise _invalid(f"`{what}` must be a real scalar, got {t!r}", "Range")
    if dtype is None:
        dtype = max((t.dtype for t in tensors),
                    key=lambda d: _RANGE_DTYPES.index(d) if d in _RANGE_DTYPES else -1)
    dtype = _dtypes.as_dtype(dtype)
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
        raise _invalid(str(exc), "Range") from None
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


ONE_HOT = defop("OneHot", shape=_one_hot_rule, kernel=_one_hot_kernel, same_dtype=(1, 2),
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
        given = [v for v in (on_value, off_value) if _is_tensorish(v)]
        given = given or [convert_to_tensor(v) for v in (on_value, off_value) if v is not None]
        dtype = convert_to_tensor(given[0]).dtype if given else _dtypes.float32
    dtype = _dtypes.as_dtype(dtype)
    on = operand(1 if on_value is None else on_value, dtype)
    off = operand(0 if off_value is None else off_value, dtype)
    if on.dtype is not dtype or off.dtype is not dtype:
        bad = on if on.dtype is not dtype else off
        raise _type_error(f"one_hot: on_value and off_value must have dtype {dtype.name}, "
                          f"got {bad.dtype.name}")
    for what, v in (("on_value", on), ("off_value", off)):
        if v.shape.rank not in (0, None):  # np.where would broadcast it
            raise _invalid(f"`{what}` must be a scalar, got shape {v.shape}", "OneHot")
    count = _python_int(depth, "OneHot", "depth")
    if count < 0:
        raise _invalid(f"depth must be non-negative, got: {count}", "OneHot")
    out_rank = None if i.shape.rank is None else i.shape.rank + 1
    where_ = -1 if axis is None else _python_int(axis, "OneHot", "axis")
    if where_ == -1:
        if out_rank is None:
            raise ValueError(errors.with_location("one_hot needs indices of known rank"))
        where_ = out_rank - 1
    elif out_rank is not None and not 0 <= where_ < out_rank:
        raise _invalid(f"Expected axis to be -1 or between [0, {out_rank}). But received: "
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
        if not c.dtype.is_bool:
            from kilnflow.ops.math import not_equal
            c = not_equal(c, 0)
        return bind(WHERE_INDICES, (c,), name=name)
    if x is None or y is None:
        raise ValueError(errors.with_location("where: x and y must both be given, or neither"))
    if not c.dtype.is_bool:
        raise _type_error(f"where: `condition` must be a bool tensor, got {c.dtype.name}")
    x, y = binary(x, y)
    return bind(SELECT, (c, x, y), name=name)


# ---------------------------------------------------------------- concat, stack, split

def _concat_rule(*xs: Any, axis: int) -> TensorSpec:
    known = [x for x in xs if x.shape.rank is not None]
    if not known:
        return TensorSpec(None, xs[0].dtype)
    rank = known[0].shape.rank
    if rank == 0:
        raise ValueError("Can't concatenate scalars (use kf.stack instead)")
    axis = rules.normalize_axis(axis, rank)
    dims = list(known[0].shape.as_list())
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
    total: Optional[int] = 0
    for x in xs:
        d = x.shape[axis] if x.shape.rank is not None else None
        total = None if total is None or d is None else total + d
    dims[axis] = total
    return TensorSpec(dims, xs[0].dtype)


def _concat_grad(op: Any, dy: Any) -> list:
    from kilnflow.ops.slicing import _FED, _FULL, STRIDED_SLICE
    axis = op.attrs["axis"]
    sizes = [x.shape[axis] if x.shape.rank is not None else None for x in op.inputs]
    if None not in sizes:
        return list(split(dy, sizes, axis=axis))
    # Sizes known only when run: slice dy between running offsets fed as inputs.
    spec = (_FULL,) * axis + (("slice", _FED, _FED, None),)
    grads, start = [], constant(0)
    for x in op.inputs:
        stop = start + shape(x)[axis]
        grads.append(bind(STRIDED_SLICE, (dy, start, stop), {"spec": spec}))
        start = stop
    return grads


CONCAT = defop("ConcatV2", shape=_concat_rule,
               kernel=lambda *xs, axis: np.concatenate(xs, axis=axis), grad=_concat_grad)


def concat(values: Sequence, axis: int, name: Optional[str] = None) -> Tensor:
    """Joins tensors along an existing `axis`.

    >>> import kilnflow as kf
    >>> kf.concat([[[1]], [[2]]], axis=0).numpy().tolist()
    [[1], [2]]
    """
    tensors = _convert_list(values, "ConcatV2")
    rank = next((t.shape.rank for t in tensors if t.shape.rank is not None), None)
    axis = _python_int(axis, "ConcatV2", "axis")
    if rank:
        if not -rank <= axis < rank:
            raise _invalid(f"ConcatOp : Expected concatenating dimensions in the range "
                           f"[{-rank}, {rank}), but got {axis}", "ConcatV2")
        axis %= rank
    if len(tensors) == 1:
        return identity(tensors[0], name=name)
    return bind(CONCAT, tensors, {"axis": axis}, name=name)


def _stack_rule(*xs: Any, axis: int) -> TensorSpec:
    first = xs[0].shape
    for i, x in enumerate(xs[1:], 1):
        if not x.shape.is_compatible_with(first):
            raise ValueError(f"Shapes of all inputs must match: values[0].shape = "
                             f"{xs[0].shape} != values[{i}].shape = {x.shape}")
        first = first.merge_with(x.shape)
    if first.rank is None:
        return TensorSpec(None, xs[0].dtype)
    dims = first.as_list()
    dims.insert(rules.normalize_axis(axis, len(dims) + 1), len(xs))
    return TensorSpec(dims, xs[0].dtype)


PACK = defop("Pack", shape=_stack_rule, kernel=lambda *xs, axis: np.stack(xs, axis=axis),
             grad=lambda op, dy: list(unstack(dy, num=len(op.inputs), axis=op.attrs["axis"])))


def stack(values: Sequence, axis: int = 0, name: Optional[str] = None) -> Tensor:
    """Stacks tensors of equal shape along a new `axis`.

    >>> import kilnflow as kf
    >>> kf.stack([[1, 2], [3, 4]], axis=1).numpy().tolist()
    [[1, 3], [2, 4]]
    """
    tensors = _convert_list(values, "Pack")
    rank = tensors[0].shape.rank
    axis = _axis(axis, None if rank is None else rank + 1, "Pack")
    return bind(PACK, tensors, {"axis": axis}, name=name)


def _unstack_rule(x: Any, *, num: int, axis: int) -> list:
    dims = x.shape.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise ValueError(f"Input shape axis {axis} must equal {num}, got shape {x.shape}")
    del dims[axis]
    return [TensorSpec(dims, x.dtype) for _ in builtins.range(num)]


def _unstack_kernel(x: Any, *, num: int, axis: int) -> tuple:
    if x.shape[axis] != num:
        raise ValueError(f"Input shape axis {axis} must equal {num}, got shape {x.shape}")
    return tuple(np.moveaxis(x, axis, 0))


UNPACK = defop("Unpack", shape=_unstack_rule, multi_output=True, kernel=_unstack_kernel,
               grad=lambda op, *dys: [stack([d if d is not None else zeros_like(o)
                                             for d, o in zip(dys, op.outputs)],
                                            axis=op.attrs["axis"])])


def unstack(value: Any, num: Optional[int] = None, axis: int = 0,
            name: Optional[str] = None) -> list:
    """Splits a tensor into a list of tensors along `axis` (which is removed)."""
    x = convert_to_tensor(value)
    if x.shape.rank is None:
        raise ValueError(errors.with_location("unstack needs a tensor of known rank"))
    axis = _axis(axis, x.shape.rank, "Unpack")
    n = x.shape[axis] if num is None else _python_int(num, "Unpack", "num")
    if n is None:
        raise ValueError(errors.with_location(
            f"Cannot infer argument `num` from shape {x.shape}"))
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


def _split_kernel(x: Any, *, sizes: tuple, axis: int) -> tuple:
    if sum(sizes) != x.shape[axis]:  # np.split would quietly hand the rest to the last piece
        raise ValueError(f"split sizes {list(sizes)} do not add up to dim {axis} of shape "
                         f"{x.shape}")
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis))


SPLIT = defop("SplitV", shape=_split_rule, multi_output=True, kernel=_split_kernel,
              grad=lambda op, *dys: [concat([d if d is not None else zeros_like(o)
                                             for d, o in zip(dys, op.outputs)],
                                            op.attrs["axis"])])


def split(value: Any, num_or_size_splits: Any, axis: int = 0, num: Optional[int] = None,
          name: Optional[str] = None) -> list:
    """Splits a tensor along `axis` into `num_or_size_splits` equal pieces (an int) or pieces
    of the given sizes (one may be -1: the rest).

    >>> import kilnflow as kf
    >>> [t.shape[0] for t in kf.split(kf.zeros([5]), [2, -1])]
    [2, 3]
    """
    x = convert_to_tensor(value)
    if x.shape.rank is None:
        raise ValueError(errors.with_location("split needs a tensor of known rank"))
    axis = _axis(axis, x.shape.rank, "SplitV")
    d = x.shape[axis]
    pieces = num_or_size_splits
    if _is_tensorish(pieces) and convert_to_tensor(pieces).shape.rank == 0 or _is_int(pieces):
        count = _python_int(pieces, "Split", "num_or_size_splits")
        if d is None:
            raise ValueError(errors.with_location(
                "split into equal pieces needs a known dimension"))
        if count <= 0 or d % count:
            raise _invalid(f"Number of ways to split should evenly divide the split "
                           f"dimension, but got split_dim {axis} (size = {d}) and num_split "
                           f"{count}", "Split")
        sizes = [d // count] * count
    else:
        _, sizes = _int_vector(pieces, "SplitV", "num_or_size_splits")
        if sizes is None:
            raise ValueError(errors.with_location(
                "split: `num_or_size_splits` must be known when the graph is built"))
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise _invalid(f"split sizes must be non-negative, with at most one -1; got "
                           f"{sizes}", "SplitV")
        if -1 in sizes:
            if d is None:
                raise ValueError(errors.with_location(
                    "split with a -1 size needs a known dimension"))
            rest = d - (sum(sizes) + 1)
            if rest < 0:
                raise _invalid(f"split sizes {sizes} exceed dim {axis} of size {d}", "SplitV")
            sizes[sizes.index(-1)] = rest
    return list(bind(SPLIT, (x,), {"sizes": tuple(sizes), "axis": axis}, name=name))


# ---------------------------------------------------------------- tile, pad, reverse

def _tile_rule(x: Any, *, multiples: tuple) -> TensorSpec:
    if x.shape.rank is None:
        return TensorSpec([None] * len(multiples), x.dtype)
    if len(multiples) != x.shape.rank:
        raise ValueError(f"Expected multiples argument to be a vector of length "
                         f"{x.shape.rank} but got length {len(multiples)}")
    for i, m in enumerate(multiples):
        if m < 0:
            raise ValueError(f"Expected multiples[{i}] >= 0, but got {m}")
    return TensorSpec([None if d is None else d * m
                       for d, m in zip(x.shape.as_list(), multiples)], x.dtype)


def _tile_kernel(x: Any, *, multiples: tuple) -> Any:
    if len(multiples) != x.ndim or min(multiples, default=0) < 0:
        raise ValueError(f"bad multiples {list(multiples)} for shape {x.shape}")  # np pads
    return np.tile(x, multiples)


def _dynamic_tile_rule(x: Any, m: Any) -> TensorSpec:
    dims = _dims_from(m)
    if dims is not None and x.shape.rank is not None and len(dims) != x.shape.rank:
        raise ValueError(f"Expected multiples argument to be a vector of length "
                         f"{x.shape.rank} but got length {len(dims)}")
    if dims is None and x.shape.rank is not None:
        dims = [None] * x.shape.rank
    return TensorSpec(dims, x.dtype)


def _tile_grad(op: Any, dy: Any) -> list:
    from kilnflow.ops.math import reduce_sum
    x = op.inputs[0]
    multiples = op.attrs.get("multiples")
    n = len(multiples) if multiples is not None else op.inputs[1].shape[0]
    if n is None:
        raise NotImplementedError("the gradient of tile needs multiples of known length")
    if multiples is not None and x.shape.is_fully_defined():
        pairs = [v for pair in zip(multiples, x.shape.as_list()) for v in pair]
    else:
        m = constant(list(multiples), _dtypes.int32) if multiples is not None else \
            cast_int32(op.inputs[1])
        pairs = reshape(stack([m, shape(x)], axis=1), [-1])
    # dy viewed as [m0, d0, m1, d1, ...]: x's gradient sums over every copy.
    summed = reduce_sum(reshape(dy, pairs), list(builtins.range(0, 2 * n, 2)))
    return [summed] + [None] * (len(op.inputs) - 1)


TILE = defop("Tile", shape=_tile_rule, kernel=_tile_kernel, grad=_tile_grad, same_dtype=False)
DYNAMIC_TILE = defop("DynamicTile", shape=_dynamic_tile_rule, grad=_tile_grad,
                     kernel=lambda x, m: np.tile(x, tuple(int(v) for v in m)),
                     same_dtype=False)


def tile(input: Any, multiples: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Repeats `input` multiples[i] times along dim i.

    >>> import kilnflow as kf
    >>> kf.tile(kf.constant([[1, 2]]), [2, 2]).numpy().tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    x = convert_to_tensor(input)
    m_tensor, values = _int_vector(multiples, "Tile", "multiples")
    if values is None:
        return bind(DYNAMIC_TILE, (x, m_tensor), name=name)
    return bind(TILE, (x,), {"multiples": tuple(values)}, name=name)


def _padded_dims(dims: list, paddings: tuple, mode: str) -> list:
    if len(paddings) != len(dims):
        raise ValueError(f"The first dimension of paddings must be the rank of inputs "
                         f"({len(dims)}), got paddings of shape [{len(paddings)}, 2]")
    out = []
    for (before, after), d in zip(paddings, dims):
        if before < 0 or after < 0:
            raise ValueError(f"Paddings must be non-negative: {before} {after}")
        if d is not None and mode == "REFLECT" and (before >= d or after >= d):
            raise ValueError(f"paddings must be less than the dimension size: {before}, "
                             f"{after} not less than {d}")
        if d is not None and mode == "SYMMETRIC" and (before > d or after > d):
            raise ValueError(f"paddings must be no greater than the dimension size: "
                             f"{before}, {after} greater than {d}")
        out.append(None if d is None else d + before + after)
    return out


def _pad_rule(x: Any, *values: Any, paddings: tuple, mode: str = "CONSTANT") -> TensorSpec:
    if values and values[0].shape.rank not in (0, None):
        raise ValueError(f"constant_values must be a scalar, got shape {values[0].shape}")
    if x.shape.rank is None:
        return TensorSpec([None] * len(paddings), x.dtype)
    return TensorSpec(_padded_dims(x.shape.as_list(), paddings, mode), x.dtype)


def _pad_kernel(x: Any, value: Any, *, paddings: tuple) -> Any:
    _padded_dims(list(x.shape), paddings, "CONSTANT")  # np.pad would broadcast short lists
    if not paddings:
        return x
    return np.pad(x, paddings, constant_values=value)


def _mirror_pad_kernel(x: Any, *, paddings: tuple, mode: str) -> Any:
    _padded_dims(list(x.shape), paddings, mode)  # np.pad would also reflect past the edge
    if not paddings:
        return x
    return np.pad(x, paddings, mode=mode.lower())


def _cutter(axis: int) -> Any:
    """cut(lo, hi): the index taking [lo, hi) along `axis` and everything along the rest."""
    return lambda lo, hi: (builtins.slice(None),) * axis + (builtins.slice(lo, hi),)


def _mirror_pad_grad_kernel(dy: Any, *, paddings: tuple, mode: str) -> Any:
    """Folds the mirrored borders of dy back onto the elements they copied, axis by axis."""
    skip = 1 if mode == "REFLECT" else 0  # REFLECT does not repeat the edge element
    out = dy
    for axis, (before, after) in enumerate(paddings):
        if not before and not after:
            continue
        n = out.shape[axis] - before - after
        cut = _cutter(axis)
        core = out[cut(before, before + n)].copy()
        core[cut(skip, skip + before)] += np.flip(out[cut(0, before)], axis)
        core[cut(n - skip - after, n - skip)] += np.flip(out[cut(before + n, out.shape[axis])],
                                                         axis)
        out = core
    return out


def _pad_grad(op: Any, dy: Any) -> list:
    from kilnflow.ops.slicing import STRIDED_SLICE
    spec = tuple(("slice", before, -after if after else None, None)
                 for before, after in op.attrs["paddings"])
    return [bind(STRIDED_SLICE, (dy,), {"spec": spec}), None]


PAD = defop("PadV2", shape=_pad_rule, kernel=_pad_kernel, grad=_pad_grad)
MIRROR_PAD = defop("MirrorPad", shape=_pad_rule, kernel=_mirror_pad_kernel, same_dtype=False,
                   grad=lambda op, dy: [bind(MIRROR_PAD_GRAD, (dy,), op.attrs)])
MIRROR_PAD_GRAD = defop(
    "MirrorPadGrad", kernel=_mirror_pad_grad_kernel, same_dtype=False,
    shape=lambda dy, *, paddings, mode: TensorSpec(
        None if dy.shape.rank is None else
        [None if d is None else d - b - a for d, (b, a) in zip(dy.shape.as_list(), paddings)],
        dy.dtype),
    grad=lambda op, g: [bind(MIRROR_PAD, (g,), op.attrs)])


def _paddings_attr(paddings: Any) -> tuple:
    if _is_tensorish(paddings):
        t = convert_to_tensor(paddings)
        paddings = rules.constant_value(t)
        if paddings is None:
            raise ValueError(errors.with_location(
                "pad: `paddings` must be known when the graph is built"))
        if t.dtype not in INTEGERS:
            raise _type_error(f"pad: `paddings` must be an int tensor, got {t.dtype.name}")
    array = np.asarray(paddings)
    if array.size == 0:
        array = array.reshape(0, 2).astype(np.int64)
    if array.dtype.kind not in "iu":
        raise _type_error(f"pad: `paddings` must hold ints, got {paddings!r}")
    if array.ndim != 2 or array.shape[1] != 2:
        raise _invalid(f"paddings must be a matrix with 2 columns: {list(array.shape)}",
                       "Pad")
    return tuple((int(a), int(b)) for a, b in array)


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0,
        name: Optional[str] = None) -> Tensor:
    """Pads dim i with paddings[i] = [before, after] entries: `constant_values`
    (CONSTANT), a mirror without the edge (REFLECT) or with it (SYMMETRIC).

    >>> import kilnflow as kf
    >>> kf.pad(kf.constant([1, 2, 3]), [[2, 1]], "REFLECT").numpy().tolist()
    [3, 2, 1, 2, 3, 2]
    """
    x = convert_to_tensor(tensor)
    attrs = {"paddings": _paddings_attr(paddings)}
    mode = str(mode).upper()
    if mode == "CONSTANT":
        return bind(PAD, (x, operand(constant_values, x.dtype)), attrs, name=name)
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(errors.with_location(
            f"pad: `mode` must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}"))
    attrs["mode"] = mode
    return bind(MIRROR_PAD, (x,), attrs, name=name)


def _reverse_rule(x: Any, *, axis: tuple) -> TensorSpec:
    if x.shape.rank is not None:
        normalized = [rules.normalize_axis(a, x.shape.rank) for a in axis]
        if len(set(normalized)) != len(normalized):
            raise ValueError(f"axis {axis} specifies a dim more than once")
    return TensorSpec(x.shape, x.dtype)


REVERSE = defop("ReverseV2", shape=_reverse_rule, same_dtype=False,
                kernel=lambda x, *, axis: np.flip(x, axis) if axis else x,
                grad=lambda op, dy: [reverse(dy, op.attrs["axis"])])


def reverse(tensor: Any, axis: Any, name: Optional[str] = None) -> Tensor:
    """Reverses the order of elements along each dim in `axis` (a list of ints).

    >>> import kilnflow as kf
    >>> kf.reverse(kf.constant([[1, 2], [3, 4]]), [1]).numpy().tolist()
    [[2, 1], [4, 3]]
    """
    x = convert_to_tensor(tensor)
    return bind(REVERSE, (x,), {"axis": _axes(axis, x.shape.rank, "ReverseV2")}, name=name)
