"""Samples of the ops in kilnflow/ops/image_boxes.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, rand
from kilnflow.ops.image_boxes import _draw_kernel, _iou_matrix, greedy_nms

# NumPy kernels, no gradients (as TF)

_rng = np.random.default_rng(7)
_boxes = _rng.uniform(0, 1, (8, 4))
_boxes[:, 2:] = _boxes[:, :2] + _rng.uniform(0.1, 0.5, (8, 2))
_scores = _rng.uniform(0, 1, 8)


def _nms_reference(boxes, scores, sigma=0.0, n=4, pad=False):
    picked, kept = greedy_nms(_iou_matrix(boxes), scores, n, 0.4, 0.1, sigma)
    if pad:
        picked, kept = picked + [0] * (n - len(picked)), kept + [0.0] * (n - len(kept))
    return np.asarray(picked, np.int32), np.asarray(kept)


add("NonMaxSuppressionV5", lambda b, s: kf.image.non_max_suppression(b, s, 4, 0.4, 0.1),
    (_boxes, _scores), lambda b, s: _nms_reference(b, s)[0], static_shape=False)
add("NonMaxSuppressionV5",
    lambda b, s: kf.image.non_max_suppression_with_scores(b, s, 4, 0.4, 0.1, 0.5),
    (_boxes, _scores), lambda b, s: _nms_reference(b, s, 0.5), static_shape=False, name="soft")
add("NonMaxSuppressionV5",
    lambda b, s: kf.image.non_max_suppression_padded(b, s, 6, 0.4, 0.1, True)[0],
    (_boxes, _scores), lambda b, s: _nms_reference(b, s, n=6, pad=True)[0],
    static_shape=False, name="padded")
add("CombinedNonMaxSuppression",
    lambda b, s: kf.image.combined_non_max_suppression(b, s, 2, 3, 0.4, 0.1)[3],
    (_boxes.reshape(2, 4, 1, 4).astype(np.float32),
     _scores.reshape(2, 4, 1).repeat(2, -1).astype(np.float32)),
    lambda b, s: np.asarray([3, 3], np.int32))
add("DrawBoundingBoxesV2", lambda img, b: kf.image.draw_bounding_boxes(img, b, [[1.0, 0.5]]),
    (np.zeros((1, 5, 6, 2)), np.asarray([[[0.1, 0.2, 0.7, 0.9]]], np.float32)),
    lambda img, b: _draw_kernel(img, b, np.asarray([[1.0, 0.5]])))
add("ExtractGlimpseV2",
    lambda img, off: kf.image.extract_glimpse(img, (2, 3), off, False, False, "zero"),
    (rand(2, 4, 5, 1).astype(np.float32), np.asarray([[1, 1], [0, 2]], np.float32)),
    lambda img, off: np.stack([img[0, 1:3, 1:4], img[1, 0:2, 2:5]]))
ERRORS.append(ErrorSample("NonMaxSuppressionV5",
                          lambda b, s: kf.image.non_max_suppression(b, s, 3),
                          (_boxes, _scores[:5]), errors.InvalidArgumentError,
                          ("NonMaxSuppression",), name="mismatch"))
