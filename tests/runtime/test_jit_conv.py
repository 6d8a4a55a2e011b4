"""jit_compile=True over convolutions and pools (kilnflow/runtime/jit/conv.py): Conv2D, its
input and filter backprops, MaxPool / AvgPool and their gradients, compared with eager
execution and the Python runtime, and a Keras CNN train step compiled whole.

Tolerances: float32 rtol 2e-5 / atol 1e-5, float64 rtol 1e-12 / atol 1e-12 (a convolution
is one GEMM in both runtimes, but the patch and product orders differ, so sums round
differently; pools sum in the Python runtime's order). Each test compiles one graph holding
several configurations, so the file costs a handful of numba compiles.
"""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.runtime import jit

pytest.importorskip("numba")
pytestmark = pytest.mark.filterwarnings("ignore:AutoGraph could not convert <lambda>")

TOL = {np.float32: dict(rtol=2e-5, atol=1e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}
RNG = np.random.default_rng(7)

# (input shape, filter shape, strides, padding, dilations): odd sizes, both paddings,
# explicit pads, strides per dim, dilation
CONVS = [((2, 7, 6, 3), (3, 3, 3, 4), 1, "SAME", 1),
         ((1, 9, 8, 2), (3, 2, 2, 3), 2, "VALID", 1),
         ((2, 6, 7, 2), (2, 3, 2, 2), (2, 1), "SAME", 1),
         ((1, 7, 7, 1), (3, 3, 1, 2), 1, "SAME", 2),
         ((1, 5, 6, 2), (3, 2, 2, 3), (2, 1), [[0, 0], [1, 0], [2, 1], [0, 0]], 1),
         ((2, 4, 4, 5), (1, 1, 5, 3), 1, "VALID", 1)]
# (input shape, ksize, strides, padding)
POOLS = [((2, 6, 6, 3), 2, 2, "VALID"), ((1, 5, 4, 2), [3, 2], [2, 1], "SAME"),
         ((2, 7, 5, 2), 3, 2, "SAME"), ((1, 4, 5, 3), 2, 1, [[0, 0], [1, 1], [0, 1], [0, 0]])]


def _assert_all_close(got, want, dtype, label):
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype == dtype and g.shape == w.shape, f"{label}[{k}]"
        np.testing.assert_allclose(g, w, err_msg=f"{label}[{k}]", **TOL[dtype])


def _three_ways(fn, args, dtype):
    """eager == kf.function == kf.function(jit_compile=True), the last compiled natively."""
    calls = jit.stats["calls"]
    got = kf.function(fn, jit_compile=True)(*args)
    assert jit.stats["calls"] == calls + 1  # compiled, not interpreted
    eager = fn(*args)
    _assert_all_close(kf.function(fn)(*args), eager, dtype, "function vs eager")
    _assert_all_close(got, eager, dtype, "jit vs eager")


def _values(shapes, dtype):
    return [kf.constant(RNG.standard_normal(s).astype(dtype)) for s in shapes]


def _output_gradients(fn, xs, dtype):
    """Seeds shaped like fn's outputs (a tape over several outputs takes one each)."""
    return [kf.constant(RNG.standard_normal(y.shape).astype(dtype)) for y in fn(*xs)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_and_its_backprops_match_the_python_runtime(dtype):
    xs = _values([s for c in CONVS for s in c[:2]], dtype)

    def forward(*xs):
        return [kf.nn.conv2d(x, w, s, p, dilations=d)
                for x, w, (_, _, s, p, d) in zip(xs[::2], xs[1::2], CONVS)]
    seeds = _output_gradients(forward, xs, dtype)
    _three_ways(_with_seeded_gradients(forward, len(xs)), xs + seeds, dtype)


def _with_seeded_gradients(forward, n_inputs):
    """A function of (inputs..., output gradients...) giving forward's outputs and the input
    gradients seeded with those output gradients: the backprop ops alone, no loss ops."""
    def outputs_and_gradients(*args):
        inputs, dys = args[:n_inputs], args[n_inputs:]
        with kf.GradientTape() as tape:
            tape.watch(inputs)
            ys = forward(*inputs)
        return ys + tape.gradient(ys, list(inputs), output_gradients=list(dys))
    return outputs_and_gradients


def test_conv1d_and_bias_add_lower_through_conv2d():
    x, w, b = _values([(2, 9, 3), (3, 3, 4), (4,)], np.float32)

    def conv1d(x, w, b):
        with kf.GradientTape() as tape:
            tape.watch([x, w, b])
            y = kf.nn.bias_add(kf.nn.conv1d(x, w, 2, "SAME"), b)
            loss = kf.reduce_sum(y * y)
        return [y] + tape.gradient(loss, [x, w, b])
    _three_ways(conv1d, (x, w, b), np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pools_and_their_gradients_match_the_python_runtime(dtype):
    xs = _values([p[0] for p in POOLS for _ in range(2)], dtype)
    # ties: a max pool over repeated values routes each gradient to its first maximum
    xs.append(kf.constant(np.repeat(np.arange(6, dtype=dtype), 6).reshape(1, 6, 6, 1) % 3))

    def forward(*xs):
        ys = []
        for x, y, (_, k, s, p) in zip(xs[::2], xs[1::2], POOLS):
            ys += [kf.nn.max_pool2d(x, k, s, p), kf.nn.avg_pool2d(y, k, s, p)]
        return ys + [kf.nn.max_pool2d(xs[-1], 3, 1, "SAME")]
    seeds = _output_gradients(forward, xs, dtype)
    _three_ways(_with_seeded_gradients(forward, len(xs)), xs + seeds, dtype)


def test_second_order_through_a_max_pool():
    x, dy, gx = _values([(2, 5, 4, 3), (2, 3, 4, 3), (2, 5, 4, 3)], np.float64)

    def second(x, dy, gx):
        with kf.GradientTape() as outer:
            outer.watch(dy)
            with kf.GradientTape() as inner:
                inner.watch(x)
                y = kf.nn.max_pool2d(x, [3, 2], [2, 1], "SAME")
            dx = inner.gradient(y, x, output_gradients=dy)  # MaxPoolGrad
        return [dx, outer.gradient(dx, dy, output_gradients=gx)]  # MaxPoolGradGrad
    _three_ways(second, (x, dy, gx), np.float64)


def test_a_new_batch_size_reuses_the_compiled_module():
    f = kf.function(lambda x, w: kf.nn.max_pool2d(kf.nn.conv2d(x, w, 1, "SAME"), 2, 2, "SAME"),
                    jit_compile=True)
    w = _values([(3, 3, 2, 3)], np.float32)[0]
    for x in _values([(1, 5, 5, 2), (3, 5, 5, 2), (2, 8, 6, 2)], np.float32):
        want = kf.nn.max_pool2d(kf.nn.conv2d(x, w, 1, "SAME"), 2, 2, "SAME")
        np.testing.assert_allclose(f(x, w).numpy(), want.numpy(), **TOL[np.float32])


def test_a_filter_whose_channels_do_not_match_raises_a_tf_error():
    spec = [kf.TensorSpec([None, None, None, None], kf.float32)] * 2
    f = kf.function(lambda x, w: kf.nn.conv2d(x, w, 1, "VALID"), jit_compile=True,
                    input_signature=spec)
    x, w, bad = _values([(1, 5, 5, 2), (3, 3, 2, 1), (3, 3, 3, 1)], np.float32)
    np.testing.assert_allclose(f(x, w).numpy(), kf.nn.conv2d(x, w, 1, "VALID").numpy(),
                               **TOL[np.float32])
    with pytest.raises(errors.InvalidArgumentError, match="depth"):
        f(x, bad)
    with pytest.raises(errors.InvalidArgumentError, match="negative"):
        f(x[:, :2], w)  # VALID: the window is larger than the input


def test_int_and_half_pools_are_named_as_not_compilable():
    f = kf.function(lambda x: kf.nn.max_pool2d(x, 2, 2, "VALID"), jit_compile=True)
    with pytest.raises(errors.InvalidArgumentError, match="MaxPool"):
        f(kf.ones([1, 4, 4, 1], kf.int32))


def _cnn_step(seed):
    kf.keras.utils.set_random_seed(seed)
    model = kf.keras.Sequential([
        kf.keras.Input((9, 9, 2)), kf.keras.layers.Conv2D(4, 3, activation="relu"),
        kf.keras.layers.MaxPooling2D(), kf.keras.layers.Conv2D(3, 2, padding="same"),
        kf.keras.layers.AveragePooling2D(), kf.keras.layers.Flatten(),
        kf.keras.layers.Dense(5)])
    loss_fn = kf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    opt = kf.keras.optimizers.SGD(0.1)

    def step(x, y):
        with kf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    return model, step


@pytest.mark.slow  # the step's 4-D elementwise ops take numba a minute or more to compile
def test_keras_cnn_train_step_compiles_whole_and_matches():
    x = kf.constant(RNG.standard_normal((6, 9, 9, 2)).astype(np.float32))
    y = kf.constant(RNG.integers(0, 5, 6).astype(np.int32))
    (mj, sj), (mp, sp) = _cnn_step(3), _cnn_step(3)
    jitted, plain = kf.function(sj, jit_compile=True), kf.function(sp)
    calls = jit.stats["calls"]
    for _ in range(3):
        lj, lp = jitted(x, y), plain(x, y)
        np.testing.assert_allclose(lj.numpy(), lp.numpy(), rtol=1e-5)
    assert jit.stats["calls"] == calls + 3
    for a, b in zip(mj.trainable_variables, mp.trainable_variables):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-6)


def test_autoclustering_leaves_convolutions_to_the_python_runtime():
    x = kf.zeros([1, 5, 5, 2])
    w = kf.zeros([3, 3, 2, 3])
    # (a cluster around a conv holds 4-D elementwise ops, which numba compiles slowly)
    conv = kf.function(lambda x, w: kf.nn.conv2d(x, w, 1, "SAME")).get_concrete_function(x, w)
    op = next(o for o in conv.graph.get_operations() if o.type == "Conv2D")
    assert not jit.lowerable(op)
