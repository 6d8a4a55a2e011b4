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
