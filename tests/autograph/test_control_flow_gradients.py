"""Gradients through AutoGraph control flow, inside @kf.function, against finite differences.

Each program is Python control flow on float64 tensors. A GradientTape inside
@kf.function differentiates the converted program (If / While ops in the graph);
central finite differences of the same program run eagerly are the reference. Inputs
sit away from branch and trip-count boundaries, so a perturbation of +-1e-6 never
changes which path runs.
"""
import numpy as np
import pytest

import kilnflow as kf

from .test_graph_corpus import control_flow_ops

F64 = kf.float64
EPS = 1e-6


def f64(value):
    return kf.constant(np.asarray(value, dtype=np.float64))


def tape_gradients(fn):
    """@kf.function computing fn(*args) and d sum(fn(*args)) / d each arg with a tape."""
    @kf.function
    def grads(*args):
        with kf.GradientTape() as tape:
            for a in args:
                tape.watch(a)
            y = kf.reduce_sum(fn(*args))
        return y, tape.gradient(y, list(args))
    return grads


def numeric_gradients(fn, args):
    """Central differences of sum(fn(*args)), run eagerly, for every element of every arg."""
    arrays = [np.array(a.numpy(), dtype=np.float64) for a in args]
    result = []
    for k, array in enumerate(arrays):
        grad = np.zeros_like(array)
        for index in np.ndindex(array.shape):
            values = []
            for sign in (1., -1.):
                moved = [x.copy() for x in arrays]
                moved[k][index] += sign * EPS
                values.append(float(np.sum(fn(*[kf.constant(x) for x in moved]).numpy())))
            grad[index] = (values[0] - values[1]) / (2 * EPS)
        result.append(grad)
    return result


def check(fn, *args, wrt=None):
    """Tape gradients inside @kf.function == finite differences (for args in `wrt`)."""
    value, grads = tape_gradients(fn)(*args)
    np.testing.assert_allclose(value.numpy(), np.sum(fn(*args).numpy()), rtol=1e-12)
    expected = numeric_gradients(fn, args)
    for k in (range(len(args)) if wrt is None else wrt):
        assert grads[k] is not None, f"no gradient for argument {k}"
        np.testing.assert_allclose(grads[k].numpy(), expected[k], rtol=1e-6, atol=1e-7,
                                   err_msg=f"gradient of argument {k}")
    return grads


def op_kinds(fn, *args):
    """Op kinds in fn's traced graph, including its branch and loop subgraphs."""
    concrete = kf.function(fn).get_concrete_function(*args)
    return set(control_flow_ops(concrete.traced_graph))


# ---------------------------------------------------------------- cond

def select(x, y):
    if kf.reduce_sum(x) > 0.:
        z = x * y * y
    else:
        z = kf.sin(x) + y
    return z


@pytest.mark.parametrize("sign", [1., -1.], ids=["true_branch", "false_branch"])
def test_cond_with_tensor_predicate(sign):
    x, y = f64([0.5 * sign, 1.5 * sign]), f64([2., -3.])
    assert "If" in op_kinds(select, x, y)
    check(select, x, y)


def early_return(x):
    if x[0] > 1.:
        return x * x
    return kf.exp(x)


@pytest.mark.parametrize("first", [2., 0.5], ids=["returns_early", "falls_through"])
def test_cond_with_early_return(first):
    check(early_return, f64([first, 0.25]))


def ternary_and_logic(x, y):
    return x * y if (x > 0.) and (y > 0.) else x - y * y


def test_ternary_with_and():
    check(ternary_and_logic, f64(0.7), f64(1.3))
    check(ternary_and_logic, f64(0.7), f64(-1.3))


# ---------------------------------------------------------------- while loops

def grow_until(x, w):
    """Data-dependent trip count; w is captured by the loop body."""
    while kf.reduce_sum(x * x) < 50.:
        x = x * w + 0.25
    return x


def test_while_with_data_dependent_trip_count():
    x, w = f64([0.3, -0.2]), f64([1.7, 1.9])
    assert "While" in op_kinds(grow_until, x, w)
    check(grow_until, x, w)


def halve_then_scale(x, scale):
    i = 0
    while x > 1.:
        x = x / 2. * scale
        i += 1
    return x * kf.cast(i, F64)


def test_while_carrying_an_int_counter_and_a_float():
    check(halve_then_scale, f64(37.), f64(0.9))


def stop_early(xs, w):
    s = f64(0.)
    for x in xs:
        if s > 3.:
            break
        s = s + x * w
    return s


