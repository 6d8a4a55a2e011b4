"""kf.CriticalSection: one execute() at a time across threads, eagerly, in kf.function and in
Sessions; the lock is released when fn fails; re-entering a section raises ValueError."""
import threading
import time

import pytest

import kilnflow as kf
from kilnflow import errors
from kilnflow.compat import v1

pytestmark = [pytest.mark.filterwarnings("ignore:.*only while tracing"),
              pytest.mark.filterwarnings("ignore:AutoGraph could not convert")]


def _overlaps(run, threads=4):
    log = []

    def work(_):
        log.append("in")
        time.sleep(0.01)
        log.append("out")
        return 0
    workers = [threading.Thread(target=run, args=(work,)) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(log) == 2 * threads
    return log != ["in", "out"] * threads


def test_execute_is_exclusive_eagerly_and_in_functions():
    cs = kf.CriticalSection()
    assert not _overlaps(lambda work: cs.execute(lambda: work(0)))
    f = kf.function(lambda work: cs.execute(lambda: kf.py_function(work, [0], kf.int32)))
    assert not _overlaps(f)


def test_updates_in_functions_and_sessions():
    cs = kf.CriticalSection()
    v = kf.Variable(0)
    assert int(cs.execute(lambda: v.assign_add(1))) == 1
    f = kf.function(lambda: cs.execute(lambda: v.assign_add(2)))
    assert int(f()) == 3 and int(f()) == 5
    graph = kf.Graph()
    with graph.as_default():
        w = kf.Variable(10)
        out = cs.execute(lambda: w.assign_add(1))
        with v1.Session(graph=graph) as sess:
            sess.run(w.initializer)
            assert sess.run(out) == 11 and sess.run(out) == 12


def test_a_failing_fn_releases_the_section():
    cs = kf.CriticalSection()
    f = kf.function(lambda: cs.execute(lambda: kf.py_function(lambda: 1 / 0, [], kf.float32)))
    with pytest.raises(errors.UnknownError):
        f()
    with pytest.raises(ZeroDivisionError):
        cs.execute(lambda: 1 / 0)
    assert cs.execute(lambda: 7) == 7  # not deadlocked


def test_reentering_a_section_raises():
    cs = kf.CriticalSection()
    with pytest.raises(ValueError, match="already running"):
        cs.execute(lambda: cs.execute(lambda: 1))
    with pytest.raises(ValueError, match="already running"):
        kf.function(lambda: cs.execute(lambda: cs.execute(lambda: kf.constant(1))))()
    assert cs.execute(lambda: 2) == 2
