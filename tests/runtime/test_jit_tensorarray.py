"""jit_compile=True over TensorArrays in loops (runtime/jit/tensorlist.py): arrays made
without element_shape (the element rank comes from the writes), dynamic_size arrays,
stack/read/gather/size, and gradients through such loops; each case eager ==
kf.function == jit_compile=True (float32: rtol 1e-5, the jit's tanh is a rational fit
within 3.6e-7 of libm's). Few distinct functions: each costs a numba compile."""
from __future__ import annotations

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.runtime import jit

pytest.importorskip("numba")

RNG = np.random.RandomState(0)
X = RNG.randn(5, 3, 4).astype(np.float32)   # [time, batch, features]
W_X = RNG.randn(4, 6).astype(np.float32) * 0.5
W_H = RNG.randn(6, 6).astype(np.float32) * 0.5


def _agree(fn, *args, rtol=1e-5):
    calls = jit.stats["calls"]
    got = kf.nest.flatten(kf.function(fn, jit_compile=True)(*args))
    assert jit.stats["calls"] > calls  # compiled, not interpreted
    for want in (kf.nest.flatten(kf.function(fn)(*args)), kf.nest.flatten(fn(*args))):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.asarray(g).shape == np.asarray(w).shape
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=1e-6)


def _rnn_step(element_shape):
    w_x, w_h = kf.Variable(W_X), kf.Variable(W_H)

    def step(x):
        with kf.GradientTape() as tape:
            outputs = kf.TensorArray(kf.float32, size=x.shape[0], element_shape=element_shape)
            h = kf.zeros([x.shape[1], 6])
            for t in kf.range(x.shape[0]):
                h = kf.tanh(kf.matmul(x[t], w_x) + kf.matmul(h, w_h))
                outputs = outputs.write(t, h)
            ys = outputs.stack()
            loss = kf.reduce_sum(ys * ys) + kf.reduce_sum(h)
        return [ys, loss] + tape.gradient(loss, [w_x, w_h])
    return step


def test_rnn_outputs_without_element_shape_and_their_gradients():
    """The dynamic_rnn pattern: outputs written into a TensorArray made with only a size,
    stacked after a kf.range loop; weight gradients through the loop under the tape. The
    Python runtime cannot differentiate this one without element_shape when the elements
    have rank >= 2 (TensorListSetItem's gradient crops to the [n, 0] start's rank), so
    the oracle is the same step with element_shape=[3, 6] (the same values in TF)."""
    x = kf.constant(X)
    calls = jit.stats["calls"]
    got = kf.function(_rnn_step(None), jit_compile=True)(x)
    assert jit.stats["calls"] == calls + 1
    for want in (kf.function(_rnn_step([3, 6]))(x), _rnn_step([3, 6])(x)):
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_scalar_elements_read_gather_size():
    def scalars(x):
        ta = kf.TensorArray(kf.float32, size=x.shape[0])
        s = kf.constant(0.0)
        for t in kf.range(x.shape[0]):
            ta = ta.write(t, kf.reduce_sum(x[t]) + s)
            s = s + ta.read(t)
        return ta.stack(), ta.size(), ta.read(1), ta.gather([3, 0]), s
    _agree(scalars, kf.constant(X))


def test_dynamic_size_and_a_run_time_size_with_gradients():
    """dynamic_size=True grows as written (TF's XLA returns an empty array here, and
    aborts when it is differentiated: kilnflow computes what the Python runtime does);
    a size read from a tensor's shape; an AutoGraph list appended to in a tensor loop."""
    w = kf.Variable(W_X[:, :3])

    def grown(x):
        with kf.GradientTape() as tape:
            ta = kf.TensorArray(kf.float32, size=0, dynamic_size=True)
            sized = kf.TensorArray(kf.float32, size=kf.shape(x)[0])
            items = []
            for t in kf.range(kf.shape(x)[0]):
                y = kf.matmul(x[t], w)
                ta = ta.write(t, y[1])  # rank-1 elements: see the RNN test's docstring
                sized = sized.write(t, kf.reduce_sum(y, axis=1))
                items.append(y[0])
            listed = kf.convert_to_tensor(items)
            loss = kf.reduce_sum(ta.stack() ** 2) + kf.reduce_sum(sized.stack()) + \
                kf.reduce_sum(listed)
        return ta.stack(), sized.stack(), listed, ta.size(), loss, tape.gradient(loss, w)
    _agree(grown, kf.constant(X))


