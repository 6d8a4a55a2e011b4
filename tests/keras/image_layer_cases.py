"""Image-layer cases shared by scripts/record_keras_image_layers.py (TF 2.21 + Keras 3, side
venv) and tests/keras/test_image_layers.py. Keras's outputs are recorded in
tests/keras/data/keras_image_layers.json. Random layers are pinned by factor ranges of zero
width (or probabilities 0/1), which make their outputs deterministic."""
import numpy as np

_rng = np.random.RandomState(0)
IMG = (_rng.rand(2, 5, 7, 3) * 255).astype(np.float32)   # [batch, h, w, c], values 0..255
IMG_U8 = (_rng.rand(2, 6, 4, 3) * 255).astype(np.uint8)
IMG_01 = _rng.rand(2, 4, 6, 3).astype(np.float32)         # values in [0, 1)
IMG_CF = np.transpose(IMG, (0, 3, 1, 2)).copy()           # channels_first

# (name, layer class, constructor kwargs, input name, call kwargs)
CASES = [
    ("resize_bilinear", "Resizing", dict(height=3, width=4), "IMG", {}),
    ("resize_nearest", "Resizing", dict(height=8, width=5, interpolation="nearest"), "IMG", {}),
    ("resize_bicubic", "Resizing", dict(height=4, width=9, interpolation="bicubic"), "IMG", {}),
    ("resize_area", "Resizing", dict(height=2, width=3, interpolation="area"), "IMG", {}),
    ("resize_lanczos3", "Resizing", dict(height=4, width=4, interpolation="lanczos3"), "IMG", {}),
    ("resize_lanczos5", "Resizing", dict(height=3, width=5, interpolation="lanczos5",
                                         antialias=True), "IMG", {}),
    ("resize_crop", "Resizing", dict(height=4, width=4, crop_to_aspect_ratio=True), "IMG", {}),
    ("resize_pad", "Resizing", dict(height=4, width=4, pad_to_aspect_ratio=True,
                                    fill_value=7.0), "IMG", {}),
    ("resize_pad_wide", "Resizing", dict(height=2, width=6, pad_to_aspect_ratio=True), "IMG", {}),
    ("resize_u8", "Resizing", dict(height=3, width=5), "IMG_U8", {}),
    ("resize_cf", "Resizing", dict(height=3, width=3, data_format="channels_first"), "IMG_CF", {}),
    ("resize_single", "Resizing", dict(height=3, width=4), "IMG0", {}),
]
for _fm in ("reflect", "wrap", "constant", "nearest"):
    for _it in ("bilinear", "nearest"):
        _common = dict(fill_mode=_fm, interpolation=_it, fill_value=3.0)
        CASES += [
            (f"rotation_{_fm}_{_it}", "RandomRotation", dict(factor=(0.1, 0.1), **_common),
             "IMG", {}),
            (f"zoom_{_fm}_{_it}", "RandomZoom", dict(height_factor=(0.3, 0.3),
                                                    width_factor=(-0.4, -0.4), **_common),
             "IMG", {}),
            (f"translation_{_fm}_{_it}", "RandomTranslation",
             dict(height_factor=(0.3, 0.3), width_factor=(-0.25, -0.25), **_common), "IMG", {}),
        ]
CASES += [
    ("rotation_neg_cf", "RandomRotation", dict(factor=(-0.3, -0.3), data_format="channels_first"),
     "IMG_CF", {}),
    ("rotation_single", "RandomRotation", dict(factor=(0.25, 0.25)), "IMG0", {}),
    ("rotation_inference", "RandomRotation", dict(factor=0.3), "IMG", dict(training=False)),
    ("zoom_keep_aspect", "RandomZoom", dict(height_factor=(-0.5, -0.5)), "IMG", {}),
    ("zoom_u8", "RandomZoom", dict(height_factor=(0.2, 0.2)), "IMG_U8", {}),
    ("translation_inference", "RandomTranslation", dict(height_factor=0.2, width_factor=0.2),
     "IMG", dict(training=False)),
    ("shear_zero", "RandomShear", dict(x_factor=0.0, y_factor=0.0), "IMG", {}),
    ("crop_inference", "RandomCrop", dict(height=3, width=4), "IMG", dict(training=False)),
    ("crop_same_size", "RandomCrop", dict(height=5, width=7), "IMG", {}),
    ("crop_upscale", "RandomCrop", dict(height=6, width=6), "IMG", {}),
]

