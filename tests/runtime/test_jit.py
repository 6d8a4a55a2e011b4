"""kf.function(jit_compile=True): the numba backend (kilnflow/runtime/jit).

Differential: jit == non-jit @kf.function == eager on loops, branches, fused groups,
reductions and a train step with variables; TF's rule that the whole function must compile
(one error listing every unsupported op with the user's line); the error naming the `fast`
extra without numba; the generated source through experimental_get_compiler_ir; one compile
for every batch size; the configurable disk cache.
"""
from __future__ import annotations

import hashlib
import os
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.runtime import jit
from kilnflow.runtime.jit import cache

pytest.importorskip("numba")


def _both(fn, *args):
    """(jit result, non-jit function result, eager result) as NumPy values."""
    got = kf.function(fn, jit_compile=True)(*args)
    graph = kf.function(fn)(*args)
    eager = fn(*args)
    return [np.asarray(v) for v in (got, graph, eager)]


def accumulate(n):
    s = kf.constant(0.0)
    for i in range(n):
        s = s * 0.5 + kf.cast(i, kf.float32)
    return s


def newton_sqrt(a):
    x = a
    while kf.reduce_max(kf.abs(x * x - a) / a) > 1e-6:
        x = 0.5 * (x + a / x)
    return x


def test_tensor_for_loop_becomes_a_native_loop():
    got, graph, eager = _both(accumulate, kf.constant(1000))
    assert got.dtype == np.float32 and got.shape == ()
    assert got == graph == eager
    source = kf.function(accumulate, jit_compile=True).experimental_get_compiler_ir(
        kf.constant(3))()
    assert "@numba.njit" in source and "while True:" in source


def test_while_with_a_fused_reduction_in_its_condition():
    a = kf.constant(np.linspace(1.0, 1000.0, 300).astype(np.float32))
    got, graph, eager = _both(newton_sqrt, a)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, graph)
    np.testing.assert_allclose(got, eager, rtol=1e-6)


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_int32_arithmetic_wraps_as_numpy_does():
    def f(x):
        for _ in kf.range(3):
            x = x * 65536 + 7
        return x
    got, graph, eager = _both(f, kf.constant(3, kf.int32))
    assert got.dtype == np.int32 and got == graph == eager


def test_cond_and_elementwise_groups():
    def f(x, flag):
        if flag > 0:
            y = kf.tanh(x) * 2.0 + kf.reduce_sum(x, axis=0)
        else:
            y = kf.exp(-x)
        return y, kf.reduce_mean(y, axis=1, keepdims=True), kf.reduce_max(y)
    x = kf.constant(np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32))
    for flag in (1, -1):
        results = [kf.function(f, jit_compile=True)(x, kf.constant(flag)),
                   kf.function(f)(x, kf.constant(flag)), f(x, kf.constant(flag))]
        for got, *others in zip(*results):
            for other in others:
                assert got.dtype == other.dtype and got.shape == other.shape
                np.testing.assert_allclose(got.numpy(), other.numpy(), rtol=2e-6, atol=1e-6)


def test_train_step_updates_variables_as_the_python_runtime():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((6, 3)).astype(np.float32)
    x = kf.constant(rng.standard_normal((8, 6)).astype(np.float32))
    y = kf.constant(rng.integers(0, 3, 8).astype(np.int32))

    def make():
        w, b = kf.Variable(w0.copy()), kf.Variable(np.zeros(3, np.float32))

        def step(x, y):
            with kf.GradientTape() as tape:
                logits = kf.matmul(x, w) + b
                loss = kf.reduce_mean(kf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=logits))
            for v, g in zip((w, b), tape.gradient(loss, [w, b])):
                v.assign_sub(0.1 * g)
            return loss
        return step, w, b

    jit_step, jw, jb = make()
    py_step, pw, pb = make()
    jit_step, py_step = kf.function(jit_step, jit_compile=True), kf.function(py_step)
    for _ in range(3):
        np.testing.assert_allclose(jit_step(x, y).numpy(), py_step(x, y).numpy(), rtol=1e-5)
    np.testing.assert_allclose(jw.numpy(), pw.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jb.numpy(), pb.numpy(), rtol=1e-5, atol=1e-6)


def test_unsupported_ops_are_all_listed_with_the_users_line():
    def f(x):
        a = kf.sort(x)  # line A
        b = kf.math.top_k(x, 2)[0]  # line B
        return a[:2] + b
    with pytest.raises(errors.InvalidArgumentError) as info:
        kf.function(f, jit_compile=True)(kf.constant([3.0, 1.0, 2.0]))
    message = str(info.value)
    assert "jit_compile=True" in message and "TopKV2" in message
    assert message.count("test_jit.py:") >= 2, message
    # without the flag the same function runs on the Python runtime
    np.testing.assert_allclose(kf.function(f)(kf.constant([3.0, 1.0, 2.0])).numpy(),
                               [4.0, 4.0])


