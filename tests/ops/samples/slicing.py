"""Samples of the ops in kilnflow/ops/slicing.py (see tests/ops/samples/__init__.py)."""
from typing import Any


import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, direct, i32, ints, rand, recorded_attrs


_INDEXING = [  # name, index applied both to the tensor and to the NumPy array
    ("int", lambda x: x[1]),
    ("negative_int", lambda x: x[-1, -2]),
    ("slices_with_steps", lambda x: x[1:, ::2]),
    ("negative_step", lambda x: x[::-1, 2:0:-1]),
    ("ellipsis", lambda x: x[..., 1]),
    ("newaxis", lambda x: x[None, :, None, 0]),
    ("out_of_range_slice", lambda x: x[1:100, -100:2]),
]


for _name, _index in _INDEXING:
    add("StridedSlice", _index, (rand(3, 4, 2),), _index, differentiable=True, name=_name)


add("StridedSlice", lambda x: list(x), (rand(3, 2),), list, differentiable=True,
     name="iteration")


add("StridedSlice", lambda x: x[kf.constant(1), 1:], (ints(3, 4),), lambda x: x[1, 1:],
     name="tensor_index")


_SLICE_SPEC = recorded_attrs("StridedSlice", lambda: kf.zeros([3, 4])[1:, ::-2])["spec"]


add("StridedSliceGrad", direct("StridedSliceGrad", spec=_SLICE_SPEC),
     (rand(2, 2), i32([3, 4])), lambda dy, s: _scatter_slice(dy, s, (slice(1, None),
                                                                        slice(None, None, -2))),
     differentiable=True, wrt=(0,), static_shape=False)


def _scatter_slice(dy: np.ndarray, shape: Any, index: tuple) -> np.ndarray:
    out = np.zeros(tuple(shape), dy.dtype)
    out[index] = dy
    return out


add("GatherV2", lambda p, i: kf.gather(p, i), (rand(4, 2), i32([3, 0, 3])),
     lambda p, i: np.take(p, i, 0), differentiable=True, wrt=(0,))


add("GatherV2", lambda p, i: kf.gather(p, i, axis=1), (rand(2, 3), i32([[2, 0], [1, 1]])),
     lambda p, i: np.take(p, i, 1), differentiable=True, wrt=(0,), name="axis1_2d_indices")


add("GatherV2", lambda p, i: kf.gather(p, i), (ints(5), np.array([4, 0], np.int64)),
     lambda p, i: np.take(p, i), name="int64_indices")


def _batched_take(p: np.ndarray, i: np.ndarray, axis: int, batch_dims: int) -> np.ndarray:
    """gather with batch dims, one batch entry at a time (the definition)."""
    if batch_dims == 0:
        return np.take(p, i, axis)
    return np.stack([_batched_take(p[k], i[k], axis - 1, batch_dims - 1)
                     for k in range(p.shape[0])])


add("GatherV2", lambda p, i: kf.gather(p, i, batch_dims=1), (rand(2, 3, 4), i32([[0, 2], [1, 1]])),
     lambda p, i: _batched_take(p, i, 1, 1), differentiable=True, wrt=(0,),
     name="batch_dims1")
add("GatherV2", lambda p, i: kf.gather(p, i, axis=2, batch_dims=1),
     (rand(2, 3, 4), i32([[0, 2], [1, 1]])), lambda p, i: _batched_take(p, i, 2, 1),
     differentiable=True, wrt=(0,), name="batch_dims1_axis2_pre_dim")
add("GatherV2", lambda p, i: kf.gather(p, i, axis=3, batch_dims=-1),
     (rand(2, 2, 3, 4, 2), i32([[[3, 0, 0], [1, 2, 3]], [[0, 0, 1], [2, 2, 2]]])),
     lambda p, i: _batched_take(p, i, 3, 2), differentiable=True, wrt=(0,),
     name="batch_dims_negative_two_batch_dims_post_dim")


def _gather_grad_reference(dy: np.ndarray, indices: np.ndarray, shape: Any) -> np.ndarray:
    out = np.zeros(tuple(shape), dy.dtype)
    np.add.at(out, indices, dy)
    return out


add("GatherGrad", direct("GatherGrad", axis=0), (rand(3, 2), i32([1, 0, 1]), i32([4, 2])),
     _gather_grad_reference, differentiable=True, wrt=(0,), static_shape=False)


ERRORS.extend([
    ErrorSample("GatherV2", lambda p, i: kf.gather(p, i), (rand(3), i32([3])),
                errors.InvalidArgumentError, ("GatherV2", "3"), name="index_out_of_range"),
    ErrorSample("GatherV2", lambda p, i: kf.gather(p, i, axis=1, batch_dims=2),
                (rand(2, 3, 4), i32([[[0]] * 3] * 2)), errors.InvalidArgumentError,
                ("GatherV2", "batch_dims (2) must be less than or equal to axis (1)"),
                name="batch_dims_above_axis"),
    ErrorSample("GatherV2", lambda p, i: kf.gather(p, i, batch_dims=1),
                (rand(2, 3), i32([[0, 5], [1, 1]])), errors.InvalidArgumentError,
                ("GatherV2", "indices[0,1] = 5 is not in [0, 3)"),
                name="batch_dims_index_out_of_range"),
    ErrorSample("StridedSlice", lambda x: x[2], (rand(2, 3),), errors.InvalidArgumentError,
                ("StridedSlice",), name="index_out_of_range"),
    ErrorSample("StridedSlice", lambda x: x[0, 0, 0], (rand(2, 3),),
                errors.InvalidArgumentError, ("StridedSlice",), name="too_many_indices"),
])
