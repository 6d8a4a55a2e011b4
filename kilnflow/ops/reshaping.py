"""Reshaping ops: reshape, broadcast_to (and SumToShape, its gradient), expand_dims, squeeze,
transpose, tile, pad and reverse. Each op is one defop() beside its public function.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import constant, convert_to_tensor, operand
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor
from kilnflow.ops import array, joining
from kilnflow.ops.args import (INTEGERS, axes_arg, cast_int32, dims_from, int_vector,
                               invalid_argument, is_tensorish, python_int, type_error)


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
    grad=lambda op, dy: [_reshape_like(dy, op.inputs[0])], same_dtype=False, reshape_attr="shape")
DYNAMIC_RESHAPE = defop(
    "DynamicReshape", shape=lambda x, s: TensorSpec(dims_from(s), x.dtype),
    kernel=_dynamic_reshape_kernel,
    grad=lambda op, dy: [_reshape_like(dy, op.inputs[0]), None], same_dtype=False)


def _reshape_like(dy: Tensor, x: Tensor) -> Tensor:
    if x.shape.is_fully_defined():
        return reshape(dy, x.shape.as_list())
    return reshape(dy, array.shape(x))


def reshape(tensor: Any, shape: Any, name: Optional[str] = None) -> Tensor:
    """Reshapes a tensor; one dim may be -1 and is then inferred.

    >>> import kilnflow as kf
    >>> kf.reshape(kf.range(6), [2, -1]).shape
    TensorShape([2, 3])
    """
    x = convert_to_tensor(tensor)
    shape_tensor, dims = int_vector(shape, "Reshape", "shape")
    if dims is not None and any(d < -1 for d in dims):
        raise invalid_argument(f"Size of a dimension must be non-negative or -1 (inferred), "
                               f"got shape {list(dims)}", "Reshape")
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


BROADCAST_TO = defop("BroadcastTo", check_eager=True, shape=_broadcast_to_rule,
                     kernel=lambda x, *, shape: np.broadcast_to(x, shape),
                     grad=lambda op, dy: [sum_to_shape(dy, op.inputs[0])], same_dtype=False)
DYNAMIC_BROADCAST_TO = defop(
    "DynamicBroadcastTo", shape=lambda x, s: TensorSpec(dims_from(s), x.dtype),
    kernel=lambda x, s: np.broadcast_to(x, tuple(int(d) for d in s)),
    grad=lambda op, dy: [sum_to_shape(dy, op.inputs[0]), None], same_dtype=False)


def broadcast_to(input: Any, shape: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Broadcasts `input` to `shape` with NumPy rules.

    >>> import kilnflow as kf
    >>> kf.broadcast_to(kf.constant([1, 2]), [2, 2]).numpy().tolist()
    [[1, 2], [1, 2]]
    """
    x = convert_to_tensor(input)
    shape_tensor, dims = int_vector(shape, "BroadcastTo", "shape")
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
    "SumToShape", shape=lambda dy, s: TensorSpec(dims_from(s), dy.dtype),
    kernel=_sum_to_shape_kernel, same_dtype=False,
    grad=lambda op, g: [broadcast_to(g, array.shape(op.inputs[0])), None])


