"""Differential tests: a converted Python-only program behaves exactly like the original."""
import pytest

from kilnflow.autograph import api

from . import corpus


def _outcome(fn, args):
    try:
        return "returned", fn(*args)
    except Exception as e:  # the same exception type and message are expected
        return "raised", (type(e), str(e))


CASES = [pytest.param(fn, args, id=f"{fn.__name__}{args!r}"[:60])
         for fn, arg_sets in corpus.CASES for args in arg_sets]


def test_corpus_is_large_enough():
    assert len(corpus.CASES) >= 30


@pytest.mark.parametrize("fn, args", CASES)
def test_converted_matches_original(fn, args):
    converted = api.convert(fn)
    corpus.COUNTER = 0
    expected = _outcome(fn, args)
    corpus.COUNTER = 0
    assert _outcome(converted, args) == expected


@pytest.mark.parametrize("fn", [fn for fn, _ in corpus.CASES if fn is not corpus.gen_squares])
def test_corpus_functions_are_really_converted(fn):
    source = api.to_code(fn)
    assert source.startswith(f"def tf__{fn.__name__}(")


def test_generators_are_left_alone():
    assert api.convert(corpus.gen_squares) is corpus.gen_squares
    assert list(api.convert(corpus.gen_squares)(5)) == [1, 9]
