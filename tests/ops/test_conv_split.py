"""kilnflow/ops/conv.py: the conv2d kernels against a direct NumPy sum, their backward
kernels as exact adjoints (<conv(x, w), dy> = <x, dx> = <w, dw>) on every code path
(few / many channels, 1x1 windows, transposed convolution vs col2im, batch blocks,
dilations, strides, explicit pads), and the split of kilnflow/ops/nn.py: kf.nn re-exports
both modules and each op is registered once."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kilnflow as kf
import kilnflow.nn
from kilnflow.ops import conv, nn
from kilnflow.core.opdef import REGISTRY


def _pads(size, k, stride, dilation, padding, explicit=(0, 0)):
    """(output size, before, after) with TF's SAME / VALID / explicit arithmetic."""
    extent = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + extent - size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit if padding == "EXPLICIT" else (0, 0)
    return (size + before + after - extent) // stride + 1, before, after


def conv_reference(x, w, strides, padding, dilations, explicit=((0, 0), (0, 0))):
    """A direct sum over filter taps (no im2col): the oracle."""
    n, h, wd, _ = x.shape
    kh, kw, _, o = w.shape
    oh, top, bottom = _pads(h, kh, strides[0], dilations[0], padding, explicit[0])
    ow, left, right = _pads(wd, kw, strides[1], dilations[1], padding, explicit[1])
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    out = np.zeros((n, oh, ow, o), np.result_type(x, w))
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dilations[0], i * dilations[0] + strides[0] * (oh - 1) + 1,
                         strides[0])
            cols = slice(j * dilations[1], j * dilations[1] + strides[1] * (ow - 1) + 1,
                         strides[1])
            out += np.einsum("nhwc,co->nhwo", xp[:, rows, cols], w[i, j])
    return out


def _attrs(strides, padding, dilations, explicit=None):
    pad = padding if explicit is None else explicit
    return {"strides": strides, "padding": pad, "dilations": dilations}


