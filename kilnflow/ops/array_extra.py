"""The rest of TF's top-level array ops: roll, repeat, unique(_with_counts), reverse_sequence,
dynamic_partition / dynamic_stitch, unravel_index, bitcast, broadcast_dynamic_shape, and the
compositions TF also builds from other ops (sequence_mask, strided_slice with its masks,
shape_n, parallel_stack, histogram_fixed_width_bins, approx_top_k,
required_space_to_batch_paddings, timestamp). Each op is one defop() beside its public
function. Imports ops.array, ops.math, ops.slicing, ops.joining, ops.reshaping, core.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, reshaping, slicing
from kilnflow.ops.args import INTEGERS, axis_arg, invalid_argument, python_int
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor


def _require_ints(t: Any, op: str, what: str) -> None:
    if t.dtype not in INTEGERS:
        raise TypeError(f"{op}: `{what}` must be an int32 or int64 tensor, got {t.dtype.name}")


# ---------------------------------------------------------------- roll

def _roll_rule(x: Any, shift: Any, axis: Any) -> TensorSpec:
    _require_ints(shift, "roll", "shift")
    _require_ints(axis, "roll", "axis")
    if shift.shape.rank not in (0, 1, None) or shift.shape != axis.shape and \
            shift.shape.is_fully_defined() and axis.shape.is_fully_defined():
        raise ValueError(f"shift and axis must have the same size and be scalars or "
                         f"vectors, got shapes {shift.shape} and {axis.shape}")
    return TensorSpec(x.shape, x.dtype)


def _roll_kernel(x: Any, shift: Any, axis: Any) -> Any:
    if np.shape(shift) != np.shape(axis) or np.ndim(shift) > 1:
        raise ValueError("shift and axis must have the same size")
    axes = np.atleast_1d(axis).astype(np.int64)
    if x.ndim == 0 or np.any((axes < -x.ndim) | (axes >= x.ndim)):
        raise ValueError(f"axis {axis.tolist()} is out of range for a tensor of rank {x.ndim}")
    shifts = np.atleast_1d(shift).astype(np.int64)
    return np.roll(x, tuple(int(s) for s in shifts), tuple(int(a) for a in axes))


ROLL = defop("Roll", shape=_roll_rule, kernel=_roll_kernel, same_dtype=False,
             grad=lambda op, dy: [roll(dy, -op.inputs[1], op.inputs[2]), None, None])


def roll(input: Any, shift: Any, axis: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Rolls the elements of `input` by `shift` places along `axis` (both scalars or
    vectors of one length); elements shifted past the end wrap around.

    >>> import kilnflow as kf
    >>> kf.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy().tolist()
    [3, 4, 0, 1, 2]
    """
    x = convert_to_tensor(input)
    return bind(ROLL, (x, convert_to_tensor(shift), convert_to_tensor(axis)), name=name)


# ---------------------------------------------------------------- repeat

def _repeat_rule(x: Any, repeats: Any, *, axis: int) -> TensorSpec:
    _require_ints(repeats, "repeat", "repeats")
    if repeats.shape.rank not in (0, 1, None):
        raise ValueError(f"repeat: `repeats` must be a scalar or vector, got {repeats.shape}")
    dims = x.shape.as_list() if x.shape.rank is not None else None
    if dims is not None:
        known = rules.constant_value(repeats)
        dims[axis] = None if known is None or dims[axis] is None else \
            int(np.sum(np.broadcast_to(known, (dims[axis],))))
    return TensorSpec(dims, x.dtype)


def _repeat_counts(repeats: Any, n: int) -> Any:
    counts = np.asarray(repeats).astype(np.int64)
    if counts.ndim == 1 and counts.size not in (1, n):
        raise ValueError(f"repeat: `repeats` has {counts.size} entries for a dim of {n}")
    if np.any(counts < 0):
        raise ValueError("repeat: `repeats` must be non-negative")
    return np.broadcast_to(counts.reshape(-1) if counts.ndim else counts, (n,))


def _repeat_kernel(x: Any, repeats: Any, *, axis: int) -> Any:
    return np.repeat(x, _repeat_counts(repeats, x.shape[axis]), axis=axis)


def _repeat_grad_kernel(dy: Any, repeats: Any, x_shape: Any, *, axis: int) -> Any:
    n = int(x_shape[axis])
    counts = _repeat_counts(repeats, n)
    owners = np.repeat(np.arange(n), counts)  # the x row each dy row copies
    out = np.zeros(tuple(int(d) for d in x_shape), dy.dtype)
    np.add.at(np.moveaxis(out, axis, 0), owners, np.moveaxis(dy, axis, 0))
    return out


