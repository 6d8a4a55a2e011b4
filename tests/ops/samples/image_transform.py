"""Samples of the ops in kilnflow/ops/image_transform.py (see tests/ops/samples/__init__.py).
The references are a per-pixel loop written from TF's kernel description; the recorded TF
outputs are checked in tests/keras/test_image_layers.py."""
import numpy as np

import kilnflow as kf

from kilnflow.ops.image_transform import TRANSFORM, TRANSFORM_GRAD, image_projective_transform_v3
from tests.ops.samples import add, direct, rand

_T = np.array([[0.9, 0.2, 0.4, -0.15, 1.1, -0.3, 0.0, 0.0]], np.float32)


def _reference(x, size=(3, 6), fill=0.25):
    """Bilinear, constant fill: each output pixel from its four neighbours, by loops."""
    b, h, w, c = x.shape
    out = np.zeros((b, size[0], size[1], c))
    a0, a1, a2, b0, b1, b2 = _T[0, :6].astype(np.float64)
    for i in range(b):
        for yo in range(size[0]):
            for xo in range(size[1]):
                xi, yi = a0 * xo + a1 * yo + a2, b0 * xo + b1 * yo + b2
                x0, y0 = int(np.floor(xi)), int(np.floor(yi))
                for yy, wy in ((y0, 1 - (yi - y0)), (y0 + 1, yi - y0)):
                    for xx, wx in ((x0, 1 - (xi - x0)), (x0 + 1, xi - x0)):
                        inside = 0 <= yy < h and 0 <= xx < w
                        out[i, yo, xo] += wy * wx * (x[i, yy, xx] if inside else fill)
    return out


add(TRANSFORM.name, lambda x: image_projective_transform_v3(x, _T, [3, 6], 0.25),
    (rand(2, 4, 5, 2),), _reference, differentiable=True, rtol=1e-5, atol=1e-6)


def _grad_reference(dy, x):
    """The adjoint of the (linear, zero-fill) transform: <F(e_k), dy> for each basis e_k."""
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = 1.0
        out[k] = np.sum(_reference(e, fill=0.0) * dy)
    return out


_attrs = {"output_shape": (3, 6), "interpolation": "BILINEAR", "fill_mode": "CONSTANT"}
add(TRANSFORM_GRAD.name, lambda dy, x: direct(TRANSFORM_GRAD.name, **_attrs)(dy, x, kf.constant(_T)),
    (rand(1, 3, 6, 2), rand(1, 4, 5, 2)), _grad_reference, differentiable=True, wrt=(0,),
    rtol=1e-5, atol=1e-6)
