"""The models the training workloads share: a 784-256-256-10 MLP and a tanh RNN.

Each comes as a hand-written NumPy step (forward, manual backward, in-place SGD: the
floor) and as a kilnflow step (GradientTape, Variable.assign_sub) that runs eagerly or
under @kf.function. Both start from the same float32 parameters, so one step of each
can be checked against the other before anything is timed.
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence

import numpy as np

import kilnflow as kf
from benchmarks.workloads import _common

MLP_SIZES = (784, 256, 256, 10)
LEARNING_RATE = 0.01


def mlp_params(rng: np.random.Generator, sizes: Sequence[int] = MLP_SIZES) -> List[np.ndarray]:
    """[w1, b1, w2, b2, ...] with He-normal weights and zero biases, float32."""
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(_common.random_floats(rng, (fan_in, fan_out), np.sqrt(2.0 / fan_in)))
        params.append(np.zeros(fan_out, np.float32))
    return params


def mlp_batch(rng: np.random.Generator, batch: int, sizes: Sequence[int] = MLP_SIZES) -> tuple:
    x = _common.random_floats(rng, (batch, sizes[0]))
    y = rng.integers(0, sizes[-1], batch).astype(np.int32)
    return x, y


def numpy_mlp_step(params: List[np.ndarray], x: np.ndarray, y: np.ndarray,
                   lr: float = LEARNING_RATE) -> np.float32:
    """One SGD step of the ReLU MLP with mean softmax cross-entropy; updates `params`."""
    lr = np.float32(lr)
    n = len(params) // 2
    activations = [x]
    h = x
    for i in range(n):
        z = h @ params[2 * i]
        z += params[2 * i + 1]
        h = np.maximum(z, 0, out=z) if i < n - 1 else z
        activations.append(h)
    logits = activations[-1]
    rows = np.arange(x.shape[0])
    top = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - top)
    total = e.sum(axis=1, keepdims=True)
    loss = np.mean(np.log(total[:, 0]) + top[:, 0] - logits[rows, y])
    d = e
    d /= total
    d[rows, y] -= 1
    d /= np.float32(x.shape[0])
    for i in reversed(range(n)):
        w = params[2 * i]
        h_in = activations[i]
        grad_w = h_in.T @ d
        grad_b = d.sum(axis=0)
        if i > 0:
            d = d @ w.T
            d *= h_in > 0
        w -= lr * grad_w
        params[2 * i + 1] -= lr * grad_b
    return loss


def numpy_mlp_products(params: List[np.ndarray], x: np.ndarray) -> Callable[[], None]:
    """The MLP step's matrix products and nothing else, into preallocated outputs: the
    forward h @ w of every layer and the backward h.T @ d and d @ w.T (none for the input).
    A bound for any step that calls the same BLAS: no elementwise work, no allocation."""
    weights = params[0::2]
    batch = x.shape[0]
    acts = [x] + [np.empty((batch, w.shape[1]), np.float32) for w in weights]
    grads = [np.empty_like(w) for w in weights]
    deltas = [np.empty((batch, w.shape[0]), np.float32) for w in weights]
    # stand-in upstream gradient: the values do not change the time of a product
    deltas.append(_common.random_floats(np.random.default_rng(0), acts[-1].shape))

    def run() -> None:
        for i, w in enumerate(weights):
            np.matmul(acts[i], w, out=acts[i + 1])
        for i in reversed(range(len(weights))):
            np.matmul(acts[i].T, deltas[i + 1], out=grads[i])
            if i > 0:
                np.matmul(deltas[i + 1], weights[i].T, out=deltas[i])
    return run


class KfMLP:
    """The same MLP as kf.Variables; `step(x, y)` is one SGD step, returning the loss."""

    def __init__(self, params: List[np.ndarray]):
        self.variables = [kf.Variable(p.copy()) for p in params]
        self.nn, self.nn_source = _common.nn()

    def step(self, x: Any, y: Any) -> Any:
        nn = self.nn
        variables = self.variables
        with kf.GradientTape() as tape:
            h = x
            for i in range(0, len(variables), 2):
                h = kf.matmul(h, variables[i]) + variables[i + 1]
                if i + 2 < len(variables):
                    h = nn.relu(h)
            loss = kf.reduce_mean(nn.sparse_softmax_cross_entropy_with_logits(
                labels=y, logits=h))
        sgd(variables, tape.gradient(loss, variables))
        return loss

    def numpy(self) -> List[np.ndarray]:
        return [v.numpy() for v in self.variables]


def sgd(variables: List[Any], grads: List[Any]) -> None:
    """v -= lr * g for each variable; a missing gradient is an error, named."""
    for i, (v, g) in enumerate(zip(variables, grads)):
        if g is None:
            raise ValueError(f"no gradient reached variable {i} (tape.gradient gave None)")
        v.assign_sub(LEARNING_RATE * g)


def check_same_step(numpy_step: Callable, kf_step: Callable, params: List[np.ndarray],
                    model: Any, args_np: tuple, args_kf: tuple, what: str) -> None:
    """One step of each from the same parameters: the losses and new parameters agree."""
    mine = [p.copy() for p in params]
    loss_np = numpy_step(mine, *args_np)
    loss_kf = _common.quiet(kf_step)(*args_kf)
    np.testing.assert_allclose(float(loss_kf), float(loss_np), rtol=1e-4,
                               err_msg=f"{what}: loss differs from the NumPy step")
    for i, (a, b) in enumerate(zip(model.numpy(), mine)):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5,
                                   err_msg=f"{what}: parameter {i} differs after one step")


# ---------------------------------------------------------------- tanh RNN

def rnn_params(rng: np.random.Generator, inputs: int, hidden: int) -> List[np.ndarray]:
    """[w_x (inputs, hidden), w_h (hidden, hidden), b (hidden,)], float32."""
    return [_common.random_floats(rng, (inputs, hidden), 1.0 / np.sqrt(inputs)),
            _common.random_floats(rng, (hidden, hidden), 1.0 / np.sqrt(hidden)),
            np.zeros(hidden, np.float32)]


def numpy_rnn_step(params: List[np.ndarray], xs: np.ndarray, y: np.ndarray,
                   lr: float = LEARNING_RATE) -> np.float32:
    """One SGD step of h_t = tanh(x_t w_x + h_{t-1} w_h + b), loss mean((h_T - y)^2).

    Forward keeps every state; backward is BPTT, one step at a time. The input projection
    is done per step like the kilnflow loop, so the ratio measures the framework, not a
    different algorithm. Updates `params` in place.
    """
    w_x, w_h, b = params
    steps, batch = xs.shape[0], xs.shape[1]
    states = [np.zeros((batch, w_h.shape[0]), np.float32)]
    for t in range(steps):
        z = xs[t] @ w_x
        z += states[-1] @ w_h
        z += b
        states.append(np.tanh(z, out=z))
    diff = states[-1] - y
    loss = np.mean(diff * diff)
    dh = diff * np.float32(2.0 / diff.size)
    g_x = np.zeros_like(w_x)
    g_h = np.zeros_like(w_h)
    g_b = np.zeros_like(b)
    for t in reversed(range(steps)):
        h = states[t + 1]
        dz = dh * (1 - h * h)
        g_x += xs[t].T @ dz
        g_h += states[t].T @ dz
        g_b += dz.sum(axis=0)
        dh = dz @ w_h.T
    lr = np.float32(lr)
    w_x -= lr * g_x
    w_h -= lr * g_h
    b -= lr * g_b
    return loss


class KfRNN:
    """The same RNN as kf.Variables, with train steps: `step_unrolled` loops over a Python
    range (eagerly, or unrolled into the graph), `step_loop` over kf.range (AutoGraph turns
    it into one while loop), `step_loop_hoisted` likewise with the variables read first."""

    def __init__(self, params: List[np.ndarray]):
        self.variables = [kf.Variable(p.copy()) for p in params]

    def step_unrolled(self, xs: Any, y: Any) -> Any:
        w_x, w_h, b = self.variables
        with kf.GradientTape() as tape:
            h = kf.zeros([xs.shape[1], w_h.shape[0]])
            for i in range(xs.shape[0]):
                h = kf.tanh(kf.matmul(xs[i], w_x) + kf.matmul(h, w_h) + b)
            loss = kf.reduce_mean(kf.square(h - y))
        self._apply(tape.gradient(loss, self.variables))
        return loss

    def step_loop(self, xs: Any, y: Any) -> Any:
        w_x, w_h, b = self.variables
        with kf.GradientTape() as tape:
            h = kf.zeros([xs.shape[1], w_h.shape[0]])
            for i in kf.range(xs.shape[0]):
                h = kf.tanh(kf.matmul(xs[i], w_x) + kf.matmul(h, w_h) + b)
            loss = kf.reduce_mean(kf.square(h - y))
        self._apply(tape.gradient(loss, self.variables))
        return loss

    def step_loop_hoisted(self, xs: Any, y: Any) -> Any:
        """step_loop with the variables read once before the loop (captured tensors)."""
        with kf.GradientTape() as tape:
            w_x, w_h, b = [v.read_value() for v in self.variables]
            h = kf.zeros([xs.shape[1], w_h.shape[0]])
            for i in kf.range(xs.shape[0]):
                h = kf.tanh(kf.matmul(xs[i], w_x) + kf.matmul(h, w_h) + b)
            loss = kf.reduce_mean(kf.square(h - y))
        self._apply(tape.gradient(loss, self.variables))
        return loss

    def _apply(self, grads: List[Any]) -> None:
        sgd(self.variables, grads)

    def numpy(self) -> List[np.ndarray]:
        return [v.numpy() for v in self.variables]
