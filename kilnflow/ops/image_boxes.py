"""tf.image boxes: non_max_suppression (+ _with_scores, _padded, _overlaps, combined),
draw_bounding_boxes, extract_glimpse and crop_and_resize.

NMS, drawing and glimpses are NumPy kernels (TF defines no gradient for them); the NMS
kernel follows TF's greedy loop, with soft-NMS rescoring and re-queueing. crop_and_resize
is composed of gathers and lerps, so it has gradients for the image and the boxes, as TF.
"""
from __future__ import annotations

import heapq
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import array, joining, math, reshaping, scatter
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _bad(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(errors.with_location(message))


def _iou_matrix(boxes: np.ndarray) -> np.ndarray:
    y1 = np.minimum(boxes[:, 0], boxes[:, 2])
    y2 = np.maximum(boxes[:, 0], boxes[:, 2])
    x1 = np.minimum(boxes[:, 1], boxes[:, 3])
    x2 = np.maximum(boxes[:, 1], boxes[:, 3])
    area = (y2 - y1) * (x2 - x1)
    ih = np.maximum(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0)
    iw = np.maximum(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0)
    inter = ih * iw
    union = area[:, None] + area[None] - inter
    valid = (area[:, None] > 0) & (area[None] > 0)
    return np.where(valid, inter / np.where(union > 0, union, 1), 0.0)


def greedy_nms(similarity: np.ndarray, scores: np.ndarray, max_out: int, threshold: float,
               score_threshold: float, sigma: float = 0.0) -> tuple:
    """TF's NMS loop: (selected indices, their (soft-NMS rescored) scores)."""
    scale = -0.5 / sigma if sigma > 0 else 0.0
    queue = [(-float(s), int(i), int(i), 0) for i, s in enumerate(scores)
             if s > score_threshold]
    heapq.heapify(queue)  # ties: the lower box index first, as TF's comparator
    selected: list = []
    kept: list = []
    while len(selected) < max_out and queue:
        neg, _, index, begin = heapq.heappop(queue)
        original = score = -neg
        hard = False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = similarity[index, selected[j]]
            score *= np.exp(scale * sim * sim) if sim <= threshold else 0.0
            if sigma <= 0 and sim > threshold:
                hard = True
                break
            if score <= score_threshold:
                break
        if hard:
            continue
        if score == original:
            selected.append(index)
            kept.append(score)
        elif score > score_threshold:
            heapq.heappush(queue, (-score, index, index, len(selected)))
    return selected, kept


def _nms_rule(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any,
              score_threshold: Any, soft_nms_sigma: Any, *, pad: bool,
              overlaps: bool = False) -> list:
    if boxes.shape.rank is not None and boxes.shape.rank != 2:
        raise ValueError(f"non_max_suppression: boxes must be 2-D, got shape {boxes.shape}")
    if scores.shape.rank is not None and scores.shape.rank != 1:
        raise ValueError(f"non_max_suppression: scores must be 1-D, got shape {scores.shape}")
    n = None
    known = getattr(max_output_size, "_value", None)
    if pad and known is not None:
        n = int(known)
    return [TensorSpec([n], _dtypes.int32), TensorSpec([n], scores.dtype),
            TensorSpec([], _dtypes.int32)]


def _nms_kernel(boxes: np.ndarray, scores: np.ndarray, max_output_size: np.ndarray,
                iou_threshold: np.ndarray, score_threshold: np.ndarray,
                soft_nms_sigma: np.ndarray, *, pad: bool, overlaps: bool = False) -> tuple:
    n_out = int(max_output_size)
    if n_out < 0:
        raise _bad("NonMaxSuppression: max_output_size must be >= 0")
    threshold = float(iou_threshold)
    if not overlaps and not 0 <= threshold <= 1:
        raise _bad("NonMaxSuppression: iou_threshold must be in [0, 1]")
    if boxes.shape[0] != scores.shape[0] or (not overlaps and boxes.shape[-1] != 4):
        raise _bad(
            f"NonMaxSuppression: boxes {boxes.shape} and scores {scores.shape} disagree")
    similarity = boxes.astype(np.float64) if overlaps else _iou_matrix(boxes.astype(np.float64))
    picked, kept = greedy_nms(similarity, scores.astype(np.float64), n_out, threshold,
                              float(score_threshold), float(soft_nms_sigma))
    count = len(picked)
    if pad:
        picked = picked + [0] * (n_out - count)
        kept = kept + [0.0] * (n_out - count)
    return (np.asarray(picked, np.int32), np.asarray(kept, scores.dtype),
            np.asarray(count, np.int32))


NMS = defop("NonMaxSuppressionV5", shape=_nms_rule, kernel=_nms_kernel, multi_output=True,
            same_dtype=(0, 1), dtypes=_FLOATS)


def _scalar(value: Any, dtype: Any) -> Tensor:
    return math.cast(convert_to_tensor(value), dtype)


def _nms(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any,
         score_threshold: Any, sigma: Any, pad: bool, overlaps: bool = False,
         name: Optional[str] = None) -> tuple:
    boxes, scores = convert_to_tensor(boxes), convert_to_tensor(scores)
    dtype = scores.dtype
    args = (boxes, scores, _scalar(max_output_size, _dtypes.int32),
            _scalar(iou_threshold, dtype), _scalar(score_threshold, dtype), _scalar(sigma, dtype))
    return bind(NMS, args, {"pad": pad, "overlaps": overlaps}, name=name)


def non_max_suppression(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any = 0.5,
                        score_threshold: Any = float("-inf"),
                        name: Optional[str] = None) -> Tensor:
    """Indices of boxes kept by greedy non-maximum suppression, best score first."""
    return _nms(boxes, scores, max_output_size, iou_threshold, score_threshold, 0.0, False,
                name=name)[0]


def non_max_suppression_with_scores(boxes: Any, scores: Any, max_output_size: Any,
                                    iou_threshold: Any = 0.5,
                                    score_threshold: Any = float("-inf"),
                                    soft_nms_sigma: Any = 0.0,
                                    name: Optional[str] = None) -> tuple:
    """(indices, scores); soft_nms_sigma > 0 decays overlapping scores (Soft-NMS)."""
    out = _nms(boxes, scores, max_output_size, iou_threshold, score_threshold, soft_nms_sigma,
               False, name=name)
    return out[0], out[1]


def non_max_suppression_overlaps(overlaps: Any, scores: Any, max_output_size: Any,
                                 overlap_threshold: Any = 0.5,
                                 score_threshold: Any = float("-inf"),
                                 name: Optional[str] = None) -> Tensor:
    """NMS over a given [n, n] overlap matrix instead of box IoUs."""
    return _nms(overlaps, scores, max_output_size, overlap_threshold, score_threshold, 0.0,
                False, overlaps=True, name=name)[0]


def non_max_suppression_padded(boxes: Any, scores: Any, max_output_size: Any,
                               iou_threshold: Any = 0.5,
                               score_threshold: Any = float("-inf"),
                               pad_to_max_output_size: bool = False,
                               name: Optional[str] = None, sorted_input: bool = False,
                               canonicalized_coordinates: bool = False,
                               tile_size: int = 512) -> tuple:
    """(indices padded with 0 to max_output_size if asked, number of valid indices)."""
    out = _nms(boxes, scores, max_output_size, iou_threshold, score_threshold, 0.0,
               bool(pad_to_max_output_size), name=name)
    return out[0], out[2]


def _combined_rule(boxes: Any, scores: Any, *, per_class: int, total: int, iou: float,
                   score_threshold: float, pad_per_class: bool, clip: bool) -> list:
    batch = boxes.shape[0] if boxes.shape.rank else None
    classes = scores.shape[-1] if scores.shape.rank else None
    detections = total
    if pad_per_class and classes is not None:
        detections = min(total, per_class * classes)
    return [TensorSpec([batch, detections, 4], _dtypes.float32),
            TensorSpec([batch, detections], _dtypes.float32),
            TensorSpec([batch, detections], _dtypes.float32), TensorSpec([batch], _dtypes.int32)]


def _combined_kernel(boxes: np.ndarray, scores: np.ndarray, *, per_class: int, total: int,
                     iou: float, score_threshold: float, pad_per_class: bool,
                     clip: bool) -> tuple:
    if boxes.ndim != 4 or scores.ndim != 3 or boxes.shape[-1] != 4 or \
            boxes.shape[2] not in (1, scores.shape[2]):
        raise _bad(
            f"CombinedNonMaxSuppression: boxes {boxes.shape} must be [batch, n, q, 4] with q "
            f"1 or num_classes, scores {scores.shape} [batch, n, num_classes]")
    batch, _, q, _ = boxes.shape
    classes = scores.shape[2]
    detections = min(total, per_class * classes) if pad_per_class else total
    out_boxes = np.zeros((batch, detections, 4), np.float32)
    out_scores = np.zeros((batch, detections), np.float32)
    out_classes = np.zeros((batch, detections), np.float32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found = []
        for c in range(classes):
            cls_boxes = boxes[b, :, c if q > 1 else 0].astype(np.float64)
            picked, kept = greedy_nms(_iou_matrix(cls_boxes), scores[b, :, c].astype(np.float64),
                                      per_class, iou, score_threshold)
            found += [(s, c, cls_boxes[i]) for i, s in zip(picked, kept)]
        found.sort(key=lambda item: -item[0])
        found = found[:detections]
        valid[b] = len(found)
        for k, (s, c, box) in enumerate(found):
            out_boxes[b, k] = np.clip(box, 0.0, 1.0) if clip else box
            out_scores[b, k], out_classes[b, k] = s, c
    return out_boxes, out_scores, out_classes, valid


COMBINED_NMS = defop("CombinedNonMaxSuppression", shape=_combined_rule, kernel=_combined_kernel,
                     multi_output=True, dtypes=(_dtypes.float32,))


def combined_non_max_suppression(boxes: Any, scores: Any, max_output_size_per_class: int,
                                 max_total_size: int, iou_threshold: float = 0.5,
                                 score_threshold: float = float("-inf"),
                                 pad_per_class: bool = False, clip_boxes: bool = True,
                                 name: Optional[str] = None) -> tuple:
    """Per-class NMS over a batch, merged by score: (boxes, scores, classes, valid counts)."""
    attrs = {"per_class": int(max_output_size_per_class), "total": int(max_total_size),
             "iou": float(iou_threshold), "score_threshold": float(score_threshold),
             "pad_per_class": bool(pad_per_class), "clip": bool(clip_boxes)}
    if not 0 <= attrs["iou"] <= 1:
        raise _bad("combined_non_max_suppression: iou_threshold must "
                                          "be in [0, 1]")
    return bind(COMBINED_NMS, (convert_to_tensor(boxes, _dtypes.float32),
                               convert_to_tensor(scores, _dtypes.float32)), attrs, name=name)


_DEFAULT_COLORS = [[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                   [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]]


def _draw_kernel(images: np.ndarray, boxes: np.ndarray, colors: np.ndarray) -> np.ndarray:
    if images.ndim != 4 or boxes.ndim != 3 or boxes.shape[-1] != 4 or \
            boxes.shape[0] != images.shape[0]:
        raise _bad(
            f"DrawBoundingBoxesV2: images {images.shape} must be [batch, h, w, depth] and "
            f"boxes {boxes.shape} [batch, n, 4]")
    out = images.copy()
    _, h, w, depth = images.shape
    table = np.asarray(colors, np.float64) if colors.size else np.asarray(_DEFAULT_COLORS)
    if not colors.size and depth == 1:
        table[:, 0] = 1
    if table.ndim != 2 or table.shape[1] < depth:
        raise _bad("DrawBoundingBoxesV2: colors must be [n, >= depth]")
    for b in range(boxes.shape[0]):
        for k in range(boxes.shape[1]):
            color = table[k % len(table), :depth].astype(images.dtype)
            top, left = int(boxes[b, k, 0] * (h - 1)), int(boxes[b, k, 1] * (w - 1))
            bottom, right = int(boxes[b, k, 2] * (h - 1)), int(boxes[b, k, 3] * (w - 1))
            if top > h - 1 or left > w - 1 or bottom < 0 or right < 0:
                continue
            r0, r1 = max(top, 0), min(bottom, h - 1)
            c0, c1 = max(left, 0), min(right, w - 1)
            for row in (top, bottom):
                if 0 <= row < h:
                    out[b, row, c0:c1 + 1] = color
            for col in (left, right):
                if 0 <= col < w:
                    out[b, r0:r1 + 1, col] = color
    return out


DRAW = defop("DrawBoundingBoxesV2", kernel=_draw_kernel, same_dtype=False, dtypes=_FLOATS,
             shape=lambda images, boxes, colors: TensorSpec(images.shape, images.dtype))


def draw_bounding_boxes(images: Any, boxes: Any, colors: Any,
                        name: Optional[str] = None) -> Tensor:
    """Draw box outlines (normalised [y_min, x_min, y_max, x_max]) in colors, cycling."""
    images = convert_to_tensor(images)
    colors = np.zeros((0, 4), np.float32) if colors is None else colors
    return bind(DRAW, (images, convert_to_tensor(boxes, _dtypes.float32),
                       convert_to_tensor(colors, _dtypes.float32)), name=name)


def _glimpse_kernel(images: np.ndarray, offsets: np.ndarray, *, size: tuple, centered: bool,
                    normalized: bool, noise: str) -> np.ndarray:
    batch, h, w, depth = images.shape
    if offsets.shape != (batch, 2):
        raise _bad(
            f"ExtractGlimpseV2: offsets must be [{batch}, 2], got {offsets.shape}")
    gh, gw = size
    out = np.zeros((batch, gh, gw, depth), images.dtype)
    rng = np.random.default_rng(0)  # deterministic noise (TF draws from its own stream)
    for b in range(batch):
        y, x = float(offsets[b, 0]), float(offsets[b, 1])
        # TF's rule: only normalized centred offsets are halved and name the window's
        # centre; otherwise the offset is the window's corner
        if normalized:
            y, x = y * h, x * w
            if centered:
                y = y / 2.0 + h / 2.0 - gh / 2.0
                x = x / 2.0 + w / 2.0 - gw / 2.0
        elif centered:
            y, x = y + h / 2.0, x + w / 2.0
        top, left = int(y), int(x)
        if noise == "uniform":
            out[b] = rng.uniform(images[b].min(), images[b].max(), (gh, gw, depth))
        elif noise == "gaussian":
            out[b] = rng.normal(images[b].mean(), images[b].std(), (gh, gw, depth))
        r0, r1 = max(top, 0), min(top + gh, h)
        c0, c1 = max(left, 0), min(left + gw, w)
        if r0 < r1 and c0 < c1:
            out[b, r0 - top:r1 - top, c0 - left:c1 - left] = images[b, r0:r1, c0:c1]
    return out


GLIMPSE = defop("ExtractGlimpseV2", kernel=_glimpse_kernel, same_dtype=False,
                dtypes=(_dtypes.float32,),
                shape=lambda images, offsets, *, size, centered, normalized, noise: TensorSpec(
                    [images.shape[0] if images.shape.rank else None, size[0], size[1],
                     images.shape[3] if images.shape.rank else None], images.dtype))


def extract_glimpse(input: Any, size: Any, offsets: Any, centered: bool = True,  # noqa: A002
                    normalized: bool = True, noise: str = "uniform",
                    name: Optional[str] = None) -> Tensor:
    """Windows of `size` at `offsets` ([y, x]); out-of-image pixels are noise or zero."""
    if noise not in ("uniform", "gaussian", "zero"):
        raise _bad(f"extract_glimpse: unknown noise type {noise!r}")
    images = convert_to_tensor(input, _dtypes.float32)
    if images.shape.rank != 4:
        raise ValueError(f"extract_glimpse: input must be 4-D, got {images.shape}")
    size = tuple(int(v) for v in np.asarray(getattr(size, "_value", size)).reshape(-1))
    if len(size) != 2 or min(size) < 1:
        raise _bad(f"extract_glimpse: size must be 2 positive ints, "
                                          f"got {size}")
    attrs = {"size": size, "centered": bool(centered), "normalized": bool(normalized),
             "noise": noise}
    return bind(GLIMPSE, (images, convert_to_tensor(offsets, _dtypes.float32)), attrs,
                name=name)


def crop_and_resize(image: Any, boxes: Any, box_indices: Any, crop_size: Any,
                    method: str = "bilinear", extrapolation_value: float = 0.0,
                    name: Optional[str] = None) -> Tensor:
    """Crops of normalised boxes resampled to crop_size: [num_boxes, ch, cw, depth], float32.

    Differentiable with respect to the image and the boxes (through the lerp weights)."""
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"crop_and_resize: method must be 'bilinear' or 'nearest', got "
                         f"{method!r}")
    image = math.cast(convert_to_tensor(image), _dtypes.float32)
    boxes = convert_to_tensor(boxes, _dtypes.float32)
    index = convert_to_tensor(box_indices, _dtypes.int32)
    if image.shape.rank != 4 or boxes.shape.rank != 2 or index.shape.rank != 1:
        raise ValueError("crop_and_resize: image must be 4-D, boxes [num_boxes, 4] and "
                         "box_indices [num_boxes]")
    ch, cw = (int(v) for v in np.asarray(getattr(crop_size, "_value", crop_size)).reshape(-1))
    if ch <= 0 or cw <= 0:
        raise ValueError("crop_and_resize: crop_size must be positive")
    h, w = image.shape[1], image.shape[2]
    if h is None or w is None:
        raise ValueError("crop_and_resize: image height and width must be known")
    ys = _sample_positions(boxes[:, 0], boxes[:, 2], h, ch)  # [n, ch]
    xs = _sample_positions(boxes[:, 1], boxes[:, 3], w, cw)  # [n, cw]
    inside = math.logical_and(
        math.logical_and(ys[:, :, None] >= 0.0, ys[:, :, None] <= h - 1.0),
        math.logical_and(xs[:, None, :] >= 0.0, xs[:, None, :] <= w - 1.0))[..., None]
    if method == "nearest":
        yi = _clamp_index(_round_half_away(ys), h)
        xi = _clamp_index(_round_half_away(xs), w)
        value = _pick(image, index, yi, xi)
    else:
        y0, x0 = math.floor(ys), math.floor(xs)
        dy, dx = (ys - y0)[:, :, None, None], (xs - x0)[:, None, :, None]
        y0i, y1i = _clamp_index(y0, h), _clamp_index(math.ceil(ys), h)
        x0i, x1i = _clamp_index(x0, w), _clamp_index(math.ceil(xs), w)
        top = _pick(image, index, y0i, x0i) * (1 - dx) + _pick(image, index, y0i, x1i) * dx
        bottom = _pick(image, index, y1i, x0i) * (1 - dx) + _pick(image, index, y1i, x1i) * dx
        value = top * (1 - dy) + bottom * dy
    fill = array.fill(array.shape(value), convert_to_tensor(float(extrapolation_value),
                                                            _dtypes.float32))
    mask = reshaping.broadcast_to(inside, array.shape(value))
    return array.where(mask, value, fill, name=name)


def _sample_positions(lo: Tensor, hi: Tensor, n: int, crop: int) -> Tensor:
    if crop > 1:
        steps = convert_to_tensor(np.arange(crop, dtype=np.float32), _dtypes.float32)
        return lo[:, None] * (n - 1) + steps[None, :] * ((hi - lo) * (n - 1) / (crop - 1))[:,
                                                                                         None]
    return (0.5 * (lo + hi) * (n - 1))[:, None]


def _round_half_away(t: Tensor) -> Tensor:
    return math.sign(t) * math.floor(math.abs(t) + 0.5)


def _clamp_index(t: Tensor, n: int) -> Tensor:
    return math.cast(math.clip_by_value(t, 0.0, float(n - 1)), _dtypes.int32)


def _pick(image: Tensor, index: Tensor, yi: Tensor, xi: Tensor) -> Tensor:
    """image[index[b], yi[b, i], xi[b, j], :] as [n, ch, cw, depth]."""
    n, ch, cw = array.shape(yi)[0], array.shape(yi)[1], array.shape(xi)[1]
    b = reshaping.broadcast_to(index[:, None, None], [n, ch, cw])
    y = reshaping.broadcast_to(yi[:, :, None], [n, ch, cw])
    x = reshaping.broadcast_to(xi[:, None, :], [n, ch, cw])
    return scatter.gather_nd(image, joining.stack([b, y, x], -1))
