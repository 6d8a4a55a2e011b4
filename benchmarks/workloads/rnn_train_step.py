"""rnn_train_step: one SGD step of a tanh RNN through time (issue 4).

Hidden 128, input 32, T = 50, batch 16, loss mean((h_T - y)^2) on the last state.
The floor is a hand-written NumPy step (forward keeping every state, BPTT backward, in-
place update). kilnflow runs it eagerly (a Python loop on the tape), under @kf.function
with a Python range (unrolled into a 50-step graph), and under @kf.function with
`for i in kf.range(T)` (one while loop, gradients through it): issue 4's target is that
last one <= 1.3x the NumPy step. A fourth row reads the variables once before the loop,
which works around gradients not reaching variables read inside a while body.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads import _common, _models

NAME = "rnn_train_step"
DESCRIPTION = "tanh RNN, hidden 128, input 32, T=50, batch 16, loss on last state, SGD"


def cases(config: Config) -> Iterator[Case]:
    rng = np.random.default_rng(7)
    steps = config.pick(50, smoke=3)
    batch = config.pick(16, smoke=2)
    inputs = config.pick(32, smoke=3)
    hidden = config.pick(128, smoke=4)
    params = _models.rnn_params(rng, inputs, hidden)
    xs_np = _common.random_floats(rng, (steps, batch, inputs))
    y_np = _common.random_floats(rng, (batch, hidden), 0.5)
    xs, y = kf.constant(xs_np), kf.constant(y_np)

    eager = _models.KfRNN(params)
    _models.check_same_step(_models.numpy_rnn_step, eager.step_unrolled, params, eager,
                            (xs_np, y_np), (xs, y), "kilnflow eager")
    unrolled = _models.KfRNN(params)
    unrolled_fn = kf.function(unrolled.step_unrolled)
    _models.check_same_step(_models.numpy_rnn_step, unrolled_fn, params, unrolled,
                            (xs_np, y_np), (xs, y), "kilnflow function (unrolled)")
    looped = _loop_variant(params, xs_np, y_np, xs, y, "step_loop",
                           "kilnflow function, for i in kf.range(T)")
    hoisted = _loop_variant(params, xs_np, y_np, xs, y, "step_loop_hoisted",
                            "kilnflow function, kf.range, variables read before the loop")
    floor_params = [p.copy() for p in params]
    yield Case(
        f"tanh RNN train step, T={steps}, batch {batch}, input {inputs}, hidden {hidden}",
        [Variant("NumPy hand-written step (BPTT)", lambda: _models.numpy_rnn_step(
            floor_params, xs_np, y_np)),
         Variant("kilnflow eager (Python loop)", lambda: eager.step_unrolled(xs, y)),
         Variant("kilnflow function, Python range (unrolled)", lambda: unrolled_fn(xs, y)),
         looped, hoisted]
        + _common.peer_variants(peers(params, xs_np, y_np)),
        floor="NumPy hand-written step (BPTT)",
        targets=[Target("RNN step as a `for i in kf.range(T)` loop <= 1.3x the NumPy step",
                        looped.name, "ratio", 1.3,
                        peers="TF tf.function 1.66x, PyTorch eager 2.28x, jax.jit with "
                              "lax.scan 0.72x")],
        notes=[_common.peers_note()])


def _loop_variant(params: list, xs_np: np.ndarray, y_np: np.ndarray, xs: Any, y: Any,
                  method: str, name: str) -> Variant:
    def build() -> Any:
        model = _models.KfRNN(params)
        compiled = kf.function(getattr(model, method))
        _models.check_same_step(_models.numpy_rnn_step, compiled, params, model,
                                (xs_np, y_np), (xs, y), name)
        ops = {op.type for op in compiled.get_concrete_function(xs, y).graph.operations}
        if not any("While" in t for t in ops):
            raise AssertionError(f"no while op in the graph (ops: {sorted(ops)})")
        return lambda: compiled(xs, y)
    return _common.autograph_variant(name, build)


def peers(params: list, xs_np: np.ndarray, y_np: np.ndarray, jit_compile: bool = False) -> list:
    """(label, module, build) for PyTorch eager, jax.jit with lax.scan and TF's
    tf.function with a tf.range loop; with `jit_compile` TF's step is compiled by XLA."""
    lr = _models.LEARNING_RATE

    def torch_eager(torch):
        ws = [torch.tensor(p.copy(), requires_grad=True) for p in params]
        xs, y = torch.from_numpy(xs_np.copy()), torch.from_numpy(y_np.copy())

        def step():
            w_x, w_h, b = ws
            h = torch.zeros(xs.shape[1], w_h.shape[0])
            for t in range(xs.shape[0]):
                h = torch.tanh(xs[t] @ w_x + h @ w_h + b)
            loss = torch.mean((h - y) ** 2)
            grads = torch.autograd.grad(loss, ws)
            with torch.no_grad():
                for w, g in zip(ws, grads):
                    w -= lr * g
            return loss
        return step

    def jax_scan(jax):
        jnp = jax.numpy

        def loss_fn(ws, xs, y):
            w_x, w_h, b = ws

            def cell(h, x):
                h = jnp.tanh(x @ w_x + h @ w_h + b)
                return h, None
            h, _ = jax.lax.scan(cell, jnp.zeros((xs.shape[1], w_h.shape[0]), xs.dtype), xs)
            return jnp.mean((h - y) ** 2)

        @jax.jit
        def step(ws, xs, y):
            loss, grads = jax.value_and_grad(loss_fn)(ws, xs, y)
            return [w - lr * g for w, g in zip(ws, grads)], loss
        state = {"ws": [jnp.asarray(p) for p in params]}
        xs, y = jnp.asarray(xs_np), jnp.asarray(y_np)

        def run():
            state["ws"], loss = step(state["ws"], xs, y)
            return loss.block_until_ready()
        run()
        return run

    def tf_function(tf):
        ws = [tf.Variable(p.copy()) for p in params]
        xs, y = tf.constant(xs_np), tf.constant(y_np)

        @tf.function(jit_compile=jit_compile or None)
        def step():
            w_x, w_h, b = ws
            with tf.GradientTape() as tape:
                h = tf.zeros([xs.shape[1], w_h.shape[0]])
                for t in tf.range(xs.shape[0]):
                    h = tf.tanh(tf.matmul(xs[t], w_x) + tf.matmul(h, w_h) + b)
                loss = tf.reduce_mean(tf.square(h - y))
            for w, g in zip(ws, tape.gradient(loss, ws)):
                w.assign_sub(lr * g)
            return loss
        step()
        return step

    return [("PyTorch eager", "torch", torch_eager),
            ("JAX jax.jit with lax.scan", "jax", jax_scan),
            (_common.tf_label(jit_compile) + ", tf.range loop", "tensorflow", tf_function)]
