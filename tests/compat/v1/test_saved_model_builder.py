"""compat.v1.saved_model: Builder / simple_save / loader.load round trips and bad files.
(The corpus program v1_saved_model_builder checks the printed behaviour against TF.)"""
import json
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

v1 = kf.compat.v1


def _graph_and_session():
    graph = kf.Graph()
    with graph.as_default():
        x = v1.placeholder(kf.float32, [None], name="x")
        w = v1.get_variable("w", initializer=kf.constant(2.0))
        y = kf.identity(x * w, name="y")
    sess = v1.Session(graph=graph)
    sess.run(w.initializer)
    return graph, sess, x, y, w


def test_simple_save_round_trip_keeps_the_current_variable_values(tmp_path):
    graph, sess, x, y, w = _graph_and_session()
    with graph.as_default():
        sess.run(w.assign(5.0))
    v1.saved_model.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": y})
    with v1.Session(graph=kf.Graph()) as loaded:
        meta = v1.saved_model.load(loaded, [v1.saved_model.SERVING], str(tmp_path / "m"))
        assert meta.meta_info_def.tags == ["serve"]
        sig = meta.signature_def[v1.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        np.testing.assert_allclose(
            loaded.run(sig.outputs["y"].name, {sig.inputs["x"].name: [1.0, 2.0]}), [5.0, 10.0])


def test_add_meta_graph_adds_a_tag_set_and_needs_variables_first(tmp_path):
    graph, sess, x, y, _ = _graph_and_session()
    builder = v1.saved_model.Builder(str(tmp_path / "m"))
    with pytest.raises(AssertionError, match="add_meta_graph_and_variables"):
        builder.add_meta_graph(["train"])
    builder.add_meta_graph_and_variables(sess, ["serve"])
    with graph.as_default():
        builder.add_meta_graph(["train"], {"s": v1.saved_model.predict_signature_def(
            {"x": x}, {"y": y})})
    with pytest.raises(AssertionError, match="already been saved"):
        builder.add_meta_graph_and_variables(sess, ["other"])
    builder.save()
    with v1.Session(graph=kf.Graph()) as loaded:
        meta = v1.saved_model.loader.load(loaded, ["train"], str(tmp_path / "m"))
        assert list(meta.signature_def) == ["s"]


def test_bad_files_raise_named_errors(tmp_path):
    _, sess, x, y, _ = _graph_and_session()
    path = str(tmp_path / "m")
    v1.saved_model.simple_save(sess, path, {"x": x}, {"y": y})
    graph_file = os.path.join(path, "saved_model_v1.json")
    document = json.load(open(graph_file))
    document["meta_graphs"][0]["graph"]["nodes"][0]["op"] = "NotAnOp"
    open(graph_file, "w").write(json.dumps(document))
    with pytest.raises(errors.DataLossError, match="unknown op type 'NotAnOp'"):
        v1.saved_model.loader.load(v1.Session(graph=kf.Graph()), ["serve"], path)
    open(graph_file, "w").write("{not json")
    with pytest.raises(errors.DataLossError, match="not valid JSON"):
        v1.saved_model.loader.load(v1.Session(graph=kf.Graph()), ["serve"], path)
    with pytest.raises(OSError, match="does not exist"):
        v1.saved_model.loader.load(v1.Session(graph=kf.Graph()), ["serve"], str(tmp_path))


def test_loading_twice_into_one_graph_names_the_clash(tmp_path):
    _, sess, x, y, _ = _graph_and_session()
    path = str(tmp_path / "m")
    v1.saved_model.simple_save(sess, path, {"x": x}, {"y": y})
    with v1.Session(graph=kf.Graph()) as loaded:
        v1.saved_model.loader.load(loaded, ["serve"], path)
        with pytest.raises(ValueError, match="already has an op named"):
            v1.saved_model.loader.load(loaded, ["serve"], path)