CASES += [
    ("brightness", "RandomBrightness", dict(factor=(0.2, 0.2)), "IMG", {}),
    ("brightness_01", "RandomBrightness", dict(factor=(-0.3, -0.3), value_range=(0, 1)),
     "IMG_01", {}),
    ("brightness_inference", "RandomBrightness", dict(factor=0.5), "IMG", dict(training=False)),
    ("grayscale_all", "RandomGrayscale", dict(factor=1.0), "IMG", {}),
    ("grayscale_none", "RandomGrayscale", dict(factor=0.0), "IMG", {}),
    ("grayscale_cf", "RandomGrayscale", dict(factor=1.0, data_format="channels_first"),
     "IMG_CF", {}),
    ("hue_half_turn", "RandomHue", dict(factor=(1.0, 1.0)), "IMG", {}),
    ("hue_01", "RandomHue", dict(factor=(1.0, 1.0), value_range=(0, 1)), "IMG_01", {}),
    ("hue_inference", "RandomHue", dict(factor=0.4), "IMG", dict(training=False)),
    ("saturation_keep", "RandomSaturation", dict(factor=(0.5, 0.5), value_range=(0, 1)),
     "IMG_01", {}),
    ("saturation_third", "RandomSaturation", dict(factor=(0.25, 0.25), value_range=(0, 1)),
     "IMG_01", {}),
    ("saturation_more", "RandomSaturation", dict(factor=(0.6, 0.6)), "IMG", {}),
    ("invert_all", "RandomInvert", dict(factor=(1.0, 1.0)), "IMG", {}),
    ("invert_none", "RandomInvert", dict(factor=0.0), "IMG", {}),
    ("invert_01", "RandomInvert", dict(factor=(1.0, 1.0), value_range=(0, 1)), "IMG_01", {}),
    ("solarize_all", "Solarization", dict(), "IMG", {}),
    ("solarize_01", "Solarization", dict(value_range=(0, 1)), "IMG_01", {}),
    ("solarize_inference", "Solarization", dict(threshold_factor=0.5), "IMG",
     dict(training=False)),
    ("posterize_3", "RandomPosterization", dict(factor=(3, 3)), "IMG", {}),
    ("posterize_u8", "RandomPosterization", dict(factor=(5, 5)), "IMG_U8", {}),
    ("posterize_01", "RandomPosterization", dict(factor=(2, 2), value_range=(0, 1)), "IMG_01",
     {}),
    ("sharpness_up", "RandomSharpness", dict(factor=(0.8, 0.8)), "IMG", {}),
    ("sharpness_blur", "RandomSharpness", dict(factor=(0.1, 0.1), value_range=(0, 1)),
     "IMG_01", {}),
    ("autocontrast", "AutoContrast", dict(), "IMG", {}),
    ("autocontrast_01", "AutoContrast", dict(value_range=(0, 1)), "IMG_01", {}),
    ("autocontrast_u8", "AutoContrast", dict(), "IMG_U8", {}),
    ("autocontrast_inference", "AutoContrast", dict(), "IMG", dict(training=False)),
    ("jitter", "RandomColorJitter", dict(brightness_factor=(0.1, 0.1),
                                          contrast_factor=(-0.3, 0.3),
                                          saturation_factor=(0.6, 0.6),
                                          hue_factor=(1.0, 1.0)), "IMG", {}),
    ("jitter_01", "RandomColorJitter", dict(value_range=(0, 1), contrast_factor=(-0.5, 0.5)),
     "IMG_01", {}),
]

CASES += [
    ("erase_all_const", "RandomErasing", dict(factor=(1.0, 1.0), scale=(1.0, 1.0),
                                              fill_value=7.0), "IMG", {}),
    ("erase_all_rgb", "RandomErasing", dict(factor=(1.0, 1.0), scale=(1.0, 1.0),
                                            fill_value=[1.0, 300.0, -2.0]), "IMG", {}),
    ("erase_never", "RandomErasing", dict(factor=0.0), "IMG", {}),
    ("erase_inference", "RandomErasing", dict(), "IMG", dict(training=False)),
    ("mixup_inference", "MixUp", dict(), "IMG", dict(training=False)),
    ("cutmix_inference", "CutMix", dict(), "IMG", dict(training=False)),
]

