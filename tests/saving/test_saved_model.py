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


@pytest.mark.parametrize("name", ["../variables.safetensors", "/etc/passwd", "..", "",
                                  "sub/variables.safetensors"])
def test_weights_name_leaving_the_directory_is_refused(saved, name):
    _, path = saved
    document = saved_model.read_document(path)
    document["weights"] = name
    saved_model.write_document(path, document)
    with pytest.raises(saved_model.SavedModelError, match="plain file name"):
        saved_model.load(path)


def test_v1_saved_model_weights_must_be_the_ones_it_was_saved_with(tmp_path):
    """compat.v1's saved model records its weights' sha256: weights from another save (a
    copied or mixed directory) are refused, not loaded under the wrong graph."""
    v1 = kf.compat.v1

    def save(path, value):
        graph = kf.Graph()
        with graph.as_default():
            x = v1.placeholder(kf.float32, [None], name="x")
            w = v1.get_variable("w", initializer=kf.constant(value))
            y = kf.identity(x * w, name="y")
            with v1.Session(graph=graph) as sess:
                sess.run(w.initializer)
                v1.saved_model.simple_save(sess, path, {"x": x}, {"y": y})

    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    save(a, 2.0)
    save(b, 3.0)
    weights = "variables_v1.safetensors"
    with open(os.path.join(b, weights), "rb") as f:
        other = f.read()
    with open(os.path.join(a, weights), "wb") as f:
        f.write(other)
    with v1.Session(graph=kf.Graph()) as sess:
        with pytest.raises(kf.errors.DataLossError, match="does not match the weights"):
            v1.saved_model.load(sess, ["serve"], a)
