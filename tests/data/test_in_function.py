"""`for element in dataset` inside @kf.function (and kf.autograph.to_graph in a Session)
becomes graph control flow: MakeIterator plus a while loop over IteratorGetNextAsOptional.
Accumulation, break and return work, each call reads the data from the start, and calls
do not retrace per element or per call."""
import numpy as np

import kilnflow as kf

v1 = kf.compat.v1


def total_until(ds, limit):
    s = kf.constant(0, kf.int64)
    for batch in ds:
        s += kf.reduce_sum(batch)
        if s > limit:
            break
    return s


def first_above(ds, limit):
    for x in ds:
        if x > limit:
            return x
    return kf.constant(-1, kf.int64)


def python_value(fn, ds, limit):
    return int(fn(ds, kf.constant(limit, kf.int64)))  # eager: plain Python iteration


def test_accumulate_and_break_agree_with_eager_and_do_not_retrace():
    ds = kf.data.Dataset.range(10).map(lambda x: x * 2).batch(3)
    compiled = kf.function(total_until)
    for limit in (1000, 20, 0):
        assert int(compiled(ds, kf.constant(limit, kf.int64))) == \
            python_value(total_until, ds, limit)
    assert compiled.experimental_get_tracing_count() == 1
    types = {op.type for op in compiled.get_concrete_function(
        ds, kf.constant(0, kf.int64)).traced_graph.get_operations()}
    assert {"MakeIterator", "IteratorGetNextAsOptional"} <= types


def test_return_inside_a_dataset_loop():
    ds = kf.data.Dataset.range(10)
    compiled = kf.function(first_above)
    assert int(compiled(ds, kf.constant(4, kf.int64))) == 5
    assert int(compiled(ds, kf.constant(40, kf.int64))) == -1


def test_nested_elements_and_each_call_starts_over():
    ds = kf.data.Dataset.from_tensor_slices(([[1.0, 2.0], [3.0, 4.0]], [5, 6])).shuffle(
        2, seed=1)

    @kf.function
    def sums(ds):
        a, b = kf.constant(0.0), kf.constant(0)
        for x, y in ds:
            a += kf.reduce_sum(x)
            b += y
        return a, b

    for _ in range(3):
        a, b = sums(ds)
        assert (float(a), int(b)) == (10.0, 11)


def test_dataset_loop_in_a_session():
    ds = kf.data.Dataset.range(5)
    graph = kf.Graph()
    with graph.as_default():
        limit = v1.placeholder(kf.int64, [])
        out = kf.autograph.to_graph(total_until)(ds, limit)
    with v1.Session(graph=graph) as sess:
        assert [int(sess.run(out, {limit: n})) for n in (100, 2)] == [10, 3]
    np.testing.assert_equal(python_value(total_until, ds, 2), 3)


def test_an_iterator_passed_in_is_read_when_the_function_runs():
    it = iter(kf.data.Dataset.range(5))

    @kf.function
    def two_more(it):
        return next(it) + it.get_next() * 10

    assert int(two_more(it)) == 0 + 10
    assert int(two_more(it)) == 2 + 30   # the same stream, read on every call
    assert int(next(it)) == 4           # eager next() shares it
    try:
        two_more(it)
    except kf.errors.OutOfRangeError as exc:
        assert "End of sequence" in str(exc)
    else:
        raise AssertionError("expected OutOfRangeError past the end")
    assert two_more.experimental_get_tracing_count() == 1


def test_a_for_loop_over_an_iterator_continues_where_it_is():
    it = iter(kf.data.Dataset.range(6))
    next(it)

    @kf.function
    def rest(it):
        s = kf.constant(0, kf.int64)
        for x in it:
            s += x
        return s

    assert int(rest(it)) == 1 + 2 + 3 + 4 + 5


def test_an_unconverted_loop_over_a_dataset_is_unrolled_and_ends():
    """Without AutoGraph the Python `for` runs at trace time: it reads the pipeline then
    (elements become constants) and stops at its end instead of adding graph reads forever."""
    ds = kf.data.Dataset.from_tensor_slices(["a1", "bbb"])

    def count(ds):
        n = kf.constant(0)
        for line in ds:
            n += kf.strings.length(line)
        return n
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert int(kf.function(count, autograph=False)(ds)) == 5
