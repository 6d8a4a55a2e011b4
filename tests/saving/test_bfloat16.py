"""bfloat16 weights (the optional extra kilnflow[bf16], ml_dtypes): BF16 safetensors files and
checkpoints of bfloat16 variables; without the extra, a clear error naming it."""
import os
import subprocess
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.saving import safetensors as st
from kilnflow.train import Checkpoint, load_checkpoint


def _bf16():
    return pytest.importorskip("ml_dtypes").bfloat16


def test_bf16_safetensors_round_trip(tmp_path):
    bf16 = _bf16()
    value = np.array([[1.5, -2.0, 3.25], [0.0, 1e30, -1e-3]], dtype=bf16)
    path = str(tmp_path / "w.safetensors")
    st.save_file({"w": value}, path)
    with st.safe_open(path) as f:
        assert f._header["w"]["dtype"] == "BF16"
        np.testing.assert_array_equal(f.get_tensor("w"), value)
    out = st.load_file(path)["w"]
    assert out.dtype == np.dtype(bf16) and out.tobytes() == value.tobytes()


def test_reads_bf16_written_by_the_reference_library(tmp_path):
    bf16 = _bf16()
    reference = pytest.importorskip("safetensors.numpy")
    value = np.arange(6, dtype=np.float32).reshape(2, 3).astype(bf16)
    path = str(tmp_path / "ref.safetensors")
    reference.save_file({"x": value, "y": np.ones(2, np.float32)}, path)
    out = st.load_file(path)
    assert out["x"].dtype == np.dtype(bf16) and out["x"].tobytes() == value.tobytes()


def test_bf16_variables_checkpoint_round_trip(tmp_path):
    bf16 = _bf16()
    v = kf.Variable(np.array([1.5, 2.0, -3.0], np.float32), dtype=kf.bfloat16)
    assert v.dtype == kf.bfloat16
    path = Checkpoint(v=v).write(str(tmp_path / "c"))
    reader = load_checkpoint(path)
    assert reader.get_variable_to_dtype_map() == {"v/.ATTRIBUTES/VARIABLE_VALUE": kf.bfloat16,
                                                  "_CHECKPOINTABLE_OBJECT_GRAPH": kf.string}
    target = kf.Variable(np.zeros(3, np.float32), dtype=kf.bfloat16)
    buffer = target.handle.value
    Checkpoint(v=target).read(path).assert_consumed()
    assert target.dtype == kf.bfloat16 and target.handle.value is buffer
    assert buffer.dtype == np.dtype(bf16) and buffer.astype(np.float32).tolist() == [1.5, 2, -3]
    with pytest.raises(ValueError, match="dtype bfloat16 but variable .* is float32"):
        Checkpoint(v=kf.Variable(np.zeros(3, np.float32))).read(path)


_WITHOUT_EXTRA = r"""
import sys
sys.modules["ml_dtypes"] = None  # as if the extra were not installed
import kilnflow as kf
from kilnflow.saving import safetensors as st
from kilnflow.train import Checkpoint
assert kf.bfloat16.name == "bfloat16" and kf.as_dtype("bfloat16") is kf.bfloat16
try:
    kf.constant([1.0], dtype=kf.bfloat16)
except ModuleNotFoundError as exc:
    print("dtype:", exc)
try:
    st.load_file(sys.argv[1] + ".safetensors")
except st.SafetensorsError as exc:
    print("file:", exc)
try:
    Checkpoint(v=kf.Variable([0.0])).read(sys.argv[1])
except ValueError as exc:
    print("checkpoint:", exc)
"""


def test_without_the_extra_errors_name_it(tmp_path):
    _bf16()
    path = Checkpoint(v=kf.Variable([1.0], dtype=kf.bfloat16)).write(str(tmp_path / "c"))
    out = subprocess.run([sys.executable, "-c", _WITHOUT_EXTRA, path], capture_output=True,
                         text=True, timeout=120, cwd=os.path.dirname(os.path.dirname(
                             os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["dtype", "file", "checkpoint"]
    assert all("kilnflow[bf16]" in line for line in lines), lines
    assert "c.safetensors" in lines[1] and "c.json" in lines[2]