CASES += [
    ("degenerate_half", "RandomColorDegeneration", dict(factor=(0.5, 0.5)), "IMG", {}),
    ("degenerate_full_01", "RandomColorDegeneration", dict(factor=(1.0, 1.0),
                                                           value_range=(0, 1)), "IMG_01", {}),
    ("blur_3", "RandomGaussianBlur", dict(factor=(1.0, 1.0), sigma=(0.7, 0.7)), "IMG", {}),
    ("blur_5_01", "RandomGaussianBlur", dict(factor=(1.0, 1.0), kernel_size=5,
                                             sigma=(0.4, 0.4), value_range=(0, 1)), "IMG_01",
     {}),
    ("blur_never", "RandomGaussianBlur", dict(factor=0.0), "IMG", {}),
]

CASES += [
    ("perspective_still", "RandomPerspective", dict(scale=0.0), "IMG", {}),
    ("perspective_inference", "RandomPerspective", dict(scale=0.5), "IMG",
     dict(training=False)),
]

CASES += [
    ("equalize", "Equalization", dict(), "IMG", {}),
    ("equalize_01_bins", "Equalization", dict(value_range=(0, 1), bins=16), "IMG_01", {}),
    ("equalize_u8", "Equalization", dict(bins=64), "IMG_U8", {}),
    ("equalize_inference", "Equalization", dict(), "IMG", dict(training=False)),
]

_BIG = (np.random.RandomState(9).rand(2, 19, 22, 3) ** 2 * 255).astype(np.float32)
CASES += [
    ("clahe", "ContrastLimitedAdaptiveHistogramEqualization", dict(tile_grid_size=(2, 3)),
     "IMG_BIG", {}),
    ("clahe_exact_tiles_noclip", "ContrastLimitedAdaptiveHistogramEqualization",
     dict(tile_grid_size=(5, 7), clip_limit=0.0), "IMG", {}),
    ("clahe_01", "ContrastLimitedAdaptiveHistogramEqualization",
     dict(value_range=(0, 1), clip_limit=2.0, tile_grid_size=(2, 2)), "IMG_01", {}),
    ("clahe_u8_inference", "ContrastLimitedAdaptiveHistogramEqualization",
     dict(tile_grid_size=(4, 3)), "IMG_U8", dict(training=False)),
]

# ImageProjectiveTransformV3 itself: (name, transform, interpolation, fill_mode)
_th = 0.7
TRANSFORMS = [
    [np.cos(_th), -np.sin(_th), 2.0, np.sin(_th), np.cos(_th), -1.0, 0, 0],
    [1.7, 0.3, -3.2, -0.4, 1.3, -2.1, 0, 0],
    [0.5, 0.1, 6.3, 0.2, 0.6, 2.5, 0.02, -0.03],
    [2.5, 0, -8.0, 0, 2.5, -6.0, 0, 0],
]
OP_CASES = [(f"op{i}_{fm}_{it}", i, it, fm) for i in range(len(TRANSFORMS))
            for fm in ("REFLECT", "WRAP", "CONSTANT", "NEAREST")
            for it in ("NEAREST", "BILINEAR")]


PERSPECTIVE_START = np.array([[[0, 0], [6, 0], [0, 4], [6, 4]]] * 2, np.float32)
PERSPECTIVE_END = np.array([[[0.5, -0.3], [5.2, 0.4], [-0.6, 4.4], [6.8, 3.1]],
                            [[-1, 1], [7, 0.2], [0.3, 3.3], [5.5, 4.5]]], np.float32)


_crng = np.random.RandomState(5)
MAP_YS = _crng.uniform(-7, 12, (3, 4)).astype(np.float32)
MAP_YS[0, :2] = [1.5, 2.5]  # halves: nearest rounds them to even
MAP_XS = _crng.uniform(-9, 16, (3, 4)).astype(np.float32)
MAP_CASES = [(f"map_{mode}_{order}", mode, order)
             for mode in ("constant", "nearest", "wrap", "reflect") for order in (0, 1)]


def inputs(name):
    if name == "IMG_BIG":
        return _BIG
    if name == "IMG0":
        return IMG[0]
    return globals()[name]
