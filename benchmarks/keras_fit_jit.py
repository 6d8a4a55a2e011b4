"""Keras `fit` with compile(jit_compile=True) (the numba backend) against the Python
runtime: one epoch of a small Dense classifier, medians in one process (issue 16).

    python -m benchmarks.keras_fit_jit                  # 4096 examples, 9 paired epochs
    python -m benchmarks.keras_fit_jit --quick          # 1024 examples, 5 epochs

Two models with the same seed and layers are fitted once each (tracing; the jit one also
lowers and compiles, reported as its first epoch), then one-epoch fits alternate between
them so machine load falls on both alike. One BLAS thread, as the other benchmarks.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before NumPy is imported

import numpy as np  # noqa: E402


def build(keras, optimizer: str, jit_compile: bool, width: int):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((32,)),
                              keras.layers.Dense(width, activation="relu"),
                              keras.layers.Dense(width, activation="relu"),
                              keras.layers.Dense(10, activation="softmax")])
    model.compile(optimizer, "sparse_categorical_crossentropy", metrics=["accuracy"],
                  jit_compile=jit_compile)
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--optimizer", default="adam")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--width", type=int, default=64)
    args = parser.parse_args()
    from kilnflow import keras
    examples, repeats = (1024, 5) if args.quick else (4096, 9)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(examples, 32)).astype(np.float32)
    y = rng.integers(0, 10, examples)
    models = {jit: build(keras, args.optimizer, jit, args.width) for jit in (False, True)}
    times: dict = {False: [], True: []}

    def epoch(jit: bool) -> float:
        start = time.perf_counter()
        models[jit].fit(x, y, batch_size=args.batch_size, epochs=1, verbose=0)
        return time.perf_counter() - start

    first = {jit: epoch(jit) for jit in (False, True)}
    for _ in range(repeats):
        for jit in (False, True):
            times[jit].append(epoch(jit))
    steps = -(-examples // args.batch_size)
    print(f"Dense 32-{args.width}-{args.width}-10, {args.optimizer}, accuracy metric, "
          f"{examples} examples, batch {args.batch_size} ({steps} steps), load "
          f"{os.getloadavg()[0]:.1f}")
    for jit in (False, True):
        median = statistics.median(times[jit])
        print(f"  jit_compile={jit!s:5}: first epoch {first[jit]:.2f} s, median epoch "
              f"{median * 1e3:.1f} ms ({median / steps * 1e6:.0f} us/step), min "
              f"{min(times[jit]) * 1e3:.1f} ms")
    print(f"  jit / no jit (medians): "
          f"{statistics.median(times[True]) / statistics.median(times[False]):.2f}")


if __name__ == "__main__":
    main()
