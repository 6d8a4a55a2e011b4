"""kf.image resizing and geometry against values TF 2.21 computed (tests/image/*.json)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

with open(os.path.join(os.path.dirname(__file__), "tf_image_reference.json")) as _file:
    REF = json.load(_file)
IMG = np.asarray(REF["img"], np.float32)
CASES = REF["resize"]


@pytest.mark.parametrize("case", CASES, ids=[
    f"{c['method']}-{c['size'][0]}x{c['size'][1]}-aa{int(c['antialias'])}" for c in CASES])
def test_resize_matches_tf(case):
    got = kf.image.resize(IMG, case["size"], method=case["method"], antialias=case["antialias"])
    assert got.dtype.name == case["dtype"]
    np.testing.assert_allclose(got.numpy(), case["out"], rtol=2e-5, atol=2e-6)


def test_resize_uint8_dtypes_and_values():
    u8 = np.asarray(REF["img_u8"], np.uint8)
    for method, (dtype, want) in REF["resize_u8"].items():
        got = kf.image.resize(u8, (3, 9), method=method)
        assert got.dtype.name == dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-4)
    assert kf.image.resize(IMG.astype(np.float64), (3, 4)).dtype.name == REF["resize_f64"]


def test_preserve_aspect_ratio_and_3d_images():
    assert kf.image.resize(IMG, (4, 4), preserve_aspect_ratio=True).shape.as_list() == \
        REF["resize_pres"]
    assert kf.image.resize(IMG, (10, 20), preserve_aspect_ratio=True).shape.as_list() == \
        REF["resize_pres2"]
    np.testing.assert_allclose(kf.image.resize(IMG[0], (3, 4)).numpy(),
                               kf.image.resize(IMG, (3, 4)).numpy()[0])
    assert kf.image.resize(IMG, (3, 4), kf.image.ResizeMethod.AREA).shape == (1, 3, 4, 2)


def test_pad_and_crop_helpers_match_tf():
    np.testing.assert_allclose(kf.image.resize_with_pad(IMG, 6, 6).numpy(),
                               REF["resize_with_pad"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(kf.image.resize_with_crop_or_pad(IMG, 4, 9).numpy(),
                               REF["resize_with_crop_or_pad"])
    pimg = np.asarray(REF["pimg"], np.float32)
    assert kf.image.central_crop(pimg, 0.5).shape.as_list() == REF["central_crop"]
    np.testing.assert_array_equal(kf.image.central_crop(pimg[0], 0.3).numpy(),
                                  REF["central_crop3"])


def test_flips_rot90_transpose():
    x = np.arange(24).reshape(2, 3, 4, 1)
    np.testing.assert_array_equal(kf.image.flip_left_right(x).numpy(), x[:, :, ::-1])
    np.testing.assert_array_equal(kf.image.flip_up_down(x[0]).numpy(), x[0, ::-1])
    np.testing.assert_array_equal(kf.image.transpose(x).numpy(), x.transpose(0, 2, 1, 3))
    for k in range(4):
        np.testing.assert_array_equal(kf.image.rot90(x, k).numpy(),
                                      np.rot90(x, k, axes=(1, 2)))
    np.testing.assert_array_equal(kf.image.crop_to_bounding_box(x, 1, 1, 2, 2).numpy(),
                                  x[:, 1:3, 1:3])
    np.testing.assert_array_equal(kf.image.pad_to_bounding_box(x[0], 1, 0, 5, 5).numpy(),
                                  np.pad(x[0], [[1, 1], [0, 1], [0, 0]]))


def test_resize_gradients_flow_in_a_function():
    x = kf.constant(IMG.astype(np.float64))
    for method in ("bilinear", "nearest", "bicubic", "area", "lanczos3"):
        @kf.function
        def grad(x):
            with kf.GradientTape() as tape:
                tape.watch(x)
                y = kf.cast(kf.image.resize(x, (3, 9), method=method, antialias=True),
                            kf.float32)
                loss = kf.reduce_sum(y * kf.reshape(kf.range(54, dtype=kf.float32) % 7,
                                                    [1, 3, 9, 2]))
            return tape.gradient(loss, x)
        g = grad(x).numpy()
        assert g.shape == IMG.shape and np.abs(g).sum() > 0


def test_bad_inputs_raise_tf_errors():
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        kf.image.resize(np.zeros((2, 2)), (3, 3))
    with pytest.raises(ValueError, match="size"):
        kf.image.resize(IMG, (3,))
    with pytest.raises(ValueError, match="not implemented"):
        kf.image.resize(IMG, (3, 3), method="cubic")
    with pytest.raises(ValueError):
        kf.image.crop_to_bounding_box(IMG, 3, 0, 4, 2)
    with pytest.raises(ValueError):
        kf.image.central_crop(IMG, 0.0)
    with pytest.raises((TypeError, errors.InvalidArgumentError)):
        kf.image.resize(np.array([[[["a"]]]]), (2, 2))


def test_eager_function_and_session_agree_with_unknown_dims():
    want = kf.image.resize(IMG, (3, 9), method="bicubic", antialias=True).numpy()
    f = kf.function(lambda x: kf.image.resize(x, (3, 9), method="bicubic", antialias=True),
                    input_signature=[kf.TensorSpec([None, None, None, 2], kf.float32)])
    np.testing.assert_allclose(f(IMG).numpy(), want, rtol=1e-6)
    v1 = kf.compat.v1
    g = v1.Graph()
    with g.as_default():
        p = v1.placeholder(kf.float32, [None, None, None, 2])
        out = kf.image.resize(p, (3, 9), method="bicubic", antialias=True)
        flipped = kf.image.flip_left_right(kf.image.rot90(p))
        with v1.Session(graph=g) as sess:
            got, got_flip = sess.run([out, flipped], {p: IMG})
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(got_flip, kf.image.flip_left_right(kf.image.rot90(IMG)))
