"""Samples of the ops in kilnflow/ops/scatter.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32, ints, rand

_IDX = i32([[1, 0], [0, 2], [1, 2]])


def _gather_nd(params, indices):
    return params[tuple(np.moveaxis(indices, -1, 0))]


def _scatter_nd(indices, updates, shape):
    out = np.zeros(shape, updates.dtype)
    np.add.at(out, tuple(np.moveaxis(indices, -1, 0)), updates)
    return out


def _tensor_scatter(combine):
    def reference(tensor, indices, updates):
        out = tensor.copy()
        where = tuple(np.moveaxis(indices, -1, 0))
        if combine is None:
            out[where] = updates
        else:
            combine.at(out, where, updates)
        return out
    return reference


add("GatherNd", kf.gather_nd, (rand(2, 3), _IDX), _gather_nd, differentiable=True, wrt=(0,))
add("GatherNd", kf.gather_nd, (rand(2, 3, 2), i32([[1], [0], [1]])), _gather_nd,
    differentiable=True, wrt=(0,), name="slices")
add("ScatterNd", lambda i, u: kf.scatter_nd(i, u, [2, 3]), (_IDX, rand(3)),
    lambda i, u: _scatter_nd(i, u, (2, 3)), differentiable=True, wrt=(1,))
add("ScatterNd", lambda i, u: kf.scatter_nd(i, u, [4]), (i32([[1], [3], [1]]), ints(3)),
    lambda i, u: _scatter_nd(i, u, (4,)), name="duplicates_add")
add("TensorScatterUpdate", kf.tensor_scatter_nd_update, (rand(2, 3), _IDX, rand(3)),
    _tensor_scatter(None), differentiable=True, wrt=(0, 2))
add("TensorScatterAdd", kf.tensor_scatter_nd_add, (rand(2, 3), _IDX, rand(3)),
    _tensor_scatter(np.add), differentiable=True, wrt=(0, 2))
add("TensorScatterSub", kf.tensor_scatter_nd_sub, (rand(2, 3), _IDX, rand(3)),
    _tensor_scatter(np.subtract), differentiable=True, wrt=(0, 2))
add("TensorScatterMax", kf.tensor_scatter_nd_max, (rand(2, 3), _IDX, rand(3)),
    _tensor_scatter(np.maximum))
add("TensorScatterMin", kf.tensor_scatter_nd_min, (rand(2, 3), _IDX, rand(3)),
    _tensor_scatter(np.minimum))

ERRORS.extend([
    ErrorSample("GatherNd", kf.gather_nd, (rand(2, 3), i32([[2, 0]])),
                errors.InvalidArgumentError, ("GatherNd", "[2, 0]"), name="index_out_of_range"),
    ErrorSample("TensorScatterUpdate", kf.tensor_scatter_nd_update,
                (rand(2, 3), _IDX, rand(2)), errors.InvalidArgumentError,
                ("TensorScatterUpdate",), name="updates_shape"),
])
