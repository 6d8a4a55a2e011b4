"""saved_model.save/load: round trips, a fresh process, and corrupt files."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.module import Module
from kilnflow.saving import saved_model


class Affine(Module):
    def __init__(self):
        super().__init__()
        self.w = kf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
        self.b = kf.Variable(np.ones(2, np.float32))

    @kf.function(input_signature=[kf.TensorSpec([None, 3], kf.float32)])
    def __call__(self, x):
        y = kf.matmul(x, self.w) + self.b
        if kf.reduce_sum(y) > 100.0:
            y = y / 2.0
        return {"y": y, "total": kf.reduce_sum(x)}


@pytest.fixture
def saved(tmp_path):
    model = Affine()
    path = str(tmp_path / "model")
    saved_model.save(model, path)
    return model, path


def test_round_trip_gives_equal_outputs(saved):
    model, path = saved
    loaded = saved_model.load(path)
    for x in (np.ones((2, 3), np.float32), np.full((5, 3), 9.0, np.float32)):
        expected, got = model(x), loaded(x)
        np.testing.assert_array_equal(expected["y"].numpy(), got["y"].numpy())
        np.testing.assert_array_equal(expected["total"].numpy(), got["total"].numpy())
    assert len(loaded.variables) == 2


def test_loads_in_a_fresh_process_without_the_source(saved):
    _, path = saved
    code = ("import numpy as np\nfrom kilnflow.saving import saved_model\n"
            f"m = saved_model.load({path!r})\n"
            "print(m(np.ones((2, 3), np.float32))['y'].numpy().tolist())")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=root, env={**os.environ, "PYTHONPATH": root})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[[7.0, 10.0], [7.0, 10.0]]"


def test_truncated_json_names_the_file(saved):
    _, path = saved
    graph_file = os.path.join(path, "saved_model.json")
    data = open(graph_file, "rb").read()
    open(graph_file, "wb").write(data[: len(data) // 2])
    with pytest.raises(ValueError, match="saved_model.json.*(not valid JSON|damaged)"):
        saved_model.load(path)


def test_wrong_version_is_rejected(saved):
    _, path = saved
    graph_file = os.path.join(path, "saved_model.json")
    document = saved_model.read_document(path)
    document["version"] = 99
    saved_model.write_document(path, document)
    with pytest.raises(ValueError, match="version 99 is not supported"):
        saved_model.load(path)


def test_tampered_op_type_is_rejected(saved):
    _, path = saved
    graph_file = os.path.join(path, "saved_model.json")
    document = saved_model.read_document(path)
    nodes = document["functions"]["__call__"]["graph"]["nodes"]
    nodes[-1]["op"] = "os.system"
    saved_model.write_document(path, document)
    with pytest.raises(ValueError, match="unknown op type 'os.system'"):
        saved_model.load(path)


def test_tampered_shape_is_rejected(saved):
    _, path = saved
    graph_file = os.path.join(path, "saved_model.json")
    document = saved_model.read_document(path)
    for node in document["functions"]["__call__"]["graph"]["nodes"]:
        if node["op"] == "MatMul":
            node["outputs"][0]["dtype"] = "int32"
    saved_model.write_document(path, document)
    with pytest.raises(ValueError, match="do not match"):
        saved_model.load(path)


def test_truncated_weights_file_is_rejected(saved):
    _, path = saved
    weights = os.path.join(path, "variables.safetensors")
    data = open(weights, "rb").read()
    open(weights, "wb").write(data[:-4])
    with pytest.raises(ValueError, match="variables.safetensors"):
        saved_model.load(path)


def test_missing_directory():
    with pytest.raises(ValueError, match="not found"):
        saved_model.load("/nonexistent/kilnflow/model")


def test_saved_model_tag_and_method_constants_are_tfs():
    assert (kf.saved_model.SERVING, kf.saved_model.TRAINING) == ("serve", "train")
    assert kf.saved_model.PREDICT_METHOD_NAME == "tensorflow/serving/predict"
    assert kf.saved_model.LoadOptions(allow_partial_checkpoint=True).allow_partial_checkpoint
