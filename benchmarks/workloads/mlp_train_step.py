"""mlp_train_step: one SGD step of a 784-256-256-10 ReLU MLP, softmax cross-entropy, batch 64.

kilnflow eager (GradientTape) and @kf.function (the tape inside) vs a hand-written NumPy
step (forward, manual backward, in-place update: the floor). Issue 3's target: the
function <= 1.1x the NumPy step. Every variant keeps training its own copy of the
parameters on the same batch, so each call does the same work.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads import _common, _models

NAME = "mlp_train_step"
DESCRIPTION = "784-256-256-10 ReLU MLP, softmax cross-entropy, SGD, batch 64, float32"


def cases(config: Config) -> Iterator[Case]:
    rng = np.random.default_rng(2)
    sizes = config.pick(_models.MLP_SIZES, smoke=(32, 16, 16, 10))
    batch = config.pick(64, smoke=8)
    params = _models.mlp_params(rng, sizes)
    x_np, y_np = _models.mlp_batch(rng, batch, sizes)
    x, y = kf.constant(x_np), kf.constant(y_np)

    eager = _models.KfMLP(params)
    _models.check_same_step(_models.numpy_mlp_step, eager.step, params, eager,
                            (x_np, y_np), (x, y), "kilnflow eager")
    model = _models.KfMLP(params)
    compiled = kf.function(model.step)
    _models.check_same_step(_models.numpy_mlp_step, compiled, params, model,
                            (x_np, y_np), (x, y), "kilnflow function")
    floor_params = [p.copy() for p in params]
    shape = "-".join(str(s) for s in sizes)
    yield Case(
        f"MLP {shape} train step, batch {batch}",
        [Variant("NumPy hand-written step", lambda: _models.numpy_mlp_step(
            floor_params, x_np, y_np)),
         Variant("kilnflow eager", lambda: eager.step(x, y)),
         Variant("kilnflow function", lambda: compiled(x, y))]
        + _common.peer_variants(peers(params, x_np, y_np)),
        floor="NumPy hand-written step",
        targets=[Target("MLP train step under @kf.function <= 1.1x the NumPy step",
                        "kilnflow function", "ratio", 1.1,
                        peers="TF tf.function 1.63x, jax.jit 1.21x, PyTorch eager 1.11x")],
        notes=[f"relu and cross-entropy from {eager.nn_source}", _common.peers_note()])


def peers(params: list, x_np: np.ndarray, y_np: np.ndarray, jit_compile: bool = False) -> list:
    """(label, module, build) for PyTorch eager, jax.jit and TF's tf.function, each
    training its own copy of `params`; with `jit_compile` TF's step is compiled by XLA."""
    lr = _models.LEARNING_RATE

    def torch_eager(torch):
        ws = [torch.tensor(p.copy(), requires_grad=True) for p in params]
        x, y = torch.from_numpy(x_np.copy()), torch.from_numpy(y_np.astype(np.int64))

        def step():
            h = x
            for i in range(0, len(ws), 2):
                h = h @ ws[i] + ws[i + 1]
                if i + 2 < len(ws):
                    h = torch.relu(h)
            loss = torch.nn.functional.cross_entropy(h, y)
            grads = torch.autograd.grad(loss, ws)
            with torch.no_grad():
                for w, g in zip(ws, grads):
                    w -= lr * g
            return loss
        return step

    def jax_jit(jax):
        jnp = jax.numpy

        def loss_fn(ws, x, y):
            h = x
            for i in range(0, len(ws), 2):
                h = h @ ws[i] + ws[i + 1]
                if i + 2 < len(ws):
                    h = jax.nn.relu(h)
            logp = jax.nn.log_softmax(h)
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

        @jax.jit
        def step(ws, x, y):
            loss, grads = jax.value_and_grad(loss_fn)(ws, x, y)
            return [w - lr * g for w, g in zip(ws, grads)], loss
        state = {"ws": [jnp.asarray(p) for p in params]}
        x, y = jnp.asarray(x_np), jnp.asarray(y_np)

        def run():
            state["ws"], loss = step(state["ws"], x, y)
            return loss.block_until_ready()
        run()
        return run

    def tf_function(tf):
        ws = [tf.Variable(p.copy()) for p in params]
        x, y = tf.constant(x_np), tf.constant(y_np)

        @tf.function(jit_compile=jit_compile or None)
        def step():
            with tf.GradientTape() as tape:
                h = x
                for i in range(0, len(ws), 2):
                    h = tf.matmul(h, ws[i]) + ws[i + 1]
                    if i + 2 < len(ws):
                        h = tf.nn.relu(h)
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=h))
            for w, g in zip(ws, tape.gradient(loss, ws)):
                w.assign_sub(lr * g)
            return loss
        step()
        return step

    return [("PyTorch eager", "torch", torch_eager),
            ("JAX jax.jit", "jax", jax_jit),
            (_common.tf_label(jit_compile), "tensorflow", tf_function)]
