"""kf.nn: values against NumPy references, gradients against central finite differences in
float64 (first and second order), bad inputs, and eager == @kf.function."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import conv as conv_ops
from kilnflow.ops import nn
from kilnflow.ops import random as kf_random
from kilnflow.core.opdef import bind

rng = np.random.default_rng(0)


def rand(*shape, low=0.2, high=1.5):
    """float64 values with |x| in [low, high]: away from the kinks of relu and friends."""
    magnitude = rng.uniform(low, high, shape)
    return np.where(rng.random(shape) < 0.5, -magnitude, magnitude)


# ---------------------------------------------------------------- finite-difference helpers

def _weighted_sum(fn, arrays, weights):
    out = fn(*[kf.constant(a) for a in arrays])
    return float(np.sum(np.asarray(out) * weights))


def check_grad(fn, *arrays, wrt=None, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Tape gradient of sum(fn(*arrays) * w) for a random w against central differences."""
    arrays = [np.array(a) for a in arrays]
    wrt = range(len(arrays)) if wrt is None else wrt
    weights = rng.standard_normal(np.shape(fn(*[kf.constant(a) for a in arrays])))
    tensors = [kf.constant(a) for a in arrays]
    with kf.GradientTape() as tape:
        for i in wrt:
            tape.watch(tensors[i])
        loss = kf.reduce_sum(fn(*tensors) * weights)
    grads = tape.gradient(loss, [tensors[i] for i in wrt])
    for i, grad in zip(wrt, grads):
        numeric = np.zeros_like(arrays[i])
        for index in np.ndindex(arrays[i].shape):
            saved = arrays[i][index]
            arrays[i][index] = saved + eps
            up = _weighted_sum(fn, arrays, weights)
            arrays[i][index] = saved - eps
            down = _weighted_sum(fn, arrays, weights)
            arrays[i][index] = saved
            numeric[index] = (up - down) / (2 * eps)
        assert grad is not None, f"no gradient for input {i}"
        np.testing.assert_allclose(grad.numpy(), numeric, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {i}")


def _first_grad(fn, x, v):
    t = kf.constant(x)
    with kf.GradientTape() as tape:
        tape.watch(t)
        loss = kf.reduce_sum(fn(t) * v)
    return tape.gradient(loss, t).numpy()


def check_second_order(fn, x, eps=1e-5, rtol=1e-5, atol=1e-6):
    """Hessian-vector product through nested tapes against differences of first gradients."""
    x = np.array(x)
    v = rng.standard_normal(np.shape(fn(kf.constant(x))))
    u = rng.standard_normal(x.shape)
    t = kf.constant(x)
    with kf.GradientTape() as outer:
        outer.watch(t)
        with kf.GradientTape() as inner:
            inner.watch(t)
            loss = kf.reduce_sum(fn(t) * v)
        g = inner.gradient(loss, t)
        directional = kf.reduce_sum(g * u)
    hv = outer.gradient(directional, t).numpy()
    numeric = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        saved = x[index]
        x[index] = saved + eps
        up = np.sum(_first_grad(fn, x, v) * u)
        x[index] = saved - eps
        down = np.sum(_first_grad(fn, x, v) * u)
        x[index] = saved
        numeric[index] = (up - down) / (2 * eps)
    np.testing.assert_allclose(hv, numeric, rtol=rtol, atol=atol)


# ---------------------------------------------------------------- NumPy references

def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    erf = np.vectorize(math.erf)(x / np.sqrt(2))
    return 0.5 * x * (1 + erf)


def _same_pads(size, k, stride, dilation):
    out = math.ceil(size / stride)
    extent = (k - 1) * dilation + 1
    total = max((out - 1) * stride + extent - size, 0)
    return out, total // 2


def _valid_out(size, k, stride, dilation):
    return math.ceil((size - (k - 1) * dilation) / stride)


def conv2d_ref(x, w, stride, padding, dilation=1):
    """Direct loops, padding arithmetic from TF's documentation."""
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    if padding == "SAME":
        oh, pt = _same_pads(h, kh, stride, dilation)
        ow, pl = _same_pads(wd, kw, stride, dilation)
    else:
        oh, ow, pt, pl = _valid_out(h, kh, stride, dilation), _valid_out(wd, kw, stride,
                                                                          dilation), 0, 0
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, col = i * stride + a * dilation - pt, j * stride + b * dilation - pl
                    if 0 <= r < h and 0 <= col < wd:
                        out[:, i, j, :] += x[:, r, col, :] @ w[a, b]
    return out


def pool_ref(x, k, stride, padding, reduce):
    n, h, wd, c = x.shape
    if padding == "SAME":
        oh, pt = _same_pads(h, k, stride, 1)
        ow, pl = _same_pads(wd, k, stride, 1)
    else:
        oh, ow, pt, pl = _valid_out(h, k, stride, 1), _valid_out(wd, k, stride, 1), 0, 0
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride - pt, j * stride - pl
            window = x[:, max(r0, 0):r0 + k, max(c0, 0):c0 + k, :]
            out[:, i, j, :] = reduce(window, axis=(1, 2))
    return out


# ---------------------------------------------------------------- activations

ACTIVATIONS = [
    ("relu", nn.relu, lambda x: np.maximum(x, 0)),
    ("relu6", nn.relu6, lambda x: np.clip(x, 0, 6)),
    ("leaky_relu", lambda x: nn.leaky_relu(x, 0.3), lambda x: np.where(x > 0, x, 0.3 * x)),
    ("elu", nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    ("softplus", nn.softplus, lambda x: np.log1p(np.exp(x))),
    ("selu", nn.selu, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))),
    ("silu", nn.silu, lambda x: x / (1 + np.exp(-x))),
    ("gelu_exact", nn.gelu, lambda x: np_gelu(x, False)),
    ("gelu_tanh", lambda x: nn.gelu(x, approximate=True), lambda x: np_gelu(x, True)),
    ("sigmoid", kf.nn.sigmoid if hasattr(kf, "nn") else kf.sigmoid,
     lambda x: 1 / (1 + np.exp(-x))),
]


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@settings(max_examples=15, deadline=None)
@given(values=st.lists(st.floats(-8, 8, allow_nan=False), min_size=1, max_size=12))
def test_activation_values(name, fn, ref, values):
    x = np.asarray(values, np.float64)
    np.testing.assert_allclose(fn(kf.constant(x)).numpy(), ref(x), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_gradients(name, fn, ref):
    x = rand(2, 3, high=5.0)
    check_grad(fn, x)


@pytest.mark.parametrize("name,fn,ref", ACTIVATIONS[:5], ids=[a[0] for a in ACTIVATIONS[:5]])
def test_activation_keeps_float32(name, fn, ref):
    assert fn(kf.constant([-1.0, 2.0])).dtype is kf.float32


def test_relu_on_integers_and_large_inputs():
    assert nn.relu(kf.constant([-3, 4])).numpy().tolist() == [0, 4]
    assert nn.elu(kf.constant([1000.0, -1000.0])).numpy().tolist() == [1000.0, -1.0]
    assert np.isfinite(nn.softplus(kf.constant([1000.0, -1000.0])).numpy()).all()


def test_relu6_gradient_is_zero_outside_the_linear_part():
    x = kf.constant([-1.0, 3.0, 7.0])
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = nn.relu6(x)
    assert tape.gradient(y, x).numpy().tolist() == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("approximate", [False, True])
def test_gelu_second_order(approximate):
    check_second_order(lambda t: nn.gelu(t, approximate), rand(5, high=3.0))


def test_gelu_rejects_integers():
    with pytest.raises(TypeError, match="gelu"):
        nn.gelu(kf.constant([1, 2]))


# ---------------------------------------------------------------- softmax family

@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_softmax_and_log_softmax_match_numpy(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rng.standard_normal(shape) * 5
    np.testing.assert_allclose(nn.softmax(kf.constant(x), axis).numpy(), np_softmax(x, axis),
                               rtol=1e-10)
    np.testing.assert_allclose(nn.log_softmax(kf.constant(x), axis).numpy(),
                               np.log(np_softmax(x, axis)), rtol=1e-9, atol=1e-12)


def test_softmax_is_stable_for_large_logits():
    x = kf.constant([[1000.0, 0.0], [-1000.0, 1000.0]])
    assert np.allclose(nn.softmax(x).numpy(), [[1, 0], [0, 1]])
    assert np.isfinite(nn.log_softmax(x).numpy()).all()


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_gradients(axis):
    check_grad(lambda t: nn.softmax(t, axis), rand(3, 4))
    check_grad(lambda t: nn.log_softmax(t, axis), rand(3, 4))


def test_softmax_second_order():
    check_second_order(nn.softmax, rand(2, 4))
    check_second_order(nn.log_softmax, rand(3))


def test_softmax_bad_inputs():
    with pytest.raises(errors.InvalidArgumentError, match="Softmax"):
        nn.softmax(kf.constant([1, 2]))
    with pytest.raises(errors.InvalidArgumentError, match="Softmax"):
        nn.softmax(kf.constant([[1.0, 2.0]]), axis=2)
    with pytest.raises(errors.InvalidArgumentError, match="Softmax"):
        nn.softmax(kf.constant(1.0))


# ---------------------------------------------------------------- losses

def test_sigmoid_cross_entropy_values_and_stability():
    x = np.array([-3.0, -0.5, 0.0, 2.0, 50.0, -50.0])
    z = np.array([0.0, 1.0, 0.3, 1.0, 0.0, 1.0])
    # -z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x)), with log sigmoid(x) = -log(1 + e^-x)
    expected = z * np.logaddexp(0, -x) + (1 - z) * np.logaddexp(0, x)
    out = nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    big = nn.sigmoid_cross_entropy_with_logits(labels=kf.constant([0.0, 1.0]),
                                               logits=kf.constant([1e4, -1e4])).numpy()
    np.testing.assert_allclose(big, [1e4, 1e4])


def test_sigmoid_cross_entropy_gradients_including_zero_logits():
    check_grad(lambda z, x: nn.sigmoid_cross_entropy_with_logits(z, x),
               rng.uniform(0, 1, (2, 3)), np.array([[0.0, -1.2, 0.7], [2.0, -0.3, 0.0]]))


def test_sigmoid_cross_entropy_bad_inputs():
    with pytest.raises(ValueError, match="same shape"):
        nn.sigmoid_cross_entropy_with_logits(kf.constant([1.0, 0.0]), kf.constant([1.0]))
    with pytest.raises(ValueError, match="`labels` and `logits`"):
        nn.sigmoid_cross_entropy_with_logits(logits=kf.constant([1.0]))
    with pytest.raises(errors.InvalidArgumentError):
        nn.sigmoid_cross_entropy_with_logits(kf.constant([1.0]), kf.constant([1.0], kf.float64))


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_cross_entropy(axis):
    x = rand(3, 4) * 3
    z = np_softmax(rng.standard_normal((3, 4)), axis)
    expected = -np.sum(z * np.log(np_softmax(x, axis)), axis=axis)
    out = nn.softmax_cross_entropy_with_logits(z, x, axis=axis).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-10)
    check_grad(lambda a, b: nn.softmax_cross_entropy_with_logits(a, b, axis=axis), z, x)


def test_softmax_cross_entropy_is_stable_and_checks_shapes():
    out = nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], [[1000.0, -1000.0]])
    np.testing.assert_allclose(out.numpy(), [2000.0])
    with pytest.raises(errors.InvalidArgumentError, match="same shape"):
        nn.softmax_cross_entropy_with_logits([[0.0, 1.0]], [[1.0, 2.0, 3.0]])


