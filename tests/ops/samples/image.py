"""Samples of the ops in kilnflow/ops/image.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops.image import RESIZE, RESIZE_GRAD, _matrix
from tests.ops.samples import ERRORS, ErrorSample, add, direct, rand


def _reference(size, method, aa=False):
    def ref(x):
        wh = _matrix(method, x.shape[1], size[0], aa)
        ww = _matrix(method, x.shape[2], size[1], aa)
        return np.einsum("Hh,bhwc,Ww->bHWc", wh, x, ww)
    return ref


def _grad_reference(size, method, aa=False):
    def ref(dy, x):
        wh = _matrix(method, x.shape[1], size[0], aa)
        ww = _matrix(method, x.shape[2], size[1], aa)
        return np.einsum("Hh,bHWc,Ww->bhwc", wh, dy, ww)
    return ref


for method, size, aa in [("bilinear", (3, 5), False), ("nearest", (5, 2), False),
                         ("bicubic", (6, 3), False), ("area", (2, 3), False),
                         ("lanczos3", (3, 2), True), ("triangle", (2, 2), True),
                         ("keyscubic", (5, 6), True), ("gaussian", (3, 3), False),
                         ("mitchellcubic", (2, 5), True)]:
    attrs = {"size": size, "method": method, "antialias": aa}
    add(RESIZE.name, direct(RESIZE.name, **attrs), (rand(2, 4, 4, 2),),
        _reference(size, method, aa), differentiable=True, name=method)
    add(RESIZE_GRAD.name, direct(RESIZE_GRAD.name, **attrs),
        (rand(2, size[0], size[1], 2), rand(2, 4, 4, 2)), _grad_reference(size, method, aa),
        differentiable=True, wrt=(0,), name=method)
add(RESIZE.name, lambda x: kf.image.resize(x, (3, 7)), (rand(4, 5, 3).astype(np.float32),),
    lambda x: _reference((3, 7), "bilinear")(x[None])[0].astype(np.float32), rtol=1e-5, atol=1e-6,
    differentiable=True, name="public")
add(RESIZE.name, lambda x: kf.image.resize(x, (3, 3), "nearest"),
    (np.arange(32).reshape(1, 4, 4, 2).astype(np.int32),),
    lambda x: x[:, [0, 2, 3]][:, :, [0, 2, 3]], name="nearest_int")

ERRORS.append(ErrorSample(RESIZE.name, lambda x: kf.image.resize(x, (2, 2)),
                          (np.zeros((3, 3, 1), np.bool_),), errors.InvalidArgumentError,
                          ("ResizeImage",), name="bool"))

