"""Samples of kilnflow/ops/conv3d_transpose.py (conv3d_transpose, composed of conv2d_transpose)."""
import numpy as np

from kilnflow.ops.conv3d_transpose import conv3d_transpose
from tests.ops.samples import add, rand


def _transpose_reference(x, w, out_shape, strides, front):
    """Scatter every input voxel through the filter taps, then crop the padding."""
    n, d, h, wd, _ = x.shape
    kd, kh, kw, cout, _ = w.shape
    full = np.zeros((n, (d - 1) * strides[0] + kd, (h - 1) * strides[1] + kh,
                     (wd - 1) * strides[2] + kw, cout))
    for z in range(d):
        for y in range(h):
            for v in range(wd):
                patch = np.einsum("ni,abcoi->nabco", x[:, z, y, v], w)
                full[:, z * strides[0]:z * strides[0] + kd, y * strides[1]:y * strides[1] + kh,
                     v * strides[2]:v * strides[2] + kw] += patch
    return full[:, front[0]:front[0] + out_shape[1], front[1]:front[1] + out_shape[2],
                front[2]:front[2] + out_shape[3]]


add("Conv2DBackpropInput",
    lambda x, w: conv3d_transpose(x, w, [1, 4, 3, 3, 2], (2, 1, 1), "VALID"),
    (rand(1, 2, 2, 2, 3), rand(2, 2, 2, 2, 3)),
    lambda x, w: _transpose_reference(x, w, [1, 4, 3, 3, 2], (2, 1, 1), (0, 0, 0)),
    differentiable=True, name="conv3d_transpose_valid")
add("Conv2DBackpropInput",
    lambda x, w: conv3d_transpose(x, w, [2, 4, 2, 3, 1], (2, 1, 1), "SAME"),
    (rand(2, 2, 2, 3, 2), rand(3, 3, 3, 1, 2)),
    lambda x, w: _transpose_reference(x, w, [2, 4, 2, 3, 1], (2, 1, 1), (0, 1, 1)),
    differentiable=True, name="conv3d_transpose_same")
