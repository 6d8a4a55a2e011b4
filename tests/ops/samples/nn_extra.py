"""Samples for the tf.nn functions of kilnflow/ops/nn_extra.py. They add no OpDefs: each sample
is filed under the op it applies, so the generic checks (modes, gradients vs finite
differences, second order) cover the composite; TF's own values are in test_tf_reference."""
import numpy as np

import kilnflow as kf
from tests.ops.samples import add, pos, rand, rng

NN = kf.nn


def _conv_transpose_reference(dy, w, out_shape, stride):
    """The adjoint of a VALID conv2d, by scattering each output pixel's contribution."""
    out = np.zeros(out_shape)
    kh, kw = w.shape[:2]
    for n in range(dy.shape[0]):
        for i in range(dy.shape[1]):
            for j in range(dy.shape[2]):
                patch = np.tensordot(w, dy[n, i, j], axes=([3], [0]))  # kh, kw, out_channels
                out[n, i * stride:i * stride + kh, j * stride:j * stride + kw] += patch
    return out


add("Conv2DBackpropInput", lambda dy, w: NN.conv2d_transpose(dy, w, [1, 5, 5, 2], 2, "VALID"),
    (rand(1, 2, 2, 3), rand(3, 3, 2, 3)),
    lambda dy, w: _conv_transpose_reference(dy, w, (1, 5, 5, 2), 2), differentiable=True,
    name="conv2d_transpose")
add("Conv2D", lambda x, w: NN.depthwise_conv2d(x, w, [1, 1, 1, 1], "VALID"),
    (rand(1, 3, 3, 2), rand(2, 2, 2, 2)),
    lambda x, w: np.stack([(x[0, i:i + 2, j:j + 2, c, None] * w[:, :, c, :]).sum((0, 1))
                           for i in range(2) for j in range(2) for c in range(2)]
                          ).reshape(1, 2, 2, 4),  # output channel c * multiplier + m
    differentiable=True, name="depthwise")
add("Conv2D", lambda x, w: NN.conv1d(x, w, 1, "VALID"), (rand(2, 4, 2), rand(2, 2, 3)),
    lambda x, w: np.stack([x[:, t:t + 2].reshape(2, -1) @ w.reshape(-1, 3) for t in range(3)],
                          axis=1), differentiable=True, name="conv1d")
add("RealDiv", lambda x: NN.lrn(x, 1, 1.0, 0.5, 0.75), (rand(1, 2, 2, 3),),
    lambda x: x / (1 + 0.5 * np.stack([np.sum(x[..., max(c - 1, 0):c + 2] ** 2, -1)
                                       for c in range(3)], -1)) ** 0.75,
    differentiable=True, name="lrn")
add("AddV2", lambda x, m, v: NN.batch_normalization(x, m, v, 0.5, 2.0, 1e-3),
    (rand(4, 3), rand(3), pos(3)),
    lambda x, m, v: (x - m) * 2.0 / np.sqrt(v + 1e-3) + 0.5, differentiable=True,
    name="batch_normalization")
add("AddV2", lambda z, x: NN.weighted_cross_entropy_with_logits(z, x, 2.5),
    (rng.uniform(0, 1, (2, 3)), rand(2, 3) * 3),
    lambda z, x: -(2.5 * z * np.log(1 / (1 + np.exp(-x))) +
                   (1 - z) * np.log(1 - 1 / (1 + np.exp(-x)))),
    differentiable=True, name="weighted_cross_entropy")
add("Reshape", lambda x: NN.space_to_depth(x, 2), (rand(1, 4, 2, 1),),
    lambda x: x.reshape(1, 2, 2, 1, 2, 1).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 1, 4),
    differentiable=True, name="space_to_depth")


add("ComputeAccidentalHits",
    lambda t, s: NN.compute_accidental_hits(t, s, 2),
    (np.array([[1, 5], [2, 2]], np.int64), np.array([5, 2, 1, 7], np.int64)),
    lambda t, s: (np.array([0, 0, 1, 1], np.int32), np.array([0, 2, 1, 1], np.int64),
                  np.full(4, -np.finfo(np.float32).max, np.float32)),
    static_shape=False)