def test_softmax_cross_entropy_second_order():
    z = np_softmax(rng.standard_normal((2, 3)))
    check_second_order(lambda t: nn.softmax_cross_entropy_with_logits(z, t), rand(2, 3))


def test_sparse_softmax_cross_entropy():
    x = rand(4, 5) * 3
    labels = np.array([0, 4, 2, 2], np.int32)
    expected = -np.log(np_softmax(x))[np.arange(4), labels]
    out = nn.sparse_softmax_cross_entropy_with_logits(labels, x)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10)
    check_grad(lambda t: nn.sparse_softmax_cross_entropy_with_logits(labels, t), x)
    check_second_order(lambda t: nn.sparse_softmax_cross_entropy_with_logits([2, 0], t),
                       rand(2, 3))
    int64 = nn.sparse_softmax_cross_entropy_with_logits(labels.astype(np.int64), x)
    np.testing.assert_allclose(int64.numpy(), expected, rtol=1e-10)


def test_sparse_softmax_cross_entropy_bad_labels():
    logits = kf.constant([[1.0, 2.0, 3.0]])
    with pytest.raises(errors.InvalidArgumentError, match=r"label value of 3.*\[0, 3\)"):
        nn.sparse_softmax_cross_entropy_with_logits(kf.constant([3]), logits)
    with pytest.raises(errors.InvalidArgumentError, match="label value of -1"):
        nn.sparse_softmax_cross_entropy_with_logits(kf.constant([-1]), logits)
    with pytest.raises(errors.InvalidArgumentError, match="Tlabels.*float32"):
        nn.sparse_softmax_cross_entropy_with_logits(kf.constant([1.0]), logits)
    with pytest.raises(errors.InvalidArgumentError, match="labels shape"):
        nn.sparse_softmax_cross_entropy_with_logits(kf.constant([[1]]), logits)


