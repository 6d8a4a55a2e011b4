"""Each corpus program prints what TensorFlow 2.21 printed for it."""
import pytest

import kilnflow as kf
from tests.corpus.runner import expected_output, program_names, run_program


# Top-level modules of kilnflow's optional extras (pyproject.toml).
OPTIONAL_EXTRAS = {"tensorboard", "onnx", "onnxruntime", "ml_dtypes", "h5py", "ray", "numba",
                   "scipy", "safetensors"}


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
    try:
        printed = run_program(name)
    except ModuleNotFoundError as missing:  # a program that reads files with an optional extra
        if (missing.name or "").split(".")[0] not in OPTIONAL_EXTRAS:
            raise
        pytest.skip(f"{name} needs {missing.name} (an optional extra)")
    assert printed == expected_output(name)


def test_corpus_is_large_enough():
    assert len(program_names()) >= 40
