"""ClusterSpec sessions: ops placed with kf.device("/job:J/task:T") run in that task's
Ray actor, tensors cross between partitions through the object store, and the fetches
equal one process's. Ray tests are slow (run with `-m slow`)."""
import os
import signal
import sys

import numpy as np
import pytest

import kilnflow as kf
from kilnflow.distribute import partition

v1 = kf.compat.v1
SPEC = {"worker": ["localhost:2222", "localhost:2223"], "ps": ["localhost:2224"]}


def _graph():
    g = kf.Graph()
    with g.as_default():
        x = v1.placeholder(kf.float32, [None, 3], name="x")
        with kf.device("/job:ps/task:0"):
            w = kf.Variable(np.ones((3, 2), np.float32), name="w")
            b = kf.Variable(np.zeros(2, np.float32), name="b")
        with kf.device("/job:worker/task:0"):
            h = kf.matmul(x, w) + b
        with kf.device("/job:worker/task:1"):
            y = kf.reduce_sum(kf.tanh(h) * 2.0)
            step = w.assign_add(kf.ones_like(w) * 0.5)  # runs on ps: where w lives
        with kf.device("/job:worker/task:0"):
            back = kf.reduce_mean(h) + y  # worker 0 again, after worker 1
        z = back + 1.0  # the driver
        init = v1.global_variables_initializer()
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3)}
    return g, dict(x=x, w=w, h=h, y=y, z=z, step=step, init=init), feed


def _session_steps(sess, t, feed):
    sess.run(t["init"])
    first = sess.run({"z": t["z"], "h": t["h"], "y": t["y"]}, feed)
    sess.run(t["step"])
    second = sess.run([t["z"], t["w"]], feed)
    return first, second


def _assert_same(a, b):
    for x, y in zip(kf.nest.flatten(a), kf.nest.flatten(b)):
        np.testing.assert_allclose(x, y, rtol=1e-6)


def test_plan_splits_by_task_and_keeps_variable_ops_with_their_variable():
    g, t, feed = _graph()
    spec = kf.train.ClusterSpec(SPEC)
    ops = [op for op in g.operations if op.type != "NoOp"]
    fed = {id(t["x"])}
    segments = partition.plan(g, [op for op in ops if op.type != "Placeholder"], fed,
                              [t["z"]], spec)
    places = [s.place for s in segments]
    assert places[:3] == [("ps", 0), ("worker", 0), ("worker", 1)]
    assert ("worker", 0) in places[3:] and None in places  # back on worker 0; the driver
    step_op = t["step"].op if hasattr(t["step"], "op") else t["step"]
    assert any(op is step_op for s in segments if s.place == ("ps", 0) for op in s.ops)
    for i, s in enumerate(segments):  # inputs come from earlier segments or the feeds
        for tensor in s.inputs:
            sources = [j for j, o in enumerate(segments)
                       if any(tensor is out for out in o.outputs)]
            assert (sources and sources[0] < i) or id(tensor) in fed
    assert partition.parse_place("/job:worker/replica:0/task:1/device:CPU:0") == ("worker", 1)
    assert partition.parse_place("/job:ps") == ("ps", 0)
    assert partition.parse_place("/cpu:0") is None


def test_a_device_outside_the_cluster_is_an_error():
    pytest.importorskip("ray")
    g = kf.Graph()
    with g.as_default(), kf.device("/job:worker/task:7"):
        c = kf.constant(1.0) + 1.0
    config = v1.ConfigProto(cluster_def=kf.train.ClusterSpec(SPEC).as_cluster_def())
    with pytest.raises(kf.errors.InvalidArgumentError, match="task:7"):
        v1.Session("grpc://localhost:2222", graph=g, config=config).run(c)


def test_an_unknown_target_is_unimplemented_and_without_ray_the_extra_is_named(monkeypatch):
    pytest.importorskip("ray")
    with pytest.raises(kf.errors.UnimplementedError, match="Server"):
        v1.Session("grpc://nowhere:1")
    monkeypatch.setitem(sys.modules, "ray", None)
    config = v1.ConfigProto(cluster_def={"worker": ["a:1", "b:2"]})
    with pytest.raises(kf.errors.UnimplementedError, match="distributed"):
        v1.Session("grpc://a:1", config=config)