# ---------------------------------------------------------------- bias_add

def test_bias_add_nhwc_and_nchw():
    x = rand(2, 3, 4)
    b = rand(4)
    np.testing.assert_allclose(nn.bias_add(x, b).numpy(), x + b)
    y = rand(2, 4, 3, 3)
    np.testing.assert_allclose(nn.bias_add(y, b, data_format="NCHW").numpy(),
                               y + b[:, None, None])
    check_grad(nn.bias_add, x, b)
    check_grad(lambda v, c: nn.bias_add(v, c, "NCHW"), rand(2, 4, 2), b)


def test_bias_add_bad_inputs():
    with pytest.raises(errors.InvalidArgumentError, match="bias must be 1-D"):
        nn.bias_add(kf.ones([2, 3]), kf.ones([1, 3]))
    with pytest.raises(errors.InvalidArgumentError, match="as many biases"):
        nn.bias_add(kf.ones([2, 3]), kf.ones([2]))


# ---------------------------------------------------------------- conv2d

@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 2), h=st.integers(1, 7), w=st.integers(1, 7), c=st.integers(1, 3),
       k=st.integers(1, 3), o=st.integers(1, 3), stride=st.integers(1, 3),
       dilation=st.integers(1, 2), padding=st.sampled_from(["SAME", "VALID"]))
