"""The code-generating runtime: generated source agrees with the node-by-node interpreter,
frees dead intermediates with `del`, never deletes outputs, and is registered in linecache."""
import ast
import linecache
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.runtime import codegen, loader
from kilnflow.runtime.interpreter import evaluate

v1 = kf.compat.v1


def _check_liveness(source, params):
    """Walk the straight-line body: every name read is live, `del` only frees assigned,
    live, non-returned names, and every assigned intermediate is freed or returned."""
    fn = ast.parse(source).body[0]
    if len(fn.body) == 1 and isinstance(fn.body[0], ast.With):  # errstate around the body
        fn.body = fn.body[0].body
    returned = {n.id for n in ast.walk(fn.body[-1]) if isinstance(n, ast.Name)}
    assert isinstance(fn.body[-1], ast.Return)
    live = set(params)
    # names bound somewhere in the body; anything else read is a module global (a kernel,
    # a ufunc, a constant)
    assigned_anywhere = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)}
    assigned = set()
    deleted = set()
    for stmt in fn.body[:-1]:
        if isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                name = target.id
                assert name in live, f"del of dead name {name}"
                assert name not in returned, f"output {name} deleted"
                live.discard(name)
                deleted.add(name)
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id not in assigned_anywhere and node.id not in params:
                    continue
                assert node.id in live, f"{node.id} read after del / before assignment"
        targets = stmt.targets if isinstance(stmt, ast.Assign) else []
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    live.add(node.id)
                    assigned.add(node.id)
    leaked = (assigned - deleted) - returned
    assert not leaked, f"intermediates never freed: {sorted(leaked)}"
    return deleted, returned


def _compare_with_interpreter(concrete, arrays, rtol=0.0):
    graph = concrete.graph
    graph.lint()
    generated = concrete(*arrays)
    flat_generated = [t.numpy() for t in kf.nest.flatten(generated)
                      if isinstance(t, kf.Tensor)]
    interpreted = evaluate(graph.operations, graph.inputs, graph.outputs, list(arrays))
    assert len(flat_generated) == len(interpreted)
    for got, want in zip(flat_generated, interpreted):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=rtol)
    return flat_generated


def _mlp(x, w1, w2):
    hidden = kf.tanh(kf.matmul(x, w1))
    logits = kf.matmul(hidden, w2)
    return kf.reduce_mean(logits, axis=1, keepdims=True), kf.reduce_max(hidden)


def _reuse(x, y):
    a = x * y
    b = a + x          # a is an output AND used later: must stay alive
    c = kf.exp(b) - a
    return a, c, b, b, x


def _shapes(x):
    parts = kf.split(x, 2, axis=1)
    joined = kf.concat([parts[1], parts[0]], axis=0)
    return kf.transpose(kf.reshape(joined, [2, -1])), parts[1][0]


def _where(x, y):
    return kf.where(x > y, x, y * 2.0), kf.cast(x, kf.int32), kf.maximum(x, 0.5)


def _gradient(x, w):
    with kf.GradientTape() as tape:
        tape.watch(x)
        loss = kf.reduce_sum(kf.sigmoid(kf.matmul(x, w)) ** 2)
    return loss, tape.gradient(loss, x)