REPEAT = defop("Repeat", shape=_repeat_rule, kernel=_repeat_kernel, same_dtype=False,
               grad=lambda op, dy: [bind(REPEAT_GRAD, (dy, op.inputs[1],
                                                       array.shape(op.inputs[0])), op.attrs),
                                    None])
# the adjoint of Repeat: sums the copies of each row back (linear, so Repeat is its gradient)
REPEAT_GRAD = defop("RepeatGrad", same_dtype=False, kernel=_repeat_grad_kernel,
                    shape=lambda dy, r, s, *, axis: TensorSpec(
                        [None] * s.shape[0] if s.shape.is_fully_defined() else None, dy.dtype),
                    grad=lambda op, g: [bind(REPEAT, (g, op.inputs[1]), op.attrs), None, None])


def repeat(input: Any, repeats: Any, axis: Any = None,  # noqa: A002 - TF's name
           name: Optional[str] = None) -> Tensor:
    """Repeats each element of `input` `repeats` times along `axis` (None: the flattened
    input), as np.repeat.

    >>> import kilnflow as kf
    >>> kf.repeat([[1, 2], [3, 4]], repeats=[1, 2], axis=0).numpy().tolist()
    [[1, 2], [3, 4], [3, 4]]
    """
    x = convert_to_tensor(input)
    if axis is None:
        x, axis = reshaping.reshape(x, [-1]), 0
    axis = axis_arg(axis, x.shape.rank, "Repeat")
    if x.shape.rank == 0:
        raise invalid_argument("repeat: `input` must have rank >= 1 when `axis` is given",
                               "Repeat")
    return bind(REPEAT, (x, convert_to_tensor(repeats)), {"axis": axis}, name=name)


# ---------------------------------------------------------------- unique

def _unique_rule(x: Any, *, out_idx: Any, counts: bool) -> list:
    if x.shape.rank not in (1, None):
        raise ValueError(f"unique expects a 1D vector, got shape {x.shape}")
    if out_idx not in (_dtypes.int32, _dtypes.int64):
        raise TypeError(f"unique: out_idx must be int32 or int64, got {out_idx}")
    specs = [TensorSpec([None], x.dtype), TensorSpec(x.shape, out_idx)]
    return specs + [TensorSpec([None], out_idx)] if counts else specs


def _unique_kernel(x: Any, *, out_idx: Any, counts: bool) -> tuple:
    if x.ndim != 1:
        raise ValueError(f"unique expects a 1D vector, got shape {list(x.shape)}")
    _, first, inverse, count = np.unique(x, return_index=True, return_inverse=True,
                                         return_counts=True)
    order = np.argsort(first, kind="stable")  # TF keeps the order of first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    index_type = out_idx.as_numpy_dtype
    out = (x[first[order]], rank[inverse.reshape(-1)].astype(index_type))
    return out + (count[order].astype(index_type),) if counts else out


UNIQUE = defop("Unique", shape=_unique_rule, kernel=_unique_kernel, multi_output=True)


class Unique(NamedTuple):
    """What kf.unique returns (TF's namedtuple): `.y` and `.idx`."""
    y: Any
    idx: Any


class UniqueWithCounts(NamedTuple):
    """What kf.unique_with_counts returns: `.y`, `.idx` and `.count`."""
    y: Any
    idx: Any
    count: Any


def unique(x: Any, out_idx: Any = _dtypes.int32, name: Optional[str] = None) -> tuple:
    """(y, idx): the distinct values of the 1-D `x` in order of first appearance, and for
    each entry of x its position in y.

    >>> import kilnflow as kf
    >>> y, idx = kf.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    >>> y.numpy().tolist(), idx.numpy().tolist()
    ([1, 2, 4, 7, 8], [0, 0, 1, 2, 2, 2, 3, 4, 4])
    """
    attrs = {"out_idx": _dtypes.as_dtype(out_idx), "counts": False}
    return Unique(*bind(UNIQUE, (convert_to_tensor(x),), attrs, name=name))


def unique_with_counts(x: Any, out_idx: Any = _dtypes.int32,
                       name: Optional[str] = None) -> tuple:
    """(y, idx, count): as unique, plus how often each distinct value occurs."""
    attrs = {"out_idx": _dtypes.as_dtype(out_idx), "counts": True}
    return UniqueWithCounts(*bind(UNIQUE, (convert_to_tensor(x),), attrs, name=name))


