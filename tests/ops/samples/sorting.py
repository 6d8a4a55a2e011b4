"""Samples of the ops in kilnflow/ops/sorting.py (see tests/ops/samples/__init__.py)."""


import numpy as np

import kilnflow as kf

from kilnflow import errors
from kilnflow.ops import sorting as _sorting
from tests.ops.samples import ERRORS, ErrorSample, add, direct, i32, ints, rand, scatter_along


add("ArgSort", _sorting.argsort, (rand(2, 5),), lambda x: np.argsort(x, -1).astype(np.int32))


add("ArgSort", lambda x: _sorting.argsort(x, axis=0, direction="DESCENDING"),
     (i32([[3, 1], [3, 2], [1, 2]]),), lambda x: i32([[0, 1], [1, 2], [2, 0]]),
     name="descending_ties")


add("TakeAlongAxis", _sorting.sort, (rand(3, 4),), lambda x: np.sort(x, -1),
     differentiable=True)


add("TakeAlongAxis", lambda x: _sorting.sort(x, axis=0, direction="DESCENDING"), (ints(4, 2),),
     lambda x: -np.sort(-x, 0), name="descending")


add("ScatterAlongAxis", direct("ScatterAlongAxis", axis=1),
     (rand(2, 2), i32([[2, 0], [1, 1]]), i32([2, 3])),
     lambda u, i, s: scatter_along(u, i, s, 1), differentiable=True, wrt=(0,),
     static_shape=False)


add("TopKV2", lambda x: _sorting.top_k(x, k=2), (rand(3, 4),),
     lambda x: [np.take_along_axis(x, np.argsort(-x, -1)[:, :2], -1),
                np.argsort(-x, -1)[:, :2].astype(np.int32)], differentiable=True)


add("TopKV2", lambda x: _sorting.top_k(x, k=3), (i32([1, 5, 3, 5]),),
     lambda x: [i32([5, 5, 3]), i32([1, 3, 2])], name="ties")


ERRORS.extend([
    ErrorSample("TopKV2", lambda x: _sorting.top_k(x, k=3), (rand(2),),
                errors.InvalidArgumentError, ("TopKV2", "3"), name="k_too_large"),
])


_SORTED_ROWS = np.array([[1.0, 3.0, 3.0, 5.0], [0.0, 2.0, 4.0, 8.0]])
_PROBES = np.array([[3.0, 6.0, 0.0], [4.0, -1.0, 9.0]])
add("LowerBound", kf.searchsorted, (_SORTED_ROWS, _PROBES),
    lambda s, v: np.stack([np.searchsorted(r, p) for r, p in zip(s, v)]).astype(np.int32))
add("UpperBound", lambda s, v: kf.searchsorted(s, v, side="right"), (_SORTED_ROWS, _PROBES),
    lambda s, v: np.stack([np.searchsorted(r, p, side="right")
                           for r, p in zip(s, v)]).astype(np.int32))