def test_loops_without_a_tape_write_in_place():
    """No history recorded: the loop copies the starting buffer once and writes into it
    (not a new buffer per write); the next call starts from the zeros again."""
    def forward(x, n):
        typed = kf.TensorArray(kf.float32, size=x.shape[0], element_shape=[3, 4])
        bare = kf.TensorArray(kf.float32, size=0, dynamic_size=True)
        for t in kf.range(n):
            typed = typed.write(t, x[t] * 2.0)
            bare = bare.write(t, kf.reduce_max(x[t]))
        return typed.stack(), bare.stack()
    _agree(forward, kf.constant(X), kf.constant(5))
    f = kf.function(forward, jit_compile=True)
    assert f.experimental_get_compiler_ir(kf.constant(X), kf.constant(5))().count(
        "_in_place(") == 2
    typed, bare = f(kf.constant(X), kf.constant(2))
    np.testing.assert_array_equal(typed.numpy()[:2], X[:2] * 2.0)
    np.testing.assert_array_equal(typed.numpy()[2:], 0.0)  # not the last call's rows
    assert bare.shape == (2,)


def test_writes_of_inconsistent_shapes_raise_tfs_value_error():
    def bad(x):  # TF: ValueError "Inconsistent shapes: saw (3, 4) but expected (4,)"
        ta = kf.TensorArray(kf.float32, size=3)
        for t in kf.range(3):
            ta = ta.write(t, x[t, 0])
            ta = ta.write(t, x[t])
        return ta.stack()
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(3, 4\) but expected "
                                         r"\(4,\)"):
        kf.function(bad, jit_compile=True)(kf.constant(X))


def test_elements_of_one_rank_but_other_sizes_raise_invalid_argument():
    def ragged(x):  # x[:t + 1] has a static [None, 4]: the sizes differ at run time
        ta = kf.TensorArray(kf.float32, size=3)
        for t in kf.range(3):
            ta = ta.write(t, x[0, :t + 1])
        return ta.stack()
    for f in (kf.function(ragged), kf.function(ragged, jit_compile=True)):
        with pytest.raises(errors.InvalidArgumentError, match="TensorArray"):
            f(kf.constant(X))


def test_slice_gradients_lower():
    """StridedSliceGrad (the gradient of `x[...]`, also of a read element's slices)."""
    def grads(x, i):
        with kf.GradientTape() as tape:
            tape.watch(x)
            y = kf.reduce_sum(x[1:, ::-1] ** 2) + kf.reduce_sum(x[..., -1]) + \
                kf.reduce_sum(x[i, 1:i + 2] * 3.0) + x[-1, 0, 2]
        return tape.gradient(y, x)
    _agree(grads, kf.constant(X[:3]), kf.constant(1))


def test_autoclustered_loop_history_reaches_the_python_while_grad(monkeypatch):
    """A While compiled in a cluster records its states for a WhileGrad the Python runtime
    runs: numba boxes the scalar counter as a Python int, which the WhileGrad could not
    use ('int' object has no attribute 'size'); the cluster now gives NumPy values."""
    monkeypatch.setenv("KF_JIT_MIN_CLUSTER_SIZE", "1")
    x = kf.constant(RNG.randn(2, 4, 3))
    w = kf.Variable(RNG.randn(3, 2) * 0.5)

    def loss_and_grads(t):
        with kf.GradientTape() as tape:
            tape.watch(t)
            ta = kf.TensorArray(kf.float64, size=4, element_shape=[2, 2])
            h = kf.zeros([2, 2], kf.float64)
            for i in kf.range(4):
                h = kf.tanh(kf.matmul(t[:, i], w) + h)
                ta = ta.write(i, h)
            loss = kf.reduce_sum(ta.stack() * 0.5)
        return [loss] + tape.gradient(loss, [t, w])
    before = kf.config.optimizer.get_jit()
    kf.config.optimizer.set_jit(False)
    want = kf.function(loss_and_grads)(x)
    kf.config.optimizer.set_jit("autoclustering")
    try:
        f = kf.function(loss_and_grads)
        got = f(x)
        graph = f.get_concrete_function(x).graph
    finally:
        kf.config.optimizer.set_jit(before)
    clusters = [op.attrs["cluster"] for op in graph.operations if op.type == "JitCluster"]
    assert any(o.type == "StatelessWhile" for c in clusters for o in c.operations)
    assert all(c.compiled for c in clusters)
    assert "WhileGrad" in [op.type for op in graph.operations]  # left to Python
    for g, w_ in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w_.numpy(), rtol=1e-12)


def test_a_write_past_a_fixed_size_raises_in_compiled_loops_too():
    """The compiled write checks its index as the Python kernel does (no write past the
    buffer's end, which compiled code would not catch by itself)."""
    pytest.importorskip("numba")

    def fill(n):
        ta = kf.TensorArray(kf.float32, size=2)
        for i in kf.range(n):
            ta = ta.write(i, kf.cast(i, kf.float32))
        return ta.stack()
    compiled = kf.function(fill, jit_compile=True)
    np.testing.assert_array_equal(compiled(kf.constant(2)).numpy(), [0.0, 1.0])
    for f in (kf.function(fill), compiled):
        with pytest.raises(errors.InvalidArgumentError, match="size"):
            f(kf.constant(3))
