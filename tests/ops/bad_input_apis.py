"""Malformed calls of the APIs around the ops: tapes, functions, variables, sessions and
control flow. Each case is `call(tf)`, written against the module it is given, so the same
call runs on kilnflow and (scripts/record_bad_input_tf.py) on TF.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

BAD = {"none": None, "string": "abc", "object": object(), "ragged": [[1.0, 2.0], [3.0]],
       "dict": {"a": 1.0}, "nan": float("nan"), "huge": 2 ** 62, "negative": -3,
       "bool": True, "empty": []}


def _tape_gradient(tf: Any, target: Any = "y", sources: Any = "x", **kwargs: Any) -> Any:
    x = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * x)
    values = {"y": y, "x": x}
    return tape.gradient(values.get(target, target) if isinstance(target, str) else target,
                         values.get(sources, sources) if isinstance(sources, str) else sources,
                         **kwargs)


def _tape_watch(tf: Any, value: Any) -> Any:
    with tf.GradientTape() as tape:
        tape.watch(value)
    return tape


def _jacobian(tf: Any, sources: Any) -> Any:
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    return tape.jacobian(y, sources)


def _function_call(tf: Any, value: Any) -> Any:
    return tf.function(lambda a: a * 2.0)(value)


def _signature_call(tf: Any, value: Any) -> Any:
    f = tf.function(lambda a: a * 2.0, input_signature=[tf.TensorSpec([2], tf.float32)])
    return f(value)


def _signature(tf: Any, value: Any) -> Any:
    return tf.function(lambda a: a, input_signature=value)(tf.constant(1.0))


def _variable(tf: Any, value: Any, **kwargs: Any) -> Any:
    return tf.Variable(value, **kwargs)


def _assign(tf: Any, value: Any) -> Any:
    v = tf.Variable([1.0, 2.0])
    return v.assign(value)


def _session(tf: Any, fetch: Any = "y", feed: Any = "p", value: Any = (1.0, 2.0)) -> Any:
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        p = v1.placeholder(tf.float32, [2], name="p")
        y = tf.identity(p * 2.0, name="y")
    with v1.Session(graph=graph) as sess:
        where = {"y": y, "p": p}
        fetches = where.get(fetch, fetch) if isinstance(fetch, str) else fetch
        key = where.get(feed, feed) if isinstance(feed, str) else feed
        return sess.run(fetches, feed_dict={key: value} if not isinstance(feed, list) else feed)


def _cond(tf: Any, pred: Any) -> Any:
    return tf.cond(pred, lambda: tf.constant(1), lambda: tf.constant(2))


def _while(tf: Any, value: Any) -> Any:
    return tf.while_loop(lambda i: i < 3, lambda i: i + 1, value)


def _make_cases() -> dict:
    cases: dict = {}
    for name, bad in BAD.items():
        cases[f"tape.gradient target {name}"] = lambda tf, b=bad: _tape_gradient(tf, target=b)
        cases[f"tape.gradient sources {name}"] = lambda tf, b=bad: _tape_gradient(tf, sources=b)
        cases[f"tape.gradient output_gradients {name}"] = \
            lambda tf, b=bad: _tape_gradient(tf, output_gradients=b)
        cases[f"tape.gradient unconnected {name}"] = \
            lambda tf, b=bad: _tape_gradient(tf, unconnected_gradients=b)
        cases[f"tape.watch {name}"] = lambda tf, b=bad: _tape_watch(tf, b)
        cases[f"tape.jacobian {name}"] = lambda tf, b=bad: _jacobian(tf, b)
        cases[f"function call {name}"] = lambda tf, b=bad: _function_call(tf, b)
        cases[f"function signature call {name}"] = lambda tf, b=bad: _signature_call(tf, b)
        cases[f"function input_signature {name}"] = lambda tf, b=bad: _signature(tf, b)
        cases[f"Variable value {name}"] = lambda tf, b=bad: _variable(tf, b)
        cases[f"Variable dtype {name}"] = lambda tf, b=bad: _variable(tf, 1.0, dtype=b)
        cases[f"Variable shape {name}"] = lambda tf, b=bad: _variable(tf, [1.0], shape=b)
        cases[f"Variable trainable {name}"] = lambda tf, b=bad: _variable(tf, 1.0, trainable=b)
        cases[f"Variable.assign {name}"] = lambda tf, b=bad: _assign(tf, b)
        cases[f"Session.run fetch {name}"] = lambda tf, b=bad: _session(tf, fetch=b)
        cases[f"Session.run feed key {name}"] = lambda tf, b=bad: _session(tf, feed=b)
        cases[f"Session.run feed value {name}"] = lambda tf, b=bad: _session(tf, value=b)
        cases[f"cond pred {name}"] = lambda tf, b=bad: _cond(tf, b)
        cases[f"while_loop vars {name}"] = lambda tf, b=bad: _while(tf, b)
    cases["tape.gradient output_gradients short"] = lambda tf: _tape_gradient(
        tf, target=[tf.constant(1.0), tf.constant(2.0)], output_gradients=[tf.constant(1.0)])
    cases["Session.run fetch missing name"] = lambda tf: _session(tf, fetch="nope:0")
    cases["Session.run feed missing name"] = lambda tf: _session(tf, feed="nope:0")
    cases["Session.run feed_dict list"] = lambda tf: _session(tf, feed=[1.0, 2.0])
    cases["Session.run feed wrong shape"] = lambda tf: _session(tf, value=[1.0, 2.0, 3.0])
    cases["cond callable pred"] = lambda tf: _cond(tf, lambda: False)
    cases["Variable shape contradicts value"] = lambda tf: _variable(
        tf, np.ones((2, 2)), shape=[3, 3])
    return cases


CASES: dict = _make_cases()


def run(case: Callable, tf: Any) -> Any:
    return case(tf)
