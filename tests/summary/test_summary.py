"""kf.summary writes real TensorBoard event files: read back here with TensorBoard's own
loader (tags, steps, values, plugin), eagerly and from inside kf.function (at run time)."""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import kilnflow as kf

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing import plugin_event_accumulator as pea  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402


def _load(logdir):
    acc = pea.EventAccumulator(logdir, size_guidance={pea.TENSORS: 0})
    acc.Reload()
    return acc


def _values(acc, tag):
    return [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]


def test_eager_scalars_read_back_with_tags_steps_values_and_plugin(tmp_path):
    writer = kf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        for step in range(3):
            assert bool(kf.summary.scalar("loss", 1.0 / (step + 1), step=step))
    writer.close()
    acc = _load(str(tmp_path))
    assert "loss" in acc.PluginTagToContent("scalars")
    got = _values(acc, "loss")
    assert [s for s, _ in got] == [0, 1, 2]
    np.testing.assert_allclose([float(v) for _, v in got], [1.0, 0.5, 1 / 3], rtol=1e-6)


def test_function_writes_at_run_time_on_every_call(tmp_path):
    writer = kf.summary.create_file_writer(str(tmp_path))
    step = kf.Variable(0, dtype=kf.int64)

    @kf.function
    def train(x):
        step.assign_add(1)
        with writer.as_default():
            kf.summary.scalar("total", kf.reduce_sum(x), step=step)
            kf.summary.histogram("x", x, step=step, buckets=4)
        return x * 2.0

    for i in range(4):
        train(kf.constant([1.0, 2.0, float(i)]))
    assert train.experimental_get_tracing_count() == 1
    writer.flush()
    acc = _load(str(tmp_path))
    assert [(s, float(v)) for s, v in _values(acc, "total")] == \
        [(1, 3.0), (2, 4.0), (3, 5.0), (4, 6.0)]
    hist = _values(acc, "x")
    assert "x" in acc.PluginTagToContent("histograms")
    assert hist[-1][1].shape == (4, 3) and hist[-1][1][:, 2].sum() == 3


def test_histogram_buckets_match_tensorboards_reference(tmp_path):
    from tensorboard.plugins.histogram.summary_v2 import histogram_pb
    data = np.random.default_rng(1).standard_normal(500)
    writer = kf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=7):
        kf.summary.histogram("h", data, buckets=12)
    writer.close()
    ours = _values(_load(str(tmp_path)), "h")[0][1]
    theirs = tensor_util.make_ndarray(histogram_pb("h", data, buckets=12).value[0].tensor)
    np.testing.assert_allclose(ours, theirs)


def test_image_text_audio(tmp_path):
    writer = kf.summary.create_file_writer(str(tmp_path))
    images = np.random.default_rng(0).random((5, 4, 6, 3)).astype(np.float32)
    with writer.as_default(step=2):
        kf.summary.image("img", images, max_outputs=2)
        kf.summary.text("notes", "loss is **down**")
        kf.summary.audio("beep", np.sin(np.linspace(0, 50, 400)).reshape(1, 400, 1), 8000)
    writer.close()
    acc = _load(str(tmp_path))
    assert "img" in acc.PluginTagToContent("images")
    assert "notes" in acc.PluginTagToContent("text")
    assert "beep" in acc.PluginTagToContent("audio")
    img = _values(acc, "img")[0][1]
    assert img.shape == (4,) and img[0] == b"6" and img[1] == b"4"
    assert img[2].startswith(b"\x89PNG")
    pil = pytest.importorskip("PIL.Image")
    import io
    decoded = np.asarray(pil.open(io.BytesIO(img[2])))
    np.testing.assert_array_equal(decoded, (images[0] * 255 + 0.5).astype(np.uint8))
    assert _values(acc, "notes")[0][1] == b"loss is **down**"
    wav = _values(acc, "beep")[0][1]
    assert wav.shape == (1,) and wav[0].startswith(b"RIFF")  # labels dropped on load


def test_default_step_record_if_and_no_writer(tmp_path):
    assert not bool(kf.summary.scalar("nowhere", 1.0, step=0))   # no default writer
    writer = kf.summary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(ValueError, match="no step set"):
            kf.summary.scalar("a", 1.0)
        kf.summary.experimental.set_step(5)
        try:
            assert kf.summary.should_record_summaries()
            kf.summary.scalar("a", 1.0)
            with kf.summary.record_if(False):
                assert not bool(kf.summary.scalar("a", 2.0))
        finally:
            kf.summary.experimental.set_step(None)
    step = kf.Variable(0, dtype=kf.int64)

    @kf.function
    def every_other(x):
        step.assign_add(1)
        with writer.as_default(), kf.summary.record_if(lambda: step % 2 == 0):
            return kf.summary.scalar("b", x, step=step)

    written = [bool(every_other(kf.constant(float(i)))) for i in range(4)]
    assert written == [False, True, False, True]
    writer.close()
    acc = _load(str(tmp_path))
    assert [(s, float(v)) for s, v in _values(acc, "a")] == [(5, 1.0)]
    assert [(s, float(v)) for s, v in _values(acc, "b")] == [(2, 1.0), (4, 3.0)]


