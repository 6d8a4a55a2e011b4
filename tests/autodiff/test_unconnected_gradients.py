"""None versus zeros: a source that no differentiable path reaches gets None in every mode
(eager, inside @kf.function, compat.v1.gradients), also through cond and while_loop bodies;
`unconnected_gradients=ZERO` gives zeros in every mode.

The rule (see docs/gradients.md): a gradient is None when no path from the target to the
source passes only through floating tensors and differentiable ops, in the branches and
loop bodies that were traced. A cond input read only by casts to integers, a loop variable
that never reaches the loop output, a capture the body reads only through an integer are
all unconnected. (Eager mode sees only the branch it ran: a source read only in the branch
not taken is None eagerly and zeros in a graph, as in TF; these programs avoid that.)
"""
import numpy as np
import pytest

import kilnflow as kf

v1 = kf.compat.v1


def int_path(t):
    return kf.cast(kf.cast(t, kf.int32), kf.float32)


def cond_unused(x, y):
    return kf.cond(x > 0, lambda: x * 2, lambda: x - 1)


def cond_predicate_only(x, y):
    return kf.cond(y > 0, lambda: x * 2, lambda: x * 3)


def cond_integer_path(x, y):
    return kf.cond(x > 0, lambda: x * 2, lambda: x * int_path(y))


def while_unused_loop_var(x, y):
    _, a, _ = kf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a * 2., b * 3.),
                            (kf.constant(0), x, y))
    return a


def while_integer_path(x, y):
    _, a, _ = kf.while_loop(lambda i, a, b: i < 3,
                            lambda i, a, b: (i + 1, a * x, b + int_path(y)),
                            (kf.constant(0), x, y))
    return a


def while_capture_integer_only(x, y):
    _, a = kf.while_loop(lambda i, a: i < 2, lambda i, a: (i + 1, a + int_path(y)),
                         (kf.constant(0), x))
    return a


def while_carried_dependency(x, y):
    # b feeds a on the next iteration: y is connected through the carried state
    _, a, _ = kf.while_loop(lambda i, a, b: i < 3, lambda i, a, b: (i + 1, a + b, b * 2.),
                            (kf.constant(0), x, y))
    return a


PROGRAMS = [cond_unused, cond_predicate_only, cond_integer_path, while_unused_loop_var,
            while_integer_path, while_capture_integer_only, while_carried_dependency]


def _tape_grads(program, x, y, unconnected=kf.UnconnectedGradients.NONE):
    with kf.GradientTape() as tape:
        tape.watch([x, y])
        out = program(x, y)
    return tape.gradient(out, [x, y], unconnected_gradients=unconnected)


def _as_values(grads):
    return [None if g is None else float(np.asarray(g)) for g in grads]


def _session_grads(program, x, y):
    graph = kf.Graph()
    with graph.as_default():
        px, py = v1.placeholder(kf.float32, []), v1.placeholder(kf.float32, [])
        grads = v1.gradients(program(px, py), [px, py])
    connected = [g for g in grads if g is not None]
    with v1.Session(graph=graph) as sess:
        values = iter(sess.run(connected, {px: x, py: y}))
    return [None if g is None else float(next(values)) for g in grads]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_none_or_value_agrees_in_every_mode(program):
    x, y = kf.constant(1.5), kf.constant(2.0)
    eager = _as_values(_tape_grads(program, x, y))
    traced = _as_values(kf.function(lambda a, b: _tape_grads(program, a, b))(x, y))
    session = _session_grads(program, 1.5, 2.0)
    assert traced == eager, program.__name__
    assert session == eager, program.__name__


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.__name__ for p in PROGRAMS])
def test_zero_option_gives_zeros_in_every_mode(program):
    x, y = kf.constant(1.5), kf.constant(2.0)
    zero = kf.UnconnectedGradients.ZERO
    eager = _as_values(_tape_grads(program, x, y, zero))
    traced = _as_values(kf.function(lambda a, b: _tape_grads(program, a, b, zero))(x, y))
    assert None not in eager and traced == eager


def test_the_unconnected_sources_are_the_expected_ones():
    x, y = kf.constant(1.5), kf.constant(2.0)
    none_for_y = [p.__name__ for p in PROGRAMS if _tape_grads(p, x, y)[1] is None]
    assert none_for_y == [p.__name__ for p in PROGRAMS[:-1]]


# ---------------------------------------------------------------- TF 2.21's answers, per mode

def _tf_cond_else_only(a, b):
    return kf.cond(a > 0, lambda: a * 2.0, lambda: b * 3.0)


def _tf_python_if_else_only(a, b):
    if a > 0:
        return a * 2.0
    return b * 3.0


def _tf_while_capture_zero_trips(a, b):
    i = kf.constant(0)
    x = a
    while i < 0:
        x = x + b
        i += 1
    return x


def _tf_while_two_trips(a, b):
    i = kf.constant(0)
    x = a
    while i < 2:
        x = x * b
        i += 1
    return x


def _tf_integer_path(a, b):
    return kf.cast(kf.cast(a, kf.int32), kf.float32) + b


def _tf_stop_gradient_in_branch(a, b):
    return kf.cond(b > 0, lambda: kf.stop_gradient(a) + b, lambda: b)


def _tf_unused(a, b):
    return b * 2.0


# program -> (eager, @tf.function) gradients for a=1.5, b=2.0, asked of TF 2.21 (with
# unconnected_gradients=ZERO both modes give the None entries as 0.0)
TF_ANSWERS = {
    _tf_cond_else_only: ([2.0, None], [2.0, 0.0]),
    _tf_python_if_else_only: ([2.0, None], [2.0, 0.0]),
    _tf_while_capture_zero_trips: ([1.0, None], [1.0, 0.0]),
    _tf_while_two_trips: ([4.0, 6.0], [4.0, 6.0]),
    _tf_integer_path: ([None, 1.0], [None, 1.0]),
    _tf_stop_gradient_in_branch: ([None, 1.0], [None, 1.0]),
    _tf_unused: ([None, 2.0], [None, 2.0]),
}


def _gradients(fn, a, b, **options):
    with kf.GradientTape() as tape:
        tape.watch([a, b])
        y = fn(a, b)
    return tape.gradient(y, [a, b], **options)


def _floats(grads):
    return [None if g is None else float(g) for g in grads]


@pytest.mark.parametrize("fn", list(TF_ANSWERS), ids=[f.__name__[4:] for f in TF_ANSWERS])
def test_none_or_zeros_as_tf_gives_them_in_each_mode(fn):
    eager, function = TF_ANSWERS[fn]
    a, b = kf.constant(1.5), kf.constant(2.0)
    zero = {"unconnected_gradients": kf.UnconnectedGradients.ZERO}
    assert _floats(_gradients(fn, a, b)) == eager
    assert _floats(kf.function(lambda x, y: _gradients(fn, x, y))(a, b)) == function
    zeros = [0.0 if g is None else g for g in function]
    assert _floats(_gradients(fn, a, b, **zero)) == zeros
    assert _floats(kf.function(lambda x, y: _gradients(fn, x, y, **zero))(a, b)) == zeros
