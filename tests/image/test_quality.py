"""kf.image measures and filters against values TF 2.21 computed; gradients flow."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kilnflow as kf

with open(os.path.join(os.path.dirname(__file__), "tf_image_reference.json")) as _file:
    REF = json.load(_file)
I = kf.image
RGB = np.asarray(REF["rgb"], np.float32)


def close(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def test_filters_match_tf():
    dy, dx = I.image_gradients(RGB[None])
    close(dy, REF["image_gradients"][0])
    close(dx, REF["image_gradients"][1])
    close(I.sobel_edges(RGB[None]), REF["sobel_edges"])
    close(I.total_variation(RGB), REF["total_variation"])
    assert I.total_variation(RGB[None]).shape == (1,)


def test_psnr_ssim_match_tf():
    a, b = np.asarray(REF["ssim_a"], np.float32), np.asarray(REF["ssim_b"], np.float32)
    close(I.psnr(a, b, 1.0), REF["psnr"])
    close(I.ssim(a, b, 1.0, filter_size=5), REF["ssim"])
    close(I.ssim(a, b, 1.0), REF["ssim11"])
    a2, b2 = np.asarray(REF["msa"], np.float32), np.asarray(REF["msb"], np.float32)
    close(I.ssim_multiscale(a2, b2, 1.0, filter_size=3, power_factors=(0.3, 0.3, 0.4)),
          REF["ssim_ms"])
    assert I.ssim(a, b, 1.0, return_index_map=True).shape == (2, 6, 6)


def test_extract_patches_match_tf():
    pimg = np.asarray(REF["pimg"], np.float32)
    for pad in ("VALID", "SAME"):
        close(I.extract_patches(pimg, [1, 3, 2, 1], [1, 2, 3, 1], [1, 1, 2, 1], pad),
              REF["patches_" + pad])


def test_gradients_flow_and_function_agrees():
    a = kf.constant(np.asarray(REF["ssim_a"], np.float32))
    b = np.asarray(REF["ssim_b"], np.float32)
    with kf.GradientTape() as tape:
        tape.watch(a)
        loss = kf.reduce_sum(I.ssim(a, b, 1.0, filter_size=5)) + kf.reduce_sum(
            I.total_variation(a)) + kf.reduce_sum(I.sobel_edges(a))
    g = tape.gradient(loss, a)
    assert g.shape == a.shape and np.isfinite(g.numpy()).all()
    f = kf.function(lambda x, y: I.ssim(x, y, 1.0, filter_size=5))
    close(f(a, b), REF["ssim"])


def test_bad_inputs():
    with pytest.raises(ValueError):
        I.image_gradients(RGB)
    with pytest.raises(ValueError):
        I.ssim(RGB[None], RGB[None], 1.0)  # 4x5 image, 11x11 filter
    with pytest.raises(ValueError):
        I.total_variation(RGB[0])
    with pytest.raises(ValueError):
        I.extract_patches(RGB[None], [1, 2, 2], [1, 1, 1, 1], [1, 1, 1, 1], "VALID")
