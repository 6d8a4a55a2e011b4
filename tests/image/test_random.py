"""kf.image random_* and stateless_random_*: seeds fix results, the draws land in range and
the applied op is the deterministic one; eager agrees with kf.function."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf

I = kf.image
RGB = np.random.default_rng(3).uniform(0, 1, (4, 5, 3)).astype(np.float32)
BATCH = np.arange(8 * 2 * 3).reshape(8, 2, 3, 1).astype(np.float32)
SEED = [3, 14]


def test_stateless_ops_are_fixed_by_the_seed_and_apply_the_op():
    for fn in (lambda s: I.stateless_random_brightness(RGB, 0.3, s),
               lambda s: I.stateless_random_contrast(RGB, 0.3, 1.5, s),
               lambda s: I.stateless_random_hue(RGB, 0.3, s),
               lambda s: I.stateless_random_saturation(RGB, 0.3, 1.5, s),
               lambda s: I.stateless_random_crop(RGB, (2, 3, 3), s),
               lambda s: I.stateless_random_flip_left_right(BATCH, s)):
        a = fn(SEED).numpy()
        np.testing.assert_array_equal(a, fn(SEED).numpy())
        np.testing.assert_array_equal(a, kf.function(fn)(kf.constant(SEED)).numpy())
    delta = kf.random.stateless_uniform([], SEED, -0.3, 0.3)
    np.testing.assert_allclose(I.stateless_random_brightness(RGB, 0.3, SEED).numpy(),
                               I.adjust_brightness(RGB, delta).numpy())


def test_batched_flips_choose_per_image():
    out = I.stateless_random_flip_up_down(BATCH, SEED).numpy()
    flipped = [np.array_equal(o, b[::-1]) for o, b in zip(out, BATCH)]
    kept = [np.array_equal(o, b) for o, b in zip(out, BATCH)]
    assert all(f or k for f, k in zip(flipped, kept)) and any(flipped) and any(kept)
    single = I.stateless_random_flip_left_right(RGB, SEED).numpy()
    assert np.array_equal(single, RGB) or np.array_equal(single, RGB[:, ::-1])


def test_stateful_ops_draw_in_range():
    kf.random.set_seed(5)
    crop = I.random_crop(RGB, (2, 2, 3)).numpy()
    assert any(np.array_equal(crop, RGB[i:i + 2, j:j + 2]) for i in range(3) for j in range(4))
    for _ in range(5):
        out = I.random_brightness(RGB, 0.2).numpy() - RGB
        assert np.allclose(out, out.flat[0], atol=1e-6) and abs(out.flat[0]) <= 0.2
    for fn in (lambda: I.random_contrast(RGB, 0.5, 1.5), lambda: I.random_hue(RGB, 0.2),
               lambda: I.random_saturation(RGB, 0.5, 1.5), lambda: I.random_flip_up_down(RGB),
               lambda: I.random_flip_left_right(BATCH)):
        assert fn().shape == np.shape(fn())


def test_gradients_flow_and_bad_arguments_raise():
    x = kf.constant(RGB)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = kf.reduce_sum(I.stateless_random_hue(I.stateless_random_contrast(
            x, 0.5, 1.5, SEED), 0.2, SEED))
    assert tape.gradient(y, x) is not None
    with pytest.raises(ValueError):
        I.random_hue(RGB, 0.7)
    with pytest.raises(ValueError):
        I.random_contrast(RGB, 1.5, 0.5)
    with pytest.raises(ValueError):
        I.random_brightness(RGB, -1.0)
    with pytest.raises(kf.errors.InvalidArgumentError):
        I.stateless_random_crop(RGB, (9, 2, 3), SEED)


def test_sample_distorted_bounding_box_meets_its_constraints():
    box = np.array([[[0.1, 0.1, 0.9, 0.8]]], np.float32)
    for seed in ([3, 14], [1, 2], [7, 7]):
        begin, size, bboxes = I.stateless_sample_distorted_bounding_box(
            [20, 30, 3], box, seed, min_object_covered=0.3, area_range=(0.1, 1.0))
        (y, x, _), (h, w, depth) = begin.numpy(), size.numpy()
        assert depth == -1 and 0 <= y and y + h <= 20 and 0 <= x and x + w <= 30
        assert 0.1 * 600 <= h * w <= 600 and 0.75 <= w / h <= 1.34 or (h, w) == (20, 30)
        covered = max(0, min(y + h, 18) - max(y, 2)) * max(0, min(x + w, 24) - max(x, 3))
        assert covered / (16 * 21) >= 0.3 or (h, w) == (20, 30)
        np.testing.assert_allclose(bboxes.numpy(), [[[y / 20, x / 30, (y + h) / 20,
                                                      (x + w) / 30]]], rtol=1e-6)
        again = I.stateless_sample_distorted_bounding_box([20, 30, 3], box, seed, 0.3,
                                                           area_range=(0.1, 1.0))
        np.testing.assert_array_equal(again[0].numpy(), begin.numpy())
    crop = kf.slice(np.zeros((20, 30, 3)), begin, size)
    assert crop.shape[:2] == (h, w)
    with pytest.raises(kf.errors.InvalidArgumentError):
        I.stateless_sample_distorted_bounding_box([20, 30, 3], np.zeros((1, 0, 4)), [1, 2])
    with pytest.raises(ValueError):
        I.sample_distorted_bounding_box([20, 30, 3], box, area_range=(0.5, 0.1))
