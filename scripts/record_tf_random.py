"""Records TensorFlow 2.21's random numbers for tests/ops/test_random_tf_parity.py.

Run with the side venv that has tensorflow-cpu 2.21 (kilnflow never imports TF):

    /work/tfvenv/bin/python scripts/record_tf_random.py

Writes tests/ops/data/tf_random_reference.json: for each case, the call (as data the test
replays on kilnflow) and TF's values (floats as hex strings, so every bit is kept).
"""
from __future__ import annotations

import json
import pathlib
import random

import numpy as np
import tensorflow as tf

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "ops" / "data" / \
    "tf_random_reference.json"


def encode(value: tf.Tensor) -> dict:
    array = value.numpy()
    if array.dtype.kind == "f" or array.dtype.name == "bfloat16":
        values = [float(x).hex() for x in array.astype(np.float64).reshape(-1)]
    else:
        values = [int(x) for x in array.reshape(-1)]
    return {"dtype": value.dtype.name, "shape": list(array.shape), "values": values}


def stateless_cases() -> list:
    cases = []
    seeds = [([1, 2], "int32"), ([7, -3], "int32"), ([2 ** 40, 5], "int64"),
             ([-1, 2 ** 62], "int64"), ([0, 0], "int32")]
    for seed, seed_dtype in seeds:
        s = tf.constant(seed, seed_dtype)
        for dtype in ("float16", "bfloat16", "float32", "float64"):
            for fn, kwargs in (("stateless_uniform", {}), ("stateless_normal", {}),
                               ("stateless_truncated_normal", {})):
                shape = [2, 33] if dtype in ("float32", "float64") else [21]
                value = getattr(tf.random, fn)(shape, s, dtype=dtype, **kwargs)
                cases.append({"fn": fn, "shape": shape, "seed": seed, "seed_dtype": seed_dtype,
                              "kwargs": dict(kwargs, dtype=dtype), "out": encode(value)})
        for fn, kwargs in (("stateless_uniform", {"minval": -1.3, "maxval": 2.7}),
                           ("stateless_normal", {"mean": 0.3, "stddev": 1.7}),
                           ("stateless_truncated_normal", {"mean": -2.0, "stddev": 0.5}),
                           ("stateless_uniform", {"minval": -4, "maxval": 9, "dtype": "int32"}),
                           ("stateless_uniform", {"minval": -2 ** 62, "maxval": 2 ** 62 + 12345,
                                                  "dtype": "int64"}),
                           ("stateless_uniform", {"minval": None, "maxval": None,
                                                  "dtype": "int32"}),
                           ("stateless_uniform", {"minval": None, "maxval": None,
                                                  "dtype": "int64"}),
                           ("stateless_uniform", {"minval": None, "maxval": None,
                                                  "dtype": "uint32"}),
                           ("stateless_uniform", {"minval": None, "maxval": None,
                                                  "dtype": "uint64"})):
            value = getattr(tf.random, fn)([2, 5], s, **kwargs)
            cases.append({"fn": fn, "shape": [2, 5], "seed": seed, "seed_dtype": seed_dtype,
                          "kwargs": kwargs, "out": encode(value)})
        cases.append({"fn": "split", "shape": None, "seed": seed, "seed_dtype": seed_dtype,
                      "kwargs": {"num": 3}, "out": encode(tf.random.split(s, 3))})
        logits = [[0.1, 0.3, 0.6], [0.5, 0.25, 0.25], [2.0, -1.0, 0.0]]
        cases.append({"fn": "stateless_categorical", "shape": None, "seed": seed,
                      "seed_dtype": seed_dtype, "kwargs": {"logits": logits, "num_samples": 9},
                      "out": encode(tf.random.stateless_categorical(
                          tf.math.log(logits), 9, s))})
        cases.append({"fn": "stateless_shuffle", "shape": None, "seed": seed,
                      "seed_dtype": seed_dtype, "kwargs": {"rows": 37},
                      "out": encode(tf.random.experimental.stateless_shuffle(
                          tf.reshape(tf.range(74), [37, 2]), s))})
        cases.append({"fn": "fold_in", "shape": None, "seed": seed, "seed_dtype": seed_dtype,
                      "kwargs": {"data": 5}, "out": encode(tf.random.fold_in(s, 5))})
    return cases


