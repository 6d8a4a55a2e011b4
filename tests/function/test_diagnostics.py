"""What kilnflow tells you that TF does not: trace-time-only calls (np.random, random,
time), outer list/dict mutation, and computation dropped by pruning; silence when clean."""
import random
import time
import warnings

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.function.diagnostics import (KilnflowWarning, PrunedComputationWarning,
                                           TraceTimeSideEffectWarning)

HERE = "test_diagnostics.py"


def _line_of(marker):
    with open(__file__) as f:
        for number, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# <{marker}>"):
                return number
    raise AssertionError(marker)


def _record(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [w for w in caught if issubclass(w.category, KilnflowWarning)]


def _messages(caught, category):
    return [str(w.message) for w in caught if issubclass(w.category, category)]


def test_categories_are_user_warnings():
    for category in (TraceTimeSideEffectWarning, PrunedComputationWarning):
        assert issubclass(category, KilnflowWarning)
        assert issubclass(category, UserWarning)


# ---------------------------------------------------------------- frozen at trace time

def test_np_random_random_and_time_calls_name_the_users_line():
    @kf.function
    def f(x):
        a = np.random.rand()  # <np-random>
        b = random.random()  # <random>
        c = time.time()  # <time>
        return x + a + b + c

    caught = _record(lambda: f(kf.constant(1.0)))
    messages = _messages(caught, TraceTimeSideEffectWarning)
    assert len(messages) == 3
    for marker, call in (("np-random", "np.random.rand"), ("random", "random.random"),
                         ("time", "time.time")):
        expected = f"{HERE}:{_line_of(marker)}"
        found = [m for m in messages if expected in m]
        assert len(found) == 1, (marker, messages)
        assert f"`{call}(...)`" in found[0]
        assert "frozen" in found[0] and "kf.random" in found[0]


def test_frozen_value_is_really_frozen_and_warned_once():
    @kf.function
    def f(x):
        return x + np.random.uniform()  # <uniform>

    first = _record(lambda: f(kf.constant(0.0)))
    assert len(_messages(first, TraceTimeSideEffectWarning)) == 1
    values = []
    later = _record(lambda: values.extend(float(f(kf.constant(0.0))) for _ in range(3)))
    assert later == []
    later = _record(lambda: f(kf.constant([0.0, 0.0])))   # a retrace does not warn again
    assert _messages(later, TraceTimeSideEffectWarning) == []
    assert len(set(values)) == 1


def test_module_aliases_are_resolved():
    import numpy.random as npr
    from numpy import random as nr

    @kf.function
    def f(x):
        return x + npr.normal() + nr.uniform()  # <aliases>

    messages = _messages(_record(lambda: f(kf.constant(1.0))), TraceTimeSideEffectWarning)
    assert len(messages) == 2
    assert all(f"{HERE}:{_line_of('aliases')}" in m for m in messages)
    assert any("npr.normal" in m for m in messages)
    assert any("nr.uniform" in m for m in messages)


def test_functions_imported_by_name_are_recognized():
    from random import random as draw

    @kf.function
    def f(x):
        return x + draw()

    messages = _messages(_record(lambda: f(kf.constant(1.0))), TraceTimeSideEffectWarning)
    assert len(messages) == 1


# ---------------------------------------------------------------- outer mutation

def test_outer_list_and_dict_mutation_is_warned_with_the_line():
    seen = []
    cache = {}

    @kf.function
    def f(x):
        seen.append(x)  # <append>
        cache.update(last=x)  # <update>
        return x * 2

    caught = _record(lambda: f(kf.constant(1.0)))
    messages = _messages(caught, TraceTimeSideEffectWarning)
    assert len(messages) == 2
    append = next(m for m in messages if "seen.append" in m)
    assert f"{HERE}:{_line_of('append')}" in append
    assert "outer Python list 'seen'" in append and "only while tracing" in append
    update = next(m for m in messages if "cache.update" in m)
    assert f"{HERE}:{_line_of('update')}" in update
    assert "outer Python dict 'cache'" in update
    f(kf.constant(2.0))
    assert len(seen) == 1 and not hasattr(seen[0], "numpy")


def test_outer_dict_item_assignment_is_warned():
    cache = {}

    @kf.function
    def f(x):
        cache["last"] = x
        return x

    messages = _messages(_record(lambda: f(kf.constant(1.0))), TraceTimeSideEffectWarning)
    assert len(messages) == 1 and "'cache'" in messages[0]


def test_local_and_parameter_containers_are_not_warned():
    outer_name_reused = []  # noqa: F841 - the function's parameter shadows it

    @kf.function
    def f(x, outer_name_reused):
        local = []
        local.append(x)
        table = {}
        table.update(a=x)
        outer_name_reused.append(x)
        return kf.add_n(local) + table["a"]

    caught = _record(lambda: f(kf.constant(1.0), []))
    assert _messages(caught, TraceTimeSideEffectWarning) == []


# ---------------------------------------------------------------- pruning

def test_pruning_warning_names_the_function_and_what_was_dropped():
    @kf.function
    def forgetful(x):
        kf.exp(x)  # <dropped>
        kf.matmul(kf.reshape(x, [1, -1]), kf.reshape(x, [-1, 1]))
        return x + 1.0

    caught = _record(lambda: forgetful(kf.constant([1.0, 2.0])))
    messages = _messages(caught, PrunedComputationWarning)
    assert len(messages) == 1
    message = messages[0]
    assert "'forgetful'" in message
    assert "Exp" in message and "MatMul" in message and "Reshape" in message
    assert f"{HERE}:{_line_of('dropped')}" in message
    assert "never run" in message
    assert "forget a `return`" not in message     # it does return something


def test_wrapper_without_return_is_diagnosed():
    @kf.function
    def wrapper(x):
        kf.tanh(x) * 2.0

    caught = _record(lambda: wrapper(kf.constant([1.0])))
    messages = _messages(caught, PrunedComputationWarning)
    assert len(messages) == 1
    assert "'wrapper'" in messages[0] and "did you forget a `return`?" in messages[0]
    assert "Tanh" in messages[0] and "Mul" in messages[0]
    again = _record(lambda: wrapper(kf.constant([1.0, 2.0])))   # warned once per function
    assert _messages(again, PrunedComputationWarning) == []


def test_long_lists_of_dropped_ops_are_abbreviated():
    @kf.function
    def busy(x):
        y = x
        for _ in range(10):
            y = kf.sin(y)
        return x

    messages = _messages(_record(lambda: busy(kf.constant(1.0))), PrunedComputationWarning)
    assert "computes 10 ops" in messages[0]
    assert messages[0].count("Sin") == 6 and ", ..." in messages[0]


def test_stateful_work_is_not_reported_as_pruned():
    v = kf.Variable(0.0)

    @kf.function
    def update(x):
        v.assign_add(x)

    caught = _record(lambda: update(kf.constant(1.0)))
    assert _messages(caught, PrunedComputationWarning) == []
    assert float(v.numpy()) == 1.0


def test_gradient_only_function_is_not_reported_as_pruned():
    @kf.function
    def slope(x):
        with kf.GradientTape() as tape:
            tape.watch(x)
            y = 3.0 * x + 1.0
        return tape.gradient(y, x)

    caught = _record(lambda: slope(kf.constant(2.0)))
    assert _messages(caught, PrunedComputationWarning) == []


# ---------------------------------------------------------------- clean functions

def test_clean_functions_are_silent():
    w = kf.Variable(np.ones((3, 2)))

    @kf.function
    def layer(x):
        w.assign_add(kf.ones_like(w))
        return kf.tanh(kf.matmul(x, w))

    @kf.function
    def step(x):
        # gradients for inputs nobody asked about (d/dx) are pruned silently
        with kf.GradientTape() as tape:
            y = kf.reduce_sum(kf.tanh(kf.matmul(x, w)))
        return y, tape.gradient(y, w)

    @kf.function
    def plain(x, scale):
        values = [x * scale, x + scale]
        return {"sum": kf.add_n(values), "max": kf.reduce_max(x)}

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain(kf.constant([1.0, 2.0]), 2.0)
        plain(kf.constant([3.0, 4.0]), 2.0)
        layer(kf.constant(np.ones((4, 3))))
        step(kf.constant(np.ones((4, 3))))
