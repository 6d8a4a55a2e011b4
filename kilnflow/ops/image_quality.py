"""tf.image measures and filters: image_gradients, sobel_edges, total_variation, psnr, ssim,
ssim_multiscale and extract_patches, composed from public ops (so differentiable) in the
order TF computes them (float32 via convert_image_dtype, Gaussian window by softmax)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.ops import array, conv, joining, math, nn, nn_extra, reduction, reshaping, slicing
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.image_color import convert_image_dtype
from kilnflow.tensor import Tensor

MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _rank4(image: Any, op: str) -> Tensor:
    image = convert_to_tensor(image)
    if image.shape.rank != 4:
        raise ValueError(f"{op}: image must be 4-D [batch, height, width, depth], got shape "
                         f"{image.shape}")
    return image


def image_gradients(image: Any) -> tuple:
    """(dy, dx): forward differences along height and width, zero in the last row/column."""
    image = _rank4(image, "image_gradients")
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = reshaping.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = reshaping.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


def sobel_edges(image: Any) -> Tensor:
    """Sobel responses [batch, h, w, d, 2] (vertical, horizontal), reflect-padded."""
    image = _rank4(image, "sobel_edges")
    kernels = np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]],
                          [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]]).transpose(1, 2, 0)[:, :, None]
    depth = image.shape[-1]
    if depth is None:
        raise ValueError("sobel_edges: the depth must be known")
    filters = convert_to_tensor(np.tile(kernels, [1, 1, depth, 1]), image.dtype)
    padded = reshaping.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    out = nn_extra.depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    shape = joining.concat([array.shape(image), convert_to_tensor([2], _dtypes.int32)], 0)
    return reshaping.reshape(out, shape)


def total_variation(images: Any, name: Optional[str] = None) -> Tensor:
    """Sum of absolute neighbour differences: a scalar per image."""
    images = convert_to_tensor(images)
    rank = images.shape.rank
    if rank == 3:
        dh = images[1:, :, :] - images[:-1, :, :]
        dw = images[:, 1:, :] - images[:, :-1, :]
        axes = None
    elif rank == 4:
        dh = images[:, 1:, :, :] - images[:, :-1, :, :]
        dw = images[:, :, 1:, :] - images[:, :, :-1, :]
        axes = [1, 2, 3]
    else:
        raise ValueError("total_variation: 'images' must be either 3 or 4-dimensional.")
    return math.add(reduction.reduce_sum(math.abs(dh), axes),
                    reduction.reduce_sum(math.abs(dw), axes), name=name)


def _floats(a: Any, b: Any, max_val: Any, op: str) -> tuple:
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: images must have the same dtype, got {a.dtype.name} and "
                        f"{b.dtype.name}")
    max_val = convert_image_dtype(math.cast(convert_to_tensor(max_val), a.dtype),
                                  _dtypes.float32)
    return (convert_image_dtype(a, _dtypes.float32), convert_image_dtype(b, _dtypes.float32),
            max_val)


def psnr(a: Any, b: Any, max_val: Any, name: Optional[str] = None) -> Tensor:
    """Peak signal-to-noise ratio in dB, per image (over the last three dims)."""
    a, b, max_val = _floats(a, b, max_val, "psnr")
    mse = reduction.reduce_mean(math.squared_difference(a, b), [-3, -2, -1])
    ln10 = float(np.log(10.0))
    return math.subtract(20.0 * math.log(max_val) / ln10, (10.0 / ln10) * math.log(mse),
                         name=name)


def _gauss(size: int, sigma: float) -> Tensor:
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / 2.0
    g = np.square(coords) * np.float32(-0.5 / np.square(np.float32(sigma)))
    g = convert_to_tensor((g[None, :] + g[:, None]).reshape(1, -1), _dtypes.float32)
    return reshaping.reshape(nn.softmax(g), [size, size, 1, 1])


def _ssim_per_channel(x: Tensor, y: Tensor, max_val: Tensor, filter_size: int,
                      filter_sigma: float, k1: float, k2: float, index_map: bool) -> tuple:
    for img in (x, y):
        h, w = img.shape[-3], img.shape[-2]
        if (h is not None and h < filter_size) or (w is not None and w < filter_size):
            raise ValueError(f"ssim: images ({img.shape}) must be at least filter_size "
                             f"({filter_size}) in height and width")
    depth = x.shape[-1]
    kernel = reshaping.tile(_gauss(filter_size, filter_sigma), [1, 1, depth, 1])

    def reducer(t: Tensor) -> Tensor:
        shape = array.shape(t)
        flat = reshaping.reshape(t, joining.concat([convert_to_tensor([-1], _dtypes.int32),
                                                    shape[-3:]], 0))
        out = nn_extra.depthwise_conv2d(flat, kernel, [1, 1, 1, 1], "VALID")
        return reshaping.reshape(out, joining.concat([shape[:-3], array.shape(out)[1:]], 0))

    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = math.square(mean0) + math.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(math.square(x) + math.square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    if index_map:
        return luminance * cs, cs
    # cs stays a map: only ssim_multiscale averages it (ssim would leave a dead Mean)
    return reduction.reduce_mean(luminance * cs, [-3, -2]), cs


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03, return_index_map: bool = False) -> Tensor:
    """Structural similarity per image (Gaussian window, VALID filtering), channel mean."""
    x, y, max_val = _floats(img1, img2, max_val, "ssim")
    value, _ = _ssim_per_channel(x, y, max_val, int(filter_size), float(filter_sigma),
                                 float(k1), float(k2), return_index_map)
    return reduction.reduce_mean(value, [-1])


def ssim_multiscale(img1: Any, img2: Any, max_val: Any,
                    power_factors: Sequence = MSSSIM_WEIGHTS, filter_size: int = 11,
                    filter_sigma: float = 1.5, k1: float = 0.01, k2: float = 0.03) -> Tensor:
    """MS-SSIM: contrast-structure at each of len(power_factors) halvings, SSIM at the last."""
    x, y, max_val = _floats(img1, img2, max_val, "ssim_multiscale")
    imgs = [x, y]
    mcs = []
    value = None
    for k in range(len(power_factors)):
        if k > 0:
            down = []
            for img in imgs:
                h, w = img.shape[-3], img.shape[-2]
                if h is None or w is None:
                    raise ValueError("ssim_multiscale: image height and width must be known")
                rank = img.shape.rank
                if h % 2 or w % 2:
                    img = reshaping.pad(img, [[0, 0]] * (rank - 3) + [[0, h % 2], [0, w % 2],
                                                                        [0, 0]],
                                        mode="SYMMETRIC")
                lead = array.shape(img)[:-3]
                flat = reshaping.reshape(img, [-1] + img.shape.as_list()[-3:])
                pooled = conv.avg_pool2d(flat, 2, 2, "VALID")
                down.append(reshaping.reshape(pooled, joining.concat(
                    [lead, array.shape(pooled)[1:]], 0)))
            imgs = down
        value, cs = _ssim_per_channel(imgs[0], imgs[1], max_val, int(filter_size),
                                      float(filter_sigma), float(k1), float(k2), False)
        if k < len(power_factors) - 1:  # the last scale contributes its full SSIM instead
            mcs.append(nn.relu(reduction.reduce_mean(cs, [-3, -2])))
    stacked = joining.stack(mcs + [nn.relu(value)], -1)
    weights = convert_to_tensor(np.asarray(power_factors, np.float32), _dtypes.float32)
    ms = reduction.reduce_prod(math.pow(stacked, weights), [-1])
    return reduction.reduce_mean(ms, [-1])


def _patch_index(n: int, k: int, stride: int, rate: int, padding: str) -> tuple:
    span = k + (k - 1) * (rate - 1)
    if padding == "VALID":
        out = max(0, -(-(n - span + 1) // stride))
        before = 0
    else:
        out = -(-n // stride)
        before = max((out - 1) * stride + span - n, 0) // 2
    index = np.arange(out)[:, None] * stride + np.arange(k)[None, :] * rate
    return index, before, max(int(index.max(initial=-1)) + 1 - before - n, 0)


def extract_patches(images: Any, sizes: Sequence, strides: Sequence, rates: Sequence,
                    padding: str, name: Optional[str] = None) -> Tensor:
    """Patches [batch, rows, cols, size_rows * size_cols * depth] (zero-padded for SAME)."""
    images = _rank4(images, "extract_patches")
    padding = str(padding).upper()
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"extract_patches: padding must be 'VALID' or 'SAME', got {padding}")
    params = []
    for what, v in (("sizes", sizes), ("strides", strides), ("rates", rates)):
        v = [int(i) for i in v]
        if len(v) != 4 or v[0] != 1 or v[3] != 1 or min(v) < 1:
            raise ValueError(f"extract_patches: {what} must be [1, rows, cols, 1] of positive "
                             f"ints, got {v}")
        params.append(v)
    h, w, depth = images.shape[1], images.shape[2], images.shape[3]
    if h is None or w is None or depth is None:
        raise ValueError("extract_patches: height, width and depth must be known")
    rows, top, bottom = _patch_index(h, params[0][1], params[1][1], params[2][1], padding)
    cols, left, right = _patch_index(w, params[0][2], params[1][2], params[2][2], padding)
    padded = reshaping.pad(images, [[0, 0], [top, bottom], [left, right], [0, 0]])
    picked = slicing.gather(padded, convert_to_tensor(rows.astype(np.int32)), axis=1)
    picked = slicing.gather(picked, convert_to_tensor(cols.astype(np.int32)), axis=3)
    # [b, out_r, k_r, out_c, k_c, d] -> [b, out_r, out_c, k_r * k_c * d]
    moved = reshaping.transpose(picked, [0, 1, 3, 2, 4, 5])
    return reshaping.reshape(moved, [-1, rows.shape[0], cols.shape[0],
                                     rows.shape[1] * cols.shape[1] * depth], name=name)
