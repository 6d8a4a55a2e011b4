"""Shared shape rules: inputs (anything with .shape/.dtype) + attrs -> TensorSpec(s).

Rules raise ValueError (InvalidArgumentError after bind adds the op and line) or TypeError.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.shapes import TensorShape, TensorSpec, broadcast_shapes


def same_as(index: int = 0, dtype: Optional[_dtypes.DType] = None) -> Callable:
    """Output has the shape (and dtype, unless given) of input `index`."""
    def rule(*inputs: Any, **attrs: Any) -> TensorSpec:
        x = inputs[index]
        return TensorSpec(x.shape, dtype or x.dtype)
    return rule


def broadcast(dtype: Optional[_dtypes.DType] = None) -> Callable:
    """Output shape is the NumPy broadcast of all inputs; dtype of input 0 unless given."""
    def rule(*inputs: Any, **attrs: Any) -> TensorSpec:
        shape = inputs[0].shape
        for x in inputs[1:]:
            shape = broadcast_shapes(shape, x.shape)
        return TensorSpec(shape, dtype or inputs[0].dtype)
    return rule


def normalize_axis(axis: int, rank: Optional[int], what: str = "axis") -> int:
    if rank is None:
        return axis
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"Invalid {what} {axis}: must be in range [{-rank}, {rank}) for an "
                         f"input of rank {rank}")
    return axis % rank if rank else 0


def normalize_axes(axis: Any, rank: Optional[int]) -> Optional[tuple]:
    """Attr form of a reduction axis: None (all) or a sorted tuple of non-negative ints."""
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    axes = tuple(int(a) for a in axis)
    if rank is None:
        return axes
    return tuple(sorted({normalize_axis(a, rank) for a in axes}))


def reduce(dtype: Optional[_dtypes.DType] = None) -> Callable:
    """Reductions with attrs axis (None or tuple) and keepdims."""
    def rule(x: Any, *, axis: Any = None, keepdims: bool = False) -> TensorSpec:
        return TensorSpec(reduced_shape(x.shape, axis, keepdims), dtype or x.dtype)
    return rule


def reduced_shape(shape: TensorShape, axis: Any, keepdims: bool) -> TensorShape:
    if shape.rank is None:
        return TensorShape(None)
    axes = normalize_axes(axis, shape.rank)
    dims = shape.as_list()
    if axes is None:
        return TensorShape([1] * len(dims) if keepdims else [])
    if keepdims:
        return TensorShape([1 if i in axes else d for i, d in enumerate(dims)])
    return TensorShape([d for i, d in enumerate(dims) if i not in axes])


def require(dtypes: Sequence, x: Any, op: str, arg: str = "x") -> None:
    if x.dtype not in dtypes:
        allowed = ", ".join(sorted(d.name for d in dtypes))
        raise TypeError(f"{op}: argument `{arg}` has dtype {x.dtype.name}, expected one of "
                        f"{allowed}")


def constant_value(t: Any) -> Any:
    """The value of `t` if it is known without running a graph (eager, or a Const op)."""
    value = getattr(t, "_value", None)
    if value is not None:
        return np.asarray(value)
    op = getattr(t, "op", None)
    if op is not None and op.type == "Const":
        return np.asarray(op.attrs["value"].array)
    return None
