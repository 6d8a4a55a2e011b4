"""kf.train's newer names against TF 2.21's recorded behaviour (tf_train_expected.json):
Example protos byte for byte, ExponentialMovingAverage values and names, checkpoint
state, Coordinator. The expectations were recorded in the TF side venv with the same
calls as below (Example/SequenceExample built as here, serialized deterministically)."""
import json
import os
import threading
import time

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

with open(os.path.join(os.path.dirname(__file__), "tf_train_expected.json")) as _f:
    TF = json.load(_f)
T = kf.train


def _example():
    return T.Example(features=T.Features(feature={
        "name": T.Feature(bytes_list=T.BytesList(value=[b"cat", b""])),
        "score": T.Feature(float_list=T.FloatList(value=[1.5, -2.0, 3.25])),
        "ids": T.Feature(int64_list=T.Int64List(value=[1, -1, 300, 2 ** 40])),
        "empty": T.Feature()}))


def _sequence_example():
    return T.SequenceExample(
        context=T.Features(feature={"len": T.Feature(int64_list=T.Int64List(value=[2]))}),
        feature_lists=T.FeatureLists(feature_list={"tok": T.FeatureList(feature=[
            T.Feature(bytes_list=T.BytesList(value=[b"a"])),
            T.Feature(bytes_list=T.BytesList(value=[b"b", b"c"]))])}))


def test_example_bytes_match_tf():
    assert _example().SerializeToString().hex() == TF["example"]
    assert _sequence_example().SerializeToString().hex() == TF["seq"]
    assert T.Feature(int64_list=T.Int64List(value=[])).SerializeToString().hex() == \
        TF["int_empty_feature"]


def test_example_parses_tf_bytes():
    ex = T.Example.FromString(bytes.fromhex(TF["example"]))
    assert ex == _example()
    feature = ex.features.feature
    assert feature["ids"].int64_list.value == [1, -1, 300, 2 ** 40]
    assert feature["score"].float_list.value == [1.5, -2.0, 3.25]
    assert feature["name"].bytes_list.value == [b"cat", b""]
    assert feature["empty"].WhichOneof("kind") is None
    assert feature["ids"].WhichOneof("kind") == "int64_list"
    seq = T.SequenceExample.FromString(bytes.fromhex(TF["seq"]))
    assert seq == _sequence_example()
    assert [f.bytes_list.value for f in seq.feature_lists.feature_list["tok"].feature] == \
        [[b"a"], [b"b", b"c"]]


def test_example_text_format():
    assert str(_sequence_example()) == TF["seq_str"]
    assert str(T.FloatList(value=[1.0, 0.1])) == TF["floatlist_str"]


def test_example_built_incrementally_like_protobuf():
    ex = T.Example()
    ex.features.feature["x"].int64_list.value.append(3)
    ex.features.feature["y"].float_list.value.extend([0.5, 2])
    back = T.Example.FromString(ex.SerializeToString())
    assert back.features.feature["x"].int64_list.value == [3]
    assert back.features.feature["y"].float_list.value == [0.5, 2.0]
    assert back.HasField("features") and not T.Example().HasField("features")
    assert T.FloatList(value=[0.1]).value[0] == float(np.float32(0.1))
    copy = T.Example()
    copy.CopyFrom(ex)
    assert copy == ex and copy.ByteSize() == len(ex.SerializeToString())


def test_example_bad_values():
    with pytest.raises(TypeError):
        T.BytesList(value=["not bytes"])
    with pytest.raises(TypeError):
        T.Int64List(value=[1.5])
    with pytest.raises(ValueError):
        T.Int64List(value=[2 ** 63])
    with pytest.raises(TypeError):
        T.FloatList(value=["x"])
    with pytest.raises(ValueError):
        T.Example(feature=1)
    with pytest.raises(ValueError):
        T.Features(features={})
    with pytest.raises(errors.DataLossError):
        T.Example.FromString(b"\x0a\x05\x01")  # truncated
    with pytest.raises(errors.DataLossError):
        T.Example.FromString(b"\x0f")  # wire type 7


def test_ema_matches_tf():
    v = kf.Variable(1.0, name="w")
    v2 = kf.Variable([1.0, 2.0], name="b")
    ema = T.ExponentialMovingAverage(0.9)
    assert ema.apply([v, v2]) is None
    values = []
    for _ in range(3):
        v.assign_add(1.0)
        v2.assign(v2 * 2)
        ema.apply([v, v2])
        values.append([float(ema.average(v).numpy()), ema.average(v2).numpy().tolist()])
    np.testing.assert_allclose(np.array([a for a, _ in values]),
                               [a for a, _ in TF["ema"]], rtol=1e-6)
    np.testing.assert_allclose(np.array([b for _, b in values]),
                               [b for _, b in TF["ema"]], rtol=1e-6)
    assert ema.average_name(v) == TF["ema_name"]
    assert ema.average(v).name == TF["ema_avg_name"]
    assert sorted(ema.variables_to_restore()) == TF["ema_restore"]
    assert ema.name == TF["ema_name2"]
    assert not ema.average(v).trainable


