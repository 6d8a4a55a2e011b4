"""Segment reductions: segment_sum/mean/max/min/prod (sorted ids, as many segments as the
largest id + 1) and their unsorted_segment_* forms (a fixed num_segments; negative ids are
dropped, as in TF). Empty segments hold 0 for sum and mean, 1 for prod, and the dtype's
lowest/highest finite value for max/min. Gradients for sum and mean.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, reshaping
from kilnflow.ops.args import INTEGERS, python_int
from kilnflow.ops.math import cast
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.slicing import gather
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_COMBINE = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum,
            "prod": np.multiply}


def _initial(kind: str, dtype: np.dtype) -> Any:
    limits = np.finfo(dtype) if dtype.kind in "fc" else np.iinfo(dtype)
    if kind == "max":  # TF: numeric_limits<T>::lowest() for an empty segment
        return limits.min
    if kind == "min":
        return limits.max
    return 1 if kind == "prod" else 0


def _reduce_segments(data: Any, ids: Any, count: int, kind: str, op: str) -> Any:
    if ids.shape != data.shape[:ids.ndim]:
        raise errors.InvalidArgumentError(errors.with_location(
            f"segment_ids shape {list(ids.shape)} must be a prefix of data shape "
            f"{list(data.shape)} [Op:{op}]"))
    out = np.full((count,) + data.shape[ids.ndim:], _initial(kind, data.dtype), data.dtype)
    keep = (ids >= 0) & (ids < count)  # TF drops negative ids (and checks the range)
    if (ids >= count).any():
        raise errors.InvalidArgumentError(errors.with_location(
            f"segment_ids {int(ids.max())} is out of range [0, {count}) [Op:{op}]"))
    _COMBINE[kind].at(out, ids[keep], data[keep])
    if kind == "mean":
        counts = np.bincount(ids[keep].reshape(-1), minlength=count).astype(data.dtype)
        out = out / np.maximum(counts, 1).reshape((count,) + (1,) * (out.ndim - 1))
    return out


def _segment_rule(data: Any, ids: Any, *, num_segments: int = -1) -> TensorSpec:
    rules.require(INTEGERS, ids, "segment reduction", "segment_ids")
    if data.shape.rank is None or ids.shape.rank is None:
        return TensorSpec(None, data.dtype)
    first = num_segments if num_segments >= 0 else None
    return TensorSpec([first] + data.shape.as_list()[ids.shape.rank:], data.dtype)


def _spread(dy: Any, ids: Any, data: Any) -> Any:
    """Each data row's share of dy: the row of its segment (rows with negative ids get 0)."""
    kept = ids >= 0
    picked = gather(dy, array.where(kept, ids, array.zeros_like(ids)))
    mask = cast(kept, dy.dtype)
    for _ in range(data.shape.rank - ids.shape.rank):
        mask = reshaping.expand_dims(mask, -1)
    return picked * mask


def _per_row(values: Any, like: Any) -> Any:
    """[segments] values shaped to divide [segments, ...] rows."""
    return reshaping.reshape(values, [-1] + [1] * (like.shape.rank - 1))


def _sum_grad(op: Any, dy: Any) -> list:
    return [_spread(dy, op.inputs[1], op.inputs[0]), None]


def _mean_grad(op: Any, dy: Any) -> list:
    data, ids = op.inputs
    counts = bind(SEGMENT_OPS["sum"], (array.ones_like(ids, dtype=dy.dtype), ids))
    counts = array.where(counts > 0, counts, array.ones_like(counts))
    return [_spread(dy / _per_row(counts, dy), ids, data), None]


def _sorted_kernel(kind: str) -> Any:
    def kernel(data: Any, ids: Any) -> Any:
        if ids.size and (np.diff(ids.reshape(-1)) < 0).any():
            raise errors.InvalidArgumentError(errors.with_location(
                f"segment_ids are not increasing [Op:Segment{kind.capitalize()}]"))
        count = int(ids.max()) + 1 if ids.size else 0
        return _reduce_segments(data, ids, count, kind, f"Segment{kind.capitalize()}")
    return kernel


def _unsorted_kernel(kind: str) -> Any:
    def kernel(data: Any, ids: Any, *, num_segments: int) -> Any:
        return _reduce_segments(data, ids, num_segments, kind,
                                f"UnsortedSegment{kind.capitalize()}")
    return kernel


_GRADS = {"sum": _sum_grad, "mean": _mean_grad}
# TF's op types; max, min and prod have no gradient here yet
SEGMENT_OPS = {kind: defop(f"Segment{kind.capitalize()}", shape=_segment_rule,
                           kernel=_sorted_kernel(kind), same_dtype=False,
                           grad=_GRADS.get(kind))
               for kind in ("sum", "mean", "max", "min", "prod")}
UNSORTED_SEGMENT_OPS = {kind: defop(f"UnsortedSegment{kind.capitalize()}", shape=_segment_rule,
                                    kernel=_unsorted_kernel(kind), same_dtype=False,
                                    grad=_GRADS.get(kind))
                        for kind in ("sum", "max", "min", "prod")}


def _sorted(kind: str) -> Any:
    def apply(data: Any, segment_ids: Any, name: Optional[str] = None) -> Tensor:
        return bind(SEGMENT_OPS[kind], (convert_to_tensor(data), convert_to_tensor(segment_ids)),
                    name=name)
    apply.__doc__ = (f"The {kind} of each segment of `data` (segment_ids sorted; as many "
                     "segments as the largest id + 1).")
    return apply


def _segment_count(num_segments: Any) -> int:
    count = python_int(num_segments, "UnsortedSegment", "num_segments")
    if count < 0:
        raise errors.InvalidArgumentError(errors.with_location(
            f"num_segments must be non-negative, got {count} [Op:UnsortedSegment]"))
    return count


def _unsorted(kind: str) -> Any:
    def apply(data: Any, segment_ids: Any, num_segments: Any,
              name: Optional[str] = None) -> Tensor:
        return bind(UNSORTED_SEGMENT_OPS[kind], (convert_to_tensor(data),
                                                 convert_to_tensor(segment_ids)),
                    {"num_segments": _segment_count(num_segments)}, name=name)
    apply.__doc__ = (f"The {kind} of each of `num_segments` segments of `data` (any id "
                     "order; negative ids are dropped).")
    return apply


def unsorted_segment_mean(data: Any, segment_ids: Any, num_segments: Any,
                          name: Optional[str] = None) -> Tensor:
    """The mean of each of `num_segments` segments (empty segments: 0)."""
    x, ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
    total = unsorted_segment_sum(x, ids, num_segments)
    counts = unsorted_segment_sum(array.ones_like(ids, dtype=x.dtype), ids, num_segments)
    return total / _per_row(array.where(counts > 0, counts, array.ones_like(counts)), total)


segment_sum, segment_mean = _sorted("sum"), _sorted("mean")
segment_max, segment_min, segment_prod = _sorted("max"), _sorted("min"), _sorted("prod")
unsorted_segment_sum, unsorted_segment_max = _unsorted("sum"), _unsorted("max")
unsorted_segment_min, unsorted_segment_prod = _unsorted("min"), _unsorted("prod")
