"""Every program of three_mode_programs.py gives the same result as plain Python (eager
tensors), as a @kf.function, and in a compat.v1 Session built with kf.autograph.to_graph."""
import numpy as np
import pytest

import kilnflow as kf

from .three_mode_programs import PROGRAMS as FIRST_PROGRAMS
from .three_mode_programs_defined import PROGRAMS as DEFINED_IN_LOOPS

PROGRAMS = FIRST_PROGRAMS + DEFINED_IN_LOOPS

v1 = kf.compat.v1


def _dtype(value):
    return kf.float32 if isinstance(value, float) else kf.int32


def _as_tensors(args):
    return [kf.constant(a, dtype=_dtype(a)) for a in args]


def _value(result):
    return np.asarray(result).tolist()


def test_the_corpus_has_at_least_sixty_programs():
    assert len(PROGRAMS) >= 70


@pytest.mark.parametrize("program, inputs", PROGRAMS, ids=[p[0].__name__ for p in PROGRAMS])
def test_python_function_and_session_agree(program, inputs):
    expected = [_value(program(*_as_tensors(args))) for args in inputs]
    compiled = kf.function(program)
    traced = [_value(compiled(*_as_tensors(args))) for args in inputs]
    assert traced == expected, f"{program.__name__}: @kf.function vs Python"
    graph = kf.Graph()
    with graph.as_default():
        placeholders = [v1.placeholder(_dtype(a), []) for a in inputs[0]]
        output = kf.autograph.to_graph(program)(*placeholders)
    with v1.Session(graph=graph) as sess:
        session = [_value(sess.run(output, dict(zip(placeholders, args)))) for args in inputs]
    np.testing.assert_allclose(session, expected, rtol=1e-6,
                               err_msg=f"{program.__name__}: Session vs Python")


def test_python_list_loop_is_unrolled_in_the_traced_graph():
    @kf.function
    def weighted(x):
        s = x * 0.0
        for w in [1.0, 2.0, 3.0]:
            s = s + x * w
        return s

    concrete = weighted.get_concrete_function(kf.constant(1.0))
    types = [op.type for op in concrete.traced_graph.get_operations()]
    assert "While" not in types and "StatelessWhile" not in types
    assert types.count("Mul") == 4  # x * 0.0, then one x * w per element, before passes
    assert float(weighted(kf.constant(2.0))) == 12.0
