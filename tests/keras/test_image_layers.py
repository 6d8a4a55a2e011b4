"""Keras 3's image preprocessing layers against outputs recorded from TF 2.21's Keras
(tests/keras/data/keras_image_layers.json, written by scripts/record_keras_image_layers.py
from the cases in tests/keras/image_layer_cases.py): eager and inside kf.function, configs,
output shapes, inference behaviour and gradients of the resampling op."""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras
from kilnflow.ops.image_transform import image_projective_transform_v3
from tests.keras import image_layer_cases as cases

with open(os.path.join(os.path.dirname(__file__), "data", "keras_image_layers.json")) as _f:
    RECORDED = json.load(_f)


def _expected(entry):
    return np.asarray(entry["value"]).reshape(entry["shape"])


def _check(got, entry, atol):
    got = np.asarray(got)
    assert list(got.shape) == entry["shape"]
    assert str(got.dtype) == entry["dtype"]
    tol = 1.0 if entry["dtype"] == "uint8" else atol  # float rounding can flip a .5
    np.testing.assert_allclose(got.astype(np.float64), _expected(entry), atol=tol, rtol=1e-5)


@pytest.mark.parametrize("name,cls,kwargs,x,call_kwargs", cases.CASES,
                         ids=[c[0] for c in cases.CASES])
def test_layer_matches_keras(name, cls, kwargs, x, call_kwargs):
    entry = RECORDED["layers"][name]
    layer = getattr(keras.layers, cls)(**kwargs)
    images = cases.inputs(x)
    _check(layer(images, **call_kwargs), entry, 2e-3)
    fn = kf.function(lambda t: layer(t, **call_kwargs))
    _check(fn(kf.constant(images)), entry, 2e-3)
    assert tuple(layer.compute_output_shape(images.shape)) == tuple(entry["shape"]) or \
        call_kwargs.get("training") is False
    clone = type(layer).from_config(layer.get_config())
    _check(clone(images, **call_kwargs), entry, 2e-3)


@pytest.mark.parametrize("name,i,interpolation,fill_mode", cases.OP_CASES,
                         ids=[c[0] for c in cases.OP_CASES])
def test_projective_transform_matches_tf(name, i, interpolation, fill_mode):
    t = np.array([cases.TRANSFORMS[i]] * 2, np.float32)
    got = image_projective_transform_v3(cases.IMG, t, [6, 8], 0.5, interpolation, fill_mode)
    _check(got, RECORDED["ops"][name], 2e-3)


def _two(cls, **kwargs):
    return getattr(keras.layers, cls)(seed=5, **kwargs), getattr(keras.layers, cls)(seed=5,
                                                                                    **kwargs)


@pytest.mark.parametrize("cls,kwargs", [
    ("RandomRotation", dict(factor=0.2)), ("RandomZoom", dict(height_factor=0.3)),
    ("RandomTranslation", dict(height_factor=0.2, width_factor=0.3)),
    ("RandomShear", dict(x_factor=0.3, y_factor=0.2)), ("RandomCrop", dict(height=3, width=4)),
    ("RandomBrightness", dict(factor=0.3)), ("RandomHue", dict(factor=0.3)),
    ("RandomSaturation", dict(factor=0.3)), ("RandomInvert", dict(factor=0.5)),
    ("Solarization", dict(addition_factor=0.5, threshold_factor=0.5)),
    ("RandomPosterization", dict(factor=(1, 7))), ("RandomSharpness", dict(factor=0.5)),
    ("RandomGrayscale", dict(factor=0.5)),
    ("RandomColorJitter", dict(brightness_factor=0.2, contrast_factor=0.3, hue_factor=0.2)),
    ("RandomErasing", dict(factor=0.7, fill_value=3.0)), ("MixUp", dict(alpha=0.4)),
    ("CutMix", dict(factor=0.8)), ("RandomColorDegeneration", dict(factor=0.8)),
    ("RandomGaussianBlur", dict(factor=0.9, sigma=(0.2, 0.9))),
    ("RandomPerspective", dict(scale=0.6))])
