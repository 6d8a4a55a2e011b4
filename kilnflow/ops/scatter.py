"""Gather and scatter by index tuples: gather_nd, scatter_nd and the tensor_scatter_nd_*
family. Each op is one defop() beside its public function; an index tuple out of range
raises InvalidArgumentError (TF's CPU kernels do), duplicates accumulate in scatter_nd and
the add/sub forms, and the last write wins in tensor_scatter_nd_update.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import errors
from kilnflow.core import rules
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array
from kilnflow.ops.args import INTEGERS, int_vector
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor


def _index_depth(indices: Any, op: str) -> Optional[int]:
    rules.require(INTEGERS, indices, op, "indices")
    if indices.shape.rank == 0:
        raise ValueError(f"{op}: indices must be at least 1-D (the last dim indexes params)")
    return None if indices.shape.rank is None else indices.shape[-1]


def _gathered_shape(params_shape: TensorShape, indices: Any, op: str) -> TensorShape:
    """indices.shape[:-1] + params.shape[K:] (K = indices' last dim)."""
    depth = _index_depth(indices, op)
    if depth is None or params_shape.rank is None or indices.shape.rank is None:
        return TensorShape(None)
    if depth > params_shape.rank:
        raise ValueError(f"{op}: index depth {depth} is deeper than the rank "
                         f"{params_shape.rank} of the indexed tensor")
    return indices.shape[:-1].concatenate(params_shape[depth:])


def _positions(indices: np.ndarray, shape: tuple, op: str) -> tuple:
    """The index arrays NumPy needs, after TF's bounds check."""
    depth = indices.shape[-1]
    flat = indices.reshape(-1, depth)
    bound = np.asarray(shape[:depth])
    bad = np.nonzero(((flat < 0) | (flat >= bound)).any(axis=1))[0]
    if bad.size:
        where = [int(i) for i in np.unravel_index(bad[0], indices.shape[:-1])]
        raise errors.InvalidArgumentError(errors.with_location(
            f"indices{where} = {flat[bad[0]].tolist()} does not index into shape "
            f"{list(shape)} [Op:{op}]"))
    return tuple(np.moveaxis(indices, -1, 0))


# ---------------------------------------------------------------- gather_nd / scatter_nd

def _gather_nd_kernel(params: Any, indices: Any) -> Any:
    return params[_positions(indices, params.shape, "GatherNd")]


GATHER_ND = defop(
    "GatherNd", same_dtype=False, kernel=_gather_nd_kernel,
    shape=lambda params, indices: TensorSpec(_gathered_shape(params.shape, indices, "GatherNd"),
                                             params.dtype),
    grad=lambda op, dy: [scatter_nd(op.inputs[1], dy, array.shape(op.inputs[0])), None])


def _scatter_nd_rule(indices: Any, updates: Any, s: Any) -> TensorSpec:
    _index_depth(indices, "ScatterNd")
    known = rules.constant_value(s)
    if known is not None:
        dims = [int(d) for d in np.asarray(known).reshape(-1)]
        expected = _gathered_shape(TensorShape(dims), indices, "ScatterNd")
        if not expected.is_compatible_with(updates.shape):  # NumPy would broadcast them
            raise ValueError(f"updates must have shape {expected} (indices.shape[:-1] + "
                             f"shape[K:]), got {updates.shape}")
        return TensorSpec(dims, updates.dtype)
    dims = s.shape.as_list() if s.shape.rank == 1 else None
    return TensorSpec(None if dims is None or dims[0] is None else [None] * dims[0],
                      updates.dtype)


def _scatter_nd_kernel(indices: Any, updates: Any, s: Any) -> Any:
    out = np.zeros(tuple(int(d) for d in s), updates.dtype)
    np.add.at(out, _positions(indices, out.shape, "ScatterNd"), updates)
    return out


SCATTER_ND = defop("ScatterNd", shape=_scatter_nd_rule, kernel=_scatter_nd_kernel,
                   same_dtype=False, check_eager=True,  # NumPy would broadcast bad updates
                   grad=lambda op, dy: [None, gather_nd(dy, op.inputs[0]), None])


def gather_nd(params: Any, indices: Any, batch_dims: int = 0,
              name: Optional[str] = None) -> Tensor:
    """Slices of `params` at the index tuples in the last dim of `indices`.

    >>> import kilnflow as kf
    >>> kf.gather_nd(kf.constant([[1, 2], [3, 4]]), [[1, 0], [0, 1]]).numpy().tolist()
    [3, 2]
    """
    if batch_dims:
        raise NotImplementedError("gather_nd: batch_dims other than 0 is not supported yet")
    return bind(GATHER_ND, (convert_to_tensor(params), convert_to_tensor(indices)), name=name)


def scatter_nd(indices: Any, updates: Any, shape: Any, name: Optional[str] = None) -> Tensor:
    """A tensor of `shape` holding zeros, with `updates` added at `indices` (duplicates add).

    >>> import kilnflow as kf
    >>> kf.scatter_nd([[1], [3], [1]], [5, 6, 7], [4]).numpy().tolist()
    [0, 12, 0, 6]
    """
    i, u = convert_to_tensor(indices), convert_to_tensor(updates)
    shape_tensor, dims = int_vector(shape, "ScatterNd", "shape")
    s = shape_tensor if dims is None else convert_to_tensor(np.asarray(dims, np.int32))
    return bind(SCATTER_ND, (i, u, s), name=name)


# ---------------------------------------------------------------- tensor_scatter_nd_*

def _tensor_scatter_rule(tensor: Any, indices: Any, updates: Any) -> TensorSpec:
    expected = _gathered_shape(tensor.shape, indices, "TensorScatter")
    if not expected.is_compatible_with(updates.shape):
        raise ValueError(f"updates must have shape {expected} (indices.shape[:-1] + "
                         f"tensor.shape[K:]), got {updates.shape}")
    return TensorSpec(tensor.shape, tensor.dtype)


def _scatter_kernel(name: str, combine: Any) -> Any:
    def kernel(tensor: Any, indices: Any, updates: Any) -> Any:
        out = np.array(tensor, copy=True)
        where = _positions(indices, out.shape, name)
        if combine is None:
            out[where] = updates
        else:
            combine.at(out, where, updates)
        return out
    return kernel


def _defscatter(name: str, combine: Any, grad: Any = None) -> Any:
    return defop(name, shape=_tensor_scatter_rule, kernel=_scatter_kernel(name, combine),
                 same_dtype=(0, 2), grad=grad,
                 check_eager=True)  # NumPy would broadcast updates of the wrong shape


TENSOR_SCATTER_UPDATE = _defscatter(
    "TensorScatterUpdate", None,
    lambda op, dy: [bind(TENSOR_SCATTER_UPDATE, (dy, op.inputs[1],
                                                 array.zeros_like(op.inputs[2]))),
                    None, gather_nd(dy, op.inputs[1])])
TENSOR_SCATTER_ADD = _defscatter(
    "TensorScatterAdd", np.add, lambda op, dy: [dy, None, gather_nd(dy, op.inputs[1])])
TENSOR_SCATTER_SUB = _defscatter(
    "TensorScatterSub", np.subtract, lambda op, dy: [dy, None, -gather_nd(dy, op.inputs[1])])
TENSOR_SCATTER_MAX = _defscatter("TensorScatterMax", np.maximum)
TENSOR_SCATTER_MIN = _defscatter("TensorScatterMin", np.minimum)


def _tensor_scatter(opdef: Any, doc: str) -> Any:
    def apply(tensor: Any, indices: Any, updates: Any, name: Optional[str] = None) -> Tensor:
        t = convert_to_tensor(tensor)
        return bind(opdef, (t, convert_to_tensor(indices), convert_to_tensor(updates, t.dtype)),
                    name=name)
    apply.__doc__ = doc
    return apply


tensor_scatter_nd_update = _tensor_scatter(
    TENSOR_SCATTER_UPDATE, "A copy of `tensor` with `updates` written at `indices`.")
tensor_scatter_nd_add = _tensor_scatter(
    TENSOR_SCATTER_ADD, "A copy of `tensor` with `updates` added at `indices`.")
tensor_scatter_nd_sub = _tensor_scatter(
    TENSOR_SCATTER_SUB, "A copy of `tensor` with `updates` subtracted at `indices`.")
tensor_scatter_nd_max = _tensor_scatter(
    TENSOR_SCATTER_MAX, "A copy of `tensor`, each indexed element the max with its update.")
tensor_scatter_nd_min = _tensor_scatter(
    TENSOR_SCATTER_MIN, "A copy of `tensor`, each indexed element the min with its update.")
