"""Differential testing: random small programs must give the same results eagerly, under
@kf.function (exact input shapes, and an input_signature of unknown dims), through the
interpreter on the optimized graph, and in a compat.v1 Session; and the same gradients
eagerly, from a GradientTape inside a @kf.function, and from compat.v1.gradients.

Results are compared with a tight allclose rather than bitwise: graph passes (fusion,
simplification) may legitimately reassociate floating-point work. Today they agree bitwise.

A program is data: input shapes, then steps `(op, argument indices, attrs)` over the
values computed so far (inputs first). `Program.__repr__` prints it as Python, so a
shrunk counterexample reads as a short kf function. The generator tracks static shapes
itself, so every drawn program is valid; the shapes it predicts are checked too.
"""
import warnings
from dataclasses import dataclass
from typing import Tuple

import numpy as np
from hypothesis import given, note, settings
from hypothesis import strategies as st

import kilnflow as kf
from kilnflow.runtime.interpreter import evaluate

v1 = kf.compat.v1


# ---------------------------------------------------------------- the op table

UNARY = {
    "negative": kf.negative, "abs": kf.abs, "square": kf.square, "tanh": kf.tanh,
    "sin": kf.sin, "cos": kf.cos, "sigmoid": kf.sigmoid, "exp": kf.exp,
}
BINARY = {
    "add": kf.add, "subtract": kf.subtract, "multiply": kf.multiply, "divide": kf.divide,
    "maximum": kf.maximum, "minimum": kf.minimum,
    "squared_difference": kf.squared_difference,
}
OPERATORS = {"__add__": "+", "__sub__": "-", "__mul__": "*"}   # Python operator forms
REDUCTIONS = {
    "reduce_sum": kf.reduce_sum, "reduce_mean": kf.reduce_mean,
    "reduce_max": kf.reduce_max, "reduce_min": kf.reduce_min,
}
# Simplest kinds first: hypothesis shrinks sampled_from towards the front of the list.
# The structural ops come early too, so they are not starved.
KINDS = (["add", "negative", "matmul", "reduce_sum", "reshape", "transpose", "concat", "slice",
          "where", "cast"] + [k for k in BINARY if k != "add"] + list(OPERATORS)
         + [k for k in UNARY if k != "negative"] + [k for k in REDUCTIONS if k != "reduce_sum"])


@dataclass(frozen=True)
class Step:
    op: str
    args: Tuple[int, ...]
    attrs: Tuple[Tuple[str, object], ...] = ()

    def attr(self, name):
        return dict(self.attrs)[name]


@dataclass(frozen=True)
class Program:
    input_shapes: Tuple[Tuple[int, ...], ...]
    steps: Tuple[Step, ...]
    shapes: Tuple[Tuple[int, ...], ...]   # predicted shape of every value
    outputs: Tuple[int, ...]              # values no later step reads
    seed: int

    def inputs(self):
        rng = np.random.default_rng(self.seed)
        return [rng.uniform(-2.0, 2.0, size=s) for s in self.input_shapes]

    def __repr__(self):
        n = len(self.input_shapes)
        params = ", ".join(f"v{i}" for i in range(n))
        shapes = ", ".join(f"v{i}: {s}" for i, s in enumerate(self.input_shapes))
        lines = [f"def program({params}):  # float64 {shapes}; inputs seed {self.seed}"]
        for i, step in enumerate(self.steps):
            lines.append(f"    v{n + i} = {_code(step)}  # {self.shapes[n + i]}")
        lines.append(f"    return [{', '.join(f'v{i}' for i in self.outputs)}]")
        return "\n".join(lines)