def test_conv2d_matches_direct_loops(n, h, w, c, k, o, stride, dilation, padding):
    if dilation > 1:
        stride = 1  # TF does not combine strides > 1 with dilations > 1
    extent = (k - 1) * dilation + 1
    if padding == "VALID" and (h < extent or w < extent):
        return
    x = rng.standard_normal((n, h, w, c))
    f = rng.standard_normal((k, k, c, o))
    out = conv_ops.conv2d(x, f, stride, padding, dilations=dilation)
    np.testing.assert_allclose(out.numpy(), conv2d_ref(x, f, stride, padding, dilation),
                               rtol=1e-10, atol=1e-12)


def test_conv2d_rectangular_kernel_per_dim_strides_and_float32():
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    f = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    out = conv_ops.conv2d(x, f, [1, 2, 3, 1], "SAME")
    assert out.dtype is kf.float32 and out.shape == (2, 4, 2, 4)
    expected = conv2d_ref_strided(x.astype(np.float64), f.astype(np.float64), (2, 3))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


def conv2d_ref_strided(x, w, strides):
    """SAME conv with different strides per dim, by direct loops."""
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    oh, pt = _same_pads(h, kh, strides[0], 1)
    ow, pl = _same_pads(wd, kw, strides[1], 1)
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    r, col = i * strides[0] + a - pt, j * strides[1] + b - pl
                    if 0 <= r < h and 0 <= col < wd:
                        out[:, i, j, :] += x[:, r, col, :] @ w[a, b]
    return out


