"""Samples of the ops in kilnflow/ops/array_extra.py and shape_extra.py (see
tests/ops/samples/__init__.py); TF's own results for the same names are replayed by
tests/ops/test_tf_reference_arrays.py."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import array_extra as A
from kilnflow.ops import shape_extra as X
from tests.ops.samples import ERRORS, ErrorSample, add, direct, i32, ints, rand

add("Roll", lambda x, s, a: A.roll(x, s, a), (rand(3, 4), i32([1, -3]), i32([0, 1])),
    lambda x, s, a: np.roll(x, (1, -3), (0, 1)), differentiable=True, wrt=(0,))
add("Roll", lambda x: A.roll(x, 7, -1), (ints(5),), lambda x: np.roll(x, 7), name="scalar")
add("Repeat", lambda x, r: A.repeat(x, r, axis=1), (rand(2, 3), i32([2, 0, 1])),
    lambda x, r: np.repeat(x, [2, 0, 1], axis=1), differentiable=True, wrt=(0,))
add("Repeat", lambda x: A.repeat(x, 2), (rand(2, 2),), lambda x: np.repeat(x, 2),
    differentiable=True, name="flat")
add("RepeatGrad", direct("RepeatGrad", axis=0), (rand(4, 2), i32([3, 1]), i32([2, 2])),
    lambda dy, r, s: np.stack([dy[:3].sum(0), dy[3]]), differentiable=True, wrt=(0,),
    static_shape=False)
_VALUES = i32([4, 1, 4, 2, 1, 7, 4])
add("Unique", A.unique, (_VALUES,), lambda x: [i32([4, 1, 2, 7]), i32([0, 1, 0, 2, 1, 3, 0])],
    static_shape=False)
add("Unique", lambda x: A.unique_with_counts(x, out_idx=kf.int64), (np.array([0.5, -1.0, 0.5]),),
    lambda x: [np.array([0.5, -1.0]), np.array([0, 1, 0]), np.array([2, 1])],
    static_shape=False, name="with_counts")
add("ReverseSequence", lambda x, n: A.reverse_sequence(x, n, seq_axis=0, batch_axis=1),
    (rand(4, 3, 2), i32([1, 4, 2])),
    lambda x, n: np.stack([np.concatenate([x[:k, b][::-1], x[k:, b]]) for b, k in
                           enumerate([1, 4, 2])], axis=1), differentiable=True, wrt=(0,))
_DATA, _PARTS = rand(3, 2, 2), i32([[1, 0], [2, 1], [0, 0]])
add("DynamicPartition", lambda d, p: A.dynamic_partition(d, p, 3), (_DATA, _PARTS),
    lambda d, p: [d[p == i] for i in range(3)], differentiable=True, wrt=(0,),
    static_shape=False)
add("DynamicStitch", lambda i, j, a, b: A.dynamic_stitch([i, j], [a, b]),
    (i32([0, 3]), i32([[1, 5], [2, 4]]), rand(2, 3), rand(2, 2, 3)),
    lambda i, j, a, b: np.stack([a[0], b[0, 0], b[1, 0], a[1], b[1, 1], b[0, 1]]),
    differentiable=True, wrt=(2, 3))
add("UnravelIndex", X.unravel_index, (i32([0, 5, 11]), i32([3, 4])),
    lambda i, d: i32(np.unravel_index([0, 5, 11], (3, 4))))
add("UnravelIndex", X.unravel_index, (np.int64(7), np.array([2, 2, 2], np.int64)),
    lambda i, d: np.array([1, 1, 1], np.int64), name="scalar")
add("Bitcast", lambda x: X.bitcast(x, kf.uint8), (rand(2, 3).astype(np.float32),),
    lambda x: x.view(np.uint8).reshape(2, 3, 4))
add("Bitcast", lambda x: X.bitcast(x, kf.float64), (ints(3, 2, dtype=np.int32),),
    lambda x: x.view(np.float64).reshape(3), name="narrow_to_wide")
add("BroadcastArgs", X.broadcast_dynamic_shape, (i32([3, 1, 4]), i32([2, 1])),
    lambda a, b: i32([3, 2, 4]))
add("StridedSlice", lambda x: X.strided_slice(x, [1, 0, 3], [2, 0, 0], [1, 1, -2],
                                              end_mask=2, shrink_axis_mask=1),
    (rand(3, 2, 4),), lambda x: x[1, :, 3:0:-2], differentiable=True, name="masks")
add("StridedSlice", lambda x: X.strided_slice(x, [0, 1], [0, 3], ellipsis_mask=1,
                                              new_axis_mask=0), (rand(2, 3, 4),),
    lambda x: x[..., 1:3], differentiable=True, name="ellipsis_mask")
add("StridedSlice", lambda x: X.strided_slice(x, [0, 0], [0, 2], new_axis_mask=1,
                                              begin_mask=2), (rand(3, 4),),
    lambda x: x[None, :2], differentiable=True, name="new_axis_mask")
add("Less", lambda n: X.sequence_mask(n, 4, dtype=kf.float32), (i32([[1, 3], [0, 4]]),),
    lambda n: (np.arange(4) < n[..., None]).astype(np.float32), name="sequence_mask")
add("Floor", lambda v: X.histogram_fixed_width_bins(v, [-1.0, 1.0], nbins=5),
    (rand(7).astype(np.float32),),
    lambda v: np.clip(np.floor((v + 1) / 2 * 5), 0, 4).astype(np.int32),
    name="histogram_fixed_width_bins")
add("TopKV2", lambda x: X.approx_top_k(x, 2, reduction_dimension=0, is_max_k=False),
    (rand(4, 3),), lambda x: [np.sort(x, 0)[:2], np.argsort(x, 0)[:2].astype(np.int32)],
    differentiable=True, name="approx_top_k_min_axis0")
add("FloorMod", lambda s, b: X.required_space_to_batch_paddings(s, b, [[1, 0], [2, 1]]),
    (i32([5, 7]), i32([2, 3])),
    lambda s, b: [i32([[1, 0], [2, 3]]), i32([[0, 0], [0, 2]])],
    name="required_space_to_batch_paddings")

ERRORS.extend([
    ErrorSample("Roll", lambda x: A.roll(x, [1, 2], [0]), (rand(3),),
                errors.InvalidArgumentError, ("Roll",), name="sizes_differ"),
    ErrorSample("Roll", lambda x: A.roll(x, 1, 2), (rand(3),), errors.InvalidArgumentError,
                ("Roll",), name="bad_axis"),
    ErrorSample("Repeat", lambda x: A.repeat(x, [1, 2], axis=0), (rand(3),),
                errors.InvalidArgumentError, ("Repeat",)),
    ErrorSample("Unique", A.unique, (ints(2, 2),), errors.InvalidArgumentError,
                ("Unique", "1D")),
    ErrorSample("ReverseSequence", lambda x: A.reverse_sequence(x, [5, 1], 1, 0), (rand(2, 3),),
                errors.InvalidArgumentError, ("ReverseSequence",)),
    ErrorSample("DynamicPartition", lambda d: A.dynamic_partition(d, [0, 2], 2), (rand(2),),
                errors.InvalidArgumentError, ("DynamicPartition",)),
    ErrorSample("UnravelIndex", lambda i: X.unravel_index(i, [2, 2]), (i32([4]),),
                errors.InvalidArgumentError, ("UnravelIndex",)),
    ErrorSample("Bitcast", lambda x: X.bitcast(x, kf.float64), (ints(3),),
                errors.InvalidArgumentError, ("Bitcast",)),
    ErrorSample("BroadcastArgs", lambda a: X.broadcast_dynamic_shape(a, [2, 4]), (i32([3, 3]),),
                errors.InvalidArgumentError, ("BroadcastArgs", "Incompatible")),
    ErrorSample("StridedSlice", lambda x: X.strided_slice(x, [0, 1], [1]), (rand(3, 3),),
                errors.InvalidArgumentError, ("StridedSlice",), name="lengths_differ"),
])
