"""Slicing ops: x[...] (StridedSlice, with symbolic indices fed as extra inputs), slice,
gather, boolean_mask, meshgrid. Each op is one defop() beside its public function.
Imports ops.array (shape helpers); ops.math only inside functions.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.ops.convert import constant, convert_to_tensor
from kilnflow.core.opdef import bind, defop
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor
from kilnflow.ops.args import (INTEGERS, BAD_INDEX, axis_arg, cast_int32, dims_from, int_vector,
                               invalid_argument, is_int, is_tensorish, type_error)
from kilnflow.ops.array import shape, size, where
from kilnflow.ops.joining import concat
from kilnflow.ops.reshaping import broadcast_to, reshape


# ---------------------------------------------------------------- slicing: x[...]
#
# A StridedSlice `spec` has one entry per index item: an int, ("slice", start, stop, step),
# None (newaxis) or "..." (Ellipsis; a string so graphs serialize). Any int, start, stop or
# step may be _FED: its value is the next extra input of the op (a symbolic scalar), so
# x[i:j] works while a graph is built.

_FED = "*"
_ELLIPSIS = "..."
_FULL = ("slice", None, None, None)


class _IndexSpec:
    """Builds a spec and the list of fed values from a Python index key."""

    def __init__(self) -> None:
        self.values: list = []

    def scalar(self, k: Any) -> Any:
        if is_tensorish(k):
            t = convert_to_tensor(k)
            if t.dtype not in INTEGERS or t.shape.rank not in (0, None):
                raise type_error(f"{BAD_INDEX}, got {t!r}")
            known = rules.constant_value(t)
            if known is None:
                self.values.append(t)
                return _FED
            return int(known)
        if is_int(k):
            return int(k)
        raise type_error(f"{BAD_INDEX}, got {k!r}")

    def entry(self, k: Any) -> Any:
        if k is None:
            return k
        if k is Ellipsis:
            return _ELLIPSIS
        if isinstance(k, builtins.slice):
            parts = tuple(None if p is None else self.scalar(p)
                          for p in (k.start, k.stop, k.step))
            if parts[2] == 0:
                raise invalid_argument("slice step cannot be zero", "StridedSlice")
            return ("slice",) + parts
        return self.scalar(k)


def _fill_spec(spec: tuple, values: Sequence) -> tuple:
    """Replace the _FED entries of spec with `values` in order (None keeps _FED)."""
    feed = iter(values)

    def take(e: Any) -> Any:
        if not isinstance(e, str) or e != _FED:
            return e
        v = next(feed)
        return _FED if v is None else int(v)

    return tuple(("slice",) + tuple(take(p) for p in e[1:]) if isinstance(e, tuple)
                 else take(e) for e in spec)


def _numpy_index(spec: tuple) -> tuple:
    return tuple(builtins.slice(*e[1:]) if isinstance(e, tuple) else
                 Ellipsis if e == _ELLIPSIS else e for e in spec)


_ONE_FED = (_FED,)


def _strided_slice_rule(x: Any, *values: Any, spec: tuple) -> TensorSpec:
    for v in values:
        if v.dtype not in INTEGERS or v.shape.rank not in (0, None):
            raise TypeError(f"{BAD_INDEX}, got a {v.dtype.name} tensor of shape {v.shape}")
    if values:
        spec = _fill_spec(spec, [rules.constant_value(v) for v in values])
    if spec.count(_ELLIPSIS) > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    if x.shape.rank is None:
        return TensorSpec(None, x.dtype)
    dims = x.shape.as_list()
    consumed = sum(1 for e in spec if e is not None and e != _ELLIPSIS)
    if consumed > len(dims):
        raise ValueError(f"Index out of range: too many indices ({consumed}) for a tensor of "
                         f"rank {len(dims)}")
    out, i = [], 0
    for e in spec:
        if e is None:
            out.append(1)
        elif e == _ELLIPSIS:
            n = len(dims) - consumed
            out.extend(dims[i:i + n])
            i += n
        elif isinstance(e, tuple):
            d = dims[i]
            known = d is not None and _FED not in e
            out.append(len(builtins.range(d)[builtins.slice(*e[1:])]) if known else None)
            i += 1
        else:
            d = dims[i]
            if d is not None and e != _FED and not -d <= e < d:
                raise ValueError(f"slice index {e} of dimension {i} out of bounds for shape "
                                 f"{x.shape}")
            i += 1
    out.extend(dims[i:])
    return TensorSpec(out, x.dtype)


def _strided_slice_kernel(x: Any, *values: Any, spec: tuple) -> Any:
    if spec == _ONE_FED:  # x[i] with a tensor i, as in a loop over a sequence
        return x[int(values[0])]
    if values:
        spec = _fill_spec(spec, values)
    return x[_numpy_index(spec)]


def _strided_slice_grad(op: Any, dy: Any) -> list:
    x, values = op.inputs[0], op.inputs[1:]
    dx = bind(STRIDED_SLICE_GRAD, (dy, shape(x)) + tuple(values), {"spec": op.attrs["spec"]})
    return [dx] + [None] * len(values)


def _strided_slice_grad_kernel(dy: Any, x_shape: Any, *values: Any, spec: tuple) -> Any:
    if values:
        spec = _fill_spec(spec, values)
    out = np.zeros(tuple(int(d) for d in x_shape), dy.dtype)
    out[_numpy_index(spec)] = dy
    return out


# NumPy rejects every bad basic index TF rejects, so eagerly the rule runs only on failure.
def _strided_slice_inline(op: Any) -> Optional[str]:
    """`x[i]` / `x[1, 2]` in generated code for integer indices (fed or fixed)."""
    spec = op.attrs["spec"]
    if spec == _ONE_FED:
        return "{0}[{1}]"
    if spec and all(type(e) is int for e in spec):
        return "{0}[" + ", ".join(str(e) for e in spec) + "]"
    return None


STRIDED_SLICE = defop("StridedSlice", shape=_strided_slice_rule, kernel=_strided_slice_kernel,
                      grad=_strided_slice_grad, same_dtype=False,
                      inline=_strided_slice_inline)
STRIDED_SLICE_GRAD = defop(
    "StridedSliceGrad", shape=lambda dy, s, *values, spec: TensorSpec(dims_from(s), dy.dtype),
    kernel=_strided_slice_grad_kernel, same_dtype=False,
    grad=lambda op, g: [bind(STRIDED_SLICE, (g,) + tuple(op.inputs[2:]), op.attrs)]
    + [None] * (len(op.inputs) - 1))


def slice_axis(x: Tensor, start: Tensor, stop: Tensor, axis: int) -> Tensor:
    """x[..., start:stop] along `axis`, with start and stop int32 scalars known only when the
    graph runs (concat's gradient cuts dy between running offsets this way)."""
    spec = (_FULL,) * axis + (("slice", _FED, _FED, None),)
    return bind(STRIDED_SLICE, (x, start, stop), {"spec": spec})


def getitem(x: Any, key: Any) -> Tensor:
    """x[key] with TF's strided-slice semantics: ints, slices, Ellipsis and newaxis, where
    ints and slice bounds may be scalar int tensors (symbolic ones included)."""
    x = convert_to_tensor(x)
    builder = _IndexSpec()
    spec = tuple(builder.entry(k) for k in (key if isinstance(key, tuple) else (key,)))
    return bind(STRIDED_SLICE, (x,) + tuple(builder.values), {"spec": spec},
                name="strided_slice")


def slice(input_: Any, begin: Any, size: Any, name: Optional[str] = None) -> Tensor:  # noqa: A001
    """The part of `input_` starting at `begin` with `size` elements per dim (-1: the rest).
    `begin` and `size` may be symbolic int tensors.

    >>> import kilnflow as kf
    >>> kf.slice(kf.reshape(kf.range(6), [2, 3]), [0, 1], [2, -1]).numpy().tolist()
    [[1, 2], [4, 5]]
    """
    x = convert_to_tensor(input_)
    begin_t, begin_v = int_vector(begin, "Slice", "begin")
    size_t, size_v = int_vector(size, "Slice", "size")
    counts = [len(v) if v is not None else t.shape[0]
              for t, v in ((begin_t, begin_v), (size_t, size_v))]
    known = [c for c in [x.shape.rank] + counts if c is not None]
    if len(set(known)) > 1:
        raise invalid_argument(f"Expected begin and size arguments to be 1-D tensors of size "
                       f"{x.shape.rank}, but got shapes [{counts[0]}] and [{counts[1]}] "
                       f"instead.", "Slice")
    n = known[0] if known else None
    rank = x.shape.rank
    if n is None:
        raise ValueError(errors.with_location("slice needs an input of known rank"))
    if begin_v is not None and size_v is not None:
        dims = x.shape.as_list() if rank is not None else [None] * n
        spec = []
        for i, (b, s, d) in enumerate(zip(begin_v, size_v, dims)):
            if b < 0 or (d is not None and b > d):
                raise invalid_argument(f"Expected begin[{i}] in [0, {d}], but got {b}", "Slice")
            if s < -1 or (s != -1 and d is not None and b + s > d):
                raise invalid_argument(f"Expected size[{i}] in [0, {d - b if d is not None else '?'}]"
                               f", but got {s}", "Slice")
            spec.append(("slice", b, None if s == -1 else b + s, None))
        return bind(STRIDED_SLICE, (x,), {"spec": tuple(spec)}, name=name or "Slice")
    begin_t = cast_int32(begin_t) if begin_t is not None else constant(begin_v, _dtypes.int32)
    size_t = cast_int32(size_t) if size_t is not None else constant(size_v, _dtypes.int32)
    dims = shape(x)
    values = []
    for i in builtins.range(n):
        b, s = begin_t[i], size_t[i]
        values += [b, where(s < 0, dims[i], b + s)]  # size -1 runs to the end of the dim
    spec = (("slice", _FED, _FED, None),) * n
    return bind(STRIDED_SLICE, (x,) + tuple(values), {"spec": spec}, name=name or "Slice")


# ---------------------------------------------------------------- gather, boolean_mask

def _gather_rule(params: Any, indices: Any, *, axis: int, batch_dims: int = 0) -> TensorSpec:
    if indices.dtype not in INTEGERS:
        raise TypeError(f"gather: `indices` must be an integer tensor, got {indices.dtype.name}")
    if params.shape.rank is None or indices.shape.rank is None:
        return TensorSpec(None, params.dtype)
    dims = params.shape.as_list()
    if not dims:
        raise ValueError("params must be at least 1 dimensional")
    axis = rules.normalize_axis(axis, len(dims))
    index_dims = indices.shape.as_list()
    for k in range(batch_dims):  # batch dims: params and indices must agree, known or not
        if dims[k] is not None and index_dims[k] is not None and dims[k] != index_dims[k]:
            raise ValueError(f"params.shape[{k}]: {dims[k]} should be equal to "
                             f"indices.shape[{k}]: {index_dims[k]}")
        dims[k] = dims[k] if dims[k] is not None else index_dims[k]
    return TensorSpec(dims[:axis] + index_dims[batch_dims:] + dims[axis + 1:], params.dtype)


def _check_gather_indices(indices: Any, n: int) -> None:
    if indices.dtype.kind not in "iu":  # np.take would quietly take bools as 0 and 1
        raise TypeError(f"indices must be integers, got {indices.dtype}")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        where_bad = np.argwhere((indices < 0) | (indices >= n))[0]
        bad = indices[tuple(where_bad)]
        at = f"[{','.join(str(int(k)) for k in where_bad)}]" if indices.ndim else ""
        raise IndexError(f"indices{at} = {bad} is not in [0, {n})")


# With batch dims, params are [batch..., pre..., N, post...] and indices [batch..., I...]:
# each batch entry gathers from its own slice. Moving N right after the batch dims and
# flattening (batch..., N) turns that into one plain take, with indices offset by
# b * N for batch entry b; the result [batch..., I..., pre..., post...] is then put in
# TF's order [batch..., pre..., I..., post...]. The gradient runs the same map backwards.

def _batch_layout(rank: int, index_rank: int, axis: int, batch_dims: int) -> tuple:
    """(params permutation putting N after the batch dims, result permutation into TF's
    order)."""
    to_front = list(range(batch_dims)) + [axis] + list(range(batch_dims, axis)) + \
        list(range(axis + 1, rank))
    n_idx, n_pre = index_rank - batch_dims, axis - batch_dims
    first_pre = batch_dims + n_idx
    to_tf = list(range(batch_dims)) + list(range(first_pre, first_pre + n_pre)) + \
        list(range(batch_dims, first_pre)) + list(range(first_pre + n_pre,
                                                         first_pre + n_pre + rank - axis - 1))
    return to_front, to_tf


def _flat_batch_indices(indices: Any, batch_shape: tuple, n: int) -> Any:
    count = int(np.prod(batch_shape, dtype=np.int64))
    offsets = (np.arange(count, dtype=np.int64) * n).reshape(
        batch_shape + (1,) * (indices.ndim - len(batch_shape)))
    return indices.astype(np.int64) + offsets


def _gather_kernel(params: Any, indices: Any, *, axis: int, batch_dims: int = 0) -> Any:
    _check_gather_indices(indices, params.shape[axis])
    if not batch_dims:
        return np.take(params, indices, axis=axis)
    if params.shape[:batch_dims] != indices.shape[:batch_dims]:
        k = next(k for k in range(batch_dims) if params.shape[k] != indices.shape[k])
        raise ValueError(f"params.shape[{k}]: {params.shape[k]} should be equal to "
                         f"indices.shape[{k}]: {indices.shape[k]}")
    to_front, to_tf = _batch_layout(params.ndim, indices.ndim, axis, batch_dims)
    moved = params.transpose(to_front)
    flat = moved.reshape((-1,) + moved.shape[batch_dims + 1:])
    taken = np.take(flat, _flat_batch_indices(indices, params.shape[:batch_dims],
                                              params.shape[axis]), axis=0)
    return taken.transpose(to_tf)


def _gather_grad(op: Any, dy: Any) -> list:
    params, indices = op.inputs
    return [bind(GATHER_GRAD, (dy, indices, shape(params)), dict(op.attrs)), None]


def _gather_grad_kernel(dy: Any, indices: Any, params_shape: Any, *, axis: int,
                        batch_dims: int = 0) -> Any:
    params_shape = tuple(int(d) for d in params_shape)
    if not batch_dims:
        out = np.zeros(params_shape, dy.dtype)
        np.add.at(out, (builtins.slice(None),) * axis + (indices,), dy)  # repeats accumulate
        return out
    to_front, to_tf = _batch_layout(len(params_shape), indices.ndim, axis, batch_dims)
    moved_shape = tuple(params_shape[k] for k in to_front)
    flat = np.zeros((int(np.prod(moved_shape[:batch_dims + 1])),) + moved_shape[batch_dims + 1:],
                    dy.dtype)
    np.add.at(flat, _flat_batch_indices(indices, params_shape[:batch_dims],
                                        params_shape[axis]), dy.transpose(np.argsort(to_tf)))
    return flat.reshape(moved_shape).transpose(np.argsort(to_front))


GATHER = defop("GatherV2", shape=_gather_rule, kernel=_gather_kernel, grad=_gather_grad,
               same_dtype=False)
GATHER_GRAD = defop(
    "GatherGrad", shape=lambda dy, i, s, **attrs: TensorSpec(dims_from(s), dy.dtype),
    kernel=_gather_grad_kernel, same_dtype=False,
    grad=lambda op, g: [bind(GATHER, (g, op.inputs[1]), dict(op.attrs)), None, None])


def gather(params: Any, indices: Any, validate_indices: Any = None, axis: Any = None,
           batch_dims: int = 0, name: Optional[str] = None) -> Tensor:
    """Gathers slices of `params` along `axis` at `indices`. With `batch_dims=b`, the
    first b dims of `params` and `indices` are batch dims and each batch entry gathers
    from its own slice; `axis` defaults to `batch_dims`.

    >>> import kilnflow as kf
    >>> kf.gather(kf.constant([10, 20, 30]), [2, 0]).numpy().tolist()
    [30, 10]
    >>> kf.gather(kf.constant([[1, 2], [3, 4]]), [[1], [0]], batch_dims=1).numpy().tolist()
    [[2], [3]]
    """
    p = convert_to_tensor(params)
    i = convert_to_tensor(indices)
    if p.shape.rank == 0:
        raise invalid_argument("params must be at least 1 dimensional", "GatherV2")
    if axis is None:  # TF takes the default axis from batch_dims as given: -1 means axis -1
        axis = batch_dims
    batch_dims = _batch_dims_arg(batch_dims, i.shape.rank)
    axis = axis_arg(axis, p.shape.rank, "GatherV2")
    if batch_dims and batch_dims > axis:
        raise invalid_argument(f"batch_dims ({batch_dims}) must be less than or equal to "
                               f"axis ({axis}).", "GatherV2")
    attrs = {"axis": axis, "batch_dims": batch_dims} if batch_dims else {"axis": axis}
    return bind(GATHER, (p, i), attrs, name=name)


def _batch_dims_arg(batch_dims: Any, index_rank: Optional[int]) -> int:
    if not is_int(batch_dims):
        raise type_error(f"gather: batch_dims must be an int, got {batch_dims!r}")
    batch_dims = int(batch_dims)
    if batch_dims and index_rank is None:
        raise invalid_argument("batch_dims needs indices of known rank", "GatherV2")
    if batch_dims < 0:
        batch_dims += index_rank
    if batch_dims < 0 or batch_dims and batch_dims > index_rank:
        raise invalid_argument(f"batch_dims ({batch_dims}) must be in [0, rank(indices)] "
                               f"(rank {index_rank})", "GatherV2")
    return batch_dims


def boolean_mask(tensor: Any, mask: Any, axis: Any = None,
                 name: str = "boolean_mask") -> Tensor:
    """The entries of `tensor` where the bool `mask` is True; mask covers dims
    [axis, axis + mask.rank), which become one dim in the result.

    >>> import kilnflow as kf
    >>> kf.boolean_mask(kf.constant([1, 2, 3]), [True, False, True]).numpy().tolist()
    [1, 3]
    """
    x = convert_to_tensor(tensor)
    m = convert_to_tensor(mask)
    if not m.dtype.is_bool:
        raise type_error(f"boolean_mask: `mask` must be a bool tensor, got {m.dtype.name}")
    k = m.shape.rank
    if k is None or x.shape.rank is None:
        raise ValueError(errors.with_location(
            "boolean_mask needs tensor and mask of known rank"))
    if k == 0:
        raise ValueError(errors.with_location("boolean_mask: mask cannot be scalar."))
    axis = axis_arg(0 if axis is None else axis, x.shape.rank, "boolean_mask")
    covered = x.shape[axis:axis + k]
    if covered.rank != k or not covered.is_compatible_with(m.shape):
        raise ValueError(errors.with_location(
            f"boolean_mask: shapes {covered} and {m.shape} are incompatible"))
    dims = x.shape.as_list()
    if None in dims[:axis] + dims[axis + k:]:
        full = shape(x)
        flat_shape = concat([full[:axis], [-1], full[axis + k:]], 0)
    else:
        flat_shape = dims[:axis] + [-1] + dims[axis + k:]
    flat = reshape(x, flat_shape)
    chosen = reshape(where(reshape(m, [-1])), [-1])
    return gather(flat, chosen, axis=axis, name=name)


def meshgrid(*args: Any, **kwargs: Any) -> list:
    """Coordinate grids from 1-D tensors; indexing='xy' (default) swaps the first two dims.

    >>> import kilnflow as kf
    >>> x, y = kf.meshgrid([1, 2, 3], [4, 5])
    >>> x.numpy().tolist()
    [[1, 2, 3], [1, 2, 3]]
    """
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(errors.with_location(
            f"meshgrid: `indexing` must be 'xy' or 'ij', got {indexing!r}"))
    vectors = [reshape(convert_to_tensor(a), [-1]) for a in args]
    n = len(vectors)
    sizes = [v.shape[0] if v.shape[0] is not None else size(v) for v in vectors]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, v in enumerate(vectors):
        position = i
        if indexing == "xy" and n > 1 and i < 2:
            position = 1 - i
        ones_shape = [1] * n
        ones_shape[position] = -1
        out.append(broadcast_to(reshape(v, ones_shape), sizes, name=name))
    return out
