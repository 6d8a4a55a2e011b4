"""kf.summary writes real TensorBoard event files: read back here with TensorBoard's own
loader (tags, steps, values, plugin), eagerly and from inside kf.function (at run time)."""
import glob
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
    np.testing.assert_array_equal(decoded, (images[0] * 255.5).astype(np.uint8))  # as TF
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


def _run_metadata(acc, tag):
    from tensorboard.compat.proto import config_pb2
    raw = tensor_util.make_ndarray(acc.Tensors(tag)[0].tensor_proto).reshape(-1)[0]
    return config_pb2.RunMetadata.FromString(raw)


@pytest.mark.usefixtures("without_autoclustering")
@pytest.mark.parametrize("profiled", [False, True])
def test_graph_trace_export_shows_the_traced_function(tmp_path, profiled):
    # TF 2.21 writes one summary tagged with the trace's name, plugin
    # graph_run_metadata_graph (graph_run_metadata when profiled), content b"1", holding a
    # RunMetadata whose function_graphs are the functions run
    writer = kf.summary.create_file_writer(str(tmp_path))

    @kf.function
    def model(x):
        with kf.name_scope("dense"):
            y = kf.nn.relu(kf.matmul(x, kf.ones([3, 2])))
        if kf.reduce_sum(y) > 0:
            y = y * 2.0
        return y

    kf.summary.trace_on(graph=True, profiler=profiled,
                        profiler_outdir=str(tmp_path) if profiled else None)
    model(kf.ones([1, 3]))
    with writer.as_default():
        kf.summary.trace_export("model_trace", step=0)
    writer.close()
    acc = _load(str(tmp_path))
    plugin = "graph_run_metadata" if profiled else "graph_run_metadata_graph"
    assert acc.PluginTagToContent(plugin) == {"model_trace": b"1"}
    meta = _run_metadata(acc, "model_trace")
    assert len(meta.function_graphs) == 1
    graph = meta.function_graphs[0].pre_optimization_graph
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
    assert meta.function_graphs[0].post_optimization_graph.node
    stats = meta.step_stats.dev_stats
    if profiled:
        assert "MatMul" in {s.node_name.split("/")[-1] for s in stats[0].node_stats}
        assert glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.trace.json"))
    else:
        assert not stats
    from tensorboard.plugins.graph import graph_util
    graph_util.merge_graph_defs([g.pre_optimization_graph for g in meta.function_graphs])


def test_graph_false_and_no_profiler_writes_nothing(tmp_path):
    writer = kf.summary.create_file_writer(str(tmp_path))
    kf.summary.trace_on(graph=False)
    kf.function(lambda x: x + 1.0)(kf.constant(1.0))
    with writer.as_default():
        kf.summary.trace_export("none", step=1)
    writer.close()
    assert "none" not in _load(str(tmp_path)).Tags()["tensors"]


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


def test_tags_carry_the_name_scope_eagerly_and_in_functions(tmp_path):
    # TF 2.21 writes train/loss, train/inner/h and fn/s for this program
    writer = kf.summary.create_file_writer(str(tmp_path))

    @kf.function
    def f(x):
        with kf.name_scope("fn"):
            kf.summary.scalar("s", x)
        return x

    with writer.as_default(step=1):
        with kf.name_scope("train"):
            kf.summary.scalar("loss", 1.0)
            with kf.name_scope("inner"):
                kf.summary.histogram("h", [1.0, 2.0])
        f(kf.constant(2.0))
        f(kf.constant(3.0))
    writer.close()
    acc = _load(str(tmp_path))
    assert sorted(acc.Tags()["tensors"]) == ["fn/s", "train/inner/h", "train/loss"]
    assert [float(v) for _, v in _values(acc, "fn/s")] == [2.0, 3.0]