def test_random_layers_seeded_and_identity_at_inference(cls, kwargs):
    x = np.concatenate([cases.IMG] * 4)  # 8 images: some draw must differ
    a, b = _two(cls, **kwargs)
    first = a(x).numpy()
    np.testing.assert_array_equal(first, b(x).numpy())  # same seed, same draws
    assert not np.allclose(a(x).numpy(), first)  # the state advances
    assert a.weights == [] and a.variables == []  # the generator state is no weight
    np.testing.assert_array_equal(a(x, training=False).numpy(), x)
    model = keras.Sequential([keras.Input((5, 7, 3)), a])
    np.testing.assert_allclose(model.predict(x, verbose=0), x)
    fn = kf.function(lambda t: a(t, training=True))
    assert not np.allclose(fn(kf.constant(x)).numpy(), fn(kf.constant(x)).numpy())


def test_rotation_unknown_batch_in_function():
    layer = keras.layers.RandomRotation((0.1, 0.1), fill_mode="constant", fill_value=3.0)
    fn = kf.function(lambda t: layer(t), input_signature=[kf.TensorSpec([None, 5, 7, 3])])
    _check(fn(cases.IMG), RECORDED["layers"]["rotation_constant_bilinear"], 2e-3)


@pytest.mark.parametrize("interpolation,fill_mode", [("BILINEAR", "CONSTANT"),
                                                     ("BILINEAR", "REFLECT"),
                                                     ("NEAREST", "WRAP")])
def test_projective_transform_gradient(interpolation, fill_mode):
    rng = np.random.RandomState(1)
    x = rng.rand(1, 4, 5, 2)
    t = np.array([[0.9, 0.2, 0.4, -0.15, 1.1, -0.3, 0.0, 0.0]], np.float32)
    w = rng.rand(1, 3, 6, 2)

    def loss(v):
        return kf.reduce_sum(image_projective_transform_v3(v, t, [3, 6], 0.0, interpolation,
                                                           fill_mode) * w)
    xv = kf.constant(x)
    with kf.GradientTape() as tape:
        tape.watch(xv)
        y = loss(xv)
    grad = tape.gradient(y, xv).numpy()
    eps, numeric = 1e-6, np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[idx] = eps
        numeric[idx] = (loss(kf.constant(x + d)).numpy() - loss(kf.constant(x - d)).numpy()) / (
            2 * eps)
    np.testing.assert_allclose(grad, numeric, atol=1e-6)


