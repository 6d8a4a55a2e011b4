"""Eight threads at once: variable updates lose nothing, a kf.function's first calls trace
each signature once, and each thread keeps its own graph and tape stacks."""
import threading

import numpy as np

import kilnflow as kf

THREADS = 8


def _run(target, *args):
    barrier = threading.Barrier(THREADS)
    errors = []

    def worker(i):
        try:
            barrier.wait(10)
            target(i, *args)
        except Exception as exc:  # reported below: a thread's failure must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors


def test_concurrent_assign_add_loses_no_update():
    v = kf.Variable(0.0, dtype=kf.float64)
    w = kf.Variable(np.zeros(3))
    steps = 2_000

    def work(i):
        for _ in range(steps):
            v.assign_add(1.0)
            w.assign_sub(np.ones(3))

    _run(work)
    assert float(v.numpy()) == THREADS * steps
    np.testing.assert_array_equal(w.numpy(), -THREADS * steps * np.ones(3))


def test_concurrent_assign_add_in_a_function_loses_no_update():
    v = kf.Variable(0, dtype=kf.int64)

    @kf.function
    def bump():
        v.assign_add(1)

    bump()
    _run(lambda i: [bump() for _ in range(500)])
    assert int(v.numpy()) == 1 + THREADS * 500


def test_concurrent_first_calls_trace_once():
    traces = []

    @kf.function
    def f(x):
        traces.append(1)  # a Python side effect: once per trace
        return x * 2.0

    results = [None] * THREADS
    _run(lambda i: results.__setitem__(i, f(kf.constant([1.0, float(i)]))))
    assert len(traces) == 1 and f.experimental_get_tracing_count() == 1
    for i, r in enumerate(results):
        assert r.numpy().tolist() == [2.0, 2.0 * i]


def test_each_thread_builds_its_own_graph():
    seen = [None] * THREADS

    def work(i):
        graph = kf.Graph()
        with graph.as_default():
            kf.constant(float(i), name=f"c{i}")
            seen[i] = [op.name for op in graph.get_operations()]

    _run(work)
    assert seen == [[f"c{i}"] for i in range(THREADS)]


def test_each_thread_keeps_its_own_tape_name_scope_and_device():
    x = kf.Variable(1.0)
    seen = [None] * THREADS

    def work(i):
        graph = kf.Graph()
        with graph.as_default(), kf.name_scope(f"t{i}"), kf.device(f"/cpu:{i % 2}"):
            c = kf.constant(float(i), name="c")
            name, device = c.name, c.device
        with kf.GradientTape() as tape:
            for _ in range(50):  # the other threads' tapes must not see these ops
                y = x * float(i + 1)
        seen[i] = (name, device, float(tape.gradient(y, x).numpy()))

    with kf.GradientTape() as outer:  # the main thread's tape records none of theirs
        _run(work)
        z = x * 10.0
    assert float(outer.gradient(z, x).numpy()) == 10.0
    assert [s[0] for s in seen] == [f"t{i}/c:0" for i in range(THREADS)]
    assert all(s[1].endswith(f"CPU:{i % 2}") or s[1] == f"/cpu:{i % 2}"
               for i, s in enumerate(seen)), seen
    assert [s[2] for s in seen] == [float(i + 1) for i in range(THREADS)]


def test_run_functions_eagerly_is_process_wide():
    seen = [None] * THREADS
    kf.config.run_functions_eagerly(True)
    try:
        _run(lambda i: seen.__setitem__(i, kf.config.functions_run_eagerly()))
    finally:
        kf.config.run_functions_eagerly(False)
    assert seen == [True] * THREADS
