"""retrace_scaling: what one more trace costs when a function already has many (issue 19).

A kf.function of (x, n) with a Python int n traces once per new n. Each variant first gives
its function N traces (N = 10, 1,000 and 10,000), then times further traces; the time per
trace should not grow with N. The floor is the same trace at N = 10. TF's tf.function is
timed the same way when TensorFlow is installed; otherwise, when a Python with TensorFlow is
found (KILNFLOW_TF_PYTHON, default /work/tfvenv/bin/python), it is timed in a subprocess of
that Python and reported in the notes (kilnflow never imports TensorFlow).
"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import warnings
from typing import Any, Callable, Iterator

import kilnflow as kf
from benchmarks.harness import Case, Config, Target, Variant
from benchmarks.workloads._common import peer_variants, peers_note

NAME = "retrace_scaling"
DESCRIPTION = "time per new trace with 10, 1k and 10k existing traces"


def _tracer(existing: int) -> Callable[[], Any]:
    """A function holding `existing` traces, and a call that adds one more trace."""
    f = kf.function(lambda x, n: x + n)
    x = kf.constant(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(existing):
            f(x, n)
    counter = itertools.count(existing)

    def one_more() -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f(x, next(counter))
    return one_more


def _tf_tracer(existing: int) -> Callable[[Any], Callable[[], Any]]:
    """The same with tf.function, when TensorFlow is installed."""
    def build(tf: Any) -> Callable[[], Any]:
        f = tf.function(lambda x, n: x + n)
        x = tf.constant(1.0)
        for n in range(existing):
            f(x, n)
        counter = itertools.count(existing)
        return lambda: f(x, next(counter))
    return build


# Run by the TF Python: the same function and traces, the median time of 20 more traces.
_TF_SCRIPT = """
import itertools, json, os, statistics, sys, time
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import tensorflow as tf
tf.get_logger().setLevel("ERROR")
out = {"version": tf.__version__}
for existing in json.loads(sys.argv[1]):
    f = tf.function(lambda x, n: x + n, reduce_retracing=False)
    x = tf.constant(1.0)
    for n in range(existing):
        f(x, n)
    times = []
    for n in range(existing, existing + 20):
        start = time.perf_counter()
        f(x, n)
        times.append(time.perf_counter() - start)
    out[str(existing)] = statistics.median(times)
print(json.dumps(out))
"""


def _tf_subprocess_note(sizes: tuple) -> str:
    """TF's time per trace at each size, measured by a Python that has TensorFlow."""
    python = os.environ.get("KILNFLOW_TF_PYTHON", "/work/tfvenv/bin/python")
    if not os.path.exists(python):
        return "TF: not measured (no TensorFlow here; set KILNFLOW_TF_PYTHON to a Python " \
               "that has it)"
    try:
        done = subprocess.run([python, "-c", _TF_SCRIPT, json.dumps(list(sizes))],
                              capture_output=True, text=True, timeout=1800)
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError, OSError) as exc:
        return f"TF: the subprocess run failed ({type(exc).__name__})"
    per = ", ".join(f"{n} existing: {result[str(n)] * 1e3:.2f} ms" for n in sizes)
    return f"TF {result['version']} tf.function per trace (subprocess {python}): {per}"


def cases(config: Config) -> Iterator[Case]:
    sizes = config.pick((10, 1_000, 10_000), (10, 300, 1_000), (10, 20, 30))
    variants = [Variant(f"kilnflow, {n} existing traces", _tracer(n)) for n in sizes]
    variants += peer_variants([(f"TF tf.function, {n} existing traces", "tensorflow",
                                _tf_tracer(n)) for n in sizes])
    yield Case("one more trace of a kf.function", variants,
               floor=f"kilnflow, {sizes[0]} existing traces",
               targets=[Target("a retrace costs the same with many existing traces",
                               f"kilnflow, {sizes[-1]} existing traces", "ratio", 1.5)],
               notes=["each timed call traces a new Python value of n (so a row holds at "
                      "least N traces); before issue 19's fix kilnflow grew from "
                      "1 ms to 28 ms per trace between 1k and 10k traces",
                      peers_note()]
               + ([] if any(v.name.startswith("TF ") for v in variants)
                  or config.mode == "smoke" else [_tf_subprocess_note(sizes)]))