def check_kernels(x_shape, w_shape, strides=(1, 1), padding="SAME", dilations=(1, 1),
                  explicit=None, seed=0, dtype=np.float64):
    """Forward against the oracle; both backward kernels as adjoints of the forward."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    attrs = _attrs(strides, padding, dilations, explicit)
    y = conv._conv2d_kernel(x, w, **attrs)
    mode = padding if explicit is None else "EXPLICIT"
    pads = ((0, 0), (0, 0)) if explicit is None else explicit
    want = conv_reference(x, w, strides, mode, dilations, pads)
    assert y.dtype == dtype and y.shape == want.shape
    tol = 1e-10 if dtype == np.float64 else 1e-4
    np.testing.assert_allclose(y, want, rtol=tol, atol=tol)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx = conv._conv_input_kernel(np.array(x_shape, np.int32), w, dy, **attrs)
    dw = conv._conv_filter_kernel(x, np.array(w_shape, np.int32), dy, **attrs)
    assert dx.shape == x.shape and dw.shape == w.shape
    assert dx.dtype == dtype and dw.dtype == dtype
    inner = np.sum(y * dy)
    np.testing.assert_allclose(np.sum(x * dx), inner, rtol=tol * 10)
    np.testing.assert_allclose(np.sum(w * dw), inner, rtol=tol * 10)
    return dx, dw


# (x shape, w shape): channel ratios that pick the transposed convolution or col2im for the
# input gradient, and 1-3 channels that pick tap-major patches.
SHAPES = [
    ((2, 8, 8, 1), (3, 3, 1, 4)),     # few channels; col2im (dy has more channels)
    ((2, 8, 8, 3), (3, 3, 3, 2)),     # few channels; transposed convolution
    ((3, 6, 7, 5), (3, 3, 5, 5)),     # many channels; transposed convolution
    ((2, 5, 5, 4), (3, 3, 4, 16)),    # many channels; col2im
    ((2, 4, 6, 6), (2, 3, 6, 3)),     # even, non-square filter
]


@pytest.mark.parametrize("x_shape, w_shape", SHAPES)
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_kernels_match_the_direct_sum(x_shape, w_shape, padding, stride):
    check_kernels(x_shape, w_shape, (stride, stride), padding)


@pytest.mark.parametrize("index, stride, explicit, path", [
    (0, 1, None, "_col2im"), (1, 1, None, "_transposed_conv"),
    (2, 1, None, "_transposed_conv"), (3, 1, None, "_col2im"), (2, 2, None, "_col2im"),
    (2, 1, ((4, 0), (0, 0)), "_col2im")])
def test_each_input_gradient_path_is_taken(monkeypatch, index, stride, explicit, path):
    calls = []
    for name in ("_col2im", "_transposed_conv"):
        original = getattr(conv, name)
        monkeypatch.setattr(conv, name, lambda *a, _f=original, _n=name, **k:
                            calls.append(_n) or _f(*a, **k))
    check_kernels(*SHAPES[index], (stride, stride), explicit=explicit)
    assert calls == [path]


@pytest.mark.parametrize("x_shape, w_shape", SHAPES[:3])
def test_dilated_kernels(x_shape, w_shape):
    check_kernels(x_shape, w_shape, (1, 1), "SAME", (2, 2))
    check_kernels(x_shape, w_shape, (1, 1), "VALID", (2, 1))


def test_explicit_pads_including_pads_wider_than_the_filter():
    check_kernels((2, 5, 6, 3), (3, 3, 3, 3), explicit=((1, 2), (0, 1)))
    # A pad beyond the filter's extent cannot be a transposed convolution: col2im runs.
    check_kernels((2, 5, 6, 4), (2, 2, 4, 4), explicit=((3, 0), (1, 4)))


def test_one_by_one_filters_skip_the_patch_copy():
    check_kernels((2, 5, 5, 6), (1, 1, 6, 3))
    check_kernels((2, 5, 5, 2), (1, 1, 2, 3), (2, 2), "VALID")
    x = np.ones((2, 3, 3, 4))
    assert np.shares_memory(conv._im2col(x, 1, 1, (1, 1), (1, 1), 3, 3), x)


def test_float32_kernels_keep_their_dtype():
    check_kernels((4, 8, 8, 1), (3, 3, 1, 16), dtype=np.float32)
    check_kernels((4, 8, 8, 16), (3, 3, 16, 16), dtype=np.float32)


@pytest.mark.parametrize("x_shape, w_shape", SHAPES[1:4])
@pytest.mark.parametrize("stride", [1, 2])
def test_batch_blocks_give_the_same_results(monkeypatch, x_shape, w_shape, stride):
    whole = check_kernels(x_shape, w_shape, (stride, stride), "SAME")
    monkeypatch.setattr(conv, "_IM2COL_BYTES", 1)  # one image per block
    blocked = check_kernels(x_shape, w_shape, (stride, stride), "SAME")
    for a, b in zip(whole, blocked):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3), h=st.integers(1, 7), w=st.integers(1, 7), c=st.integers(1, 6),
       o=st.integers(1, 6), kh=st.integers(1, 3), kw=st.integers(1, 3),
       stride=st.integers(1, 3), dilation=st.integers(1, 2),
       padding=st.sampled_from(["SAME", "VALID"]), seed=st.integers(0, 99))
def test_random_geometries(n, h, w, c, o, kh, kw, stride, dilation, padding, seed):
    if stride > 1 and dilation > 1:
        dilation = 1  # TF does not allow both
    extent_h, extent_w = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    if padding == "VALID" and (h < extent_h or w < extent_w):
        return
    check_kernels((n, h, w, c), (kh, kw, c, o), (stride, stride), padding,
                  (dilation, dilation), seed=seed)


def test_windows_refuse_a_geometry_outside_the_input():
    with pytest.raises(ValueError, match="do not fit"):
        conv._windows(np.zeros((1, 4, 4, 1)), 3, 3, (1, 1), (1, 1), 3, 2)


def test_op_through_the_public_api_eager_and_compiled():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 6, 6, 3)).astype(np.float32)
    f = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    want = conv_reference(x, f, (1, 1), "SAME", (1, 1))
    np.testing.assert_allclose(kf.nn.conv2d(x, f, 1, "SAME").numpy(), want, rtol=1e-4,
                               atol=1e-5)
    compiled = kf.function(lambda a, b: kf.nn.conv2d(a, b, 1, "SAME"))
    np.testing.assert_allclose(compiled(x, f).numpy(), want, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- the split

MOVED = ["conv2d", "max_pool2d", "avg_pool2d", "max_pool", "avg_pool"]
MOVED_OPS = ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "MaxPool",
             "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad"]


def test_kf_nn_reexports_both_modules():
    for name in MOVED:
        assert getattr(kf.nn, name) is getattr(conv, name)
        assert not hasattr(nn, name)
    for name in ("relu", "softmax", "dropout", "bias_add", "moments"):
        assert getattr(kf.nn, name) is getattr(nn, name)


def test_moved_ops_are_registered_once_from_conv():
    by_name = {name: opdef for name, opdef in REGISTRY.items()}
    for op in MOVED_OPS:
        assert op in by_name
        assert any(getattr(conv, attr) is by_name[op] for attr in dir(conv)
                   if attr.isupper())
        assert not any(getattr(nn, attr) is by_name[op] for attr in dir(nn) if attr.isupper())


def test_both_files_are_under_the_line_cap():
    for module in (conv, nn):
        with open(module.__file__) as f:
            assert sum(1 for _ in f) < 600, module.__name__
