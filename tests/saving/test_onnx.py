"""kf.onnx.export (the optional extra kilnflow[onnx]): every lowered op, cond/while as If/Loop
and a Keras model, checked by onnx.checker and run by onnxruntime against kilnflow (eager
and @kf.function) on the same inputs; unmapped ops name the op and the user's line."""
import os
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import keras

L = keras.layers


def _ort():
    pytest.importorskip("onnx")
    return pytest.importorskip("onnxruntime")


def _run(path, feeds):
    ort = _ort()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(path, options).run(None, feeds)


def _np(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def _assert_same(got, want):
    assert len(got) == len(want)
    for i, (a, b) in enumerate(zip(got, want)):
        b = _np(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (i, a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"output {i}")


def _many_ops(im, x):
    return [kf.matmul(x, x, transpose_b=True), kf.nn.leaky_relu(x, 0.3), kf.nn.elu(x),
            kf.argmax(x, axis=1), kf.tile(x, [2, 1]),
            kf.broadcast_to(kf.constant([1.0, 2.0, 3.0]), [4, 3]),
            kf.nn.conv2d(im, kf.reshape(kf.range(135, dtype=kf.float32), [3, 3, 3, 5]) / 100.0,
                         strides=2, padding="SAME"),
            kf.nn.conv2d(im, kf.ones([2, 2, 3, 2]), strides=1, padding="VALID"),
            kf.nn.max_pool2d(im, 2, 2, "VALID"), kf.nn.avg_pool2d(im, 3, 2, "SAME"),
            kf.fill([2, 2], 3.0), kf.einsum("ij,kj->ik", x, x), kf.nn.softplus(x),
            kf.nn.relu6(x * 10.0), kf.reshape(x, kf.shape(x)), kf.one_hot([1, 2], 3),
            kf.range(5), x[0], x[..., 1], x[:, None], x[::-1, 1:], x[-1],
            kf.math.floordiv(x, 0.3), kf.reduce_all(x > 0), kf.reduce_any(x > 0.5, axis=0),
            kf.nn.log_softmax(x), kf.nn.softmax(x, axis=0), kf.math.rsqrt(kf.abs(x) + 1.0),
            kf.math.log1p(kf.abs(x)), kf.size(x), kf.rank(x),
            kf.reduce_mean(x, axis=1, keepdims=True), kf.reduce_prod(x, axis=0),
            kf.reduce_min(x), kf.reduce_sum(x, axis=[0, 1]), kf.concat([x, x], axis=1),
            kf.stack([x, x], axis=1), kf.expand_dims(x, -1),
            kf.squeeze(kf.expand_dims(x, 0), [0]), kf.cast(x * 10.0, kf.int32),
            kf.where(x > 0.5, x, -x), kf.gather(x, [0, 2], axis=1), kf.zeros_like(x),
            kf.square(x), kf.math.squared_difference(x, 1.0), kf.math.not_equal(x, x[0]),
            kf.nn.bias_add(x, kf.constant([1.0, 2.0, 3.0])), kf.add_n([x, x, x]),
            kf.math.expm1(x), kf.nn.sigmoid(x) - kf.tanh(x), kf.exp(-x) / (1.0 + x * x),
            kf.maximum(x, 0.1), kf.minimum(x, 0.1), kf.sqrt(kf.abs(x)), kf.math.log(x + 2.0),
            kf.transpose(kf.reshape(x, [-1, 3, 1]), [0, 2, 1]), kf.logical_and(x > 0, x < 0.5),
            kf.pad(x, [[1, 0], [0, 2]], constant_values=1.5), *kf.split(x, [1, 2], axis=1),
            *kf.split(x, [2, -1], axis=1), *kf.unstack(im[0], axis=2),
            kf.math.cumsum(x, axis=0), kf.math.cumsum(x, axis=1, exclusive=True, reverse=True),
            kf.reverse(x, [0, 1]), kf.math.floormod(x, 0.7),
            kf.math.floormod(kf.cast(x * 10.0, kf.int32), -3), *kf.math.top_k(x, 2)]


def test_every_lowered_op_matches_kilnflow(tmp_path):
    _ort()
    specs = [kf.TensorSpec([2, 4, 4, 3], kf.float32), kf.TensorSpec([None, 3], kf.float32)]
    fn = kf.function(_many_ops, input_signature=specs)
    path = str(tmp_path / "ops.onnx")
    model = kf.onnx.export(fn, path)
    assert [i.name for i in model.graph.input] == ["im", "x"]
    rng = np.random.default_rng(0)
    im = rng.random((2, 4, 4, 3)).astype(np.float32)
    x = rng.random((5, 3)).astype(np.float32) - 0.3
    got = _run(path, {"im": im, "x": x})
    _assert_same(got, _many_ops(im, x))  # eager
    _assert_same(got, fn(im, x))         # @kf.function


def _control(x, n):
    y = kf.nn.relu(kf.matmul(x, kf.ones([3, 2])) + 1.0)  # fused in the optimized graph
    if kf.reduce_sum(y) > 5.0:
        y = y * 2.0
    else:
        y = y - x[:, :2]
    i = kf.constant(0)
    while i < n:
        y = y + kf.cast(i, kf.float32) * x[:, 1:]
        i += 1
    z = kf.while_loop(lambda k, acc: k < 100, lambda k, acc: (k + 1, acc * 1.5),
                      (kf.constant(0), y), maximum_iterations=4)[1]
    return kf.tanh(y), i, z


def test_cond_and_while_become_if_and_loop(tmp_path):
    _ort()
    specs = [kf.TensorSpec([None, 3], kf.float32), kf.TensorSpec([], kf.int32)]
    fn = kf.function(_control, input_signature=specs)
    # fused in the optimized graph (a JitCluster when autoclustering is on, issue 16)
    assert {"FusedElementwise", "JitCluster"} & {
        op.type for op in fn.get_concrete_function().graph.operations}
    path = str(tmp_path / "control.onnx")
    model = kf.onnx.export(fn, path, output_names=["y", "count", "z"])
    types = {n.op_type for n in model.graph.node}
    assert {"If", "Loop"} <= types and all(n.domain in ("", "ai.onnx") for n in model.graph.node)
    for scale, n in [(1.0, 3), (-1.0, 0), (0.2, 5)]:
        x = (np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0) * scale
        got = _run(path, {"x": x, "n": np.asarray(n, np.int32)})
        _assert_same(got, fn(x, np.int32(n)))
        _assert_same(got, _control(kf.constant(x), kf.constant(n)))


def test_keras_model_with_its_trained_weights(tmp_path):
    _ort()
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input(shape=(8, 8, 3)),
                              L.Conv2D(4, 3, padding="same", activation="relu"),
                              L.MaxPooling2D(), L.BatchNormalization(), L.Flatten(),
                              L.Dropout(0.5), L.Dense(6, activation="tanh"),
                              L.Dense(3, activation="softmax")])
    x = np.random.default_rng(0).random((4, 8, 8, 3)).astype(np.float32)
    model.compile("adam", "mse")
    model.fit(x, np.ones((4, 3), np.float32), epochs=2, verbose=0)
    path = str(tmp_path / "model.onnx")
    kf.onnx.export(model, path, input_signature=[kf.TensorSpec([None, 8, 8, 3], kf.float32)])
    import onnx
    onnx.checker.check_model(onnx.load(path))
    _assert_same(_run(path, {onnx.load(path).graph.input[0].name: x}),
                 [model.predict(x, verbose=0)])


