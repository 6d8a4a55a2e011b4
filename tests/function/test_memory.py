"""Bounded memory: dropping a kf.function frees its traces and their generated source
(linecache entries); the AutoGraph conversion cache is bounded."""
import gc
import linecache
import tracemalloc
import warnings

import pytest

import kilnflow as kf
from kilnflow.runtime import loader
from kilnflow.autograph import api as autograph_api


def _retraced(count):
    f = kf.function(lambda x, n: x + n)
    x = kf.constant(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in range(count):
            f(x, n)
    return f


def _generated_entries():
    return sum(1 for name in list(linecache.cache) if name.startswith("<kilnflow-generated"))


def test_dropping_a_function_frees_its_generated_source():
    gc.collect()
    loader.drop_collected()  # functions other tests left behind: gone before counting
    before = _generated_entries()
    f = _retraced(50)
    assert _generated_entries() >= before + 50
    del f
    gc.collect()
    loader.drop_collected()  # collected entries go at the next load (never inside the GC)
    assert _generated_entries() == before


def test_the_conversion_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(autograph_api, "CACHE_SIZE", 8)
    for i in range(30):  # a new function object and code each time, as in a notebook loop
        source = f"def g(x):\n    if x > {i}:\n        x = x - 1\n    return x\n"
        filename = f"<notebook cell {i}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace = {}
        exec(compile(source, filename, "exec"), namespace)
        assert int(kf.function(namespace["g"])(kf.constant(100))) == 99
    assert len(autograph_api._CACHE) <= 8


@pytest.mark.slow
def test_retracing_memory_is_released_when_the_function_is_dropped():
    _retraced(200)  # warm every cache once
    gc.collect()
    tracemalloc.start()
    try:
        baseline = tracemalloc.get_traced_memory()[0]
        f = _retraced(3_000)
        grown = tracemalloc.get_traced_memory()[0] - baseline
        del f
        gc.collect()
        loader.drop_collected()  # what the next load does: linecache entries go then
        left = tracemalloc.get_traced_memory()[0] - baseline
    finally:
        tracemalloc.stop()
    assert grown > 1_000_000  # the traces did take memory
    assert left < 0.05 * grown, (grown, left)