def sum_to_shape(dy: Tensor, like: Tensor) -> Tensor:
    """Sums `dy` over broadcast dims so it has `like`'s shape (undoes broadcasting)."""
    if like.shape.is_fully_defined() and dy.shape.is_fully_defined():
        target = like.shape.as_list()
        dims = dy.shape.as_list()
        if dims == target:
            return dy
        from kilnflow.ops.reduction import reduce_sum
        lead = len(dims) - len(target)
        axes = list(builtins.range(lead)) + [lead + i for i, d in enumerate(target)
                                             if d == 1 and dims[lead + i] != 1]
        out = reduce_sum(dy, axes) if axes else dy
        return reshape(out, target)
    out = bind(SUM_TO_SHAPE, (dy, array.shape(like)))
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
    return bind(EXPAND_DIMS, (x,), {"axis": python_int(axis, "ExpandDims", "axis")},
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
    axes = None if axis is None else axes_arg(axis, x.shape.rank, "Squeeze")
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
                  same_dtype=False, permutation_attr="perm")
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
    _, values = int_vector(perm, "Transpose", "perm")
    if values is None:
        raise ValueError(errors.with_location(
            "transpose: `perm` must be known when the graph is built"))
    rank = x.shape.rank
    if rank is not None and sorted(values) != list(builtins.range(rank)):
        # np.transpose would accept negative entries; TF does not
        raise invalid_argument(f"transpose: perm {list(values)} is not a permutation of the {rank} "
                       f"dims of the input", "Transpose")
    opdef = CONJUGATE_TRANSPOSE if conjugate and x.dtype.is_complex else TRANSPOSE
    return bind(opdef, (x,), {"perm": tuple(values)}, name=name)


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
    dims = dims_from(m)
    if dims is not None and x.shape.rank is not None and len(dims) != x.shape.rank:
        raise ValueError(f"Expected multiples argument to be a vector of length "
                         f"{x.shape.rank} but got length {len(dims)}")
    if dims is None and x.shape.rank is not None:
        dims = [None] * x.shape.rank
    return TensorSpec(dims, x.dtype)


def _tile_grad(op: Any, dy: Any) -> list:
    from kilnflow.ops.reduction import reduce_sum
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
        pairs = reshape(joining.stack([m, array.shape(x)], axis=1), [-1])
    # dy viewed as [m0, d0, m1, d1, ...]: x's gradient sums over every copy.
    summed = reduce_sum(reshape(dy, pairs), list(builtins.range(0, 2 * n, 2)))
    return [summed] + [None] * (len(op.inputs) - 1)


TILE = defop("Tile", check_eager=True,
             shape=_tile_rule, kernel=_tile_kernel, grad=_tile_grad, same_dtype=False)
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
    m_tensor, values = int_vector(multiples, "Tile", "multiples")
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


PAD = defop("PadV2", check_eager=True, shape=_pad_rule, kernel=_pad_kernel, grad=_pad_grad)
MIRROR_PAD = defop("MirrorPad", check_eager=True,
                   shape=_pad_rule, kernel=_mirror_pad_kernel, same_dtype=False,
                   grad=lambda op, dy: [bind(MIRROR_PAD_GRAD, (dy,), op.attrs)])
MIRROR_PAD_GRAD = defop(
    "MirrorPadGrad", kernel=_mirror_pad_grad_kernel, same_dtype=False,
    shape=lambda dy, *, paddings, mode: TensorSpec(
        None if dy.shape.rank is None else
        [None if d is None else d - b - a for d, (b, a) in zip(dy.shape.as_list(), paddings)],
        dy.dtype),
    grad=lambda op, g: [bind(MIRROR_PAD, (g,), op.attrs)])


def _paddings_attr(paddings: Any) -> tuple:
    if is_tensorish(paddings):
        t = convert_to_tensor(paddings)
        paddings = rules.constant_value(t)
        if paddings is None:
            raise ValueError(errors.with_location(
                "pad: `paddings` must be known when the graph is built"))
        if t.dtype not in INTEGERS:
            raise type_error(f"pad: `paddings` must be an int tensor, got {t.dtype.name}")
    array = np.asarray(paddings)
    if array.size == 0:
        array = array.reshape(0, 2).astype(np.int64)
    if array.dtype.kind not in "iu":
        raise type_error(f"pad: `paddings` must hold ints, got {paddings!r}")
    if array.ndim != 2 or array.shape[1] != 2:
        raise invalid_argument(f"paddings must be a matrix with 2 columns: {list(array.shape)}",
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
    return bind(REVERSE, (x,), {"axis": axes_arg(axis, x.shape.rank, "ReverseV2")}, name=name)