def test_conv2d_explicit_padding_and_nchw():
    x = rng.standard_normal((1, 4, 5, 2))
    f = rng.standard_normal((3, 3, 2, 3))
    explicit = conv_ops.conv2d(x, f, 1, [[0, 0], [1, 2], [0, 1], [0, 0]])
    padded = np.pad(x, ((0, 0), (1, 2), (0, 1), (0, 0)))
    np.testing.assert_allclose(explicit.numpy(), conv2d_ref(padded, f, 1, "VALID"), rtol=1e-10)
    nchw = conv_ops.conv2d(np.transpose(x, (0, 3, 1, 2)), f, [1, 1, 2, 2], "SAME", "NCHW")
    nhwc = conv_ops.conv2d(x, f, 2, "SAME")
    np.testing.assert_allclose(nchw.numpy(), np.transpose(nhwc.numpy(), (0, 3, 1, 2)))


def test_conv2d_batches_larger_than_one_im2col_block(monkeypatch):
    monkeypatch.setattr(conv_ops, "_IM2COL_BYTES", 1)  # one sample per block
    x = rng.standard_normal((3, 5, 5, 2))
    f = rng.standard_normal((3, 3, 2, 2))
    np.testing.assert_allclose(conv_ops.conv2d(x, f, 2, "SAME").numpy(),
                               conv2d_ref(x, f, 2, "SAME"), rtol=1e-10)
    check_grad(lambda a, b: conv_ops.conv2d(a, b, 2, "SAME"), x, f)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv2d_gradients(padding, stride):
    x = rng.standard_normal((2, 5, 4, 2))
    f = rng.standard_normal((3, 2, 2, 3))
    check_grad(lambda a, b: conv_ops.conv2d(a, b, stride, padding), x, f)


def test_conv2d_gradients_with_dilation():
    x = rng.standard_normal((1, 6, 5, 2))
    f = rng.standard_normal((2, 3, 2, 2))
    check_grad(lambda a, b: conv_ops.conv2d(a, b, 1, "SAME", dilations=2), x, f)


@pytest.mark.parametrize("padding,stride", [("SAME", 2), ("VALID", 1)])
def test_conv2d_backprop_ops_are_differentiable(padding, stride):
    """The gradient ops' own gradients (what second order needs) against finite differences."""
    attrs = {"strides": (stride, stride), "padding": padding, "dilations": (1, 1)}
    x = rng.standard_normal((1, 5, 5, 2))
    f = rng.standard_normal((3, 3, 2, 2))
    dy = rng.standard_normal(conv_ops.conv2d(x, f, stride, padding).shape)
    sizes_x = np.array(x.shape, np.int32)
    sizes_f = np.array(f.shape, np.int32)
    check_grad(lambda w, g: bind(conv_ops.CONV2D_BACKPROP_INPUT, (kf.constant(sizes_x), w, g),
                                 attrs), f, dy)
    check_grad(lambda a, g: bind(conv_ops.CONV2D_BACKPROP_FILTER, (a, kf.constant(sizes_f), g),
                                 attrs), x, dy)


def test_conv2d_second_order():
    f = rng.standard_normal((2, 2, 1, 2))
    check_second_order(lambda t: conv_ops.conv2d(t, f, 1, "SAME") ** 2, rng.standard_normal(
        (1, 3, 3, 1)))


