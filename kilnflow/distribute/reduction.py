"""Combining per-replica tensors: sum or mean of the components, built from public kf ops
so the same code runs eagerly and while a kf.function is traced.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from kilnflow.distribute.reduce_util import ReduceOp, as_reduce_op
from kilnflow.distribute.values import DistributedValues, map_values
from kilnflow.ops import math as kmath
from kilnflow.ops import reduction as kreduction
from kilnflow.ops.array import shape as kshape
from kilnflow.ops.convert import convert_to_tensor


def _scaled(total: Any, count: Any, reduce_op: ReduceOp) -> Any:
    if reduce_op is ReduceOp.SUM:
        return total
    if total.dtype.is_integer:
        return kmath.floordiv(total, kmath.cast(count, total.dtype))
    return kmath.divide(total, kmath.cast(count, total.dtype))


def reduce_components(reduce_op: Any, components: Sequence[Any]) -> Any:
    """SUM or MEAN of one tensor per replica (elementwise)."""
    reduce_op = as_reduce_op(reduce_op)
    tensors = [convert_to_tensor(c) for c in components]
    total = tensors[0] if len(tensors) == 1 else kmath.add_n(tensors)
    return _scaled(total, len(tensors), reduce_op)


def reduce_leaf(reduce_op: Any, value: Any, num_replicas: int) -> Any:
    """All-reduce of one leaf: a DistributedValues is reduced over its components; the same
    value on every replica sums to N times itself (and averages to itself)."""
    reduce_op = as_reduce_op(reduce_op)
    if value is None:
        return None
    if isinstance(value, DistributedValues):
        return reduce_components(reduce_op, value.values)
    tensor = convert_to_tensor(value)
    if reduce_op is ReduceOp.SUM and num_replicas > 1:
        return kmath.multiply(tensor, kmath.cast(num_replicas, tensor.dtype))
    return tensor


def local_first(value: Any) -> Any:
    """Replica 0's component of a DistributedValues (the value itself otherwise)."""
    return value[0] if isinstance(value, DistributedValues) else value


def reduce_structure(reduce_op: Any, structure: Any, num_replicas: int) -> Any:
    return map_values(lambda v: reduce_leaf(reduce_op, v, num_replicas), structure)


def reduce_with_axis(reduce_op: Any, components: Sequence[Any], axis: Optional[int]) -> Any:
    """strategy.reduce: across replicas, and along `axis` of each component first (MEAN
    divides by the total number of elements along `axis`, so unequal shards weigh right)."""
    reduce_op = as_reduce_op(reduce_op)
    tensors = [convert_to_tensor(c) for c in components]
    if axis is None:
        return reduce_components(reduce_op, tensors)
    sums = [kreduction.reduce_sum(t, axis=axis) for t in tensors]
    total = sums[0] if len(sums) == 1 else kmath.add_n(sums)
    if reduce_op is ReduceOp.SUM:
        return total
    counts = [kshape(t)[axis] for t in tensors]
    count = counts[0] if len(counts) == 1 else kmath.add_n(counts)
    return _scaled(total, count, reduce_op)
