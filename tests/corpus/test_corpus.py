"""Each corpus program prints what TensorFlow 2.21 printed for it."""
import pytest

import kilnflow as kf
from tests.corpus.runner import expected_output, program_names, run_program


@pytest.fixture(autouse=True)
def fresh_global_state():
    """Programs may switch to graph mode or seed the global RNG; the next
    program (and the rest of the suite) must not see it."""
    kf.compat.v1.reset_default_graph()
    yield
    kf.compat.v1.enable_eager_execution()
    kf.compat.v1.reset_default_graph()
    kf.random.set_seed(None)


@pytest.mark.parametrize("name", program_names())
def test_program_prints_what_tf_printed(name):
    assert run_program(name) == expected_output(name)


def test_corpus_is_large_enough():
    assert len(program_names()) >= 40
