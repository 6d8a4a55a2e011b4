"""Helpers shared by the control-flow op tests: run a function eagerly and under
@kf.function and compare, and look at what a trace built."""
import numpy as np

import kilnflow as kf


def flat(value):
    """Nested lists / tuples / dicts of tensors -> a flat list of NumPy arrays."""
    if isinstance(value, dict):
        return [a for key in sorted(value) for a in flat(value[key])]
    if isinstance(value, (list, tuple)):
        return [a for item in value for a in flat(item)]
    return [np.asarray(value)]


def structure(value):
    if isinstance(value, dict):
        return {key: structure(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(structure(v) for v in value)
    return "leaf"


def eager_and_function(fn, *args):
    """fn(*args) eagerly and under @kf.function: same structure, dtypes and values."""
    eager = fn(*args)
    compiled = kf.function(fn)(*args)
    assert structure(compiled) == structure(eager)
    for got, expected in zip(flat(compiled), flat(eager)):
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    return eager


def generated_code(fn, *args):
    return kf.function(fn).get_concrete_function(*args).code


def op_types(fn, *args):
    graph = kf.function(fn).get_concrete_function(*args).traced_graph
    return {op.type for op in graph.operations}