def test_for_over_rows_with_break():
    xs, w = f64([1., 2., 3., 4., 5.]), f64(0.8)
    assert "While" in op_kinds(stop_early, xs, w)
    check(stop_early, xs, w)


def power_series(x, n):
    term = kf.ones_like(x)
    total = kf.zeros_like(x)
    for i in kf.range(n):
        total += term
        term = term * x / kf.cast(i + 1, F64)
    return total


def test_for_over_kf_range_with_captured_tensor():
    x = f64([0.3, -1.2, 2.])
    grads = tape_gradients(lambda x: power_series(x, kf.constant(12)))(x)[1]
    expected = numeric_gradients(lambda x: power_series(x, kf.constant(12)), [x])
    np.testing.assert_allclose(grads[0].numpy(), expected[0], rtol=1e-6)


# ---------------------------------------------------------------- nesting

def cond_in_loop(xs, a, b):
    s = f64(1.)
    for x in xs:
        if x > 0.:
            s = s * a + x
        else:
            s = s - b * x * x
    return s


def test_nested_cond_in_loop():
    args = f64([0.5, -1., 2., -0.3]), f64(1.1), f64(0.7)
    assert {"While", "If"} <= op_kinds(cond_in_loop, *args)
    check(cond_in_loop, *args)


def loop_in_cond(x, w):
    if kf.reduce_sum(x) > 0.:
        for _ in kf.range(3):
            x = kf.tanh(x * w)
    else:
        x = x * w
    return x


@pytest.mark.parametrize("sign", [1., -1.], ids=["loop_branch", "plain_branch"])
def test_loop_in_cond(sign):
    check(loop_in_cond, f64([0.4 * sign, 0.9 * sign]), f64([1.2, -0.6]))


def nested_loops(x, w):
    i = 0
    while i < 3:
        j = 0
        while j < i + 1:
            x = kf.sin(x) * w
            j += 1
        i += 1
    return x


def test_nested_while_loops():
    check(nested_loops, f64([0.4, 1.1]), f64(1.3))


# ---------------------------------------------------------------- TensorArray

def tensor_array_powers(x, n):
    ta = kf.TensorArray(F64, size=n, element_shape=[2])
    power = kf.ones_like(x)
    for i in kf.range(n):
        power = power * x
        ta = ta.write(i, power)
    return ta.stack() * f64([[1.], [2.], [3.], [4.]])


def test_tensor_array_writes_and_stack_in_a_loop():
    x = f64([0.7, -1.3])
    fn = lambda x: tensor_array_powers(x, kf.constant(4))  # noqa: E731
    check(fn, x)


def appended_list(x):
    out = []
    for i in kf.range(3):
        x = x * x + 0.1
        out.append(x)
    return out


def stacked_appended_list(x):
    out = appended_list(x)  # eagerly a list of tensors; converted, already one tensor
    return kf.stack(out) if isinstance(out, list) else out


def test_list_appended_in_a_loop_becomes_a_differentiable_tensor():
    check(stacked_appended_list, f64([0.5, -0.4]))


# ---------------------------------------------------------------- RNN

T, BATCH, INPUTS, HIDDEN = 6, 3, 4, 5


def rnn_loss(xs, wx, wh, b):
    """A tanh RNN over the T time steps of xs [T, batch, inputs]; loss on the last state."""
    h = kf.zeros([BATCH, HIDDEN], F64)
    for i in kf.range(T):
        h = kf.tanh(kf.matmul(xs[i], wx) + kf.matmul(h, wh) + b)
    return kf.reduce_sum(h * h)


def rnn_loss_unrolled(xs, wx, wh, b):
    h = kf.zeros([BATCH, HIDDEN], F64)
    for i in range(T):  # a Python loop: T separate steps on the tape
        h = kf.tanh(kf.matmul(xs[i], wx) + kf.matmul(h, wh) + b)
    return kf.reduce_sum(h * h)


def _rnn_inputs():
    rng = np.random.default_rng(0)
    return [f64(rng.normal(size=shape) * scale) for shape, scale in
            (((T, BATCH, INPUTS), 1.), ((INPUTS, HIDDEN), 0.5), ((HIDDEN, HIDDEN), 0.5),
             ((HIDDEN,), 0.1))]


