"""The Keras 3 layers added for breadth: for each, output shape == compute_output_shape,
values against a NumPy reference written from Keras's documented formula, eager ==
kf.function, input gradients against finite differences, and a get_config/from_config
round trip that computes the same values."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers
RNG = np.random.default_rng(7)


def _conv1d_ref(x, kernel, bias, stride=1, dilation=1, padding="valid"):
    k = kernel.shape[0]
    extent = (k - 1) * dilation + 1
    if padding == "causal":
        x = np.pad(x, [(0, 0), (extent - 1, 0), (0, 0)])
    elif padding == "same":
        steps = x.shape[1]
        out = -(-steps // stride)
        total = max((out - 1) * stride + extent - steps, 0)
        x = np.pad(x, [(0, 0), (total // 2, total - total // 2), (0, 0)])
    n_out = (x.shape[1] - extent) // stride + 1
    out = np.stack([sum(x[:, t * stride + i * dilation] @ kernel[i] for i in range(k))
                    for t in range(n_out)], 1)
    return out + bias


def _pool1d_ref(x, size, stride, fn):
    n_out = (x.shape[1] - size) // stride + 1
    return np.stack([fn(x[:, t * stride:t * stride + size], 1) for t in range(n_out)], 1)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# (id, factory, input shape, reference(x, weights) or None for shape-only)
CASES = [
    ("conv1d", lambda: L.Conv1D(4, 3), (2, 9, 3),
     lambda x, w: _conv1d_ref(x, w[0], w[1])),
    ("conv1d_causal_dilated", lambda: L.Conv1D(2, 3, padding="causal", dilation_rate=2),
     (2, 9, 3), lambda x, w: _conv1d_ref(x, w[0], w[1], dilation=2, padding="causal")),
    ("conv1d_same_strided", lambda: L.Conv1D(3, 4, strides=2, padding="same",
                                             activation="tanh"), (2, 9, 2),
     lambda x, w: np.tanh(_conv1d_ref(x, w[0], w[1], stride=2, padding="same"))),
    ("conv1d_channels_first", lambda: L.Conv1D(2, 3, data_format="channels_first"),
     (2, 3, 7), lambda x, w: _conv1d_ref(x.transpose(0, 2, 1), w[0], w[1]).transpose(0, 2, 1)),
    ("max_pool1d", lambda: L.MaxPooling1D(2), (2, 8, 3),
     lambda x, w: _pool1d_ref(x, 2, 2, np.max)),
    ("avg_pool1d", lambda: L.AveragePooling1D(3, strides=1), (2, 8, 3),
     lambda x, w: _pool1d_ref(x, 3, 1, np.mean)),
    ("global_avg_pool1d", lambda: L.GlobalAveragePooling1D(), (2, 5, 3),
     lambda x, w: x.mean(1)),
    ("global_max_pool1d", lambda: L.GlobalMaxPooling1D(keepdims=True), (2, 5, 3),
     lambda x, w: x.max(1, keepdims=True)),
    ("relu", lambda: L.ReLU(max_value=0.5, negative_slope=0.1, threshold=-0.2), (3, 4),
     lambda x, w: np.where(x >= 0.5, 0.5, np.where(x >= -0.2, x, 0.1 * (x + 0.2)))),
    ("leaky_relu", lambda: L.LeakyReLU(0.2), (3, 4), lambda x, w: np.where(x >= 0, x, 0.2 * x)),
    ("prelu", lambda: L.PReLU(alpha_initializer=keras.initializers.Constant(0.25)), (3, 4),
     lambda x, w: np.where(x >= 0, x, w[0] * x)),
    ("prelu_shared", lambda: L.PReLU(shared_axes=[1]), (2, 3, 4),
     lambda x, w: np.where(x >= 0, x, w[0] * x)),
    ("elu", lambda: L.ELU(0.5), (3, 4), lambda x, w: np.where(x > 0, x, 0.5 * np.expm1(x))),
    ("softmax", lambda: L.Softmax(), (3, 4), lambda x, w: _softmax(x)),
    ("softmax_axes", lambda: L.Softmax(axis=(1, 2)), (2, 3, 4),
     lambda x, w: np.exp(x) / np.exp(x).sum((1, 2), keepdims=True)),
    ("permute", lambda: L.Permute((2, 1)), (2, 3, 4), lambda x, w: x.transpose(0, 2, 1)),
    ("repeat_vector", lambda: L.RepeatVector(3), (2, 4),
     lambda x, w: np.repeat(x[:, None], 3, 1)),
    ("zero_padding1d", lambda: L.ZeroPadding1D((1, 2)), (2, 3, 2),
     lambda x, w: np.pad(x, [(0, 0), (1, 2), (0, 0)])),
    ("zero_padding2d", lambda: L.ZeroPadding2D(((1, 0), (2, 1))), (1, 3, 3, 2),
     lambda x, w: np.pad(x, [(0, 0), (1, 0), (2, 1), (0, 0)])),
    ("cropping1d", lambda: L.Cropping1D((1, 2)), (2, 6, 2), lambda x, w: x[:, 1:-2]),
    ("cropping2d", lambda: L.Cropping2D(((1, 1), (0, 2))), (1, 5, 5, 2),
     lambda x, w: x[:, 1:-1, 0:-2]),
    ("upsampling1d", lambda: L.UpSampling1D(3), (2, 3, 2), lambda x, w: np.repeat(x, 3, 1)),
    ("upsampling2d", lambda: L.UpSampling2D((2, 3)), (1, 2, 2, 2),
     lambda x, w: np.repeat(np.repeat(x, 2, 1), 3, 2)),
    ("rescaling", lambda: L.Rescaling(1 / 255.0, offset=-1.0), (2, 3),
     lambda x, w: x / 255.0 - 1.0),
    ("unit_normalization", lambda: L.UnitNormalization(), (3, 4),
     lambda x, w: x / np.linalg.norm(x, axis=-1, keepdims=True)),
    ("normalization_given", lambda: L.Normalization(mean=[1.0, 2.0, 3.0],
                                                    variance=[4.0, 1.0, 0.25]), (2, 3),
     lambda x, w: (x - [1.0, 2.0, 3.0]) / np.sqrt([4.0, 1.0, 0.25])),
    ("center_crop", lambda: L.CenterCrop(2, 3), (1, 5, 6, 2), lambda x, w: x[:, 1:3, 1:4]),
    ("gaussian_noise_inference", lambda: L.GaussianNoise(1.0), (2, 3), lambda x, w: x),
    ("gaussian_dropout_inference", lambda: L.GaussianDropout(0.3), (2, 3), lambda x, w: x),
    ("alpha_dropout_inference", lambda: L.AlphaDropout(0.3), (2, 3), lambda x, w: x),
    ("spatial_dropout1d_inference", lambda: L.SpatialDropout1D(0.5), (2, 3, 2),
     lambda x, w: x),
    ("spatial_dropout2d_inference", lambda: L.SpatialDropout2D(0.5), (1, 2, 2, 3),
     lambda x, w: x),
]


def _group_norm_ref(x, groups, eps=1e-3):
    n, t, c = x.shape
    g = x.reshape(n, t, groups, c // groups)
    mean = g.mean((1, 3), keepdims=True)
    var = g.var((1, 3), keepdims=True)
    return ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)


def _rnn_ref(x, k, r, b):
    h = np.zeros((x.shape[0], k.shape[1]))
    out = []
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ k + h @ r + b)
        out.append(h)
    return np.stack(out, 1)


def _bidirectional_ref(x, w):
    forward = _rnn_ref(x, *w[:3])
    backward = _rnn_ref(x[:, ::-1], *w[3:])[:, ::-1]
    return np.concatenate([forward, backward], -1)


CASES += [
    ("time_distributed_dense", lambda: L.TimeDistributed(L.Dense(3)), (2, 4, 5),
     lambda x, w: x @ w[0] + w[1]),
    ("group_normalization", lambda: L.GroupNormalization(groups=2), (2, 3, 4),
     lambda x, w: _group_norm_ref(x, 2) * w[0] + w[1]),
    ("bidirectional_simple_rnn",
     lambda: L.Bidirectional(L.SimpleRNN(3, return_sequences=True)), (2, 4, 2),
     _bidirectional_ref),
]
IDS = [c[0] for c in CASES]


def _input(shape, dtype=np.float32):
    return RNG.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values_shape_and_function_mode(case):
    _, make, shape, reference = case
    layer = make()
    x = _input(shape)
    out = layer(x)
    assert tuple(out.shape) == tuple(layer.compute_output_shape(shape))
    np.testing.assert_allclose(out.numpy(), reference(x, layer.get_weights()),
                               rtol=1e-5, atol=1e-5)
    traced = kf.function(lambda t: layer(t))
    np.testing.assert_allclose(traced(kf.constant(x)).numpy(), out.numpy(), rtol=1e-6,
                               atol=1e-6)
    symbolic = layer(keras.Input(shape[1:]))
    assert symbolic.shape.as_list() == [None] + list(out.shape[1:])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_config_round_trip(case):
    _, make, shape, _ = case
    layer = make()
    x = _input(shape)
    out = layer(x).numpy()
    clone = type(layer).from_config(layer.get_config())
    clone(x)
    clone.set_weights(layer.get_weights())
    if isinstance(layer, L.Normalization) and layer.input_mean is None:
        clone.build_from_config(layer.get_build_config())
    np.testing.assert_allclose(clone(x).numpy(), out, rtol=1e-6)


GRAD_CASES = [c for c in CASES if not c[0].endswith("_inference")]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_input_gradient_matches_finite_differences(case):
    _, make, shape, _ = case
    layer = make()
    for sub in [layer] + list(layer.submodules):  # float64: exact finite differences
        if isinstance(sub, L.Layer):
            sub._dtype = kf.float64
    x = _input(shape, np.float64) + 0.05  # keep clear of kinks at 0
    layer(x)
    weights = RNG.normal(size=layer(x).shape)
    x_t = kf.constant(x)
    with kf.GradientTape() as tape:
        tape.watch(x_t)
        y = kf.reduce_sum(layer(x_t) * weights)
    grad = tape.gradient(y, x_t).numpy()
    eps = 1e-6
    flat = x.reshape(-1)
    numeric = np.zeros_like(flat)
    for i in range(0, flat.size, max(1, flat.size // 12)):  # a sample of coordinates
        up, down = flat.copy(), flat.copy()
        up[i] += eps
        down[i] -= eps
        f_up = float(np.sum(layer(up.reshape(shape)).numpy() * weights))
        f_down = float(np.sum(layer(down.reshape(shape)).numpy() * weights))
        numeric[i] = (f_up - f_down) / (2 * eps)
        assert grad.reshape(-1)[i] == pytest.approx(numeric[i], rel=1e-4, abs=1e-6)


def test_normalization_adapt():
    data = RNG.normal(3.0, 2.0, (500, 3))
    layer = L.Normalization()
    layer.adapt(data)
    np.testing.assert_allclose(layer.mean, data.mean(0), rtol=1e-5)
    out = layer(data.astype(np.float32)).numpy()
    np.testing.assert_allclose(out.mean(0), 0, atol=1e-5)
    np.testing.assert_allclose(out.std(0), 1, atol=1e-4)
    inverse = L.Normalization(mean=layer.mean, variance=layer.variance, invert=True)
    np.testing.assert_allclose(inverse(out).numpy(), data, rtol=1e-4)


def test_noise_layers_in_training():
    keras.utils.set_random_seed(1)
    x = np.ones((200, 10, 8), np.float32)
    noisy = L.GaussianNoise(0.5)(x, training=True).numpy()
    assert abs((noisy - 1).std() - 0.5) < 0.02
    dropped = L.SpatialDropout1D(0.5)(x, training=True).numpy()
    per_channel = dropped[:, 0, :]
    assert np.all(dropped == per_channel[:, None, :])  # whole channels kept or dropped
    assert set(np.unique(dropped)) <= {0.0, 2.0}
    gauss = L.GaussianDropout(0.2)(x, training=True).numpy()
    assert abs(gauss.mean() - 1) < 0.02 and abs(gauss.std() - 0.5) < 0.02
    alpha = L.AlphaDropout(0.2)(RNG.normal(size=(4000, 10)).astype(np.float32),
                                training=True).numpy()
    assert abs(alpha.mean()) < 0.05 and abs(alpha.std() - 1) < 0.05
