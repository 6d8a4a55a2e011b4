"""Differential testing with control flow and gradients: random programs of elementwise
ops, kf.cond and kf.while_loop must give the same values eagerly, under @kf.function and
in a compat.v1 Session, and gradients that follow docs/gradients.md in every mode: None
exactly where no differentiable path reaches the source, the same values elsewhere, and
with unconnected_gradients=ZERO a tensor for every source in every mode (zeros where the
default gives None).

A program is generated from its seed (numpy's generator), so a failing seed reproduces.
Alongside the run, an independent connectivity oracle tracks which inputs each value
depends on differentiably: eagerly through the branch taken and the iterations run; in a
graph through every branch and any number of iterations (the graph cannot know which).
The one documented difference between the two is then checked, not tolerated blindly: a
source is None eagerly and zeros in a graph only when the graph rule connects it and the
eager one does not.

The default run checks 150 seeds; the slow tier checks 2,000.
"""
import warnings

import numpy as np
import pytest

import kilnflow as kf

v1 = kf.compat.v1
N_INPUTS = 3
SHAPE = (3,)


def int_path(t):
    return kf.cast(kf.cast(t * 3.0, kf.int32), kf.float64)


# name -> (function of (a, b), the arguments a gradient can flow to)
EXPRESSIONS = {
    "a*2": (lambda a, b: a * 2.0, "a"),
    "a+b": (lambda a, b: a + b, "ab"),
    "a*b": (lambda a, b: a * b, "ab"),
    "tanh(a)-b": (lambda a, b: kf.tanh(a) - b, "ab"),
    "b*0.5": (lambda a, b: b * 0.5, "b"),
    "int(a)+b": (lambda a, b: int_path(a) + b, "b"),
    "stop(a)*3": (lambda a, b: kf.stop_gradient(a) * 3.0, ""),
    "sin(a)*int(b)": (lambda a, b: kf.sin(a) * int_path(b), "a"),
}
UNARY = {"tanh": kf.tanh, "sin": kf.sin, "square": kf.square, "negative": kf.negative}
BINARY = {"add": kf.add, "subtract": kf.subtract, "multiply": kf.multiply,
          "maximum": kf.maximum}


