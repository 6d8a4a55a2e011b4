"""cse: equal ops compute once; random, stateful and differently-ordered ops stay apart."""
import numpy as np

import kilnflow as kf
from kilnflow.passes.cse import cse
from kilnflow.passes.prune import prune
from tests.passes._helpers import check_same, op_types, trace

SPEC = kf.TensorSpec([3], kf.float32)
X = np.array([1.0, -2.0, 3.5], np.float32)
Y = np.array([0.5, 4.0, -1.0], np.float32)


def test_equal_ops_merge_with_commutative_inputs_swapped_and_constants_by_value():
    def f(x, y):
        a = x * y
        b = y * x                              # Mul is commutative
        c = x - y
        d = y - x                              # Sub is not
        k1 = kf.constant([1.0, 2.0, 3.0])
        k2 = kf.constant([1.0, 2.0, 3.0])      # equal value: one constant
        return (a + b) + (c + d) + (k1 + k2)

    graph = trace(f, SPEC, SPEC)
    after = prune(cse(graph))
    assert after.pretty() == "\n".join([
        "x:0 = Placeholder(dtype=float32, shape=TensorShape([3]))",
        "y:0 = Placeholder(dtype=float32, shape=TensorShape([3]))",
        "mul:0 = Mul(x:0, y:0)",
        "sub:0 = Sub(x:0, y:0)",
        "sub_1:0 = Sub(y:0, x:0)",
        "Const:0 = Const(value=[1.,2.,3.])",
        "add:0 = AddV2(mul:0, mul:0)",
        "add_1:0 = AddV2(sub:0, sub_1:0)",
        "add_2:0 = AddV2(add:0, add_1:0)",
        "add_3:0 = AddV2(Const:0, Const:0)",
        "add_4:0 = AddV2(add_2:0, add_3:0)"])
    check_same(graph, after, [X, Y])


def test_merging_cascades_through_consumers():
    def f(x):
        return kf.exp(x * 2.0) + kf.exp(x * 2.0)

    after = prune(cse(trace(f, SPEC)))
    assert op_types(after).count("Exp") == 1 and op_types(after).count("Mul") == 1


def test_random_draws_and_variable_reads_are_never_merged():
    v = kf.Variable([1.0, 2.0, 3.0])

    def f(x):
        a = kf.random.uniform([3]) + kf.random.uniform([3])
        v.assign_add(x)
        return a + v.read_value() + v.read_value()

    graph = trace(f, SPEC)
    after = cse(graph)
    assert op_types(after).count("RandomUniform") == 2
    assert op_types(after).count("ReadVariableOp") == 2
    after.lint()


def test_inputs_with_equal_specs_stay_distinct():
    graph = trace(lambda x, y: x + y, SPEC, SPEC)
    assert cse(graph) is graph


def test_control_inputs_are_part_of_equality_and_waiters_follow_the_merge():
    def f(x):
        a = kf.exp(x)
        p = kf.print("side effect")
        with kf.control_dependencies([p]):
            b = kf.exp(x)                  # must run after the print: stays separate
        c = kf.exp(x)                      # equal to `a`: merged
        with kf.control_dependencies([c]):
            d = kf.identity(b)             # waited for `c`: now waits for `a`
        return a + b + c + d

    graph = trace(f, SPEC)
    after = cse(graph)
    assert op_types(after).count("Exp") == 2
    waits = {op.name: [c.name for c in op.control_inputs] for op in after.operations}
    assert waits["Exp_1"] == ["PrintV2"] and waits["Identity"] == ["Exp"]
    check_same(graph, after, [X])