def _code(step):
    a = [f"v{i}" for i in step.args]
    attrs = dict(step.attrs)
    if step.op in UNARY or step.op in BINARY or step.op in REDUCTIONS:
        extra = [f"{k}={v!r}" for k, v in step.attrs]
        return f"kf.{step.op}({', '.join(a + extra)})"
    if step.op in OPERATORS:
        return f"{a[0]} {OPERATORS[step.op]} {a[1]}"
    if step.op == "matmul":
        return f"kf.matmul({a[0]}, {a[1]}, transpose_b={attrs['transpose_b']})"
    if step.op == "reshape":
        return f"kf.reshape({a[0]}, {list(attrs['shape'])})"
    if step.op == "transpose":
        return f"kf.transpose({a[0]}, {list(attrs['perm'])})"
    if step.op == "concat":
        return f"kf.concat([{a[0]}, {a[1]}], axis={attrs['axis']})"
    if step.op == "slice":
        parts = ", ".join(f"{s}:{e}:{k}" for s, e, k in attrs["spec"])
        return f"{a[0]}[{parts}]"
    if step.op == "where":
        return f"kf.where({a[0]} > 0.0, {a[1]}, {a[2]})"
    if step.op == "cast":
        return f"kf.cast(kf.cast({a[0]}, kf.float32), kf.float64)"
    raise AssertionError(step.op)


def _apply(step, values):
    """Run one step with kf calls (works on eager and symbolic tensors alike)."""
    args = [values[i] for i in step.args]
    attrs = dict(step.attrs)
    if step.op in UNARY:
        return UNARY[step.op](args[0])
    if step.op in BINARY:
        return BINARY[step.op](args[0], args[1])
    if step.op in OPERATORS:
        return getattr(args[0], step.op)(args[1])
    if step.op in REDUCTIONS:
        return REDUCTIONS[step.op](args[0], axis=attrs["axis"], keepdims=attrs["keepdims"])
    if step.op == "matmul":
        return kf.matmul(args[0], args[1], transpose_b=attrs["transpose_b"])
    if step.op == "reshape":
        return kf.reshape(args[0], list(attrs["shape"]))
    if step.op == "transpose":
        return kf.transpose(args[0], list(attrs["perm"]))
    if step.op == "concat":
        return kf.concat([args[0], args[1]], axis=attrs["axis"])
    if step.op == "slice":
        return args[0][tuple(slice(s, e, k) for s, e, k in attrs["spec"])]
    if step.op == "where":
        return kf.where(args[0] > 0.0, args[1], args[2])
    if step.op == "cast":
        return kf.cast(kf.cast(args[0], kf.float32), kf.float64)
    raise AssertionError(step.op)


def run_program(program, inputs):
    values = list(inputs)
    for step in program.steps:
        values.append(_apply(step, values))
    return [values[i] for i in program.outputs]


# ---------------------------------------------------------------- shapes

def _broadcastable(a, b):
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def _broadcast(a, b):
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


def _applicable(kind, shape):
    if kind == "matmul":
        return len(shape) == 2
    if kind in ("transpose", "concat", "slice"):
        return len(shape) >= 1
    return True


