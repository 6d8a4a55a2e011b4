"""kf.Module: variables and submodules found through attributes and containers, TF's order,
names and name scopes, and @kf.function methods (seed E30)."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow.module import Module, camel_to_snake


class Leaf(Module):
    def __init__(self, value, name=None):
        super().__init__(name=name)
        self.v = kf.Variable(value, name="v")
        self.frozen = kf.Variable(0.0, trainable=False, name="frozen")


class Tree(Module):
    def __init__(self):
        super().__init__()
        self.zeta = Leaf(3.0, name="z")
        self.alpha = [Leaf(1.0, name="a0"), (Leaf(2.0, name="a1"),)]
        self.mid = {"k2": kf.Variable(5.0, name="k2"), "k1": kf.Variable(4.0, name="k1")}
        self.same = self.mid["k1"]  # seen twice, listed once
        self.number = 7


def test_variables_and_order():
    tree = Tree()
    # Own attributes first, sorted (alpha < mid < same < zeta); then submodules in the
    # order they were found, each depth first.
    names = [v.name for v in tree.variables]
    assert names == ["k1:0", "k2:0"] + ["frozen:0", "v:0"] * 3
    assert [float(v.numpy()) for v in tree.trainable_variables] == [4.0, 5.0, 1.0, 2.0, 3.0]
    assert len(tree.non_trainable_variables) == 3
    assert [m.name for m in tree.submodules] == ["a0", "a1", "z"]
    paths = [p for p, _ in tree._flatten(predicate=lambda x: isinstance(x, kf.Variable),
                                         with_path=True)]
    assert paths[:4] == [("mid", "k1"), ("mid", "k2"), ("alpha", 0, "frozen"), ("alpha", 0, "v")]


def test_names():
    assert Tree().name == "tree"
    assert camel_to_snake("MyHTTPModule") == "my_http_module"
    assert Module(name="custom").name == "custom"
    with pytest.raises(ValueError, match="not a valid module name"):
        Module(name="has space")


def test_name_scope_names_graph_ops():
    class Scaled(Module):
        @Module.with_name_scope
        def __call__(self, x):
            return kf.multiply(x, 2.0, name="double")
    m = Scaled(name="scaled")
    assert m.name_scope.name == "scaled/"
    with kf.Graph().as_default():
        y = m(kf.constant(1.0))
        assert y.op.name == "scaled/double"
    assert float(m(kf.constant(1.5))) == 3.0  # eagerly the scope is a no-op


def test_function_methods_trace_per_instance():
    """Seed E30: variables as module attributes, decorated methods, module.variables."""
    class Dense(Module):
        def __init__(self, n_in, n_out):
            super().__init__()
            self.w = kf.Variable(np.ones((n_in, n_out), np.float32), name="w")
            self.b = kf.Variable(np.zeros(n_out, np.float32), name="b")
            self.calls = 0

        @kf.function
        def __call__(self, x):
            self.calls += 1  # Python side effect: runs while tracing only
            return kf.matmul(x, self.w) + self.b
    a, b = Dense(2, 3), Dense(2, 3)
    b.w.assign(np.full((2, 3), 2.0, np.float32))
    x = kf.ones([1, 2])
    assert a(x).numpy().tolist() == [[2.0, 2.0, 2.0]]
    assert b(x).numpy().tolist() == [[4.0, 4.0, 4.0]]
    a(x)
    assert (a.calls, b.calls) == (1, 1)
    assert [v.name for v in a.trainable_variables] == ["b:0", "w:0"]
    assert a.variables[1] is a.w


def test_module_finds_keras_layer_weights():
    from kilnflow import keras

    class Unassigned(keras.layers.Layer):
        def build(self, input_shape):
            self.add_weight("hidden", shape=[2])  # never stored as an attribute

        def call(self, x):
            return x

    class Holder(Module):
        def __init__(self):
            super().__init__()
            self.layer = Unassigned(name="unassigned")
            self.dense = keras.layers.Dense(1, name="d")
    holder = Holder()
    holder.layer(np.ones((1, 2), np.float32))
    holder.dense(np.ones((1, 2), np.float32))
    # Keras 3 variables: `path` is the full name (TF 2.21)
    assert [v.path for v in holder.variables] == ["d/kernel", "d/bias", "unassigned/hidden"]