def test_write_write_raw_pb_summary_scope_and_graph(tmp_path):
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.plugins.scalar import metadata as scalar_metadata
    writer = kf.summary.create_file_writer(str(tmp_path))
    meta = scalar_metadata.create_summary_metadata(display_name="", description="")
    calls = []

    def lazy():
        calls.append(1)
        return kf.constant(4.0)

    @kf.function
    def g(x):
        return x * 2.0

    assert not bool(kf.summary.write("nowhere", lazy, step=0)) and not calls
    assert not bool(kf.summary.graph(g.get_concrete_function(kf.constant(1.0)).graph))
    with writer.as_default(step=3):
        with kf.name_scope("outer"):
            assert bool(kf.summary.write("raw", kf.constant([1, 2])))   # tag as given
            assert bool(kf.summary.write("lazy", lazy, metadata=meta))
            with kf.summary.experimental.summary_scope("sc") as (tag, scope):
                assert (tag, scope) == ("outer/sc", "outer/sc/")
            with kf.summary.experimental.summary_scope(None, "dflt") as (tag, scope):
                assert (tag, scope) == ("outer/dflt", "outer/dflt/")
        with kf.summary.record_if(False):
            assert not bool(kf.summary.write("skipped", lazy))
        other = summary_pb2.Summary()
        other.value.add(tag="pb", simple_value=1.5)
        assert bool(kf.summary.experimental.write_raw_pb(other.SerializeToString(), step=5))
        assert bool(kf.summary.graph(g.get_concrete_function(kf.constant(1.0)).graph))
        with pytest.raises(ValueError, match="graph_data"):
            kf.summary.graph("not a graph")
    assert calls == [1]
    writer.close()
    acc = _load(str(tmp_path))
    assert _values(acc, "raw")[0][0] == 3
    np.testing.assert_array_equal(_values(acc, "raw")[0][1], [1, 2])
    assert "lazy" in acc.PluginTagToContent("scalars")
    pb = acc.Tensors("pb")      # the loader migrates simple_value to a scalar tensor
    assert [(e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in pb] == [(5, 1.5)]
    assert any(n.op == "Mul" for n in acc.Graph().node)


def test_encodings_match_tf(tmp_path):
    """Images (float, float > 1, uint8, int32, uint16, int8), text, audio, histograms
    (ints, empty, constant) and int scalars decode to what TF 2.21 writes for the same
    calls (data/encodings_tf.txt, printed by this program run under TF)."""
    import io
    import wave
    pil = pytest.importorskip("PIL.Image")
    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto import event_pb2
    writer = kf.summary.create_file_writer(str(tmp_path))
    rng = np.random.default_rng(0)
    img = rng.random((2, 3, 4, 3)).astype("float32")
    img[0, 0, 0] = [0.5, 1.0, 0.0]
    img[0, 0, 1] = [-0.2, 1.7, 0.999]
    gray = (rng.random((1, 2, 2, 1)) * 300).astype("float64")
    aud = np.sin(np.linspace(0, 20, 50)).reshape(1, 25, 2).astype("float32") * 1.2
    with writer.as_default(step=0):
        kf.summary.image("img", img)
        kf.summary.image("gray", gray)
        kf.summary.image("u8", (img * 255).astype("uint8"), max_outputs=1)
        kf.summary.image("i32", (np.arange(16).reshape(1, 2, 2, 4) * 2**27).astype("int32"))
        kf.summary.image("u16", (np.arange(12).reshape(1, 2, 2, 3) * 5000).astype("uint16"))
        kf.summary.image("i8", (np.arange(12).reshape(1, 2, 2, 3) * 10 - 20).astype("int8"))
        kf.summary.text("t", [["a", "b"], ["c", "d"]])
        kf.summary.text("t1", kf.constant("x"))
        kf.summary.audio("a", aud, 8000)
        kf.summary.histogram("hi", np.arange(10, dtype="int32"), buckets=3)
        kf.summary.histogram("he", np.array([], "float32"))
        kf.summary.histogram("hc", np.full(4, 2.0), buckets=2)
        kf.summary.scalar("si", 3)
    writer.close()
    lines = []
    for path in sorted(glob.glob(str(tmp_path / "events*"))):
        for record in RawEventFileLoader(path).Load():
            for v in event_pb2.Event.FromString(record).summary.value:
                a = tensor_util.make_ndarray(v.tensor)
                lines.append(f"{v.tag} {v.metadata.plugin_data.plugin_name} "
                             f"{v.metadata.plugin_data.content} {a.dtype} {a.shape}")
                if v.tag in ("img", "gray", "u8", "i32", "u16", "i8"):
                    first = np.asarray(pil.open(io.BytesIO(a[2]))).tolist()
                    lines.append(f"  dims {a[:2].tolist()} {first[:2]}")
                elif v.tag == "a":
                    wav = wave.open(io.BytesIO(a[0][0]))
                    frames = np.frombuffer(wav.readframes(5), "<i2").tolist()
                    lines.append(f"  wav {wav.getnchannels()} {wav.getsampwidth()} "
                                 f"{wav.getframerate()} {frames} {a[0][1]}")
                else:
                    lines.append(f"   {a.tolist()}")
    expected = open(os.path.join(os.path.dirname(__file__), "data",
                                 "encodings_tf.txt")).read().splitlines()
    assert lines == expected