@pytest.mark.parametrize("in_function", [False, True])
def test_mixup_mixes_images_and_labels_alike(in_function):
    layer = keras.layers.MixUp(alpha=0.5, seed=2)
    labels = np.eye(2, dtype=np.float32)
    call = kf.function(lambda d: layer(d)) if in_function else layer
    out = call({"images": kf.constant(cases.IMG), "labels": kf.constant(labels)})
    mixed, images = out["labels"].numpy(), out["images"].numpy()
    for i in range(2):  # label row i = w e_i + (1 - w) e_perm(i)
        j = 1 - i if mixed[i, i] < 1.0 - 1e-6 else i
        w = mixed[i, i] if j != i else 1.0
        np.testing.assert_allclose(images[i], w * cases.IMG[i] + (1 - w) * cases.IMG[j],
                                   rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(mixed.sum(1), 1.0, rtol=1e-6)


def test_cutmix_pastes_a_box_and_mixes_labels_by_area():
    x = np.concatenate([np.zeros((1, 8, 8, 1)), np.ones((1, 8, 8, 1))]).astype(np.float32)
    layer = keras.layers.CutMix(seed=4)
    for _ in range(5):
        out = layer({"images": x, "labels": np.eye(2, dtype=np.float32)})
        images, labels = out["images"].numpy(), out["labels"].numpy()
        for i in range(2):
            other = np.abs(images[i] - x[i]).astype(bool)  # pixels taken from the partner
            if labels[i, i] < 1.0 - 1e-6:  # mixed with the other image
                assert abs((1 - labels[i, i]) - other.mean()) < 0.3  # box area (float edges)
                rows, cols = np.nonzero(other[..., 0])
                if rows.size:
                    assert other[rows.min():rows.max() + 1, cols.min():cols.max() + 1].all()


def test_pipeline_and_config_round_trip():
    pipe = keras.layers.Pipeline([keras.layers.Resizing(4, 4),
                                  keras.layers.RandomRotation((0.25, 0.25), fill_mode="constant"),
                                  keras.layers.AutoContrast()])
    out = pipe(cases.IMG).numpy()
    expected = cases.IMG
    for layer in pipe.layers:
        expected = layer(expected)
    np.testing.assert_allclose(out, expected.numpy(), rtol=1e-5)
    again = keras.layers.Pipeline.from_config(pipe.get_config())
    assert [type(la).__name__ for la in again.layers] == ["Resizing", "RandomRotation",
                                                         "AutoContrast"]
    np.testing.assert_allclose(again(cases.IMG).numpy(), out, rtol=1e-5)
    assert tuple(pipe.compute_output_shape((2, 5, 7, 3))) == (2, 4, 4, 3)
    inference = pipe(cases.IMG, training=False).numpy()
    np.testing.assert_allclose(inference, again.layers[2](again.layers[0](cases.IMG)).numpy(),
                               rtol=1e-5)


def test_layers_in_a_saved_model(tmp_path):
    model = keras.Sequential([keras.Input((5, 7, 3)), keras.layers.Resizing(4, 6),
                              keras.layers.RandomRotation(0.2, seed=1),
                              keras.layers.RandomColorJitter(brightness_factor=0.1),
                              keras.layers.AutoContrast(), keras.layers.Flatten(),
                              keras.layers.Dense(2)])
    before = model.predict(cases.IMG, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(cases.IMG, verbose=0), before, rtol=1e-5)


def test_homography_maps_corners():
    from kilnflow.keras.layers.image_geometric import homography
    start = np.array([[[0, 0], [6, 0], [0, 4], [6, 4]]], np.float64)
    end = np.array([[[0.5, -0.3], [5.2, 0.4], [-0.6, 4.4], [6.8, 3.1]]], np.float64)
    t = homography(kf.constant(start), kf.constant(end)).numpy()[0]
    for (sx, sy), (ex, ey) in zip(start[0], end[0]):
        k = t[6] * ex + t[7] * ey + 1
        np.testing.assert_allclose([(t[0] * ex + t[1] * ey + t[2]) / k,
                                    (t[3] * ex + t[4] * ey + t[5]) / k], [sx, sy], atol=1e-9)


def test_perspective_transform_matches_keras():
    from kilnflow.keras.layers.image_geometric import homography
    t = homography(kf.constant(cases.PERSPECTIVE_START), kf.constant(cases.PERSPECTIVE_END))
    got = image_projective_transform_v3(cases.IMG, t, [5, 7], 2.0, "BILINEAR", "CONSTANT")
    _check(got, RECORDED["ops"]["perspective"], 2e-3)


def test_rand_augment_applies_one_of_its_operations():
    layer = keras.layers.RandAugment(num_ops=1, factor=0.0, seed=3)
    images = kf.constant(cases.IMG)
    candidates = [op.transform(images, True).numpy() for op in layer._ops]
    for _ in range(4):
        out = layer(cases.IMG).numpy()
        assert any(np.allclose(out, c, atol=1e-3) for c in candidates)
    np.testing.assert_array_equal(layer(cases.IMG, training=False).numpy(), cases.IMG)
    two = keras.layers.RandAugment(num_ops=3, factor=0.4, seed=1)
    assert kf.function(lambda t: two(t))(images).shape == cases.IMG.shape
    again = keras.layers.RandAugment.from_config(two.get_config())
    assert again.num_ops == 3 and again.factor == (0.0, 0.4)


def test_aug_mix_blends_chains_within_the_value_range():
    layer = keras.layers.AugMix(seed=2, num_chains=2, chain_depth=2)
    out = layer(cases.IMG).numpy()
    assert out.shape == cases.IMG.shape and out.min() >= 0 and out.max() <= 255
    assert not np.allclose(out, cases.IMG)
    np.testing.assert_array_equal(layer(cases.IMG, training=False).numpy(), cases.IMG)
    traced = kf.function(lambda t: layer(t))
    first, second = traced(kf.constant(cases.IMG)).numpy(), traced(kf.constant(cases.IMG)).numpy()
    assert not np.allclose(first, second)  # fresh draws on every call
    small = keras.layers.AugMix(value_range=(0, 1), all_ops=False, factor=0.0, seed=1)
    assert len(small._ops) == 7
    assert np.all((small(cases.IMG_01).numpy() >= 0) & (small(cases.IMG_01).numpy() <= 1))
    again = keras.layers.AugMix.from_config(layer.get_config())
    assert (again.num_chains, again.chain_depth, again.all_ops) == (2, 2, True)


def test_max_num_bounding_boxes_pads_and_truncates():
    boxes = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    labels = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    data = {"images": cases.IMG, "bounding_boxes": {"boxes": boxes, "labels": labels}}
    out = keras.layers.MaxNumBoundingBoxes(5)(data)
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy()[:, :3], boxes)
    np.testing.assert_array_equal(out["bounding_boxes"]["boxes"].numpy()[:, 3:], -1)
    np.testing.assert_array_equal(out["bounding_boxes"]["labels"].numpy(),
                                  [[1, 2, 3, -1, -1], [4, 5, 6, -1, -1]])
    np.testing.assert_array_equal(np.asarray(out["images"]), cases.IMG)
    cut = keras.layers.MaxNumBoundingBoxes(2, fill_value=0)(data)["bounding_boxes"]
    np.testing.assert_array_equal(cut["boxes"].numpy(), boxes[:, :2])
    np.testing.assert_array_equal(cut["labels"].numpy(), labels[:, :2])
    with pytest.raises(ValueError, match="unsupported keys"):
        keras.layers.MaxNumBoundingBoxes(2)({"bounding_boxes": {"boxes": boxes, "labels": labels,
                                                                "scores": labels}})