RNG = np.random.default_rng(0)
CASES = [
    ("mlp", _mlp, [RNG.normal(size=(3, 4)), RNG.normal(size=(4, 5)), RNG.normal(size=(5, 2))]),
    ("reuse", _reuse, [RNG.normal(size=(2, 3)), RNG.normal(size=(1, 3))]),
    ("shapes", _shapes, [RNG.normal(size=(2, 4)).astype(np.float32)]),
    ("where", _where, [RNG.normal(size=(4,)).astype(np.float32),
                       RNG.normal(size=(4,)).astype(np.float32)]),
    ("gradient", _gradient, [RNG.normal(size=(3, 2)), RNG.normal(size=(2, 2))]),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_generated_code_matches_the_interpreter(name, fn, arrays):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        concrete = kf.function(fn).get_concrete_function(*[kf.constant(a) for a in arrays])
    _compare_with_interpreter(concrete, arrays)
    params = [line.strip() for line in concrete.code.split("(", 1)[1].split(")", 1)[0]
              .split(",") if line.strip()]
    _check_liveness(concrete.code, params)


def test_outputs_used_later_are_kept_and_returned_twice():
    concrete = kf.function(_reuse).get_concrete_function(kf.constant(np.ones((2, 3))),
                                                         kf.constant(np.ones((1, 3))))
    deleted, returned = _check_liveness(concrete.code, ["x", "y"])
    assert "mul" in returned and "mul" not in deleted
    a, c, b1, b2, x = concrete(np.ones((2, 3)), np.full((1, 3), 2.0))
    np.testing.assert_array_equal(a.numpy(), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(b1.numpy(), b2.numpy())
    np.testing.assert_array_equal(x.numpy(), np.ones((2, 3)))


def test_dead_intermediates_are_deleted():
    @kf.function
    def chain(x, w):
        y = x
        for _ in range(5):  # matmul/transpose do not fuse: one statement each
            y = kf.transpose(kf.matmul(y, w))
        return y

    concrete = chain.get_concrete_function(kf.TensorSpec([3, 3], kf.float32),
                                           kf.TensorSpec([3, 3], kf.float32))
    deleted, returned = _check_liveness(concrete.code, ["x", "w"])
    assert len(deleted) >= 5
    assert concrete.code.count("\n    del ") >= 5
    x = np.linspace(-1, 1, 9).astype(np.float32).reshape(3, 3)
    w = np.eye(3, dtype=np.float32)[::-1] * 0.5
    _compare_with_interpreter(concrete, [x, w])


def test_stateful_graph_agrees_with_the_interpreter():
    v = kf.Variable([1.0, 2.0])

    @kf.function
    def step(delta):
        v.assign_add(delta)
        before = v.read_value()
        v.assign(before * 3.0)
        return before, v.read_value()

    concrete = step.get_concrete_function(kf.TensorSpec([2], kf.float32))
    delta = np.array([0.5, 0.5], np.float32)
    generated = [t.numpy() for t in concrete(delta)]
    after_generated = v.numpy().copy()
    v.assign([1.0, 2.0])
    graph = concrete.graph
    interpreted = evaluate(graph.operations, graph.inputs, graph.outputs, [delta])
    for got, want in zip(generated, interpreted):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(v.numpy(), after_generated)
    np.testing.assert_array_equal(after_generated, [4.5, 7.5])


def test_codegen_on_a_compat_v1_graph():
    g = kf.Graph()
    with g.as_default():
        x = v1.placeholder(kf.float32, (None, 3), name="x")
        h = kf.nn.relu(x) if hasattr(kf, "nn") else kf.maximum(x, 0.0)
        total = kf.reduce_sum(h * h, axis=0)
        dead = kf.exp(total)  # not fetched, still emitted by codegen.generate itself
    ops = g.get_operations()
    source, globals_, origins = codegen.generate("probe", ops, [x], [total])
    fn = loader.load(source, globals_, "probe")
    value = np.array([[1.0, -2.0, 3.0], [-1.0, 2.0, 0.5]], np.float32)
    (got,) = fn(value)
    (want,) = evaluate(ops, [x], [total], [value])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, (np.maximum(value, 0) ** 2).sum(axis=0))
    assert dead.op in origins.values()
    _check_liveness(source, ["x"])


def test_generated_source_is_in_linecache_and_maps_lines_to_ops():
    @kf.function
    def f(x):
        return kf.sqrt(kf.abs(x)) + 1.0

    concrete = f.get_concrete_function(kf.TensorSpec([3], kf.float32))
    filename = concrete._fn.__code__.co_filename
    assert filename.startswith("<kilnflow-generated")
    assert "".join(linecache.getlines(filename)) == concrete.code
    lines = concrete.code.splitlines()
    for lineno, op in concrete._origins.items():
        line = lines[lineno - 1].strip()
        assert not line.startswith(("del ", "return ", "def ")), line
        assert " = " in line
    computed = {id(op) for op in concrete.graph.operations
                if op.type not in ("Const", "Placeholder")}
    assert {id(op) for op in concrete._origins.values()} == computed


def test_interpreter_and_codegen_agree_on_a_session_graph_with_feeds():
    g = kf.Graph()
    with g.as_default():
        a = v1.placeholder(kf.float64, (2, 2), name="a")
        b = v1.placeholder(kf.float64, (2,), name="b")
        out = kf.matmul(a, kf.reshape(b, [2, 1])) + kf.reduce_min(a)
    value_a = np.array([[1.0, 2.0], [3.0, 4.0]])
    value_b = np.array([0.5, -1.0])
    with v1.Session(graph=g) as sess:
        got = sess.run(out, {a: value_a, b: value_b})
    (want,) = evaluate(g.get_operations(), [a, b], [out], [value_a, value_b])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False),
                                                      (False, True), (True, True)])
def test_matmul_of_known_ranks_and_integer_indexing_are_inline_expressions(transpose_a,
                                                                            transpose_b):
    @kf.function
    def step(x, w, i):
        return kf.matmul(x[i], w, transpose_a=transpose_a, transpose_b=transpose_b), x[1, 0]

    x = np.arange(2 * 3 * 3, dtype=np.float32).reshape(2, 3, 3)
    w = np.linspace(-1, 1, 9).astype(np.float32).reshape(3, 3)
    concrete = step.get_concrete_function(x, w, kf.constant(1))
    code = concrete.code
    assert "k_MatMul" not in code and "k_StridedSlice" not in code
    assert "x[i]" in code and "x[1, 0]" in code
    assert (".mT @" in code) == transpose_a and ("@ w.mT" in code) == transpose_b
    product, row = concrete(x, w, kf.constant(1))
    a, b = (x[1].T if transpose_a else x[1]), (w.T if transpose_b else w)
    np.testing.assert_allclose(product.numpy(), a @ b, rtol=1e-6)
    np.testing.assert_array_equal(row.numpy(), x[1, 0])


def test_matmul_of_unknown_rank_keeps_its_kernel_and_its_rank_check():
    @kf.function(input_signature=[kf.TensorSpec(None, kf.float32)] * 2)
    def product(a, b):
        return kf.matmul(a, b)

    assert "k_MatMul(" in product.get_concrete_function().code
    with pytest.raises(kf.errors.InvalidArgumentError, match="rank"):
        product(np.ones(3, np.float32), np.ones(3, np.float32))
