"""Samples of the ops in kilnflow/ops/segment.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32, rand

_SORTED = i32([0, 0, 1, 3])
_UNSORTED = i32([2, -1, 0, 2])


def _reference(kind, ids, count, dtype):
    combine = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum,
               "prod": np.multiply}[kind]
    limits = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype)
    start = {"max": limits.min, "min": limits.max, "prod": 1}.get(kind, 0)

    def reference(data, *_):
        out = np.full((count,) + data.shape[1:], start, data.dtype)
        keep = ids >= 0
        combine.at(out, ids[keep], data[keep])
        if kind == "mean":
            counts = np.bincount(ids[keep], minlength=count).reshape(-1, 1)
            out = out / np.maximum(counts, 1)
        return out
    return reference


for _kind in ("sum", "mean", "max", "min", "prod"):
    add(f"Segment{_kind.capitalize()}",
        lambda d, k=_kind: getattr(kf.math, f"segment_{k}")(d, _SORTED),
        (rand(4, 2),), _reference(_kind, _SORTED, 4, np.dtype(np.float64)),
        differentiable=_kind in ("sum", "mean"), static_shape=False)
for _kind in ("sum", "max", "min", "prod"):
    add(f"UnsortedSegment{_kind.capitalize()}",
        lambda d, k=_kind: getattr(kf.math, f"unsorted_segment_{k}")(d, _UNSORTED, 3),
        (rand(4, 2),), _reference(_kind, _UNSORTED, 3, np.dtype(np.float64)),
        differentiable=_kind == "sum")
add("UnsortedSegmentSum", lambda d: kf.math.unsorted_segment_mean(d, _UNSORTED, 3),
    (rand(4, 2),), _reference("mean", _UNSORTED, 3, np.dtype(np.float64)),
    differentiable=True, name="mean")

ERRORS.extend([
    ErrorSample("SegmentSum", lambda d: kf.math.segment_sum(d, i32([1, 0])), (rand(2, 2),),
                errors.InvalidArgumentError, ("not increasing", "SegmentSum"),
                name="unsorted_ids"),
    ErrorSample("UnsortedSegmentSum", lambda d: kf.math.unsorted_segment_sum(d, i32([0, 5]), 2),
                (rand(2, 2),), errors.InvalidArgumentError, ("out of range",),
                name="id_out_of_range"),
])