@pytest.mark.parametrize("name,mode,order", cases.MAP_CASES, ids=[c[0] for c in cases.MAP_CASES])
def test_map_coordinates_matches_keras(name, mode, order):
    from kilnflow.keras.layers.image_geometric import map_coordinates_2d
    got = map_coordinates_2d(kf.constant(cases.IMG[:1, :, :, :1]), kf.constant(cases.MAP_YS[None]),
                             kf.constant(cases.MAP_XS[None]), order, mode, -3.0)
    _check(got.numpy()[0, :, :, 0], RECORDED["ops"][name], 2e-3)


def test_elastic_transform_seeded_and_inert_settings():
    a = keras.layers.RandomElasticTransform(seed=4)
    b = keras.layers.RandomElasticTransform(seed=4)
    np.testing.assert_array_equal(a(cases.IMG).numpy(), b(cases.IMG).numpy())
    still = keras.layers.RandomElasticTransform(scale=0.0)
    np.testing.assert_array_equal(still(cases.IMG).numpy(), cases.IMG)
    np.testing.assert_array_equal(a(cases.IMG, training=False).numpy(), cases.IMG)
    out = kf.function(lambda t: a(t))(kf.constant(cases.IMG)).numpy()
    assert out.shape == cases.IMG.shape and out.min() >= 0 and out.max() <= 255
