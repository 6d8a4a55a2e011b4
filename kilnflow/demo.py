"""The guided demo behind `kilnflow demo`: a CNN trained on handwritten digits, and what
kilnflow shows about the graphs it builds (timing, traces, diagnostics, optimization,
saving). Finishes in well under a minute on 2 cores."""
from __future__ import annotations

import os
import tempfile
import time
import warnings

import numpy as np

import kilnflow as kf


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 68 - len(title)))


def eager_basics() -> None:
    _section("1. Eager tensors (seeds E2, E21, E23)")
    a = kf.constant([[10, 10], [11., 1.]])
    x = kf.constant([[1., 0.], [0., 1.]])
    b = kf.Variable(12.)
    print("matmul(a, x) + b =", (kf.matmul(a, x) + b).numpy().tolist())
    w = kf.Variable([[1.0]])
    with kf.GradientTape() as tape:
        loss = w * w
    print("d(w*w)/dw at w=1:", tape.gradient(loss, w).numpy().tolist())
    c = kf.constant([[1, 2], [3, 4]])
    print("np.multiply(c, kf.add(c, 1)) ->", np.multiply(c, kf.add(c, 1)).tolist())


def build_model() -> kf.keras.Model:
    layers = kf.keras.layers
    return kf.keras.Sequential([
        layers.Conv2D(16, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
        layers.MaxPooling2D(2),
        layers.Conv2D(32, 3, padding="same", activation="relu"),
        layers.MaxPooling2D(2),
        layers.Flatten(),
        layers.Dense(10),
    ])


def train_digits() -> tuple:
    _section("2. A small CNN on the 8x8 UCI digits, trained with a compiled train step")
    (x_train, y_train), (x_test, y_test) = kf.keras.datasets.digits.load_data()
    x_train = (x_train[..., None] / 16.0).astype(np.float32)
    x_test = (x_test[..., None] / 16.0).astype(np.float32)
    kf.keras.utils.set_random_seed(1)
    model = build_model()
    model.compile(optimizer=kf.keras.optimizers.Adam(3e-3),
                  loss=kf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=64, epochs=8, verbose=1)
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"test accuracy: {accuracy:.1%}")
    return model, x_train, y_train, x_test


def compare_step_times(model: kf.keras.Model, x: np.ndarray, y: np.ndarray) -> None:
    _section("3. Eager vs @kf.function, per training step (batch 64)")
    xb, yb = kf.constant(x[:64]), kf.constant(y[:64])
    model.compile(optimizer=model.optimizer, loss=model.loss, metrics=["accuracy"],
                  run_eagerly=True)
    eager_step = model.make_train_function(force=True)
    model.compile(optimizer=model.optimizer, loss=model.loss, metrics=["accuracy"])
    compiled_step = model.make_train_function(force=True)
    compiled_step(xb, yb, None)  # trace once

    def median_ms(step) -> float:
        times = []
        for _ in range(15):
            start = time.perf_counter()
            step(xb, yb, None)
            times.append(time.perf_counter() - start)
        return 1e3 * float(np.median(times))

    eager_ms, compiled_ms = median_ms(eager_step), median_ms(compiled_step)
    print(f"eager: {eager_ms:.2f} ms/step   @kf.function: {compiled_ms:.2f} ms/step   "
          f"({eager_ms / compiled_ms:.1f}x)")
    function = compiled_step
    print(f"traces of the compiled step: {function.experimental_get_tracing_count()}")
    concrete = function.get_concrete_function(xb, yb, None)
    print(f"train-step graph: {len(concrete.traced_graph.get_operations())} ops traced -> "
          f"{len(concrete.graph.get_operations())} after optimization")
    for name, before, after, *_ in concrete.pass_report:
        print(f"    {name:>18}: {before:4d} -> {after:4d}")


def diagnostics() -> None:
    _section("4. Diagnostics TensorFlow does not give")

    @kf.function
    def forgot_return(x):
        kf.cast(kf.bitwise.right_shift(kf.expand_dims(x, 2), 1), kf.float32)

    @kf.function
    def scale(x, factor):
        return x * factor

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        forgot_return(kf.zeros([4, 400], kf.uint8))
        for factor in range(1, 8):  # a Python number: a new trace per value
            scale(kf.constant(1.0), factor)
    for w in caught:
        first = str(w.message).splitlines()[0]
        print(f"[{w.category.__name__}] {first[:150]}")
    print("why `scale` retraced:\n" + scale.explain_retracing())


def save_and_reload(model: kf.keras.Model, x_test: np.ndarray) -> None:
    _section("5. Saved and reloaded: the graph and weights, no Python code needed")

    class Serving(kf.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        @kf.function(input_signature=[kf.TensorSpec([None, 8, 8, 1], kf.float32)])
        def __call__(self, images):
            return kf.argmax(self.model(images, training=False), axis=1)

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "digits_cnn")
        serving = Serving(model)
        kf.saved_model.save(serving, path)
        loaded = kf.saved_model.load(path)
        before = serving(x_test).numpy()
        after = loaded(x_test).numpy()
        print(f"saved to {os.path.basename(path)}/ ({', '.join(sorted(os.listdir(path)))}); "
              f"reloaded predictions identical: {bool(np.array_equal(before, after))} "
              f"({len(after)} test images)")


def run() -> None:
    start = time.perf_counter()
    print("kilnflow demo: TensorFlow 2's programming model on NumPy")
    eager_basics()
    model, x_train, y_train, x_test = train_digits()
    compare_step_times(model, x_train, y_train)
    diagnostics()
    save_and_reload(model, x_test)
    print(f"\nDone in {time.perf_counter() - start:.1f} s.")