def generate(seed: int) -> list:
    """Steps over values v0..v2 (the inputs) and the values earlier steps made."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(rng.integers(2, 7)):
        count = N_INPUTS + len(steps)
        pick = lambda: int(rng.integers(0, count))  # noqa: E731
        kind = rng.choice(["unary", "binary", "cond", "cond", "while", "while"])
        names = list(EXPRESSIONS)
        if kind == "unary":
            steps.append(("unary", str(rng.choice(list(UNARY))), pick()))
        elif kind == "binary":
            steps.append(("binary", str(rng.choice(list(BINARY))), pick(), pick()))
        elif kind == "cond":
            steps.append(("cond", pick(), pick(), pick(), str(rng.choice(names)),
                          str(rng.choice(names))))
        else:
            steps.append(("while", pick(), pick(), pick(), int(rng.integers(0, 4)),
                          str(rng.choice(names)), str(rng.choice(names))))
    return steps


def run(steps: list, inputs: list) -> list:
    """The program on `inputs` (eager tensors or graph tensors): every value it makes."""
    values = list(inputs)
    for step in steps:
        kind = step[0]
        if kind == "unary":
            values.append(UNARY[step[1]](values[step[2]]))
        elif kind == "binary":
            values.append(BINARY[step[1]](values[step[2]], values[step[3]]))
        elif kind == "cond":
            _, p, i, j, then_name, else_name = step
            a, b = values[i], values[j]
            values.append(kf.cond(kf.reduce_sum(values[p]) > 0,
                                  lambda: EXPRESSIONS[then_name][0](a, b),
                                  lambda: EXPRESSIONS[else_name][0](a, b)))
        else:
            _, i, j, c, n, x_name, y_name = step
            captured = values[c]

            def body(k, x, y):
                return (k + 1, EXPRESSIONS[x_name][0](x, y),
                        EXPRESSIONS[y_name][0](y, captured))

            _, x, _ = kf.while_loop(lambda k, x, y: k < n, body,
                                    (kf.constant(0), values[i], values[j]))
            values.append(x)
    return values


def connectivity(steps: list, eager_values, graph_rule: bool) -> list:
    """For each value, the set of input indices a gradient can reach from it."""
    deps = [{k} for k in range(N_INPUTS)]

    def through(name, a, b):
        uses = EXPRESSIONS[name][1]
        return (a if "a" in uses else set()) | (b if "b" in uses else set())

    for step in steps:
        kind = step[0]
        if kind == "unary":
            deps.append(set(deps[step[2]]) if step[1] != "sign" else set())
        elif kind == "binary":
            deps.append(deps[step[2]] | deps[step[3]])
        elif kind == "cond":
            _, p, i, j, then_name, else_name = step
            then_deps = through(then_name, deps[i], deps[j])
            else_deps = through(else_name, deps[i], deps[j])
            if graph_rule:
                deps.append(then_deps | else_deps)
            else:
                taken = float(np.sum(np.asarray(eager_values[p]))) > 0
                deps.append(then_deps if taken else else_deps)
        else:
            _, i, j, c, n, x_name, y_name = step
            x, y, cap = set(deps[i]), set(deps[j]), deps[c]
            if graph_rule:  # any number of iterations, zero included
                reach_x, reach_y = set(x), set(y)
                while True:
                    new_x = reach_x | through(x_name, reach_x, reach_y)
                    new_y = reach_y | through(y_name, reach_y, cap)
                    if new_x == reach_x and new_y == reach_y:
                        break
                    reach_x, reach_y = new_x, new_y
                deps.append(reach_x)
            else:
                for _ in range(n):
                    x, y = through(x_name, x, y), through(y_name, y, cap)
                deps.append(x)
    return deps


def loss(values):
    return kf.reduce_sum(values[-1] * kf.constant([1.0, -2.0, 0.5], kf.float64))


ZERO = kf.UnconnectedGradients.ZERO


def tape_gradients(steps, xs):
    """The loss, its gradients (None where unconnected) and its gradients with
    unconnected_gradients=ZERO."""
    with kf.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        values = run(steps, xs)
        total = loss(values)
    return total, tape.gradient(total, xs), tape.gradient(total, xs, unconnected_gradients=ZERO)


def session_gradients(steps, arrays):
    graph = kf.Graph()
    with graph.as_default():
        placeholders = [v1.placeholder(kf.float64, SHAPE) for _ in arrays]
        total = loss(run(steps, placeholders))
        grads = v1.gradients(total, placeholders)
        zeros = v1.gradients(total, placeholders, unconnected_gradients="zero")
    feed = dict(zip(placeholders, arrays))
    with v1.Session(graph=graph) as sess:
        value = sess.run(total, feed)
        connected = [g for g in grads if g is not None]
        found = iter(sess.run(connected, feed)) if connected else iter(())
        zeros = sess.run(zeros, feed)
    return value, [None if g is None else next(found) for g in grads], zeros


def check_seed(seed: int) -> None:
    steps = generate(seed)
    rng = np.random.default_rng(10_000 + seed)
    arrays = [rng.uniform(-1.5, 1.5, SHAPE) for _ in range(N_INPUTS)]
    xs = [kf.constant(a) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager_values = run(steps, xs)
        eager_loss, eager_grads, eager_zeros = tape_gradients(steps, xs)
        fn_loss, fn_grads, fn_zeros = kf.function(
            lambda *args: tape_gradients(steps, list(args)))(*xs)
        session_loss, session_grads, session_zeros = session_gradients(steps, arrays)
    where = f"seed {seed}: {steps}"
    np.testing.assert_allclose(float(fn_loss), float(eager_loss), rtol=1e-9, err_msg=where)
    np.testing.assert_allclose(float(session_loss), float(eager_loss), rtol=1e-9,
                               err_msg=where)
    eager_rule = connectivity(steps, [np.asarray(v) for v in eager_values], False)[-1]
    graph_rule = connectivity(steps, None, True)[-1]
    for k in range(N_INPUTS):
        e, f, s = eager_grads[k], fn_grads[k], session_grads[k]
        assert (e is not None) == (k in eager_rule), f"eager d/dx{k}: {where}"
        assert (f is not None) == (k in graph_rule), f"function d/dx{k}: {where}"
        assert (s is not None) == (k in graph_rule), f"session d/dx{k}: {where}"
        if f is not None:
            np.testing.assert_allclose(np.asarray(s), np.asarray(f), rtol=1e-9, atol=1e-12,
                                       err_msg=f"session vs function d/dx{k}: {where}")
            expected = np.zeros(SHAPE) if e is None else np.asarray(e)
            np.testing.assert_allclose(np.asarray(f), expected, rtol=1e-9, atol=1e-12,
                                       err_msg=f"function vs eager d/dx{k}: {where}")
        # unconnected_gradients=ZERO: a tensor in every mode, zeros where None was
        expected = np.zeros(SHAPE) if e is None else np.asarray(e)
        for mode, zero in (("eager", eager_zeros[k]), ("function", fn_zeros[k]),
                           ("session", session_zeros[k])):
            assert zero is not None, f"{mode} ZERO d/dx{k}: {where}"
            np.testing.assert_allclose(np.asarray(zero), expected, rtol=1e-9, atol=1e-12,
                                       err_msg=f"{mode} ZERO d/dx{k}: {where}")


@pytest.mark.parametrize("chunk", range(3))
def test_modes_agree_with_control_flow_and_gradients(chunk):
    for seed in range(chunk * 50, chunk * 50 + 50):
        check_seed(seed)


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(20))
def test_modes_agree_over_two_thousand_seeds(chunk):
    for seed in range(1_000 + chunk * 100, 1_000 + chunk * 100 + 100):
        check_seed(seed)