def test_without_numba_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # `import numba` now fails
    with pytest.raises(ImportError, match="fast"):
        kf.function(lambda x: x + 1.0, jit_compile=True)(kf.constant([1.0]))
    assert not jit.available()
    # nothing else changes
    assert kf.function(lambda x: x + 1.0)(kf.constant([1.0])).numpy().tolist() == [2.0]


def test_a_new_batch_size_reuses_the_compiled_code():
    f = kf.function(lambda x: kf.tanh(x) * 3.0 + 1.0, jit_compile=True)
    small, large = kf.constant(np.ones(4, np.float32)), kf.constant(np.ones(9, np.float32))
    np.testing.assert_allclose(f(small).numpy(), np.tanh(1.0) * 3 + 1, rtol=1e-6)
    np.testing.assert_allclose(f(large).numpy(), np.tanh(np.ones(9)) * 3 + 1, rtol=1e-6)
    first, second = f.traced_concrete_functions()
    assert first._fn.dispatcher is second._fn.dispatcher  # one module: numba's one compile
    assert len(first._fn.dispatcher.signatures) == 1


def test_cache_directory_is_configurable_and_clearable(tmp_path):
    cache.set_cache_dir(str(tmp_path))
    try:
        f = kf.function(lambda x: x * 2.0 - 1.0, jit_compile=True)
        assert f(kf.constant([1.0, 2.0])).numpy().tolist() == [1.0, 3.0]
        files = os.listdir(tmp_path)
        assert any(n.startswith("kf_jit_") and n.endswith(".py") for n in files), files
        cache.clear_cache()
        assert not os.path.exists(tmp_path) or not os.listdir(tmp_path)
    finally:
        cache.set_cache_dir(None)


def test_a_changed_backend_helper_does_not_reuse_old_machine_code(tmp_path, monkeypatch):
    """numba's disk cache does not see a change in a helper that compiled code inlined, so
    the module name (the cache key) covers the backend's own files: after an upgrade that
    changes a helper, the same graph compiles afresh."""
    source = "import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n"
    cache.set_cache_dir(str(tmp_path))
    try:
        first = cache.load(source)
        cache.forget_modules()
        monkeypatch.setitem(cache._state, "fingerprint", "a different helpers.py")
        second = cache.load(source)
        assert first.__name__ != second.__name__
        assert len([n for n in os.listdir(tmp_path) if n.endswith(".py")]) == 2
    finally:
        cache.set_cache_dir(None)


def test_the_backend_fingerprint_covers_the_helpers_compiled_code_calls():
    from kilnflow.runtime.jit import helpers
    folder = os.path.dirname(helpers.__file__)
    digest = hashlib.sha256()
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".py")):
        with open(os.path.join(folder, name), "rb") as f:
            digest.update(name.encode() + b"\0" + f.read() + b"\0")
    assert "helpers.py" in os.listdir(folder)
    assert cache.backend_fingerprint() == digest.hexdigest()


def test_fused_float32_tanh_is_accurate_everywhere():
    """The fused loops' vectorizable tanh: within 4e-7 relative of float64 tanh."""
    x = np.concatenate([np.linspace(-12, 12, 200001), [0.0, 1e-30, -1e-8, 3e-4, 50.0, -np.inf,
                                                       np.inf]]).astype(np.float32)
    x = np.append(x, np.float32(np.nan))
    f = kf.function(lambda t: kf.tanh(t) * 2.0, jit_compile=True)
    got = f(kf.constant(x)).numpy()
    want = np.tanh(x.astype(np.float64)) * 2.0
    assert "tanh_f32" in f.experimental_get_compiler_ir(kf.constant(x))()
    np.testing.assert_allclose(got, want, rtol=4e-7, atol=1e-30)


def test_fused_float32_tanh_contracts_its_multiply_adds_only():
    """GELU's loop is compute-bound on tanh: its polynomial may use FMAs (LLVM's per-
    instruction `contract` flag), while the ops of the loop around it keep their own
    roundings (the Python runtime's bits)."""
    numba = pytest.importorskip("numba")
    from kilnflow.runtime.jit import helpers
    x = kf.constant(np.linspace(-3, 3, 64, dtype=np.float32))
    f = kf.function(lambda t: kf.tanh(t * 2.0) + t * 3.0, jit_compile=True)
    f(x)
    options = dict(helpers.tanh_f32.targetoptions, cache=False)  # the cache keeps no IR
    options.pop("nopython", None)
    fresh = numba.njit(**options)(helpers.tanh_f32.py_func)
    fresh(np.float32(0.5))
    tanh_ir = "".join(fresh.inspect_llvm().values())
    assert "fmul contract" in tanh_ir and "fadd contract" in tanh_ir
    got = f(x).numpy()
    want = np.tanh(x.numpy().astype(np.float64) * 2.0) + x.numpy().astype(np.float64) * 3.0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_variable_writes_keep_program_order_inside_loops():
    def make():
        v, count = kf.Variable([1.0, 2.0]), kf.Variable(0)

        def f(x):
            before = v.read_value()
            v.assign(x * 2.0)
            count.assign_add(1)
            for _ in kf.range(3):
                v.assign_add(v)
            return before, v.read_value(), count.read_value()
        return f, v, count
    (jit_f, jv, jc), (py_f, pv, pc) = make(), make()
    jit_f, py_f = kf.function(jit_f, jit_compile=True), kf.function(py_f)
    for _ in range(2):
        x = kf.constant([1.0, -1.0])
        for got, want in zip(jit_f(x), py_f(x)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(jv.numpy(), pv.numpy())
    assert jc.numpy() == pc.numpy() == 2


def test_bad_values_at_run_time_raise_invalid_argument():
    f = kf.function(lambda logits, labels: kf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits), jit_compile=True)
    logits = kf.constant(np.zeros((2, 3), np.float32))
    assert f(logits, kf.constant([0, 2])).shape == (2,)
    with pytest.raises(errors.InvalidArgumentError, match="out of range"):
        f(logits, kf.constant([0, 3]))


