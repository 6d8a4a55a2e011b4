"""fuse_elementwise and the FusedElementwise engine: what groups, what stays out, and that
the blocked, threaded evaluation agrees with the ops run one by one."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.ops import fused
from kilnflow.runtime import fused_engine as engine
from kilnflow.passes.fuse_elementwise import find_groups, fuse_elementwise
from kilnflow.passes.prune import prune
from tests.passes._helpers import check_same, compiled, interpret, op_types, trace

RNG = np.random.default_rng(11)
BIG = 100_000  # past engine.SMALL_ELEMENTS: blocks (made small below, so there are many)


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch):
    monkeypatch.setattr(engine, "CACHE_BYTES", 1 << 16)


def gelu(x):
    return 0.5 * x * (1.0 + kf.tanh(0.7978845608 * (x + 0.044715 * (x * x * x))))


def _fuse(fn, *specs):
    graph = trace(fn, *specs)
    return graph, prune(fuse_elementwise(graph))


def test_gelu_becomes_one_op_whose_code_is_the_block_function():
    graph, after = _fuse(gelu, kf.TensorSpec([None], kf.float32))
    assert after.pretty() == "\n".join([
        "x:0 = Placeholder(dtype=float32, shape=TensorShape([None]))",
        "Const:0 = Const(value=0.5)",
        "Const_1:0 = Const(value=0.044715)",
        "Const_2:0 = Const(value=0.7978846)",
        "Const_3:0 = Const(value=1.)",
        "mul_5:0 = FusedElementwise(Const:0, x:0, Const_1:0, Const_2:0, Const_3:0, into=None, "
        "program='t0 = a0 * a1; t1 = a1 * a1; t2 = t1 * a1; t3 = a2 * t2; t4 = a1 + t3; "
        "t5 = a3 * t4; t6 = np.tanh(t5); t7 = a4 + t6; t8 = t0 * t7')"])
    for n in (0, 1, 7, BIG + 3):
        check_same(graph, after, [RNG.normal(size=n).astype(np.float32)], exact=False)
    code = kf.function(gelu).get_concrete_function(kf.TensorSpec([None], kf.float32)).code
    assert "np.tanh(s1, out=s1)" in code and "fused_run(" in code


def test_broadcast_rows_casts_and_a_final_reduction_fuse_together():
    def f(x, b):
        h = kf.maximum(x * 2.0 + b, 0.0)
        return kf.reduce_sum(kf.cast(h > 1.0, kf.float32) * h, axis=0)

    graph, after = _fuse(f, kf.TensorSpec([None, 64], kf.float32),
                         kf.TensorSpec([64], kf.float32))
    assert op_types(after).count("FusedElementwise") == 1
    assert "Sum" not in op_types(after) and "Cast" not in op_types(after)
    for rows in (1, 5, BIG // 64 + 1):  # float32 sums in another order: a looser tolerance
        check_same(graph, after, [RNG.normal(size=(rows, 64)).astype(np.float32),
                                  RNG.normal(size=64).astype(np.float32)], exact=False,
                   rtol=3e-5)


@pytest.mark.parametrize("reduce,axis,keepdims", [
    (kf.reduce_sum, None, False), (kf.reduce_sum, 1, True), (kf.reduce_mean, 0, False),
    (kf.reduce_max, (0, 1), True), (kf.reduce_min, 1, False), (kf.reduce_mean, None, True)])
def test_every_reduction_shape_agrees(reduce, axis, keepdims):
    def f(x):
        return reduce(kf.exp(x) - 1.0, axis=axis, keepdims=keepdims)

    graph, after = _fuse(f, kf.TensorSpec([None, 96], kf.float32))
    assert op_types(after) == ["Placeholder", "Const", "FusedElementwise"]
    for rows in (3, BIG // 96):
        x = RNG.normal(size=(rows, 96)).astype(np.float32)
        check_same(graph, after, [x], exact=False, rtol=3e-5)
        check_same(graph, after, [np.asfortranarray(x)], exact=False, rtol=3e-5)  # strided


def test_integer_and_bool_groups_are_exact():
    def f(i, j):
        k = (i * 3 + j) ^ kf.bitwise.right_shift(j, 1)
        return kf.reduce_any(k > 7), kf.reduce_sum(k, axis=None)

    graph, after = _fuse(f, kf.TensorSpec([None], kf.int32), kf.TensorSpec([None], kf.int32))
    assert op_types(after).count("FusedElementwise") == 2
    i = RNG.integers(-1000, 1000, size=BIG).astype(np.int32)
    check_same(graph, after, [i, i[::-1].copy()], exact=True)


def test_what_stays_out_of_groups():
    v = kf.Variable(np.ones(4, np.float32))

    def f(x):
        a = kf.exp(x) + 1.0                  # read by a matmul too: a group root
        m = kf.matmul(kf.reshape(a, [1, 4]), kf.ones([4, 1]))
        noisy = x * kf.random.uniform([4])   # the draw is an input, never a member
        read = v.read_value() * 2.0          # the read is an input, never a member
        kf.print(read)                       # read by a print: a root
        out = a * 3.0                        # a graph output: a root
        return out, out * 2.0 + m, noisy + read

    graph = trace(f, kf.TensorSpec([4], kf.float32))
    groups = find_groups(graph)
    roots = sorted(g.root.name for g in groups)
    assert roots == ["add", "add_1", "add_2", "mul_3"] or len(roots) >= 3
    for g in groups:
        assert all(not m.opdef.stateful for m in g.members)
    after = prune(fuse_elementwise(graph))
    assert "RandomUniform" in op_types(after) and "PrintV2" in op_types(after)
    assert "ReadVariableOp" in op_types(after) and "MatMul" in op_types(after)
    after.lint()


def test_ops_with_control_inputs_or_waited_for_are_not_members():
    def f(x):
        y = kf.exp(x)
        with kf.control_dependencies([y]):
            z = kf.sin(x) * 2.0
        return (y + 1.0) * z

    graph = trace(f, kf.TensorSpec([3], kf.float32))
    after = prune(fuse_elementwise(graph))
    assert "Exp" in op_types(after) and "Mul" in op_types(after)
    check_same(graph, after, [np.array([0.1, 0.2, 0.3], np.float32)], exact=False)


def test_small_static_groups_are_one_numpy_expression():
    concrete = kf.function(lambda x: (x * 2.0 + 1.0) * x).get_concrete_function(
        kf.TensorSpec([3], kf.float32))
    assert "def block" not in concrete.code
    assert "mul_1 = ((x * c_Const) + c_Const_1) * x" in concrete.code
    np.testing.assert_allclose(concrete(np.array([1, 2, 3], np.float32)).numpy(), [3, 10, 21])


def test_shared_intermediates_are_computed_once_and_stay_in_the_group():
    def f(x):
        y = x * x
        return kf.sin(y) + y * 0.5

    graph, after = _fuse(f, kf.TensorSpec([None], kf.float32))
    (op,) = [op for op in after.operations if op.type == "FusedElementwise"]
    assert str(op.attrs["program"]).count("a0 * a0") == 1
    check_same(graph, after, [RNG.normal(size=BIG).astype(np.float32)], exact=False)


# ---------------------------------------------------------------- the engine itself

def _program(template_ops, dtypes, reduce=None):
    builder = fused.ProgramBuilder()
    refs = [builder.input(i, d) for i, d in enumerate(dtypes)]
    ref = None
    for template, args in template_ops:
        ref = builder.add_op(template, [refs[a] if isinstance(a, int) else a for a in args],
                             {}, np.float32)
        refs.append(ref)
    program, keys = builder.build(ref, reduce, np.float32, True)
    return program


def test_engine_writes_into_a_usable_buffer_and_allocates_otherwise():
    program = _program([("({0} * {1})", [0, 1]), ("tanh({0})", [2])], [np.float32] * 2)
    a = RNG.normal(size=BIG).astype(np.float32)
    b = RNG.normal(size=BIG).astype(np.float32)
    want = np.tanh(a * b)
    buffer = np.empty_like(a)
    got = engine.run(program.compiled(), program, [a, b], buffer)
    assert got is buffer
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got = engine.run(program.compiled(), program, [a, b], buffer[:-1])  # wrong size
    assert got is not buffer and got.shape == a.shape
    in_place = a.copy()
    got = engine.run(program.compiled(), program, [in_place, b], in_place)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_engine_threads_and_blocks_match_one_call():
    program = _program([("({0} + {1})", [0, 1]), ("exp({0})", [2])], [np.float32] * 2)
    a = RNG.normal(size=(BIG // 50, 50)).astype(np.float32)
    b = RNG.normal(size=(50,)).astype(np.float32)
    want = np.exp(a + b)
    for threads in (1, 2, 3):
        engine.set_num_threads(threads)
        try:
            np.testing.assert_allclose(engine.run(program.compiled(), program, [a, b]), want,
                                       rtol=1e-6)
            np.testing.assert_allclose(engine.run(program.compiled(), program, [a.T, b[:, None]]),
                                       want.T, rtol=1e-6)
        finally:
            engine.set_num_threads(engine.default_num_threads())


@pytest.mark.parametrize("cache_bytes", [1 << 16, 1 << 24])  # blocks of rows; one call
@pytest.mark.parametrize("shapes", [((40, 400, 1), (1, 1, 8)), ((BIG // 3, 1), (3,)),
                                    ((3, 1000, 1), (1000, 16)), ((7, 30, 9), (9,))])
def test_a_short_broadcast_last_axis_runs_one_call_per_index(monkeypatch, cache_bytes,
                                                             shapes):
    """Like seed 001's bit unpacking: [B, 400, 1] against [1, 1, 8] would give NumPy an
    inner loop of 8; the engine loops over the 8 itself, with the same results."""
    monkeypatch.setattr(engine, "CACHE_BYTES", cache_bytes)
    calls = []
    by_index = engine._by_last_index
    monkeypatch.setattr(engine, "_by_last_index", lambda *a: calls.append(1) or by_index(*a))
    program = _program([("({0} * {1})", [0, 1]), ("tanh({0})", [2])], [np.float32] * 2)
    a, b = (RNG.normal(size=s).astype(np.float32) for s in shapes)
    np.testing.assert_allclose(engine.run(program.compiled(), program, [a, b]),
                               np.tanh(a * b), rtol=1e-6)
    broadcast = any(x.shape[-1] == 1 for x in (a, b))
    assert bool(calls) == broadcast


def test_untranslatable_templates_are_refused():
    builder = fused.ProgramBuilder()
    x = builder.input(0, np.float32)
    assert builder.add_op("frobnicate({0})", [x], {}, np.float32) is None
    assert builder.add_op("({0} +", [x], {}, np.float32) is None
    assert builder.add_op("({0} > 0)", [x], {}, np.float32) is None   # bool, not float32
    assert builder.steps == []


def test_the_numba_backend_matches_the_numpy_blocks_bitwise():
    pytest.importorskip("numba")
    builder = fused.ProgramBuilder()
    x, c = builder.input(0, np.float32), builder.input(1, np.float32)
    y = builder.add_op("({0} * {1})", [x, c], {}, np.float32)
    y = builder.add_op("({0} + {1})", [y, ("lit", 0.25)], {}, np.float32)
    y = builder.add_op("maximum({0}, {1})", [y, x], {}, np.float32)
    program, _ = builder.build(y, None, np.float32, True)
    assert "numba.prange" in engine.numba_source(program, [True, False])
    a = RNG.normal(size=engine.NUMBA_MIN_ELEMENTS + 5).astype(np.float32)
    a[::7] = np.nan
    k = np.array(1.5, np.float32)
    fast = engine.run(program.compiled(), program, [a, k])
    engine.set_backend("numpy")
    try:
        slow = engine.run(program.compiled(), program, [a, k])
    finally:
        engine.set_backend("auto")
    np.testing.assert_array_equal(fast, slow)
    assert engine.numba_source(_program([("tanh({0})", [0])], [np.float32]), [True]) is None


def test_the_buffer_pool_reuses_only_what_nobody_holds():
    pool = engine.BufferPool(min_bytes=1024, max_free_bytes=8 * 4096, max_entries=4)
    a = pool.take((1024,), np.dtype(np.float32))
    a[:] = 1.0
    view = a[::2]
    del a
    b = pool.take((1024,), np.dtype(np.float32))      # the first is still seen by `view`
    assert not np.shares_memory(b, view)
    base = id(b.base)                                 # (holding the base would keep it)
    del b
    c = pool.take((32, 32), np.dtype(np.float32))     # same bytes, nobody holds it: reused
    assert id(c.base) == base and c.shape == (32, 32)
    kept = [pool.take((256,), np.dtype(np.float64)) for _ in range(10)]
    assert len(pool._bases) <= 4 + 1                  # held results are forgotten, not scanned
    assert all(k.shape == (256,) for k in kept)
    assert pool.take((8,), np.dtype(np.float32)).base is None   # small: plain np.empty