def test_rnn_for_kf_range_matches_the_unrolled_eager_rnn():
    args = _rnn_inputs()
    assert "While" in op_kinds(rnn_loss, *args)
    loss, grads = tape_gradients(rnn_loss)(*args)
    with kf.GradientTape() as tape:
        for a in args:
            tape.watch(a)
        eager_loss = rnn_loss_unrolled(*args)
    eager_grads = tape.gradient(eager_loss, args)
    np.testing.assert_allclose(loss.numpy(), eager_loss.numpy(), rtol=1e-12)
    for g, e in zip(grads, eager_grads):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)


def test_rnn_gradient_of_one_weight_matches_finite_differences():
    xs, wx, wh, b = _rnn_inputs()
    check(lambda wh: rnn_loss(xs, wx, wh, b), wh)


def test_rnn_trains_under_kf_function():
    xs, wx, wh, b = _rnn_inputs()
    weights = [wx, wh, b]

    @kf.function
    def train_step(xs, wx, wh, b):
        with kf.GradientTape() as tape:
            tape.watch([wx, wh, b])
            loss = rnn_loss(xs, wx, wh, b)
        grads = tape.gradient(loss, [wx, wh, b])
        return loss, [w - 0.05 * g for w, g in zip([wx, wh, b], grads)]

    losses = []
    for _ in range(15):
        loss, weights = train_step(xs, *weights)
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]


def test_rnn_with_variables_trains_under_kf_function():
    """The rnn_train_step benchmark's shape: weights are kf.Variables read in the loop."""
    xs, wx, wh, b = _rnn_inputs()
    weights = [kf.Variable(w) for w in (wx, wh, b)]

    @kf.function
    def train_step(xs):
        with kf.GradientTape() as tape:
            loss = rnn_loss(xs, *weights)
        grads = tape.gradient(loss, weights)
        for w, g in zip(weights, grads):
            w.assign_sub(0.05 * g)
        return loss

    with kf.GradientTape() as tape:
        eager_loss = rnn_loss_unrolled(xs, *weights)
    eager_grads = tape.gradient(eager_loss, weights)
    first = float(train_step(xs))
    np.testing.assert_allclose(first, eager_loss.numpy(), rtol=1e-12)
    for w, start, g in zip(weights, (wx, wh, b), eager_grads):  # one SGD step, as eagerly
        np.testing.assert_allclose(w.numpy(), start.numpy() - 0.05 * g.numpy(), rtol=1e-10)
    losses = [first] + [float(train_step(xs)) for _ in range(14)]
    assert losses[-1] < 0.5 * losses[0]


def _vjp_ops(concrete):
    [grad_op] = [op for op in concrete.graph.operations if op.type == "WhileGrad"]
    return grad_op.attrs["vjp_graph"].graph.operations


def _vjp_op_types(concrete):
    return [op.type for op in _vjp_ops(concrete)]


def _pruned_traced_vjp_op_types(concrete):
    """The VJP graph as traced (before fusion hides op types), with dead ops pruned."""
    from kilnflow.passes.prune import prune
    [grad_op] = [op for op in concrete.traced_graph.operations if op.type == "WhileGrad"]
    return [op.type for op in prune(grad_op.attrs["vjp_graph"].graph).operations]


def test_rnn_while_gradient_reads_the_recorded_states_instead_of_replaying():
    """Each backward step gets the state its forward step produced, so tanh's gradient
    reads it and the forward matmuls (neither operand transposed) are pruned."""
    args = _rnn_inputs()
    concrete = tape_gradients(rnn_loss).get_concrete_function(*args)
    assert "Tanh" not in _vjp_op_types(concrete)
    matmuls = [op for op in _vjp_ops(concrete) if op.type == "MatMul"]
    assert len(matmuls) == 4  # d xs[i], d wx, d wh, d h
    assert all(op.attrs["transpose_a"] or op.attrs["transpose_b"] for op in matmuls)


def test_while_gradient_with_known_new_state_and_maximum_iterations():
    """The last iteration's new state comes from the loop's outputs; the loop stops early
    on maximum_iterations and one loop variable passes through unchanged."""
    def loop(x):
        def body(i, h, c):
            return i + 1, kf.sigmoid(h * c + 0.3), c
        _, h, _ = kf.while_loop(lambda i, h, c: i < 100, body, [kf.constant(0), x, x * 2.],
                                maximum_iterations=4)
        return h

    x = f64([0.2, -0.4, 0.9])
    check(loop, x)
    concrete = tape_gradients(loop).get_concrete_function(x)
    assert "Sigmoid" not in _pruned_traced_vjp_op_types(concrete)


W_VARIABLE = kf.Variable(np.float64(1.5))


def scale_by_variable_in_loop(x):
    for _ in kf.range(3):
        x = x * W_VARIABLE
    return x


