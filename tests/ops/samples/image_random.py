"""Samples of the ops in kilnflow/ops/image_random.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops.image_random import _sdbb_kernel
from tests.ops.samples import ERRORS, ErrorSample, add

_ATTRS = dict(aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 1.0), max_attempts=100,
              use_image=False)
add("StatelessSampleDistortedBoundingBox",
    lambda size, boxes, seed: kf.image.stateless_sample_distorted_bounding_box(
        size, boxes, seed, 0.2),
    (np.asarray([12, 16, 3], np.int32), np.asarray([[[0.2, 0.1, 0.7, 0.9]]], np.float32),
     np.asarray([5, 6], np.int32)),
    lambda size, boxes, seed: _sdbb_kernel(size, boxes, seed, np.float32(0.2), **_ATTRS))
ERRORS.append(ErrorSample("StatelessSampleDistortedBoundingBox",
                          lambda size, boxes, seed:
                          kf.image.stateless_sample_distorted_bounding_box(size, boxes, seed),
                          (np.asarray([12, 16, 3], np.int32),
                           np.asarray([[[0.2, 0.1, 1.7, 0.9]]], np.float32),
                           np.asarray([5, 6], np.int32)), errors.InvalidArgumentError,
                          ("coordinates",), name="outside"))
