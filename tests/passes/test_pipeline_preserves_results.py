"""Differential test: random small programs give the same results with every pass on, with
each pass off, and with none (the interpreter on the traced graph).

The ops all have `fusable` forms (plus folds, duplicates, identities, transposes and a
closing reduction, loop or cond, so every pass finds work). No op here has an inexact fused form (no
pow by a constant), so results must match bitwise, NaN for NaN and inf for inf.
"""
import os
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kilnflow as kf
from kilnflow.passes import pipeline
from kilnflow.runtime.interpreter import evaluate
from tests.passes._helpers import compiled

ROWS, COLS = 4, 3
EXAMPLES = int(os.environ.get("KF_DIFF_EXAMPLES", 30))  # more to hunt bugs: 400 pass
V = kf.Variable(np.linspace(-1, 1, COLS).astype(np.float32))

UNARY = [
    ("tanh", kf.tanh), ("exp", kf.exp), ("sigmoid", kf.sigmoid), ("abs", kf.abs),
    ("neg", kf.negative), ("square", kf.square), ("relu", kf.nn.relu),
    ("times one", lambda a: a * 1.0), ("plus zero", lambda a: 0.0 + a),
    ("identity", lambda a: kf.identity(kf.identity(a))),
    ("double neg", lambda a: kf.negative(kf.negative(a))),
    ("cast round trip", lambda a: kf.cast(kf.cast(a, kf.float64), kf.float32)),
    ("double transpose", lambda a: kf.transpose(kf.transpose(a))),
    ("folded constant", lambda a: a * (kf.constant(2.0) * 0.25)),
    ("duplicate", lambda a: kf.exp(a * 0.5) + kf.exp(a * 0.5)),
    ("step", lambda a: kf.cast(a > 0.0, kf.float32) * a),
]
BINARY = [
    ("add", lambda a, b: a + b), ("sub", lambda a, b: a - b), ("mul", lambda a, b: a * b),
    ("div", lambda a, b: a / (kf.abs(b) + 1.0)), ("max", kf.maximum), ("min", kf.minimum),
    ("select", lambda a, b: kf.where(a > b, a, b * 2.0)),
    ("squared difference", kf.math.squared_difference),
]
ENDINGS = [
    ("none", lambda a: a), ("sum", lambda a: kf.reduce_sum(a)),
    ("mean rows", lambda a: kf.reduce_mean(a, axis=0)),
    ("max cols", lambda a: kf.reduce_max(a, axis=1, keepdims=True)),
    ("loop", lambda a: kf.while_loop(lambda i, v: i < 2, lambda i, v: (
        i + 1, kf.tanh(v * 1.0) * 0.5 + v), [kf.constant(0), a])[1]),
    ("cond", lambda a: kf.cond(kf.reduce_sum(a) > 0.0, lambda: kf.exp(a) + 0.0,
                               lambda: a * a)),
]

steps = st.lists(st.one_of(
    st.tuples(st.just(1), st.integers(0, len(UNARY) - 1), st.integers(0, 50)),
    st.tuples(st.just(2), st.integers(0, len(BINARY) - 1), st.integers(0, 50),
              st.integers(0, 50))), min_size=2, max_size=10)


def _program(plan, ending):
    def fn(x, y):
        values = [x, y, V.read_value() + x, kf.constant(1.5)]
        for step in plan:
            if step[0] == 1:
                _, k, a = step
                values.append(UNARY[k][1](values[a % len(values)]))
            else:
                _, k, a, b = step
                values.append(BINARY[k][1](values[a % len(values)], values[b % len(values)]))
        last = ENDINGS[ending][1](values[-1] + x)
        return last, values[-2] + 0.0    # a second output: intermediates may be results
    return fn


def _configs():
    names = pipeline.names()
    yield "all on", {n: True for n in names}
    for off in names:
        yield f"{off} off", {n: n != off for n in names}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=steps, ending=st.integers(0, len(ENDINGS) - 1), seed=st.integers(0, 2**16))
def test_every_pass_combination_agrees(plan, ending, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(ROWS, COLS)).astype(np.float32)
    y = rng.normal(size=COLS).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        graph = kf.function(_program(plan, ending)).get_concrete_function(
            kf.TensorSpec([None, COLS], kf.float32),
            kf.TensorSpec([COLS], kf.float32)).traced_graph
    with np.errstate(all="ignore"):
        want = evaluate(graph.operations, graph.inputs, graph.outputs, [x, y])
    saved = pipeline.get_options()
    try:
        for label, options in _configs():
            pipeline.set_options(options)
            optimized, _ = pipeline.optimize(graph)
            optimized.lint()
            got = compiled(optimized, [x, y])
            for g, w in zip(got, want):
                g, w = np.asarray(g), np.asarray(w)
                assert g.dtype == w.dtype and g.shape == w.shape, label
                np.testing.assert_array_equal(g, w, err_msg=f"{label}: {plan} {ending}")
    finally:
        pipeline.set_options(saved)
