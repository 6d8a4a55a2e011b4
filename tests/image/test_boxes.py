"""kf.image boxes: NMS family, draw_bounding_boxes, extract_glimpse, crop_and_resize against
values TF 2.21 computed; crop_and_resize gradients by finite differences."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

with open(os.path.join(os.path.dirname(__file__), "tf_image_reference.json")) as _file:
    REF = json.load(_file)
I = kf.image
IMG = np.asarray(REF["img"], np.float32)
BOXES = np.asarray(REF["nms_boxes"], np.float32)
SCORES = np.asarray(REF["nms_scores"], np.float32)


def close(got, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def test_nms_family_matches_tf():
    close(I.non_max_suppression(BOXES, SCORES, 6, 0.3, 0.2), REF["nms"])
    idx, sc = I.non_max_suppression_with_scores(BOXES, SCORES, 6, 0.3, 0.2, soft_nms_sigma=0.5)
    close(idx, REF["nms_soft"][0])
    close(sc, REF["nms_soft"][1])
    p, v = I.non_max_suppression_padded(BOXES, SCORES, 8, 0.3, 0.2, pad_to_max_output_size=True)
    close(p, REF["nms_padded"][0])
    close(v, REF["nms_padded"][1])
    close(I.non_max_suppression_overlaps(np.asarray(REF["ov"], np.float32), SCORES, 6, 0.5,
                                         0.2), REF["nms_ov"])
    got = I.combined_non_max_suppression(np.asarray(REF["cb"], np.float32),
                                         np.asarray(REF["cs"], np.float32), 3, 5, 0.5, 0.1)
    for g, want in zip(got, REF["combined"]):
        close(g, want)


def test_nms_in_function_and_bad_inputs():
    f = kf.function(lambda b, s: I.non_max_suppression(b, s, 6, 0.3, 0.2))
    close(f(BOXES, SCORES), REF["nms"])
    with pytest.raises(errors.InvalidArgumentError):
        I.non_max_suppression(BOXES, SCORES[:3], 6)
    with pytest.raises(errors.InvalidArgumentError):
        I.non_max_suppression(BOXES, SCORES, 6, iou_threshold=1.5)


def test_draw_bounding_boxes_matches_tf():
    canvas = np.zeros((1, 6, 8, 3), np.float32)
    boxes = np.array([[[0.1, 0.1, 0.6, 0.7], [0.3, 0.5, 1.2, 0.9]]], np.float32)
    close(I.draw_bounding_boxes(canvas, boxes, np.array([[1, 0, 0, 1], [0, 1, 0, 1]],
                                                        np.float32)), REF["draw"])
    close(I.draw_bounding_boxes(canvas, boxes, None), REF["draw_nocolor"])


def test_extract_glimpse_matches_tf_for_zero_noise():
    offs = np.asarray(REF["glimpse_off"], np.float32)
    for key, want in REF["glimpse"].items():
        centered, normalized, noise = key.split("-")
        got = I.extract_glimpse(IMG, (3, 3), offs, centered == "True", normalized == "True",
                                noise)
        if noise == "zero":
            close(got, want)
        else:
            assert got.shape == np.shape(want)


def test_crop_and_resize_matches_tf():
    boxes = np.asarray(REF["boxes"], np.float32)
    for method, want in REF["crop_and_resize"].items():
        close(I.crop_and_resize(IMG, boxes, [0, 0, 0], (3, 4), method=method), want)
    close(I.crop_and_resize(IMG, boxes, [0, 0, 0], (3, 4), extrapolation_value=0.5),
          REF["crop_and_resize_extrap"])


def test_crop_and_resize_gradients_match_finite_differences():
    boxes = np.array([[0.13, 0.21, 0.77, 0.88], [0.31, 0.12, 0.64, 0.71]])  # off pixel grid

    def loss(img, bx):
        out = I.crop_and_resize(img, bx, [0, 0], (3, 4))
        return kf.reduce_sum(out * np.arange(24 * 2).reshape(2, 3, 4, 2).astype(np.float32))

    img = kf.constant(IMG)
    bx = kf.constant(boxes.astype(np.float32))
    with kf.GradientTape() as tape:
        tape.watch([img, bx])
        value = loss(img, bx)
    g_img, g_box = tape.gradient(value, [img, bx])
    eps = 1e-3
    for arr, grad, which in ((IMG, g_img, 0), (boxes.astype(np.float32), g_box, 1)):
        flat = arr.ravel()
        for i in range(0, flat.size, max(1, flat.size // 12)):
            up, down = flat.copy(), flat.copy()
            up[i] += eps
            down[i] -= eps
            args_up = [IMG, boxes.astype(np.float32)]
            args_down = list(args_up)
            args_up[which], args_down[which] = up.reshape(arr.shape), down.reshape(arr.shape)
            want = (loss(*args_up).numpy() - loss(*args_down).numpy()) / (2 * eps)
            np.testing.assert_allclose(grad.numpy().ravel()[i], want, rtol=2e-2, atol=2e-2)
