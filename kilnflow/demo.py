"""The guided demo behind `kilnflow demo`: the seed documents' examples, run and explained."""
from __future__ import annotations

import numpy as np

import kilnflow as kf


def _section(title: str) -> None:
    print()
    print("=" * 72)
    print(title)
    print("=" * 72)


def eager_examples() -> None:
    _section("Eager execution (seeds E2, E3, E20-E23)")
    print("kf.executing_eagerly():", kf.executing_eagerly())
    a = kf.constant([[10, 10], [11., 1.]])
    x = kf.constant([[1., 0.], [0., 1.]])
    b = kf.Variable(12.)
    y = kf.matmul(a, x) + b
    print("y = matmul(a, x) + b runs at once:\n", y.numpy())

    def f():
        a = kf.constant([[10, 10], [11., 1.]])
        x = kf.constant([[1., 0.], [0., 1.]])
        b = kf.Variable(12.)
        return kf.matmul(a, x) + b
    print("the same lines in a plain Python function:\n", f().numpy())

    w = kf.Variable([[1.0]])
    with kf.GradientTape() as tape:
        loss = w * w
    print("GradientTape: d(w*w)/dw at w=1 ->", tape.gradient(loss, w).numpy())

    c = kf.constant([[1, 2], [3, 4]])
    d = kf.add(c, 1)
    print("kf.add(c, 1) ->", d.numpy().tolist())
    print("np.multiply(c, d) gives an ndarray:", type(np.multiply(c, d)).__name__,
          np.multiply(c, d).tolist())
    print("ndarrays go straight into ops: kf.reduce_sum(np.ones(3)) ->",
          kf.reduce_sum(np.ones(3)).numpy())
    print("and eager values are ordinary Python objects to debug:", repr(d))


def run() -> None:
    print("kilnflow demo: TensorFlow 2's programming model on NumPy")
    eager_examples()
    print("\nDone.")