# ---------------------------------------------------------------- reverse_sequence

def _reverse_sequence_rule(x: Any, lengths: Any, *, seq_axis: int,
                           batch_axis: int) -> TensorSpec:
    _require_ints(lengths, "reverse_sequence", "seq_lengths")
    if lengths.shape.rank not in (1, None):
        raise ValueError(f"seq_lengths must be 1-D, got shape {lengths.shape}")
    return TensorSpec(x.shape, x.dtype)


def _reverse_sequence_kernel(x: Any, lengths: Any, *, seq_axis: int, batch_axis: int) -> Any:
    if lengths.ndim != 1 or lengths.shape[0] != x.shape[batch_axis]:
        raise ValueError(f"seq_lengths must be a vector of length {x.shape[batch_axis]} "
                         f"(the batch dim), got shape {list(lengths.shape)}")
    if np.any(lengths < 0) or np.any(lengths > x.shape[seq_axis]):
        raise ValueError(f"seq_lengths must be in [0, {x.shape[seq_axis]}], got "
                         f"{lengths.tolist()}")
    out = x.copy()
    moved, source = np.moveaxis(out, (batch_axis, seq_axis), (0, 1)), \
        np.moveaxis(x, (batch_axis, seq_axis), (0, 1))
    for b, n in enumerate(lengths.tolist()):
        moved[b, :n] = source[b, :n][::-1]
    return out


REVERSE_SEQUENCE = defop(
    "ReverseSequence", shape=_reverse_sequence_rule, kernel=_reverse_sequence_kernel,
    same_dtype=False,
    grad=lambda op, dy: [bind(REVERSE_SEQUENCE, (dy, op.inputs[1]), op.attrs), None])


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: Any = None,  # noqa: A002
                     batch_axis: Any = None, name: Optional[str] = None) -> Tensor:
    """Reverses the first seq_lengths[b] entries along `seq_axis` of each batch entry b.

    >>> import kilnflow as kf
    >>> kf.reverse_sequence([[1, 2, 3], [4, 5, 6]], [2, 3], seq_axis=1,
    ...                     batch_axis=0).numpy().tolist()
    [[2, 1, 3], [6, 5, 4]]
    """
    x = convert_to_tensor(input)
    rank = x.shape.rank
    seq = axis_arg(seq_axis if seq_axis is not None else 1, rank, "ReverseSequence", "seq_axis")
    batch = axis_arg(batch_axis if batch_axis is not None else 0, rank, "ReverseSequence",
                     "batch_axis")
    if seq == batch:
        raise invalid_argument(f"seq_axis ({seq}) and batch_axis must differ", "ReverseSequence")
    return bind(REVERSE_SEQUENCE, (x, convert_to_tensor(seq_lengths)),
                {"seq_axis": seq, "batch_axis": batch}, name=name)


# ---------------------------------------------------------------- dynamic_partition / stitch

def _partition_rule(data: Any, partitions: Any, *, num_partitions: int) -> list:
    _require_ints(partitions, "dynamic_partition", "partitions")
    d, p = data.shape, partitions.shape
    if d.rank is not None and p.rank is not None and \
            not TensorShape(d.as_list()[:p.rank]).is_compatible_with(p):
        raise ValueError(f"data.shape {d} must start with partitions.shape {p}")
    tail = d.as_list()[p.rank:] if d.rank is not None and p.rank is not None else None
    return [TensorSpec(None if tail is None else [None] + tail, data.dtype)] * num_partitions


def _partition_kernel(data: Any, partitions: Any, *, num_partitions: int) -> tuple:
    if data.shape[:partitions.ndim] != partitions.shape:
        raise ValueError(f"data.shape {list(data.shape)} must start with partitions.shape "
                         f"{list(partitions.shape)}")
    if partitions.size and (partitions.min() < 0 or partitions.max() >= num_partitions):
        bad = partitions[(partitions < 0) | (partitions >= num_partitions)][0]
        raise ValueError(f"partitions has value {bad} which is not in [0, {num_partitions})")
    rows = data.reshape((-1,) + data.shape[partitions.ndim:])
    flat = partitions.reshape(-1)
    return tuple(rows[flat == i] for i in range(num_partitions))


