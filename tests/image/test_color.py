"""kf.image colour conversions, adjust_*, convert_image_dtype and standardisation against
values TF 2.21 computed (tests/image/tf_image_reference.json); gradients by finite
differences."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

with open(os.path.join(os.path.dirname(__file__), "tf_image_reference.json")) as _file:
    REF = json.load(_file)
RGB = np.asarray(REF["rgb"], np.float32)
RGB8 = np.asarray(REF["rgb8"], np.uint8)
I = kf.image


@pytest.mark.parametrize("name", ["rgb_to_hsv", "hsv_to_rgb", "rgb_to_yiq", "yiq_to_rgb",
                                  "rgb_to_yuv", "yuv_to_rgb", "rgb_to_grayscale",
                                  "per_image_standardization"])
def test_conversions_match_tf(name):
    got = getattr(I, name)(RGB)
    np.testing.assert_allclose(got.numpy(), REF[name], rtol=1e-5, atol=2e-6)


def test_adjust_ops_match_tf():
    cases = {"adjust_hue": I.adjust_hue(RGB, 0.3), "adjust_hue_neg": I.adjust_hue(RGB, -0.7),
             "adjust_saturation": I.adjust_saturation(RGB, 1.7),
             "adjust_contrast": I.adjust_contrast(RGB, 1.7),
             "adjust_gamma": I.adjust_gamma(RGB, 2.0, 0.7)}
    for key, got in cases.items():
        np.testing.assert_allclose(got.numpy(), REF[key], rtol=1e-5, atol=2e-6, err_msg=key)


def test_uint8_paths_match_tf():
    cases = {"adjust_brightness_u8": I.adjust_brightness(RGB8, 0.2),
             "adjust_contrast_u8": I.adjust_contrast(RGB8, 1.5),
             "adjust_saturation_u8": I.adjust_saturation(RGB8, 1.5),
             "adjust_hue_u8": I.adjust_hue(RGB8, 0.2),
             "adjust_gamma_u8": I.adjust_gamma(RGB8, 0.5), "gray_u8": I.rgb_to_grayscale(RGB8)}
    for key, got in cases.items():
        assert got.dtype == kf.uint8, key
        diff = np.abs(got.numpy().astype(int) - np.asarray(REF[key]))
        assert diff.max() <= 1 and diff.mean() < 0.05, key
    np.testing.assert_allclose(I.per_image_standardization(RGB8).numpy(), REF["pis_u8"],
                               rtol=1e-5, atol=1e-5)


def test_convert_image_dtype_matches_tf():
    for key, want in REF["convert"].items():
        src, dst, sat = key.split("-")
        x = np.asarray(REF["convert_vals"][src], src)
        got = I.convert_image_dtype(x, dst, saturate=sat == "True")
        assert got.dtype.name == dst, key
        if src == "float32" and dst in ("uint8", "int16", "uint16", "int32") and sat == "False":
            inside = (x >= 0) & (x < 1)  # out-of-range float casts are undefined in C++
            np.testing.assert_array_equal(got.numpy()[inside], np.asarray(want)[inside], key)
        else:
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, err_msg=key)


def test_grayscale_to_rgb_and_bad_inputs():
    g = I.grayscale_to_rgb(np.ones((2, 2, 1), np.float32))
    assert g.shape == (2, 2, 3)
    with pytest.raises(ValueError):
        I.rgb_to_hsv(np.zeros((2, 2, 4), np.float32))
    with pytest.raises(ValueError):
        I.grayscale_to_rgb(np.zeros((2, 2, 3)))
    with pytest.raises(errors.InvalidArgumentError):
        I.adjust_gamma(RGB, -1.0)
    with pytest.raises(AttributeError):
        I.convert_image_dtype(RGB, kf.string)


def _fd_check(fn, x, eps=1e-6):
    x = kf.constant(x)
    w = np.random.default_rng(0).normal(size=fn(x).shape)
    with kf.GradientTape() as tape:
        tape.watch(x)
        loss = kf.reduce_sum(fn(x) * w)
    got = tape.gradient(loss, x).numpy()
    flat = x.numpy().ravel()
    want = np.zeros_like(flat)
    for i in range(flat.size):
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        want[i] = (np.sum(fn(kf.constant(up.reshape(x.shape))).numpy() * w) -
                   np.sum(fn(kf.constant(down.reshape(x.shape))).numpy() * w)) / (2 * eps)
    np.testing.assert_allclose(got.ravel(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [I.rgb_to_hsv, I.hsv_to_rgb, I.rgb_to_yiq, I.yuv_to_rgb,
                                lambda x: I.adjust_hue(x, 0.2),
                                lambda x: I.adjust_saturation(x, 0.7),
                                lambda x: I.adjust_contrast(x, 1.3),
                                lambda x: I.adjust_gamma(x, 1.5),
                                lambda x: I.adjust_brightness(x, 0.1),
                                I.per_image_standardization])
def test_colour_gradients_match_finite_differences(fn):
    x = np.random.default_rng(1).uniform(0.1, 0.9, (2, 3, 3)).astype(np.float64)
    _fd_check(fn, x)


def test_function_and_session_agree_with_eager():
    f = kf.function(lambda x: I.adjust_hue(I.adjust_saturation(x, 1.3), 0.1))
    np.testing.assert_allclose(f(RGB).numpy(), I.adjust_hue(I.adjust_saturation(RGB, 1.3),
                                                            0.1).numpy(), rtol=1e-6)
    v1 = kf.compat.v1
    g = v1.Graph()
    with g.as_default():
        p = v1.placeholder(kf.float32, [None, None, 3])
        out = I.rgb_to_hsv(p)
        with v1.Session(graph=g) as sess:
            got = sess.run(out, {p: RGB})
    np.testing.assert_allclose(got, REF["rgb_to_hsv"], rtol=1e-5, atol=2e-6)