def test_in_place_updates_never_change_a_value_someone_holds():
    v = kf.Variable(np.ones(4, np.float32))

    @kf.function(jit_compile=True)
    def step(g):
        seen = v.read_value()
        v.assign_sub(g)
        return seen

    held = v.read_value()  # the caller holds the array: the update must not write into it
    returned = step(kf.constant(np.ones(4, np.float32)))
    np.testing.assert_array_equal(held.numpy(), np.ones(4))
    np.testing.assert_array_equal(returned.numpy(), np.ones(4))  # read before the update
    np.testing.assert_array_equal(v.numpy(), np.zeros(4))
    del held, returned
    step(kf.constant(np.ones(4, np.float32)))
    np.testing.assert_array_equal(v.numpy(), -np.ones(4))


def test_erf_and_exact_gelu_lower_through_numbas_math():
    x = kf.constant(np.linspace(-3, 3, 101).astype(np.float32))
    got, graph, eager = _both(lambda t: kf.nn.gelu(t, approximate=False), x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, eager)
    source = kf.function(lambda t: kf.math.erf(t), jit_compile=True).experimental_get_compiler_ir(
        x)()
    assert "kf_helpers.erf(" in source


def test_large_elementwise_loops_use_the_threads_kf_config_sets():
    """From 1M elements a fused loop has a prange variant; it runs with
    kf.config.threading's intra-op count (numba's pool follows it) and gives the serial
    loop's values exactly."""
    numba = pytest.importorskip("numba")
    x = kf.constant(np.linspace(-3, 3, 1 << 20).astype(np.float32))
    f = kf.function(lambda t: kf.tanh(t * 0.5) * t + 1.0, jit_compile=True)
    assert "prange(" in f.experimental_get_compiler_ir(x)()
    before = kf.config.threading.get_intra_op_parallelism_threads()
    try:
        kf.config.threading.set_intra_op_parallelism_threads(1)
        serial = f(x).numpy()
        assert numba.get_num_threads() == 1
        kf.config.threading.set_intra_op_parallelism_threads(2)
        parallel = f(x).numpy()
        assert numba.get_num_threads() == min(2, numba.config.NUMBA_NUM_THREADS)
    finally:
        kf.config.threading.set_intra_op_parallelism_threads(before)
    np.testing.assert_array_equal(serial, parallel)


def test_sgd_update_is_one_loop_with_the_python_runtimes_bits():
    """v.assign_sub(lr * g): the product is folded into the in-place update (no array for
    lr * g); values equal the Python runtime's bit for bit, in place or not."""
    rng = np.random.default_rng(4)
    start = rng.standard_normal((64, 33)).astype(np.float32)
    g = kf.constant(rng.standard_normal((64, 33)).astype(np.float32))
    results = []
    for jit_compile in (True, False):
        v = kf.Variable(start)

        def step(g):
            v.assign_sub(0.1 * g)
            v.assign_add(kf.constant(0.3) * (g * g))
            return kf.constant(0.0)
        f = kf.function(step, jit_compile=jit_compile)
        if jit_compile:
            # the second product is a two-step fused group (0.3 * g * g): left as it was
            assert f.experimental_get_compiler_ir(g)().count("kf_helpers.scaled_update(") == 1
        f(g)
        held = v.read_value()  # now the update may not write in place
        f(g)
        results.append((held.numpy(), v.numpy()))
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)


def test_reshape_to_a_shape_known_when_run_compiles():
    """DynamicReshape (a shape tensor of static length, one -1 allowed)."""
    def f(x, y):
        return kf.reshape(x, kf.concat([[-1], kf.shape(y)[1:]], 0)) * 2.0
    x = kf.constant(np.arange(12, dtype=np.float32))
    y = kf.zeros([5, 3, 2])
    jit = kf.function(f, jit_compile=True)
    np.testing.assert_array_equal(jit(x, y).numpy(), f(x, y).numpy())
    assert jit(x, y).shape == (2, 3, 2)