def test_conv2d_bad_inputs():
    x = kf.ones([1, 4, 4, 2])
    f = kf.ones([3, 3, 2, 1])
    with pytest.raises(errors.InvalidArgumentError, match="4-dimensional"):
        conv_ops.conv2d(kf.ones([4, 4, 2]), f, 1, "SAME")
    with pytest.raises(ValueError, match="padding"):
        conv_ops.conv2d(x, f, 1, "FULL")
    with pytest.raises(errors.InvalidArgumentError, match="same depth: 2 vs 3"):
        conv_ops.conv2d(x, kf.ones([3, 3, 3, 1]), 1, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="int32.*Conv2D"):
        conv_ops.conv2d(kf.ones([1, 4, 4, 2], kf.int32), kf.ones([3, 3, 2, 1], kf.int32), 1, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="negative"):
        conv_ops.conv2d(kf.ones([1, 2, 2, 2]), f, 1, "VALID")
    with pytest.raises(errors.InvalidArgumentError, match="batch and depth"):
        conv_ops.conv2d(x, f, [2, 1, 1, 1], "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="strides"):
        conv_ops.conv2d(x, f, 0, "SAME")


# ---------------------------------------------------------------- pooling

@settings(max_examples=30, deadline=None)
@given(h=st.integers(1, 7), w=st.integers(1, 7), k=st.integers(1, 3), stride=st.integers(1, 3),
       padding=st.sampled_from(["SAME", "VALID"]))
def test_pools_match_direct_loops(h, w, k, stride, padding):
    if padding == "VALID" and (h < k or w < k):
        return
    x = rng.standard_normal((2, h, w, 3))
    np.testing.assert_allclose(conv_ops.max_pool2d(x, k, stride, padding).numpy(),
                               pool_ref(x, k, stride, padding, np.max))
    np.testing.assert_allclose(conv_ops.avg_pool2d(x, k, stride, padding).numpy(),
                               pool_ref(x, k, stride, padding, np.mean), rtol=1e-12)


def test_max_pool_integers_and_negative_values_under_same_padding():
    x = -np.arange(1, 10, dtype=np.int32).reshape(1, 3, 3, 1)
    out = conv_ops.max_pool2d(x, 2, 2, "SAME")
    assert out.dtype is kf.int32
    assert out.numpy().reshape(-1).tolist() == [-1, -3, -7, -9]


def _distinct(*shape):
    """Values with no ties, so the max of every window has a unique position."""
    return rng.permutation(np.prod(shape)).reshape(shape) / 7.0 - 2.0


@pytest.mark.parametrize("padding,stride,k", [("SAME", 2, 3), ("VALID", 1, 2), ("SAME", 1, 2)])
def test_pool_gradients(padding, stride, k):
    x = _distinct(2, 5, 4, 2)
    check_grad(lambda t: conv_ops.max_pool2d(t, k, stride, padding), x)
    check_grad(lambda t: conv_ops.avg_pool2d(t, k, stride, padding), x)


def test_max_pool_gradient_goes_to_the_first_maximum_on_ties():
    x = kf.constant(np.ones((1, 2, 2, 1)))
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = conv_ops.max_pool2d(x, 2, 2, "VALID")
    assert tape.gradient(y, x).numpy().reshape(-1).tolist() == [1.0, 0.0, 0.0, 0.0]


def test_pool_gradient_ops_are_differentiable():
    attrs = {"ksize": (2, 2), "strides": (1, 1), "padding": "SAME"}
    x = _distinct(1, 4, 3, 2)
    dy = rng.standard_normal((1, 4, 3, 2))
    check_grad(lambda g: bind(conv_ops.MAX_POOL_GRAD, (kf.constant(x), g), attrs), dy)
    check_grad(lambda g: bind(conv_ops.MAX_POOL_GRAD_GRAD, (kf.constant(x), g), attrs), dy)
    sizes = kf.constant(np.array(x.shape, np.int32))
    check_grad(lambda g: bind(conv_ops.AVG_POOL_GRAD, (sizes, g), attrs), dy)


def test_pool_second_order():
    check_second_order(lambda t: conv_ops.avg_pool2d(t, 2, 1, "SAME") ** 2, rand(1, 3, 3, 1))
    check_second_order(lambda t: conv_ops.max_pool2d(t, 2, 1, "SAME") ** 2, _distinct(1, 3, 3, 1))


def test_pool_bad_inputs():
    with pytest.raises(errors.InvalidArgumentError, match="4-dimensional"):
        conv_ops.max_pool2d(kf.ones([3, 3, 1]), 2, 2, "SAME")
    with pytest.raises(ValueError, match="padding"):
        conv_ops.avg_pool2d(kf.ones([1, 3, 3, 1]), 2, 2, "same-ish")
    with pytest.raises(errors.InvalidArgumentError, match="int32.*AvgPool"):
        conv_ops.avg_pool2d(kf.ones([1, 3, 3, 1], kf.int32), 2, 2, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="batch and depth"):
        conv_ops.max_pool2d(kf.ones([1, 3, 3, 1]), [2, 2, 2, 1], 1, "SAME")


# ---------------------------------------------------------------- dropout

def test_dropout_scales_kept_values_and_draws_a_new_mask_each_call():
    x = kf.ones([2000])
    a = nn.dropout(x, 0.25).numpy()
    b = nn.dropout(x, 0.25).numpy()
    assert set(np.unique(a)) <= {0.0, np.float32(1 / 0.75)}
    assert 0.70 < np.mean(a > 0) < 0.80
    assert not np.array_equal(a, b)
    assert nn.dropout(x, 0.0) is x


def test_dropout_noise_shape_and_gradient():
    x = kf.constant(rng.standard_normal((4, 6)))
    y = nn.dropout(x, 0.5, noise_shape=[4, 1]).numpy()
    for row, source in zip(y, x.numpy()):
        assert np.allclose(row, 0) or np.allclose(row, 2 * source)
    y = nn.dropout(x, 0.5, noise_shape=[None, 1])
    assert y.shape == (4, 6)
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = nn.dropout(x, 0.5)
    grad = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(grad, np.where(y.numpy() != 0, 2.0, 0.0))


def test_dropout_is_reproducible_with_seeds():
    kf_random.set_seed(5)
    a = nn.dropout(kf.ones([50]), 0.5, seed=1).numpy()
    kf_random.set_seed(5)
    b = nn.dropout(kf.ones([50]), 0.5, seed=1).numpy()
    np.testing.assert_array_equal(a, b)
    kf_random.set_seed(None)


def test_dropout_bad_inputs():
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(kf.ones([3]), -0.1)
    with pytest.raises(ValueError, match="rate"):
        nn.dropout(kf.ones([3]), 1.0)
    with pytest.raises(ValueError, match="floating point"):
        nn.dropout(kf.constant([1, 2]), 0.5)


def test_dropout_with_a_tensor_rate():
    out = nn.dropout(kf.ones([1000]), kf.constant(0.5)).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0}


