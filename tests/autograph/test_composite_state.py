"""Items of dicts and lists, and attributes of plain objects, assigned inside tensor loops
and branches are loop/branch state (TF's composite names): plain Python, kf.function and a
compat.v1 Session agree."""
import numpy as np
import pytest

import kilnflow as kf


def dict_counter(x):
    d = {"a": 0}
    while x > 0:
        d["a"] += 1
        x -= 1
    return d["a"]


def list_accumulator(x):
    acc = [kf.constant(0), kf.constant(10)]
    for i in kf.range(x):
        acc[0] = acc[0] + i
    if x > 2:
        acc[1] = acc[1] * 2
    return acc[0] + acc[1]


def nested_item(x):
    state = {"totals": [kf.constant(0.0), kf.constant(1.0)]}
    while x > 0:
        state["totals"][0] += 2.0
        state["totals"][1] *= 2.0
        x -= 1
    return state["totals"][0] + state["totals"][1]


def branch_item(x):
    d = {"n": kf.constant(0)}
    if x > 0:
        d["n"] = d["n"] + 1
    else:
        d["n"] = d["n"] - 1
    return d["n"]


def item_in_both_loop_and_branch(x):
    counts = {"even": 0, "odd": 0}
    i = kf.constant(0)
    while i < x:
        if i % 2 == 0:
            counts["even"] += 1
        else:
            counts["odd"] += 1
        i += 1
    return counts["even"] * 10 + counts["odd"]


class Box:
    """A plain Python object whose attributes the programs below change."""

    def __init__(self, count=0):
        self.count = count

    def bump(self, by):
        self.count = self.count + by


def attribute_counter(x):
    box = Box()
    while x > 0:
        box.count += 1
        x -= 1
    return box.count


def attribute_in_branch(x):
    box = Box(kf.constant(3))
    if x > 0:
        box.count = box.count * x
    else:
        box.count = box.count - 1
    return box.count


def attribute_changed_by_a_method(x):
    box = Box(kf.constant(0))
    i = kf.constant(0)
    while i < x:
        box.bump(i)  # the method sees the loop's value of box.count
        box.count = box.count + 0
        i += 1
    return box.count


def nested_attribute_in_loop_and_branch(x):
    outer = Box(Box(kf.constant(0)))
    for i in kf.range(x):
        if i % 2 == 0:
            outer.count.count += i
        else:
            outer.count.count -= 1
    return outer.count.count


def attribute_read_in_loop_condition(x):
    box = Box(kf.constant(1))
    while box.count < x:
        box.count = box.count * 2
    return box.count


PROGRAMS = [(attribute_counter, [5, 0, 1]), (attribute_in_branch, [2, -1]),
            (attribute_changed_by_a_method, [4, 0]),
            (nested_attribute_in_loop_and_branch, [5, 0]),
            (attribute_read_in_loop_condition, [9, 0]),
            (dict_counter, [5, 0, 1]), (list_accumulator, [4, 1, 0]),
            (nested_item, [3, 0]), (branch_item, [1, -1]),
            (item_in_both_loop_and_branch, [5, 4, 0])]


def _python_value(fn, n):
    # plain Python on Python ints where the program allows it, else eager tensors
    return int(np.asarray(fn(kf.constant(n))))


@pytest.mark.parametrize("fn, inputs", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_function_agrees_with_python(fn, inputs):
    compiled = kf.function(fn)
    for n in inputs:
        assert int(compiled(kf.constant(n))) == _python_value(fn, n), (fn.__name__, n)


@pytest.mark.parametrize("fn, inputs", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_session_agrees_with_python(fn, inputs):
    expected = [_python_value(fn, n) for n in inputs]  # eagerly, before any graph is default
    graph = kf.compat.v1.Graph()
    with graph.as_default():
        x = kf.compat.v1.placeholder(kf.int32, [])
        y = kf.autograph.to_graph(fn)(x)
    with kf.compat.v1.Session(graph=graph) as sess:
        got = [int(sess.run(y, {x: n})) for n in inputs]
    assert got == expected, fn.__name__


def test_dict_counter_counts_every_iteration():
    # the bug this guards against: the item was not loop state and ended at 4 (or 0), not 5
    assert int(kf.function(dict_counter)(kf.constant(5))) == 5



class Accumulator(kf.Module):
    def __init__(self):
        super().__init__()
        self.total = kf.constant(0)

    @kf.function
    def add_while_positive(self, x):
        while x > 0:
            self.total = self.total + x
            x -= 1
        return self.total


def test_self_attribute_is_loop_state_in_a_method():
    # TF: `self.total` is a composite name of the loop; without it the loop leaked a graph
    # tensor out of its body (an error, or a stale value)
    acc = Accumulator()
    assert int(acc.add_while_positive(kf.constant(4))) == 10


def test_attribute_first_set_in_a_tensor_loop_is_defined_by_it_as_tf_does():
    def create_in_loop(x):
        box = Box()
        del box.count
        while x > 0:
            box.count = x
            x -= 1
        return box.count

    assert int(kf.function(create_in_loop)(kf.constant(2))) == create_in_loop(2) == 1
    with pytest.raises(kf.errors.InvalidArgumentError,
                       match=r"loop must iterate at least once to initialize box\.count"):
        kf.function(create_in_loop)(kf.constant(0))


def test_a_dict_key_first_set_in_a_tensor_loop_needs_one_iteration():
    # TF: `d['y']` is a new composite name, defined automatically; zero iterations fail
    # its runtime check instead of returning a made-up value
    def gains_a_key(n):
        d = {"x": n * 0}
        for i in kf.range(n):
            d["y"] = i * 2
        return d["y"]

    assert int(kf.function(gains_a_key)(kf.constant(3))) == gains_a_key(3) == 4
    with pytest.raises(kf.errors.InvalidArgumentError, match="iterate at least once"):
        kf.function(gains_a_key)(kf.constant(0))


def test_a_dict_that_loses_or_changes_keys_in_a_tensor_loop_is_still_an_error():
    def changes_a_key(n):
        d = {"x": n * 0}
        for i in kf.range(n):
            d = {"y": i}
        return d

    with pytest.raises(TypeError, match="'d' changes its structure"):
        kf.function(changes_a_key)(kf.constant(3))
