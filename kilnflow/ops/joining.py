"""Joining and splitting: concat, stack, unstack and split. Each op is one defop() beside
its public function.
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import constant, convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import EagerTensor, Tensor
from kilnflow.ops import array, ragged_hooks
from kilnflow.ops.args import (axis_arg, convert_list, int_vector, invalid_argument, is_int,
                               is_tensorish, python_int)


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
    from kilnflow.ops.slicing import slice_axis  # slicing imports joining
    axis = op.attrs["axis"]
    sizes = [x.shape[axis] if x.shape.rank is not None else None for x in op.inputs]
    if None not in sizes:
        return list(split(dy, sizes, axis=axis))
    # Sizes known only when run: slice dy between running offsets fed as inputs.
    grads, start = [], constant(0)
    for x in op.inputs:
        stop = start + array.shape(x)[axis]
        grads.append(slice_axis(dy, start, stop, axis))
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
    for v in values if type(values) in (list, tuple) else ():  # TF's ragged dispatch
        if type(v) is not EagerTensor and isinstance(v, ragged_hooks.RAGGED):
            return ragged_hooks.concat(values, python_int(axis, "ConcatV2", "axis"))
    tensors = convert_list(values, "ConcatV2")
    rank = next((t.shape.rank for t in tensors if t.shape.rank is not None), None)
    axis = python_int(axis, "ConcatV2", "axis")
    if rank:
        if not -rank <= axis < rank:
            raise invalid_argument(f"ConcatOp : Expected concatenating dimensions in the range "
                           f"[{-rank}, {rank}), but got {axis}", "ConcatV2")
        axis %= rank
    if len(tensors) == 1:
        return array.identity(tensors[0], name=name)
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
    for v in values if type(values) in (list, tuple) else ():  # TF's ragged dispatch
        if type(v) is not EagerTensor and isinstance(v, ragged_hooks.RAGGED):
            return ragged_hooks.stack(values, python_int(axis, "Pack", "axis"))
    tensors = convert_list(values, "Pack")
    rank = tensors[0].shape.rank
    axis = axis_arg(axis, None if rank is None else rank + 1, "Pack")
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
               grad=lambda op, *dys: [stack([d if d is not None else array.zeros_like(o)
                                             for d, o in zip(dys, op.outputs)],
                                            axis=op.attrs["axis"])])


def unstack(value: Any, num: Optional[int] = None, axis: int = 0,
            name: Optional[str] = None) -> list:
    """Splits a tensor into a list of tensors along `axis` (which is removed)."""
    x = convert_to_tensor(value)
    if x.shape.rank is None:
        raise ValueError(errors.with_location("unstack needs a tensor of known rank"))
    axis = axis_arg(axis, x.shape.rank, "Unpack")
    n = x.shape[axis] if num is None else python_int(num, "Unpack", "num")
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
              grad=lambda op, *dys: [concat([d if d is not None else array.zeros_like(o)
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
    if x.shape.rank == 0:
        raise invalid_argument("split: `value` must have rank >= 1, got a scalar", "SplitV")
    axis = axis_arg(axis, x.shape.rank, "SplitV")
    d = x.shape[axis]
    pieces = num_or_size_splits
    if is_tensorish(pieces) and convert_to_tensor(pieces).shape.rank == 0 or is_int(pieces):
        count = python_int(pieces, "Split", "num_or_size_splits")
        if d is None:
            raise ValueError(errors.with_location(
                "split into equal pieces needs a known dimension"))
        if count <= 0 or d % count:
            raise invalid_argument(f"Number of ways to split should evenly divide the split "
                           f"dimension, but got split_dim {axis} (size = {d}) and num_split "
                           f"{count}", "Split")
        sizes = [d // count] * count
    else:
        _, sizes = int_vector(pieces, "SplitV", "num_or_size_splits")
        if sizes is None:
            raise ValueError(errors.with_location(
                "split: `num_or_size_splits` must be known when the graph is built"))
        if sizes.count(-1) > 1 or any(s < -1 for s in sizes):
            raise invalid_argument(f"split sizes must be non-negative, with at most one -1; got "
                           f"{sizes}", "SplitV")
        if -1 in sizes:
            if d is None:
                raise ValueError(errors.with_location(
                    "split with a -1 size needs a known dimension"))
            rest = d - (sum(sizes) + 1)
            if rest < 0:
                raise invalid_argument(f"split sizes {sizes} exceed dim {axis} of size {d}", "SplitV")
            sizes[sizes.index(-1)] = rest
    return list(bind(SPLIT, (x,), {"sizes": tuple(sizes), "axis": axis}, name=name))
