"""Sorting ops: sort, argsort, top_k (and the gather/scatter-along-axis helpers their
gradients use). Each op is one defop() beside its public function. Imports ops.args and ops.array.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.core.opdef import bind, defop
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor
from kilnflow.ops.args import INTEGERS, REAL, axis_arg, dims_from, invalid_argument, python_int
from kilnflow.ops.array import shape


# ---------------------------------------------------------------- sort, argsort, top_k

def _argsort_kernel(x: Any, *, axis: int, descending: bool) -> Any:
    if not descending:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int32)
    # Stable descending order (ties keep their order): sort the reversed array
    # ascending, then reverse back and map the positions.
    n = x.shape[axis]
    order = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return np.flip(n - 1 - order, axis).astype(np.int32)


def _sort_rule(x: Any, *, axis: int, descending: bool) -> TensorSpec:
    rules.require(REAL, x, "sort", "values")
    if x.shape.rank == 0:
        raise ValueError("sort: input must be at least 1-D")
    rules.normalize_axis(axis, x.shape.rank)
    return TensorSpec(x.shape, _dtypes.int32)


ARG_SORT = defop("ArgSort", shape=_sort_rule, kernel=_argsort_kernel, dtypes=REAL)


def _along_axis_rule(x: Any, indices: Any, *, axis: int) -> TensorSpec:
    rules.require(INTEGERS, indices, "take_along_axis", "indices")
    return TensorSpec(indices.shape, x.dtype)


def _scatter_along_axis_kernel(updates: Any, indices: Any, x_shape: Any, *, axis: int) -> Any:
    out = np.zeros(tuple(int(d) for d in x_shape), updates.dtype)
    where_ = list(np.ix_(*[np.arange(n) for n in indices.shape]))
    where_[axis] = indices
    np.add.at(out, tuple(where_), updates)
    return out


# Not TF node types: TF builds these from TopKV2 and GatherV2(batch_dims); one op reads
# better. TakeAlongAxis is np.take_along_axis; its gradient scatters back.
TAKE_ALONG_AXIS = defop(
    "TakeAlongAxis", shape=_along_axis_rule, same_dtype=False,
    kernel=lambda x, indices, *, axis: np.take_along_axis(x, indices, axis),
    grad=lambda op, dy: [bind(SCATTER_ALONG_AXIS, (dy, op.inputs[1], shape(op.inputs[0])),
                              op.attrs), None])
SCATTER_ALONG_AXIS = defop(
    "ScatterAlongAxis", same_dtype=False, kernel=_scatter_along_axis_kernel,
    shape=lambda u, i, s, *, axis: TensorSpec(dims_from(s), u.dtype),
    grad=lambda op, g: [bind(TAKE_ALONG_AXIS, (g, op.inputs[1]), op.attrs), None, None])


def _direction(direction: str) -> bool:
    """True for DESCENDING."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(errors.with_location(
            f"`direction` should be one of 'ASCENDING' or 'DESCENDING', got {direction!r}"))
    return direction == "DESCENDING"


def argsort(values: Any, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: Optional[str] = None) -> Tensor:
    """int32 indices that sort `values` along `axis`. The sort is always stable here
    (ties keep their order), which `stable=False` permits.

    >>> import kilnflow as kf
    >>> kf.argsort([3, 1, 2]).numpy().tolist()
    [1, 2, 0]
    """
    x = convert_to_tensor(values)
    attrs = {"axis": axis_arg(axis, x.shape.rank, "ArgSort"), "descending": _direction(direction)}
    return bind(ARG_SORT, (x,), attrs, name=name)


def sort(values: Any, axis: int = -1, direction: str = "ASCENDING",
         name: Optional[str] = None) -> Tensor:
    """`values` sorted along `axis`; differentiable (the gradient follows the permutation).

    >>> import kilnflow as kf
    >>> kf.sort([3, 1, 2], direction="DESCENDING").numpy().tolist()
    [3, 2, 1]
    """
    x = convert_to_tensor(values)
    axis = axis_arg(axis, x.shape.rank, "ArgSort")
    order = argsort(x, axis, direction)
    return bind(TAKE_ALONG_AXIS, (x, order), {"axis": axis}, name=name)