@st.composite
def _step(draw, shapes):
    kinds = [k for k in KINDS if any(_applicable(k, s) for s in shapes)]
    kind = draw(st.sampled_from(kinds))
    a = draw(st.sampled_from([i for i, s in enumerate(shapes) if _applicable(kind, s)]))
    sa = shapes[a]
    if kind in UNARY or kind == "cast":
        return Step(kind, (a,)), sa
    if kind in BINARY or kind in OPERATORS:
        b = draw(st.sampled_from([i for i, s in enumerate(shapes) if _broadcastable(sa, s)]))
        return Step(kind, (a, b)), _broadcast(sa, shapes[b])
    if kind in REDUCTIONS:
        rank = len(sa)
        axis_choices = [st.none()]
        if rank:
            axis_choices.append(st.integers(-rank, rank - 1))
            axis_choices.append(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank,
                                         unique=True).map(lambda xs: tuple(sorted(xs))))
        axis = draw(st.one_of(*axis_choices))
        keepdims = draw(st.booleans())
        axes = set(range(rank)) if axis is None else \
            {axis % rank} if isinstance(axis, int) else set(axis)
        out = tuple(1 if i in axes else d for i, d in enumerate(sa) if keepdims or i not in axes)
        return Step(kind, (a,), (("axis", axis), ("keepdims", keepdims))), out
    if kind == "matmul":
        m, k = sa
        choices = [(i, False) for i, s in enumerate(shapes) if len(s) == 2 and s[0] == k]
        choices += [(i, True) for i, s in enumerate(shapes) if len(s) == 2 and s[1] == k]
        b, transpose_b = draw(st.sampled_from(choices))   # (a, True) is always there
        n = shapes[b][0] if transpose_b else shapes[b][1]
        return Step(kind, (a, b), (("transpose_b", transpose_b),)), (m, n)
    if kind == "reshape":
        size = _size(sa)
        target = draw(st.sampled_from([(-1,), tuple(reversed(sa)), (1, -1), (-1, 1)]))
        out = tuple(size if d == -1 else d for d in target)
        return Step(kind, (a,), (("shape", target),)), out
    if kind == "transpose":
        perm = tuple(draw(st.permutations(range(len(sa)))))
        return Step(kind, (a,), (("perm", perm),)), tuple(sa[p] for p in perm)
    if kind == "concat":
        axis = draw(st.integers(0, len(sa) - 1))
        same = [i for i, s in enumerate(shapes) if len(s) == len(sa) and
                all(x == y for j, (x, y) in enumerate(zip(s, sa)) if j != axis)]
        b = draw(st.sampled_from(same))
        out = tuple(d + shapes[b][axis] if j == axis else d for j, d in enumerate(sa))
        return Step(kind, (a, b), (("axis", axis),)), out
    if kind == "slice":
        count = draw(st.integers(1, len(sa)))
        spec, out = [], list(sa)
        for j in range(count):
            start = draw(st.integers(0, sa[j] - 1))
            stop = draw(st.integers(start + 1, sa[j]))
            step = draw(st.sampled_from([1, 2]))
            spec.append((start, stop, step))
            out[j] = len(range(start, stop, step))
        return Step(kind, (a,), (("spec", tuple(spec)),)), tuple(out)
    if kind == "where":
        x = draw(st.sampled_from([i for i, s in enumerate(shapes) if _broadcastable(sa, s)]))
        sax = _broadcast(sa, shapes[x])
        y = draw(st.sampled_from([i for i, s in enumerate(shapes) if _broadcastable(sax, s)]))
        return Step(kind, (a, x, y)), _broadcast(sax, shapes[y])
    raise AssertionError(kind)


@st.composite
def programs(draw):
    base = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    input_shapes = []
    for _ in range(draw(st.integers(1, 3))):
        # related shapes, so broadcasting partners exist: drop leading dims, set some to 1
        drop = draw(st.integers(0, len(base) - 1))
        dims = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else d
                     for d in base[drop:])
        input_shapes.append(dims)
    shapes = list(input_shapes)
    steps = []
    for _ in range(draw(st.integers(3, 12))):
        step, shape = draw(_step(shapes))
        steps.append(step)
        shapes.append(shape)
    used = {i for s in steps for i in s.args}
    outputs = tuple(i for i in range(len(input_shapes), len(shapes)) if i not in used)
    seed = draw(st.integers(0, 2**16))
    return Program(tuple(input_shapes), tuple(steps), tuple(shapes), outputs, seed)


# ---------------------------------------------------------------- the runs

def _weights(program):
    """Fixed random cotangents, one per output, so every output element matters."""
    rng = np.random.default_rng(program.seed + 1)
    return [rng.uniform(0.5, 1.5, size=program.shapes[i]) for i in program.outputs]


def _loss(outputs, weights):
    return kf.add_n([kf.reduce_sum(o * kf.constant(w)) for o, w in zip(outputs, weights)])


def _gradients(program, xs, weights):
    with kf.GradientTape() as tape:
        tape.watch(xs)
        loss = _loss(run_program(program, xs), weights)
    return loss, tape.gradient(loss, xs, unconnected_gradients=kf.UnconnectedGradients.ZERO)


