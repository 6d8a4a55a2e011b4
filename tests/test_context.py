"""The mode context: per-thread graph and tape stacks, process-wide run_functions_eagerly."""
import threading

import kilnflow as kf
from kilnflow.context import ctx


def test_run_functions_eagerly_is_process_wide():
    calls = []

    @kf.function
    def f(x):
        calls.append(1)  # a Python side effect: every call when run eagerly, else at trace
        return x + 1

    f(kf.constant(1))
    assert len(calls) == 1
    ready, switched, done = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def worker():
        f(kf.constant(1))  # this thread's context exists before the switch
        ready.set()
        switched.wait(5)
        f(kf.constant(1))
        f(kf.constant(1))
        seen["eager"] = kf.config.functions_run_eagerly()
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait(5)
    before = len(calls)
    kf.config.run_functions_eagerly(True)
    try:
        switched.set()
        done.wait(5)
        thread.join(5)
        assert seen["eager"] is True
        assert len(calls) == before + 2  # both calls in the other thread ran the Python body
    finally:
        kf.config.run_functions_eagerly(False)
    f(kf.constant(1))
    assert len(calls) == before + 2


def test_graph_and_tape_stacks_are_per_thread():
    graph = kf.Graph()
    inside = {}

    def worker():
        inside["eager"] = kf.executing_eagerly()
        inside["tapes"] = list(ctx.tapes)

    with graph.as_default(), kf.GradientTape():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join(5)
        assert not kf.executing_eagerly()
    assert inside == {"eager": True, "tapes": []}