def _top_k_rule(x: Any, *, k: int, sorted: bool, index_type: _dtypes.DType) -> list:
    rules.require(REAL, x, "top_k", "input")
    rules.require((_dtypes.int16, _dtypes.int32, _dtypes.int64),
                  TensorSpec([], index_type), "top_k", "index_type")
    if x.shape.rank is None:
        return [TensorSpec(None, x.dtype), TensorSpec(None, index_type)]
    if x.shape.rank == 0:
        raise ValueError("input must be >= 1-D, got shape []")
    dims = x.shape.as_list()
    if dims[-1] is not None and dims[-1] < k:
        raise ValueError(f"input must have at least k columns. Had {dims[-1]}, needed {k}")
    dims[-1] = k
    return [TensorSpec(dims, x.dtype), TensorSpec(dims, index_type)]


def _top_k_kernel(x: Any, *, k: int, sorted: bool, index_type: _dtypes.DType) -> tuple:
    if x.shape[-1] < k:
        raise ValueError(f"input must have at least k columns. Had {x.shape[-1]}, needed {k}")
    indices = _argsort_kernel(x, axis=-1, descending=True)[..., :k]
    return np.take_along_axis(x, indices, -1), indices.astype(index_type.as_numpy_dtype)


def _top_k_grad(op: Any, d_values: Any, d_indices: Any = None) -> list:
    if d_values is None:
        return [None]
    x, indices = op.inputs[0], op.outputs[1]
    return [bind(SCATTER_ALONG_AXIS, (d_values, indices, shape(x)), {"axis": -1})]


TOP_K = defop("TopKV2", shape=_top_k_rule, kernel=_top_k_kernel, grad=_top_k_grad,
              multi_output=True, dtypes=REAL)


class TopKV2(NamedTuple):
    """What kf.math.top_k returns (TF's namedtuple): `.values` and `.indices`."""
    values: Any
    indices: Any


def top_k(input: Any, k: Any = 1, sorted: bool = True,  # noqa: A002
          index_type: Any = _dtypes.int32, name: Optional[str] = None) -> tuple:
    """The `k` largest entries along the last dim and their indices (values, indices);
    ties go to the lower index. Exported as kf.math.top_k and kf.nn.top_k.

    >>> import kilnflow as kf
    >>> values, indices = kf.math.top_k([1, 5, 3, 5], k=2)
    >>> values.numpy().tolist(), indices.numpy().tolist()
    ([5, 5], [1, 3])
    """
    x = convert_to_tensor(input)
    count = python_int(k, "TopKV2", "k")
    if count < 0:
        raise invalid_argument(f"Need k >= 0, got {count}", "TopKV2")
    attrs = {"k": count, "sorted": bool(sorted), "index_type": _dtypes.as_dtype(index_type)}
    return TopKV2(*bind(TOP_K, (x,), attrs, name=name))


# ---------------------------------------------------------------- searchsorted

def _bound_rule(sorted_inputs: Any, values: Any, *, out_type: Any) -> TensorSpec:
    if sorted_inputs.shape.rank is not None and values.shape.rank is not None and \
            sorted_inputs.shape.rank != values.shape.rank:
        raise ValueError(f"searchsorted: sorted_sequence and values must have the same rank, "
                         f"got {sorted_inputs.shape} and {values.shape}")
    return TensorSpec(values.shape, out_type)


def _bound_kernel(side: str) -> Any:
    def kernel(sorted_inputs: Any, values: Any, *, out_type: Any) -> Any:
        rows = sorted_inputs.reshape(-1, sorted_inputs.shape[-1]) if sorted_inputs.ndim else \
            sorted_inputs.reshape(1, -1)
        wanted = values.reshape(rows.shape[0], -1)
        found = [np.searchsorted(r, v, side=side) for r, v in zip(rows, wanted)]
        return np.asarray(found).reshape(values.shape).astype(out_type.as_numpy_dtype)
    return kernel


LOWER_BOUND = defop("LowerBound", shape=_bound_rule, kernel=_bound_kernel("left"),
                    check_eager=True)
UPPER_BOUND = defop("UpperBound", shape=_bound_rule, kernel=_bound_kernel("right"),
                    check_eager=True)


def searchsorted(sorted_sequence: Any, values: Any, side: str = "left",
                 out_type: Any = _dtypes.int32, name: Optional[str] = None) -> Tensor:
    """Where each of `values` would go in the innermost dim of `sorted_sequence` to keep it
    sorted (side 'left': before equal entries; 'right': after).

    >>> import kilnflow as kf
    >>> kf.searchsorted(kf.constant([1.0, 3.0, 5.0]), kf.constant([3.0, 6.0])).numpy().tolist()
    [1, 3]
    """
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    s = convert_to_tensor(sorted_sequence)
    v = convert_to_tensor(values, s.dtype)
    return bind(LOWER_BOUND if side == "left" else UPPER_BOUND, (s, v),
                {"out_type": _dtypes.as_dtype(out_type)}, name=name)
