"""Shared helpers for the pass tests: trace a function to a graph, run graphs both ways."""
import warnings

import numpy as np

import kilnflow as kf
from kilnflow.runtime import codegen, loader
from kilnflow.runtime.interpreter import evaluate


def trace(fn, *specs):
    """The traced (unoptimized) graph of `fn` for these TensorSpecs / tensors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kf.function(fn).get_concrete_function(*specs).traced_graph


def interpret(graph, arrays):
    return evaluate(graph.operations, graph.inputs, graph.outputs, list(arrays))


def compiled(graph, arrays):
    source, globals_, _ = codegen.generate("probe", graph.operations, graph.inputs,
                                           graph.outputs)
    return list(loader.load(source, globals_, "probe")(*arrays))


def op_types(graph):
    return [op.type for op in graph.operations]


def check_same(before, after, arrays, exact=True, rtol=2e-6):
    """`after` lints, and gives `before`'s results in the interpreter and in generated code."""
    after.lint()
    want = interpret(before, [a.copy() for a in arrays])
    for run in (interpret, compiled):
        got = run(after, [a.copy() for a in arrays])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g, w = np.asarray(g), np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
            if exact:
                np.testing.assert_array_equal(g, w)
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)
    return want
