"""Samples of the ops in kilnflow/ops/array.py (see tests/ops/samples/__init__.py)."""


import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import array as _array
from tests.ops.samples import ERRORS, ErrorSample, add, bools, direct, i32, ints, rand


add("Shape", kf.shape, (rand(2, 3, 1),), lambda x: np.array(x.shape, np.int32))


add("Shape", lambda x: kf.shape(x, out_type=kf.int64), (ints(4),),
     lambda x: np.array(x.shape, np.int64), name="int64")


add("Size", kf.size, (rand(2, 3),), lambda x: np.int32(x.size))


add("Rank", kf.rank, (rand(2, 3, 1),), lambda x: np.int32(x.ndim))


add("Identity", kf.identity, (rand(2, 3),), lambda x: x, differentiable=True)


add("Identity", kf.identity, (bools(3),), lambda x: x, name="bool")


add("StopGradient", kf.stop_gradient, (rand(2, 3),), lambda x: x)


add("Fill", lambda: kf.fill([2, 3], 5.0), (), lambda: np.full((2, 3), 5.0, np.float32))


add("Fill", lambda: kf.zeros([2, 1]), (), lambda: np.zeros((2, 1), np.float32), name="zeros")


add("Fill", lambda: kf.ones([3], kf.int32), (), lambda: np.ones(3, np.int32), name="ones")


add("Fill", lambda x: kf.zeros_like(x), (rand(2, 3),), np.zeros_like, name="zeros_like")


add("Fill", lambda x: kf.ones_like(x, dtype=kf.float32), (ints(2),),
     lambda x: np.ones(2, np.float32), name="ones_like")


add("DynamicFill", direct("DynamicFill", value=7, dtype=kf.int64), (i32([2, 2]),),
     lambda s: np.full(s, 7, np.int64), static_shape=False)


add("Range", lambda: kf.range(0, 10, 3), (), lambda: np.arange(0, 10, 3, dtype=np.int32))


add("Range", lambda: kf.range(5.0), (), lambda: np.arange(5.0, dtype=np.float32),
     name="float")


add("Range", lambda: kf.range(7, -1, -2), (), lambda: np.arange(7, -1, -2, dtype=np.int32),
     name="negative_delta")


add("DynamicRange", direct("DynamicRange"), (i32(1), i32(9), i32(3)),
     lambda s, l, d: np.arange(s, l, d, dtype=np.int32), static_shape=False)


add("DynamicRange", direct("DynamicRange"), (np.float64(0.5), np.float64(2.0),
                                               np.float64(0.5)),
     lambda s, l, d: np.arange(s, l, d), name="float", static_shape=False)


add("SelectV2", kf.where, (bools(2, 1), rand(2, 3), rand(3)), np.where,
     differentiable=True)


add("SelectV2", lambda c, x: kf.where(c, x, 0), (bools(3), ints(3)),
     lambda c, x: np.where(c, x, 0), name="int32_scalar")


add("Where", kf.where, (bools(3, 2),), lambda c: np.argwhere(c).astype(np.int64),
     static_shape=False)


add("Where", kf.where, (ints(4, low=0, high=2),), lambda c: np.argwhere(c).astype(np.int64),
     name="int32", static_shape=False)


add("Eye", lambda: _array.eye(2, 3, dtype=kf.int32), (), lambda: np.eye(2, 3, dtype=np.int32))


add("Eye", lambda: _array.eye(2, batch_shape=[3]), (),
     lambda: np.broadcast_to(np.eye(2, dtype=np.float32), (3, 2, 2)), name="batch")


add("LinSpace", lambda a, b: _array.linspace(a, b, 4), (rand(2), rand(2)),
     lambda a, b: np.linspace(a, b, 4), differentiable=True)


add("LinSpace", lambda a, b: _array.linspace(a, b, 3, axis=-1), (rand(2, 1), rand(3)),
     lambda a, b: np.linspace(a, b, 3, axis=-1), differentiable=True, name="broadcast_axis")


add("OneHot", lambda i: _array.one_hot(i, 3), (i32([0, 2, 5, -1]),),
     lambda i: (i[:, None] == np.arange(3)).astype(np.float32))


add("OneHot", lambda i: _array.one_hot(i, 2, on_value=5, off_value=-1, axis=0),
     (i32([[1, 0], [0, 0]]),),
     lambda i: np.where(np.arange(2)[:, None, None] == i, 5, -1).astype(np.int32),
     name="values_axis0")


ERRORS.extend([
    ErrorSample("SelectV2", kf.where, (bools(2), rand(2), ints(2)),
                errors.InvalidArgumentError, ("SelectV2", "float64", "int32"),
                name="branch_dtypes_differ"),
    ErrorSample("OneHot", lambda i: _array.one_hot(i, 3), (rand(2),),
                errors.InvalidArgumentError, ("OneHot", "float64"), name="float_indices"),
])