# ---------------------------------------------------------------- l2_normalize, moments

def test_l2_normalize():
    x = rand(3, 4)
    np.testing.assert_allclose(nn.l2_normalize(x, axis=1).numpy(),
                               x / np.linalg.norm(x, axis=1, keepdims=True))
    np.testing.assert_allclose(nn.l2_normalize(x).numpy(), x / np.linalg.norm(x))
    assert np.all(nn.l2_normalize(kf.zeros([3])).numpy() == 0)
    check_grad(lambda t: nn.l2_normalize(t, axis=0), x)


@pytest.mark.parametrize("axes,keepdims", [([0], False), ([0, 2], True), ([1], False)])
def test_moments(axes, keepdims):
    x = rand(3, 4, 2)
    mean, variance = nn.moments(x, axes, keepdims=keepdims)
    np.testing.assert_allclose(mean.numpy(), x.mean(axis=tuple(axes), keepdims=keepdims))
    np.testing.assert_allclose(variance.numpy(), x.var(axis=tuple(axes), keepdims=keepdims))
    check_grad(lambda t: nn.moments(t, axes, keepdims=keepdims)[1], x)
    check_grad(lambda t: nn.moments(t, axes, keepdims=keepdims)[0], x)


# ---------------------------------------------------------------- graphs