def test_ema_num_updates_and_zero_debias():
    ema = T.ExponentialMovingAverage(0.9, num_updates=kf.Variable(0), zero_debias=True,
                                     name="Mov")
    w = kf.Variable(5.0)
    ema.apply([w])
    w.assign(10.0)
    ema.apply([w])
    assert float(ema.average(w)) == pytest.approx(TF["ema_zd"])
    ema3 = T.ExponentialMovingAverage(0.9, num_updates=3)
    u = kf.Variable(2.0)
    ema3.apply([u])
    u.assign(4.0)
    ema3.apply([u])
    assert float(ema3.average(u)) == pytest.approx(TF["ema_nu"], rel=1e-6)
    # a tensor's average starts at zero; zero_debias removes that bias
    debiased = T.ExponentialMovingAverage(0.5, zero_debias=True)
    t = kf.constant([2.0, 4.0])
    debiased.apply([t])
    assert debiased.average(t).numpy().tolist() == [2.0, 4.0]
    biased = T.ExponentialMovingAverage(0.5)
    biased.apply([t])
    assert biased.average(t).numpy().tolist() == [1.0, 2.0]
    with pytest.raises(TypeError):
        T.ExponentialMovingAverage(0.5).apply([kf.Variable(1)])


def test_ema_inside_function_and_checkpoint(tmp_path):
    ema = T.ExponentialMovingAverage(0.5)
    x = kf.Variable(4.0, name="x")

    @kf.function
    def step():
        ema.apply([x])
        return ema.average(x).read_value()

    assert float(step()) == 4.0
    x.assign(0.0)
    assert float(step()) == 2.0
    assert float(step()) == 1.0
    path = T.Checkpoint(avg=ema.average(x)).save(str(tmp_path / "ckpt"))
    ema.average(x).assign(9.0)
    T.Checkpoint(avg=ema.average(x)).restore(path)
    assert float(ema.average(x)) == 1.0


def test_get_checkpoint_state_and_iterator(tmp_path):
    d = str(tmp_path)
    assert T.get_checkpoint_state(d) is None
    ckpt = T.Checkpoint(v=kf.Variable(1.0))
    manager = T.CheckpointManager(ckpt, d, max_to_keep=2)
    for _ in range(3):
        manager.save()
    state = T.get_checkpoint_state(d)
    assert state.model_checkpoint_path == os.path.join(d, "ckpt-3")
    assert [os.path.relpath(p, d) for p in state.all_model_checkpoint_paths] == \
        TF["state_paths"]
    assert str(state).splitlines()[0] == f'model_checkpoint_path: "{d}/ckpt-3"'
    seen = []
    for path in T.checkpoints_iterator(d, timeout=0.3):
        seen.append(os.path.basename(path))
        if len(seen) == 1:
            manager.save()
    assert seen == ["ckpt-3", "ckpt-4"]
    calls = []
    assert list(T.checkpoints_iterator(str(tmp_path / "none"), timeout=0.1,
                                       timeout_fn=lambda: calls.append(1) or True)) == []
    assert calls == [1]
    with pytest.raises(ValueError):
        T.get_checkpoint_state(d, latest_filename="other")


def test_checkpoint_options(tmp_path):
    options = T.CheckpointOptions()
    for name, value in TF["ckpt_opts_attrs"].items():
        assert repr(getattr(options, name)) == value, name
    assert T.CheckpointOptions(enable_async=True).experimental_enable_async_checkpoint
    path = T.Checkpoint(v=kf.Variable(2.0)).save(str(tmp_path / "c"), options=options)
    assert os.path.basename(path) == "c-1"
    with pytest.raises(NotImplementedError):
        T.CheckpointOptions(experimental_write_callbacks=[print])


def test_coordinator_matches_tf():
    coord = T.Coordinator()
    assert coord.should_stop() == TF["coord0"]
    with coord.stop_on_exception():
        raise ValueError("boom")
    assert coord.should_stop() == TF["coord1"]
    with pytest.raises(ValueError, match="boom"):
        coord.join([])
    assert coord.joined


def test_coordinator_threads_stop_together():
    coord = T.Coordinator()
    counts = [0, 0]

    def worker(i):
        while not coord.should_stop():
            counts[i] += 1
            if i == 0 and counts[0] == 5:
                coord.request_stop()
            time.sleep(0.001)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    coord.join(threads)
    assert counts[0] == 5 and not any(t.is_alive() for t in threads)
    coord.clear_stop()
    assert not coord.should_stop()
    with coord.stop_on_exception():
        raise errors.OutOfRangeError("end")  # a clean stop: join() does not raise it
    coord.join([])
    looped = []
    coord2 = T.Coordinator()
    coord2.loop(0.01, lambda: looped.append(1) or (len(looped) >= 3 and coord2.request_stop()))
    coord2.join()
    assert len(looped) >= 3