def _session_run(program, arrays, weights):
    g = kf.Graph()
    with g.as_default():
        placeholders = [v1.placeholder(kf.float64, s, name=f"v{i}")
                        for i, s in enumerate(program.input_shapes)]
        outputs = run_program(program, placeholders)
        grads = v1.gradients(_loss(outputs, weights), placeholders)
    g.lint()
    for t, i in zip(outputs, program.outputs):
        assert t.shape.as_list() == list(program.shapes[i]), (t, program.shapes[i])
    with v1.Session(graph=g) as sess:
        feed = dict(zip(placeholders, arrays))
        values = sess.run(outputs, feed)
        connected = [t for t in grads if t is not None]
        grad_values = iter(sess.run(connected, feed)) if connected else iter(())
    return values, [next(grad_values) if t is not None else np.zeros(s)
                    for t, s in zip(grads, program.input_shapes)]


def _same(actual, expected, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12, equal_nan=True,
                               err_msg=what)


@settings(max_examples=60, deadline=None)
@given(programs())
def test_eager_function_and_session_agree(program):
    note(repr(program))
    arrays = program.inputs()
    xs = [kf.constant(a) for a in arrays]
    weights = _weights(program)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # a clean program warns about nothing
        eager = [t.numpy() for t in run_program(program, xs)]
        compiled = kf.function(lambda *args: run_program(program, args))
        traced = [t.numpy() for t in compiled(*xs)]
        again = [t.numpy() for t in compiled(*xs)]
        concrete = compiled.get_concrete_function(*xs)
        concrete.traced_graph.lint()
        concrete.graph.lint()   # the optimized graph is still well formed
        graph = concrete.graph
        interpreted = evaluate(graph.operations, graph.inputs, graph.outputs, arrays)
        unknown = [kf.TensorSpec([None] * len(s), kf.float64) for s in program.input_shapes]
        generic = kf.function(lambda *args: run_program(program, args),
                              input_signature=unknown)
        relaxed = [t.numpy() for t in generic(*xs)]
        session, session_grads = _session_run(program, arrays, weights)
        eager_loss, eager_grads = _gradients(program, xs, weights)
        graph_loss, graph_grads = kf.function(
            lambda *args: _gradients(program, list(args), weights))(*xs)

    for i, value in zip(program.outputs, eager):
        assert value.shape == program.shapes[i], f"v{i}: eager shape {value.shape}"
        assert value.dtype == np.float64
    for k, (e, t, a, s, r) in enumerate(zip(eager, traced, again, session, interpreted)):
        name = f"v{program.outputs[k]}"
        _same(r, e, f"{name}: interpreter on the optimized graph vs eager")
        _same(t, e, f"{name}: @kf.function vs eager")
        _same(a, e, f"{name}: @kf.function (cached) vs eager")
        _same(s, e, f"{name}: Session vs eager")
        _same(relaxed[k], e, f"{name}: @kf.function with unknown input dims vs eager")
    assert compiled.experimental_get_tracing_count() == 1
    _same(graph_loss, eager_loss, "loss: @kf.function vs eager")
    eager_grads = [g.numpy() for g in eager_grads]
    graph_grads = [g.numpy() for g in graph_grads]
    for i, (e, g, s) in enumerate(zip(eager_grads, graph_grads, session_grads)):
        _same(g, e, f"d loss / d v{i}: GradientTape in @kf.function vs eager")
        _same(s, e, f"d loss / d v{i}: compat.v1.gradients vs eager")


def test_program_repr_reads_as_python():
    program = Program(
        input_shapes=((2, 3), (3,)),
        steps=(Step("add", (0, 1)), Step("reduce_sum", (2,), (("axis", 1), ("keepdims", True))),
               Step("slice", (3,), (("spec", ((0, 2, 2),)),))),
        shapes=((2, 3), (3,), (2, 3), (2, 1), (1, 1)), outputs=(4,), seed=7)
    assert repr(program) == (
        "def program(v0, v1):  # float64 v0: (2, 3), v1: (3,); inputs seed 7\n"
        "    v2 = kf.add(v0, v1)  # (2, 3)\n"
        "    v3 = kf.reduce_sum(v2, axis=1, keepdims=True)  # (2, 1)\n"
        "    v4 = v3[0:2:2]  # (1, 1)\n"
        "    return [v4]")
    (out,) = run_program(program, [kf.constant(a) for a in program.inputs()])
    assert out.shape == (1, 1)