# The tape differentiates conv2d with respect to both inputs; the unused one is pruned.
@pytest.mark.filterwarnings("ignore:.*pruned from the graph")
def test_nn_ops_inside_kf_function_match_eager():
    x = rng.standard_normal((2, 6, 6, 2)).astype(np.float32)
    f = rng.standard_normal((3, 3, 2, 4)).astype(np.float32)
    labels = np.array([1, 3], np.int32)

    def model(x, f):
        y = nn.relu(conv_ops.conv2d(x, f, 2, "SAME"))
        y = conv_ops.avg_pool2d(conv_ops.max_pool2d(y, 2, 1, "SAME"), 3, 1, "VALID")
        return nn.sparse_softmax_cross_entropy_with_logits(labels, kf.reshape(y, [2, 4]))

    def train_step(x, f):
        with kf.GradientTape() as tape:
            tape.watch(f)
            loss = kf.reduce_sum(model(x, f))
        return loss, tape.gradient(loss, f)

    eager = train_step(kf.constant(x), kf.constant(f))
    graph = kf.function(train_step)(kf.constant(x), kf.constant(f))
    for e, g in zip(eager, graph):
        np.testing.assert_allclose(e.numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


def test_conv2d_in_a_function_with_unknown_batch():
    f = kf.constant(rng.standard_normal((3, 3, 2, 4)).astype(np.float32))

    @kf.function(input_signature=[kf.TensorSpec([None, 5, 5, 2], kf.float32)])
    def conv(x):
        y = conv_ops.conv2d(x, f, 2, "SAME")
        assert y.shape.as_list() == [None, 3, 3, 4]
        return y

    x = rng.standard_normal((3, 5, 5, 2)).astype(np.float32)
    np.testing.assert_allclose(conv(kf.constant(x)).numpy(),
                               conv_ops.conv2d(x, f, 2, "SAME").numpy(), rtol=1e-6)


def test_dropout_in_a_function_draws_a_new_mask_every_call():
    @kf.function
    def drop(x):
        return nn.dropout(x, 0.5)

    x = kf.ones([200])
    assert not np.array_equal(drop(x).numpy(), drop(x).numpy())


def test_bias_add_gradient_with_unknown_rank():
    @kf.function(input_signature=[kf.TensorSpec(None, kf.float32),
                                  kf.TensorSpec([3], kf.float32)])
    def grads(x, b):
        with kf.GradientTape() as tape:
            tape.watch(b)
            y = nn.bias_add(x, b)
        return tape.gradient(y, b)

    x = rng.standard_normal((2, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(grads(kf.constant(x), kf.ones([3])).numpy(), [8.0, 8.0, 8.0])


FUSABLE = [(nn.RELU, (rand(3, 4) * 8,), {}), (nn.RELU6, (rand(3, 4) * 8,), {}),
           (nn.ELU, (rand(3, 4) * 8,), {}), (nn.SOFTPLUS, (rand(3, 4) * 8,), {}),
           (nn.LEAKY_RELU, (rand(3, 4),), {"alpha": 0.3}),
           (nn.SIGMOID_XENT, (rng.uniform(0, 1, (3, 4)), rand(3, 4) * 8), {}),
           (nn.BIAS_ADD, (rand(3, 4), rand(4)), {})]


@pytest.mark.parametrize("opdef,inputs,attrs", FUSABLE, ids=[f[0].name for f in FUSABLE])
def test_fusable_expression_matches_the_kernel(opdef, inputs, attrs):
    """The elementwise-fusion pass evaluates `fusable` with NumPy names: it must agree."""
    names = [f"v{i}" for i in range(len(inputs))]
    expression = opdef.fusable.format(*names, **attrs)
    scope = {n: getattr(np, n) for n in ("maximum", "minimum", "where", "exp", "expm1",
                                         "log1p", "abs")}
    scope.update(zip(names, inputs))
    np.testing.assert_allclose(eval(expression, scope), opdef.kernel(*inputs, **attrs),
                               rtol=1e-12)