def _partition_grad(op: Any, *grads: Any) -> list:
    data, partitions = op.inputs
    positions = reshaping.reshape(array.range(array.size(partitions)), array.shape(partitions))
    where_from = dynamic_partition(positions, partitions, len(grads))
    parts = [g if g is not None else array.zeros_like(out)
             for g, out in zip(grads, op.outputs)]
    stitched = dynamic_stitch(where_from, parts)
    return [reshaping.reshape(stitched, array.shape(data)), None]


DYNAMIC_PARTITION = defop("DynamicPartition", shape=_partition_rule, kernel=_partition_kernel,
                          multi_output=True, same_dtype=False, grad=_partition_grad)


def dynamic_partition(data: Any, partitions: Any, num_partitions: int,
                      name: Optional[str] = None) -> list:
    """Splits `data` into `num_partitions` tensors: entries whose `partitions` value is i go
    to output i, in order.

    >>> import kilnflow as kf
    >>> parts = kf.dynamic_partition([10, 20, 30, 40], [0, 1, 0, 1], 2)
    >>> [p.numpy().tolist() for p in parts]
    [[10, 30], [20, 40]]
    """
    count = python_int(num_partitions, "DynamicPartition", "num_partitions")
    if count < 1:
        raise invalid_argument(f"num_partitions must be at least 1, got {count}",
                               "DynamicPartition")
    outputs = bind(DYNAMIC_PARTITION, (convert_to_tensor(data), convert_to_tensor(partitions)),
                   {"num_partitions": count}, name=name)
    return list(outputs)


def _stitch_rule(*tensors: Any) -> TensorSpec:
    n = len(tensors) // 2
    indices, data = tensors[:n], tensors[n:]
    for i in indices:
        if i.dtype != _dtypes.int32:
            raise TypeError(f"dynamic_stitch: `indices` must be int32, got {i.dtype.name}")
    if any(d.dtype != data[0].dtype for d in data):
        raise TypeError("dynamic_stitch: every `data` tensor must have one dtype")
    i0, d0 = indices[0].shape, data[0].shape
    tail = d0.as_list()[i0.rank:] if i0.rank is not None and d0.rank is not None else None
    known = [rules.constant_value(i) for i in indices]
    size = None if any(k is None for k in known) else \
        max([int(k.max()) + 1 for k in known if k.size] or [0])
    return TensorSpec(None if tail is None else [size] + tail, data[0].dtype)


def _stitch_kernel(*arrays: Any) -> Any:
    n = len(arrays) // 2
    indices, data = arrays[:n], arrays[n:]
    for i, d in zip(indices, data):
        if d.shape[:i.ndim] != i.shape:
            raise ValueError(f"data.shape {list(d.shape)} must start with indices.shape "
                             f"{list(i.shape)}")
    tail = data[0].shape[indices[0].ndim:]
    size = max([int(i.max()) + 1 for i in indices if i.size] or [0])
    if any(i.size and i.min() < 0 for i in indices):
        raise ValueError("dynamic_stitch: `indices` must be non-negative")
    out = np.zeros((size,) + tail, data[0].dtype)
    for i, d in zip(indices, data):  # later entries win, as in TF
        out[i.reshape(-1)] = d.reshape((-1,) + tail)
    return out


def _stitch_grad(op: Any, dy: Any) -> list:
    n = len(op.inputs) // 2
    return [None] * n + [slicing.gather(dy, i) for i in op.inputs[:n]]


DYNAMIC_STITCH = defop("DynamicStitch", shape=_stitch_rule, kernel=_stitch_kernel,
                       same_dtype=False, grad=_stitch_grad)


def dynamic_stitch(indices: Sequence, data: Sequence, name: Optional[str] = None) -> Tensor:
    """Interleaves the `data` tensors: merged[indices[m][i]] = data[m][i] (later values
    win where indices repeat).

    >>> import kilnflow as kf
    >>> kf.dynamic_stitch([[0, 2], [1, 3]], [[10, 30], [20, 40]]).numpy().tolist()
    [10, 20, 30, 40]
    """
    if not isinstance(indices, (list, tuple)) or not isinstance(data, (list, tuple)) or \
            len(indices) != len(data) or not indices:
        raise ValueError(errors.with_location(
            "dynamic_stitch: `indices` and `data` must be non-empty lists of one length"))
    idx = [convert_to_tensor(i) for i in indices]
    values = [convert_to_tensor(d) for d in data]
    return bind(DYNAMIC_STITCH, tuple(idx) + tuple(values), name=name)
