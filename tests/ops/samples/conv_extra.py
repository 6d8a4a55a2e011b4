"""Samples of the ops in kilnflow/ops/conv_extra.py (see tests/ops/samples/__init__.py)."""
import numpy as np

from kilnflow import errors
from kilnflow.ops import conv_extra as C
from tests.ops.samples import ERRORS, ErrorSample, add, direct, i32, rand


def _patches(x, k, s):
    """VALID patches by loops: the definition, independent of the kernel's slicing."""
    b, n1, n2, n3, d = x.shape
    outs = [(n - kk) // ss + 1 for n, kk, ss in zip((n1, n2, n3), k, s)]
    out = np.zeros([b] + outs + [int(np.prod(k)) * d])
    for p in np.ndindex(*outs):
        window = x[:, p[0] * s[0]:p[0] * s[0] + k[0], p[1] * s[1]:p[1] * s[1] + k[1],
                   p[2] * s[2]:p[2] * s[2] + k[2]]
        out[(slice(None),) + p] = window.reshape(b, -1)
    return out


add("ExtractVolumePatches",
    lambda x: C.extract_volume_patches(x, [1, 2, 2, 1, 1], [1, 1, 2, 1, 1], "VALID"),
    (rand(1, 3, 4, 2, 2),), lambda x: _patches(x, (2, 2, 1), (1, 2, 1)), differentiable=True)
add("ExtractVolumePatches",
    lambda x: C.extract_volume_patches(x, [1, 2, 1, 3, 1], [1, 2, 1, 1, 1], "SAME"),
    (rand(1, 3, 2, 3, 1),),
    lambda x: _patches(np.pad(x, ((0, 0), (0, 1), (0, 0), (1, 1), (0, 0))), (2, 1, 3),
                       (2, 1, 1)), differentiable=True, name="same")
add("ExtractVolumePatchesGrad",
    direct("ExtractVolumePatchesGrad", ksizes=(1, 1, 2), strides=(1, 1, 1), padding="VALID"),
    (rand(1, 1, 1, 2, 4), i32([1, 1, 1, 3, 2])),
    lambda dy, s: np.concatenate([dy[..., :1, :2], dy[..., 1:, :2] + dy[..., :1, 2:],
                                  dy[..., 1:, 2:]], axis=3),
    differentiable=True, wrt=(0,), static_shape=False)


def _conv1d_ref(x, w):
    k = w.shape[0]
    return np.stack([np.einsum("bkc,kco->bo", x[:, i:i + k], w)
                     for i in range(x.shape[1] - k + 1)], axis=1)


add("Conv2D", lambda x, w: C.conv(x, w, [1, 1, 1], "VALID"), (rand(2, 5, 2), rand(3, 2, 3)),
    _conv1d_ref, differentiable=True, name="conv_1d")
add("Conv2DBackpropFilter",
    lambda x, w, dy: C.conv2d_backprop_filter_v2(x, w, dy, [1, 1, 1, 1], "VALID"),
    (rand(1, 3, 3, 2), rand(2, 2, 2, 1), rand(1, 2, 2, 1)),
    lambda x, w, dy: np.stack(
        [np.stack([np.einsum("bijc,bijo->co", x[:, a:a + 2, b:b + 2], dy) for b in range(2)])
         for a in range(2)]), differentiable=True, wrt=(0, 2), name="v2")
add("Conv2DBackpropInput",
    lambda x, w, dy: C.conv2d_backprop_input_v2(x, w, dy, [1, 1, 1, 1], "VALID"),
    (rand(1, 3, 3, 2), rand(2, 2, 2, 1), rand(1, 2, 2, 1)),
    lambda x, w, dy: sum(np.pad(np.einsum("bijo,co->bijc", dy, w[a, b]),
                                ((0, 0), (a, 1 - a), (b, 1 - b), (0, 0)))
                         for a in range(2) for b in range(2)),
    differentiable=True, wrt=(1, 2), name="v2")

ERRORS.extend([
    ErrorSample("ExtractVolumePatches",
                lambda x: C.extract_volume_patches(x, [1, 2, 2], [1, 1, 1, 1, 1], "VALID"),
                (rand(1, 2, 2, 2, 1),), errors.InvalidArgumentError, ("ksizes",)),
    ErrorSample("Conv2D", lambda x, w: C.conv(x, w, [1, 1, 1, 1], "VALID"),
                (rand(1, 4, 4, 2), rand(2, 2, 2)), errors.InvalidArgumentError, ("conv",),
                name="conv_ranks"),
])
