"""Samples of the ops in kilnflow/ops/image.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops.image import RESIZE, RESIZE_GRAD, _matrix
from tests.ops.samples import ERRORS, ErrorSample, add, direct, rand


def _reference(size, method, aa=False):
    def ref(x):
        wh = _matrix(method, x.shape[1], size[0], aa)
        ww = _matrix(method, x.shape[2], size[1], aa)
        return np.einsum("Hh,bhwc,Ww->bHWc", wh, x, ww)
    return ref


def _grad_reference(size, method, aa=False):
    def ref(dy, x):
        wh = _matrix(method, x.shape[1], size[0], aa)
        ww = _matrix(method, x.shape[2], size[1], aa)
        return np.einsum("Hh,bHWc,Ww->bhwc", wh, dy, ww)
    return ref


for method, size, aa in [("bilinear", (3, 5), False), ("nearest", (5, 2), False),
                         ("bicubic", (6, 3), False), ("area", (2, 3), False),
                         ("lanczos3", (3, 2), True), ("triangle", (2, 2), True),
                         ("keyscubic", (5, 6), True), ("gaussian", (3, 3), False),
                         ("mitchellcubic", (2, 5), True)]:
    attrs = {"size": size, "method": method, "antialias": aa}
    add(RESIZE.name, direct(RESIZE.name, **attrs), (rand(2, 4, 4, 2),),
        _reference(size, method, aa), differentiable=True, name=method)
    add(RESIZE_GRAD.name, direct(RESIZE_GRAD.name, **attrs),
        (rand(2, size[0], size[1], 2), rand(2, 4, 4, 2)), _grad_reference(size, method, aa),
        differentiable=True, wrt=(0,), name=method)
add(RESIZE.name, lambda x: kf.image.resize(x, (3, 7)), (rand(4, 5, 3).astype(np.float32),),
    lambda x: _reference((3, 7), "bilinear")(x[None])[0].astype(np.float32), rtol=1e-5, atol=1e-6,
    differentiable=True, name="public")
add(RESIZE.name, lambda x: kf.image.resize(x, (3, 3), "nearest"),
    (np.arange(32).reshape(1, 4, 4, 2).astype(np.int32),),
    lambda x: x[:, [0, 2, 3]][:, :, [0, 2, 3]], name="nearest_int")

ERRORS.append(ErrorSample(RESIZE.name, lambda x: kf.image.resize(x, (2, 2)),
                          (np.zeros((3, 3, 1), np.bool_),), errors.InvalidArgumentError,
                          ("ResizeImage",), name="bool"))

# boxes (kilnflow/ops/image_boxes.py): NumPy kernels, no gradients (as TF)
from kilnflow.ops.image_boxes import greedy_nms, _iou_matrix, _draw_kernel  # noqa: E402

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