def test_an_op_without_a_mapping_names_the_op_and_the_line(tmp_path):
    pytest.importorskip("onnx")

    @kf.function(input_signature=[kf.TensorSpec([3, 3], kf.float32)])
    def fn(x):
        return kf.linalg.svd(x)[0]

    with pytest.raises(kf.errors.UnimplementedError,
                       match=r"op 'Svd' of type Svd has no ONNX mapping \(created at "
                             r".*test_onnx\.py:\d+\)"):
        kf.onnx.export(fn, str(tmp_path / "svd.onnx"))
    assert not os.path.exists(tmp_path / "svd.onnx")
    with pytest.raises(ValueError, match="input_signature"):
        kf.onnx.export(kf.function(lambda x: x), str(tmp_path / "f.onnx"))


def test_without_the_extra_the_error_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ModuleNotFoundError, match=r"kilnflow\[onnx\]"):
        kf.onnx.export(kf.function(lambda x: x, input_signature=[kf.TensorSpec([1])]))


def test_variables_read_inside_a_cond_nested_in_a_loop(tmp_path):
    _ort()
    w = kf.Variable(np.array([[0.5, -1.0], [2.0, 0.25]], np.float32))

    @kf.function(input_signature=[kf.TensorSpec([None, 2], kf.float32)])
    def fn(x):
        i = kf.constant(0)
        while i < 3:
            if kf.reduce_sum(x) > 0.0:
                x = kf.matmul(x, w)
            else:
                x = x - kf.reduce_mean(w)
            i += 1
        return x

    path = str(tmp_path / "nested.onnx")
    model = kf.onnx.export(fn, path)
    assert len(model.graph.initializer) >= 1  # w, once, visible inside Loop and If
    for x in [np.ones((3, 2), np.float32), -np.ones((1, 2), np.float32)]:
        _assert_same(_run(path, {"x": x}), [fn(x)])
    w.assign(np.eye(2, dtype=np.float32))  # the file keeps the values at export time
    x = np.ones((3, 2), np.float32)
    assert not np.allclose(_run(path, {"x": x})[0], fn(x).numpy())
