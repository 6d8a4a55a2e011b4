"""retrace_scaling: what one more trace costs when a function already has many (issue 19).

A kf.function of (x, n) with a Python int n traces once per new n. Each variant first gives
its function N traces (N = 10, 1,000 and 10,000), then times further traces; the time per
trace should not grow with N. The floor is the same trace at N = 10. TF's tf.function is
timed the same way when TensorFlow is installed.
"""
from __future__ import annotations

import itertools
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
                      "least N traces); TF 2.21 grows from "
                      "1 ms to 28 ms per trace between 1k and 10k traces (issue 19's probe)",
                      peers_note()])