def test_bad_input_names_the_summary(tmp_path):
    writer = kf.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=0):
        with pytest.raises(ValueError, match="scalar"):
            kf.summary.scalar("s", [1.0, 2.0])
        with pytest.raises(ValueError, match="'im'.*rank 4"):
            kf.summary.image("im", np.zeros((3, 3)))
        with pytest.raises(TypeError, match="'t'"):
            kf.summary.text("t", 3)
        with pytest.raises(kf.errors.InvalidArgumentError, match="step must be an integer"):
            kf.summary.scalar("s", 1.0, step=1.5)
    writer.close()


@pytest.mark.usefixtures("without_autoclustering")
def test_graph_trace_export_shows_the_traced_function(tmp_path):
    writer = kf.summary.create_file_writer(str(tmp_path))

    @kf.function
    def model(x):
        with kf.name_scope("dense"):
            y = kf.nn.relu(kf.matmul(x, kf.ones([3, 2])))
        if kf.reduce_sum(y) > 0:
            y = y * 2.0
        return y

    kf.summary.trace_on(graph=True, profiler=True)
    model(kf.ones([1, 3]))
    with writer.as_default():
        kf.summary.trace_export("model_trace", step=0)
    writer.close()
    acc = _load(str(tmp_path))
    graph = acc.Graph()
    types = {n.op for n in graph.node}
    names = [n.name for n in graph.node]
    assert "MatMul" in types and "Relu" in types
    assert any(name.startswith("dense/") for name in names)
    matmul = next(n for n in graph.node if n.op == "MatMul")
    assert matmul.attr["T"].type == 1                      # DT_FLOAT
    assert [d.size for d in matmul.attr["_output_shapes"].list.shape[0].dim] == [1, 2]
    if_node = next(n for n in graph.node if n.op in ("If", "StatelessIf"))
    bodies = {f.signature.name for f in graph.library.function}
    assert if_node.attr["then_branch"].func.name in bodies
    from tensorboard.compat.proto import config_pb2
    from tensorboard.plugins.graph import metadata
    assert "model_trace" in acc.PluginTagToContent(metadata.PLUGIN_NAME_TAGGED_RUN_METADATA)
    raw = tensor_util.make_ndarray(acc.Tensors("model_trace")[0].tensor_proto)[0]
    stats = config_pb2.RunMetadata.FromString(raw).step_stats.dev_stats[0].node_stats
    assert "MatMul" in {s.node_name.split("/")[-1] for s in stats}


def test_without_tensorboard_the_error_names_the_extra(tmp_path):
    code = ("import sys; sys.modules['tensorboard'] = None\n"
            "import kilnflow as kf\n"
            "try:\n    kf.summary.create_file_writer(sys.argv[1])\n"
            "except ImportError as e:\n    print(e)\n")
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, env=env, check=True).stdout
    assert "kilnflow[tensorboard]" in out


def test_summary_op_is_not_pruned_nor_reported(tmp_path):
    writer = kf.summary.create_file_writer(str(tmp_path))

    @kf.function
    def log_only(x):
        with writer.as_default(step=0):
            kf.summary.scalar("m", kf.reduce_mean(x))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_only(kf.constant([1.0, 3.0]))
    writer.close()
    assert [(s, float(v)) for s, v in _values(_load(str(tmp_path)), "m")] == [(0, 2.0)]


def test_graph_def_of_a_loop_passes_tensorboards_graph_preparation():
    from tensorboard.backend import process_graph
    from kilnflow.summary.graph_def import graph_def

    @kf.function
    def loop(x):
        i = kf.constant(0)
        while i < 3:
            x = x * 2.0
            i += 1
        return x

    proto = graph_def(loop.get_concrete_function(kf.constant([1.0])).graph)
    process_graph.prepare_graph_for_ui(proto, limit_attr_size=1024,
                                       large_attrs_key="_too_large_attrs")
    loop_node = next(n for n in proto.node if n.op in ("While", "StatelessWhile"))
    bodies = {f.signature.name: f for f in proto.library.function}
    body = bodies[loop_node.attr["body"].func.name]
    assert any(n.op == "Mul" for n in body.node_def)
    const = next(n for n in proto.node if n.op == "Const")
    assert const.attr["value"].tensor.int_val == [0]