@pytest.fixture(scope="module")
def ray_up():
    ray = pytest.importorskip("ray")
    yield ray
    from kilnflow.distribute.cluster_session import cluster_for
    cluster_for(kf.train.ClusterSpec(SPEC)).shutdown()
    ray.shutdown()


@pytest.mark.slow
def test_partitions_on_task_actors_fetch_what_one_process_fetches(ray_up):
    g, t, feed = _graph()
    with v1.Session(graph=g) as sess:
        expected = _session_steps(sess, t, feed)
    g, t, feed = _graph()  # a fresh graph: its variables never ran in the driver
    config = v1.ConfigProto(cluster_def=kf.train.ClusterSpec(SPEC).as_cluster_def())
    with v1.Session("grpc://localhost:2222", graph=g, config=config) as sess:
        got = _session_steps(sess, t, feed)
    _assert_same(got, expected)
    # the variables live in the ps task's process, not in the driver
    assert t["w"].handle.value is None
    from kilnflow.distribute.cluster_session import cluster_for
    cluster = cluster_for(kf.train.ClusterSpec(SPEC))
    pids = {cluster.pid(job, task) for job, task in [("ps", 0), ("worker", 0), ("worker", 1)]}
    assert len(pids) == 3 and os.getpid() not in pids


@pytest.mark.slow
def test_server_target_and_a_killed_task(ray_up):
    server = v1.train.Server(kf.train.ClusterSpec(SPEC), job_name="worker", task_index=0)
    assert server.target == "grpc://localhost:2222"
    assert server.server_def["task_index"] == 0
    g, t, feed = _graph()
    with v1.Session(graph=g) as sess:
        expected = _session_steps(sess, t, feed)
    sess = v1.Session(server.target, graph=g)
    _assert_same(_session_steps(sess, t, feed), expected)
    from kilnflow.distribute.cluster_session import cluster_for
    cluster = cluster_for(kf.train.ClusterSpec(SPEC))
    os.kill(cluster.pid("worker", 1), signal.SIGKILL)
    with pytest.raises(kf.errors.UnavailableError, match="/job:worker/replica:0/task:1"):
        sess.run(t["z"], feed)
    # the driver stays usable: the other tasks kept their state...
    np.testing.assert_allclose(sess.run(t["w"]), np.full((3, 2), 1.5, np.float32))
    # ...and the dead task is restarted by the next run that needs it
    _assert_same(_session_steps(sess, t, feed), expected)


@pytest.mark.slow
def test_op_errors_on_a_task_keep_their_class(ray_up):
    g = kf.Graph()
    with g.as_default(), kf.device("/job:ps/task:0"):
        never = kf.Variable(1.0, name="never_initialized")
        read = never.read_value() * 2.0
    config = v1.ConfigProto(cluster_def=SPEC)
    with pytest.raises(kf.errors.FailedPreconditionError, match="never_initialized"):
        v1.Session("grpc://localhost:2224", graph=g, config=config).run(read)


@pytest.mark.slow
def test_a_task_killed_while_it_computes_is_unavailable(ray_up):
    import threading
    import time
    g = kf.Graph()
    with g.as_default():
        with kf.device("/job:worker/task:0"):
            a = kf.ones([4]) * 2.0
        with kf.device("/job:worker/task:1"):
            big = kf.ones([2000, 2000]) + a[0]
            product = big
            for _ in range(12):  # seconds of matmuls: time to kill the process
                product = kf.matmul(product, big) * 1e-4
            slow = kf.reduce_sum(product)
        total = slow + 1.0
    config = v1.ConfigProto(cluster_def=SPEC)
    sess = v1.Session("grpc://localhost:2222", graph=g, config=config)
    from kilnflow.distribute.cluster_session import cluster_for
    pid = cluster_for(kf.train.ClusterSpec(SPEC)).pid("worker", 1)
    sess.run(a)  # the graph is on the tasks; the next run spends its time in matmuls
    killer = threading.Timer(0.5, os.kill, args=(pid, signal.SIGKILL))
    killer.start()
    start = time.perf_counter()
    with pytest.raises(kf.errors.UnavailableError, match="task:1.*died"):
        sess.run(total)
    killer.join()
    assert time.perf_counter() - start >= 0.5  # it died mid-step, not before it
    np.testing.assert_allclose(sess.run(a), [2.0] * 4)  # the driver and task 0 carry on