def generator_cases() -> list:
    """Sequences of Generator calls: each step is (method, args, kwargs) and TF's output and
    state after it."""
    programs = []
    for start in (("from_seed", [1234]), ("from_seed", [-5]), ("from_seed", [2 ** 70 + 3]),
                  ("from_seed", [[1, 2]]), ("from_state", [[5, 6, 7], "philox"]),
                  ("from_seed", [7, "auto_select"])):
        g = getattr(tf.random.Generator, start[0])(*start[1])
        steps = []
        calls = [("uniform", [[5]], {}), ("normal", [[3]], {}), ("truncated_normal", [[9]], {}),
                 ("uniform", [[5], 0, 10], {"dtype": "int32"}), ("uniform_full_int", [[3]], {}),
                 ("uniform", [[3]], {"dtype": "float64", "minval": -1.5, "maxval": 0.25}),
                 ("normal", [[3]], {"dtype": "float64", "mean": 1.0, "stddev": 2.0}),
                 ("truncated_normal", [[5]], {"dtype": "float64"}),
                 ("uniform_full_int", [[2]], {"dtype": "int32"}),
                 ("make_seeds", [2], {})]
        for method, args, kwargs in calls:
            value = getattr(g, method)(*args, **kwargs)
            steps.append({"method": method, "args": args, "kwargs": kwargs, "out": encode(value),
                          "state": g.state.numpy().tolist()})
        children = g.split(2)
        steps.append({"method": "split", "args": [2], "kwargs": {}, "out": None,
                      "state": g.state.numpy().tolist(),
                      "children": [c.state.numpy().tolist() for c in children],
                      "child_uniform": encode(children[0].uniform([4])),
                      "child_normal": encode(children[1].normal([4]))})
        programs.append({"start": list(start), "steps": steps})
    return programs


def stateful_cases() -> list:
    """tf.random.set_seed + eager stateful ops, in order within each program."""
    programs = []
    for global_seed, calls in (
            (1, [("uniform", [[3]], {}), ("uniform", [[3]], {}), ("normal", [[4]], {}),
                 ("truncated_normal", [[5]], {}),
                 ("uniform", [[4]], {"minval": -2, "maxval": 7, "dtype": "int32"})]),
            (1, [("uniform", [[3]], {"seed": 5}), ("uniform", [[3]], {"seed": 5}),
                 ("uniform", [[4]], {"seed": 5}), ("normal", [[3]], {"seed": 5}),
                 ("uniform", [[3]], {"seed": 5, "minval": 0, "maxval": 10, "dtype": "int32"}),
                 ("uniform", [[3]], {"seed": 6, "minval": 1.5, "maxval": 4.0})]),
            (None, [("uniform", [[3]], {"seed": 3}), ("normal", [[3]], {"seed": 3,
                                                                        "dtype": "float64"})]),
            (0, [("uniform", [[3]], {"seed": 0}), ("normal", [[2, 2]], {"mean": 1.0,
                                                                        "stddev": 3.0})]),
            (3, [("categorical", [[[0.0, 1.0, 2.0], [1.0, 1.0, -1.0]], 5], {}),
                 ("categorical", [[[0.0, 1.0, 2.0], [1.0, 1.0, -1.0]], 5], {"seed": 4}),
                 ("categorical", [[[0.0, 1.0, 2.0], [1.0, 1.0, -1.0]], 6], {"seed": 4}),
                 ("categorical", [[[0.0, 1.0, 2.0], [1.0, 1.0, -1.0]], 6],
                  {"seed": 4, "dtype": "int32"})]),
            (5, [("shuffle", [list(range(10))], {}), ("shuffle", [list(range(10))], {"seed": 2}),
                 ("shuffle", [list(range(5))], {"seed": 2}),
                 ("shuffle", [list(range(9))], {"seed": 2})])):
        tf.random.set_seed(global_seed)
        steps = []
        for fn, args, kwargs in calls:
            steps.append({"fn": fn, "args": args, "kwargs": kwargs,
                          "out": encode(getattr(tf.random, fn)(*args, **kwargs))})
        programs.append({"global_seed": global_seed, "steps": steps})
    return programs


def function_cases() -> dict:
    """Seeded stateful ops inside a tf.function: op seeds given, and taken from the
    function graph's own counter (mirrored by test_random_tf_parity.function_program)."""
    tf.random.set_seed(1)

    @tf.function
    def seeded():
        return tf.random.uniform([3], seed=5), tf.random.normal([2], seed=6)

    @tf.function
    def unseeded(x):
        y = x * 2.0 + 1.0
        return tf.random.uniform([2]) + y, tf.random.normal([2]), tf.random.uniform([2])

    first, second = seeded(), seeded()
    return {"seeded": [encode(v) for v in first + second],
            "unseeded": [encode(v) for v in unseeded(tf.constant(0.0))]}


def main() -> None:
    data = {"tf_version": tf.__version__, "stateless": stateless_cases(),
            "generator": generator_cases(), "stateful": stateful_cases(),
            "function": function_cases(),
            "python_random_check": random.Random(1).randint(0, 2 ** 31 - 1)}
    OUT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