def scale_by_variable_in_cond(x):
    if x > 0.:
        x = x * W_VARIABLE
    return x


@pytest.mark.parametrize("fn, expected", [(scale_by_variable_in_loop, 3 * 1.5 ** 2),
                                          (scale_by_variable_in_cond, 1.)],
                         ids=["while_body", "cond_branch"])
def test_gradient_of_a_variable_read_inside_control_flow(fn, expected):
    """The read is hoisted out of the branch / body, so the tape reaches the variable."""
    @kf.function
    def grad(x):
        with kf.GradientTape() as tape:
            y = fn(x)
        return tape.gradient(y, W_VARIABLE)

    with kf.GradientTape() as tape:
        y = fn(f64(1.))
    np.testing.assert_allclose(tape.gradient(y, W_VARIABLE).numpy(), expected)  # eagerly
    result = grad(f64(1.))
    assert result is not None, "no gradient for the variable"
    np.testing.assert_allclose(result.numpy(), expected)


# ---------------------------------------------------------------- second order

def cubic_or_square(x):
    if x > 0.:
        y = x * x * x
    else:
        y = x * x
    return y


@pytest.mark.parametrize("x, expected", [(1.5, 9.), (-2., 2.)], ids=["cubic", "square"])
def test_second_order_through_cond(x, expected):
    @kf.function
    def second(x):
        with kf.GradientTape() as outer:
            outer.watch(x)
            with kf.GradientTape() as inner:
                inner.watch(x)
                y = cubic_or_square(x)
            dy = inner.gradient(y, x)
        return outer.gradient(dy, x)

    np.testing.assert_allclose(second(f64(x)).numpy(), expected, rtol=1e-10)


def repeated_square(x):
    for _ in kf.range(2):
        x = x * x
    return x


def test_second_order_through_while_loop():
    @kf.function
    def second(x):
        with kf.GradientTape() as outer:
            outer.watch(x)
            with kf.GradientTape() as inner:
                inner.watch(x)
                y = repeated_square(x)  # x ** 4
            dy = inner.gradient(y, x)
        return outer.gradient(dy, x)

    result = second(f64(1.5))
    assert result is not None
    np.testing.assert_allclose(result.numpy(), 12. * 1.5 ** 2, rtol=1e-10)


# ---------------------------------------------------------------- random draws

def random_scaling_in_a_branch(x, flag):
    if flag > 0:
        mask = kf.random.uniform([4], dtype=F64)
        h = x * mask
    else:
        h = x
    return h


def test_cond_gradient_reuses_what_the_branch_drew():
    """d(x * mask)/dx is the mask the forward pass drew, not a new draw."""
    @kf.function
    def grads(x, flag):
        with kf.GradientTape() as tape:
            tape.watch(x)
            h = random_scaling_in_a_branch(x, flag)
            y = kf.reduce_sum(h)
        return tape.gradient(y, x), h / x

    x = f64([1., 2., 3., 4.])
    for flag in (1, 1, 0):
        g, mask = grads(x, kf.constant(flag))
        np.testing.assert_allclose(g.numpy(), mask.numpy(), rtol=1e-12)


def random_steps(x):
    drawn = kf.TensorArray(F64, size=3)
    h = x
    for i in kf.range(3):
        m = kf.random.uniform([4], dtype=F64)
        drawn = drawn.write(i, m)
        h = h * m + m * m * (kf.cast(i, F64) + 1.)   # the order of the draws matters
        h = h * h
    return h, drawn.stack()


def test_while_gradient_reuses_what_each_iteration_drew():
    """Against the chain rule by hand, on the draws the loop reports (a TensorArray whose
    element shape is unknown until its first write, so its gradient starts empty)."""
    @kf.function
    def grads(x):
        with kf.GradientTape() as tape:
            tape.watch(x)
            h, drawn = random_steps(x)
            y = kf.reduce_sum(h)
        return y, tape.gradient(y, x), drawn

    x = f64([0.1, 0.2, 0.3, 0.4])
    for _ in range(2):
        y, g, drawn = grads(x)
        h, d, pre = x.numpy(), np.ones(4), []
        for i, m in enumerate(drawn.numpy()):
            pre.append(h * m + m * m * (i + 1))
            h = pre[-1] ** 2
        for i in reversed(range(3)):
            d = d * 2 * pre[i] * drawn.numpy()[i]
        np.testing.assert_allclose(y.numpy(), h.sum(), rtol=1e-12)
        np.testing.assert_allclose(g.numpy(), d, rtol=1e-10)
