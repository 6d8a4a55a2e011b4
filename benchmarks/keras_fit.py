"""Keras-level benchmark: `model.fit` throughput (examples/s) of a small CNN and a
transformer block, kilnflow's Keras against TF 2.21's Keras 3 in one run (issue 14).

    python -m benchmarks.keras_fit                 # kilnflow, plus TF when found
    python -m benchmarks.keras_fit --quick         # fewer examples and repeats
    python -m benchmarks.keras_fit --tf-python /path/to/venv/bin/python

The same model code builds both (it takes the `keras` module). TF runs in a subprocess of
the given Python (default: /work/tfvenv/bin/python when it exists, or $KILNFLOW_TF_PYTHON),
so kilnflow never imports tensorflow. Both get one BLAS/intra-op thread. Each model is
fitted once to trace, then `repeats` one-epoch fits are timed; examples/s is the median
epoch's. The ratio column is kilnflow's examples/s over TF's (higher is better).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
               "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
for _var in THREAD_VARS:  # before NumPy is imported: one BLAS thread, as benchmarks.run
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

DEFAULT_TF_PYTHON = "/work/tfvenv/bin/python"
SIZES = {"full": {"examples": 2048, "repeats": 5}, "quick": {"examples": 512, "repeats": 3},
         "smoke": {"examples": 64, "repeats": 1}}


def cnn(keras, smoke: bool):
    L = keras.layers
    side = 12 if smoke else 28
    inputs = keras.Input((side, side, 1))
    x = L.Conv2D(16, 3, activation="relu")(inputs)
    x = L.BatchNormalization()(x)
    x = L.MaxPooling2D()(x)
    x = L.Conv2D(32, 3, activation="relu")(x)
    x = L.MaxPooling2D()(x)
    x = L.Flatten()(x)
    model = keras.Model(inputs, L.Dense(10, activation="softmax")(x))
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model, (side, side, 1), "float32", 10, 64


def transformer(keras, smoke: bool):
    L = keras.layers
    steps, width = (8, 16) if smoke else (32, 64)
    inputs = keras.Input((steps,), dtype="int32")
    x = L.Embedding(1000, width)(inputs)
    attended = L.MultiHeadAttention(num_heads=4, key_dim=width // 4)(x, x)
    x = L.LayerNormalization()(x + attended)
    ffn = L.Dense(width, )(L.Dense(2 * width, activation="relu")(x))
    x = L.LayerNormalization()(x + ffn)
    x = L.GlobalAveragePooling1D()(x)
    model = keras.Model(inputs, L.Dense(2, activation="softmax")(x))
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    return model, (steps,), "int32", 2, 32


MODELS = {"CNN (2x Conv2D + BatchNorm + pooling), batch 64": cnn,
          "transformer block (MHA 4 heads + LayerNorm + FFN), batch 32": transformer}


def measure(keras, size: str) -> dict:
    """{model label: examples/s (median one-epoch fit)} with the given keras module."""
    examples, repeats = SIZES[size]["examples"], SIZES[size]["repeats"]
    rng = np.random.default_rng(0)
    results = {}
    for label, build in MODELS.items():
        model, shape, dtype, classes, batch = build(keras, size == "smoke")
        if dtype == "int32":
            x = rng.integers(1, 1000, (examples, *shape)).astype("int32")
        else:
            x = rng.standard_normal((examples, *shape)).astype("float32")
        y = rng.integers(0, classes, (examples,))
        model.fit(x, y, batch_size=batch, epochs=1, verbose=0)  # trace, build the optimizer
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            model.fit(x, y, batch_size=batch, epochs=1, verbose=0)
            times.append(time.perf_counter() - start)
        results[label] = examples / statistics.median(times)
    return results


def _tf_results(python: str, size: str) -> dict:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", **{v: "1" for v in THREAD_VARS})
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([python, "-m", "benchmarks.keras_fit", "--backend", "tf",
                           "--size", size], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr else "failed")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--size", choices=sorted(SIZES), default=None)
    parser.add_argument("--backend", choices=["kilnflow", "tf"], default="kilnflow")
    parser.add_argument("--tf-python", default=os.environ.get("KILNFLOW_TF_PYTHON",
                                                              DEFAULT_TF_PYTHON))
    parser.add_argument("--no-tf", action="store_true", help="kilnflow only")
    args = parser.parse_args(argv)
    size = args.size or ("quick" if args.quick else "full")
    if args.backend == "tf":  # the subprocess: TF's Keras, one JSON line out
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        print(json.dumps(measure(tf.keras, size)))
        return {}
    from kilnflow import keras
    ours = measure(keras, size)
    theirs, why = {}, ""
    if not args.no_tf and os.path.exists(args.tf_python):
        try:
            theirs = _tf_results(args.tf_python, size)
        except Exception as exc:  # noqa: BLE001 - report it, keep kilnflow's numbers
            why = f"TF run failed: {exc}"
    else:
        why = "TF not run (no --tf-python found)" if not args.no_tf else "TF not run (--no-tf)"
    print(f"Keras fit throughput, examples/s ({size}, {SIZES[size]['examples']} examples, "
          f"median of {SIZES[size]['repeats']} epochs, one thread)")
    print(f"{'model':64} {'kilnflow':>10} {'TF Keras':>10} {'ratio':>7}")
    for label, value in ours.items():
        other = theirs.get(label)
        ratio = f"{value / other:.2f}x" if other else "-"
        tf_text = f"{other:10.0f}" if other else f"{'-':>10}"
        print(f"{label:64} {value:10.0f} {tf_text} {ratio:>7}")
    if why:
        print(why)
    return {"kilnflow": ours, "tf": theirs}


if __name__ == "__main__":
    main()
