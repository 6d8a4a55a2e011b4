"""Samples of the ops in kilnflow/ops/string_grouping.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32
from tests.ops.samples.strings import strs

add("UnsortedSegmentJoin", lambda x, ids: kf.strings.unsorted_segment_join(x, ids, 3, "+"),
    (strs("a", "b", "c", "d", "e", "f", shape=(3, 2)), i32([2, 0, 2])),
    lambda x, ids: strs("c", "d", "", "", "a+e", "b+f", shape=(3, 2)))

ERRORS.extend([
    ErrorSample("UnsortedSegmentJoin",
                lambda x, ids: kf.strings.unsorted_segment_join(x, ids, 2),
                (strs("a", "b"), i32([0, 5])), errors.InvalidArgumentError,
                ("not allowed to exceed num_segments", "holds 5")),
    # TF 2.21 (asked) refuses negative ids too; they are not dropped
    ErrorSample("UnsortedSegmentJoin",
                lambda x, ids: kf.strings.unsorted_segment_join(x, ids, 2),
                (strs("a", "b", "c"), np.array([1, -1, 1], np.int64)),
                errors.InvalidArgumentError, ("negative values",), name="negative"),
    ErrorSample("UnsortedSegmentJoin",
                lambda x, ids: kf.strings.unsorted_segment_join(x, ids, 2),
                (strs("a", "b"), i32([0, 1, 1])), errors.InvalidArgumentError,
                ("must be a prefix",), name="shape"),
])
