"""String tensors and kf.strings beyond the op samples: conversion, printing, TF's
numpy() forms, strings through kf.function and compat.v1 Sessions (eager = function =
Session), no gradients, and bad input."""
import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

v1 = kf.compat.v1


# ---------------------------------------------------------------- conversion and printing

def test_constant_holds_bytes_in_an_object_array():
    t = kf.constant(["a", "héllo"])
    assert t.dtype is kf.string and t.shape == (2,)
    value = t.numpy()
    assert value.dtype == object and value.tolist() == [b"a", "héllo".encode()]
    assert kf.constant("abc").numpy() == b"abc"  # a scalar gives bytes, as in TF
    assert kf.constant(b"raw\xff").numpy() == b"raw\xff"


def test_dtype_string_and_numpy_string_arrays_convert():
    assert kf.constant(["x"], dtype=kf.string).dtype is kf.string
    assert kf.constant(np.array(["ab", "c"])).numpy().tolist() == [b"ab", b"c"]
    assert kf.constant(np.array([b"ab"])).numpy().tolist() == [b"ab"]
    assert kf.convert_to_tensor([["a", "b"], ["c", "d"]]).shape == (2, 2)
    assert kf.constant([], dtype=kf.string).shape == (0,)


def test_prints_as_tf_prints():
    assert repr(kf.constant("hi")) == "<tf.Tensor: shape=(), dtype=string, numpy=b'hi'>"
    assert str(kf.constant("hi")) == "tf.Tensor(b'hi', shape=(), dtype=string)"
    assert repr(kf.constant(["a", "b"])) == \
        "<tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a', b'b'], dtype=object)>"
    assert str(kf.constant(["a", "b"])) == "tf.Tensor([b'a' b'b'], shape=(2,), dtype=string)"
    assert str(kf.string) == "<dtype: 'string'>"


@pytest.mark.parametrize("value, dtype, error", [(1, kf.string, TypeError),
                                                 ("a", kf.int32, TypeError),
                                                 (["a", 1], None, ValueError),
                                                 (["a", None], None, ValueError)])
def test_mixed_or_cast_strings_raise_tfs_errors(value, dtype, error):
    """TF: a cast to or from string is a TypeError, a list mixing strings with other
    values a ValueError ("Can't convert Python sequence with mixed types")."""
    with pytest.raises(error):
        kf.constant(value, dtype)


def test_ragged_string_lists_raise_value_error():
    with pytest.raises(ValueError):
        kf.constant([["a", "b"], ["c"]])


# ---------------------------------------------------------------- modes agree

def _pipeline(words):
    upper = kf.strings.upper(kf.strings.strip(words))
    joined = kf.strings.join([upper, "!"], separator="")
    return (joined, kf.strings.length(joined), kf.strings.regex_full_match(words, r"\s*a.*"),
            kf.strings.reduce_join(upper, separator="|"))


WORDS = np.array([b" ab ", b"cd", b"a"], object)


def _same(got, want):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_eager_equals_function_equals_session():
    eager = [t.numpy() for t in _pipeline(kf.constant(WORDS))]
    compiled = [t.numpy() for t in kf.function(_pipeline)(kf.constant(WORDS))]
    _same(compiled, eager)
    g = kf.Graph()
    with g.as_default():
        words = v1.placeholder(kf.string, shape=[None], name="words")
        fetches = _pipeline(words)
    with v1.Session(graph=g) as sess:
        _same(sess.run(fetches, {words: WORDS}), eager)
        _same(sess.run(fetches, {words: [" ab ", "cd", "a"]}), eager)  # str feeds encode
    assert eager[0].tolist() == [b"AB!", b"CD!", b"A!"]
    assert eager[3] == b"AB|CD|A"


def test_a_string_constant_returned_by_a_function_keeps_its_dtype():
    out = kf.function(lambda: kf.constant("done"))()
    assert out.dtype is kf.string and out.numpy() == b"done"


def test_session_refuses_numbers_for_a_string_placeholder():
    g = kf.Graph()
    with g.as_default():
        words = v1.placeholder(kf.string, shape=[None])
        n = kf.strings.length(words)
    with v1.Session(graph=g) as sess:
        with pytest.raises(TypeError):
            sess.run(n, {words: [1, 2]})


def test_string_ops_have_no_gradients():
    x = kf.constant([1.5, 2.0])
    with kf.GradientTape() as tape:
        tape.watch(x)
        y = kf.strings.to_number(kf.strings.as_string(x)) * x
    assert tape.gradient(y, x).numpy().tolist() == [1.5, 2.0]  # only through `* x`


def test_to_number_parses_or_raises():
    assert kf.strings.to_number("2.5").numpy() == np.float32(2.5)
    with pytest.raises(errors.InvalidArgumentError, match="1_0"):
        kf.strings.to_number("1_0")
    with pytest.raises(errors.InvalidArgumentError, match="99999999999"):
        kf.strings.to_number("99999999999", kf.int32)


def test_split_scalar_and_vector():
    assert kf.strings.split("a  b").numpy().tolist() == [b"a", b"b"]
    assert kf.strings.split("a,b,c", ",", maxsplit=1).numpy().tolist() == [b"a", b"b,c"]
    rows = kf.strings.split(["a b", "c"])  # a RaggedTensor, as in TF
    assert isinstance(rows, kf.RaggedTensor) and rows.to_list() == [[b"a", b"b"], [b"c"]]
    assert rows.to_tensor().numpy().tolist() == [[b"a", b"b"], [b"c", b""]]
    assert kf.strings.split([["a b"], ["c"]]).to_list() == [[[b"a", b"b"]], [[b"c"]]]


def test_format_and_as_string():
    assert kf.strings.format("{} and {}", ["a", 1.5]).numpy() == b'"a" and 1.5'
    assert kf.strings.format("n={}", kf.range(10)).numpy() == b"n=[0 1 2 ... 7 8 9]"
    assert kf.as_string(3).numpy() == b"3"
    assert kf.strings.as_string(2.5, shortest=True).numpy() == b"2.5"


def test_regex_replace_rewrites_groups_and_escapes():
    out = kf.strings.regex_replace("a-b", r"(\w)-(\w)", r"\2\\\1 \0")
    assert out.numpy() == b"b\\a a-b"
    with pytest.raises(errors.InvalidArgumentError, match="group 2"):
        kf.strings.regex_replace("a", "(a)", r"\2")


def test_substr_units():
    assert kf.strings.substr("héllo", 0, 2, unit="UTF8_CHAR").numpy() == "hé".encode()
    assert kf.strings.substr("hello", -3, 10).numpy() == b"llo"


def test_unicode_round_trip():
    points = kf.strings.unicode_decode("añ€", "UTF-8")
    assert kf.strings.unicode_encode(points, "UTF-8").numpy() == "añ€".encode()
    assert kf.strings.unicode_encode([[97, 98]], "UTF-16-BE").numpy().tolist() == \
        ["ab".encode("utf-16-be")]
    assert kf.strings.unicode_decode(["a", "ñ"], "UTF-8").to_list() == [[97], [241]]


def test_equality_of_strings():
    assert (kf.constant(["a", "b"]) == "a").numpy().tolist() == [True, False]
    assert kf.math.not_equal(kf.constant(["a", "b"]), "a").numpy().tolist() == [False, True]
    assert kf.function(lambda s: s == "b")(kf.constant(["a", "b"])).numpy().tolist() == \
        [False, True]


def test_patterns_fed_at_run_time():
    g = kf.Graph()
    with g.as_default():
        words = v1.placeholder(kf.string, [None])
        pattern = v1.placeholder(kf.string, [])
        matched = kf.strings.regex_full_match(words, pattern)
        replaced = kf.strings.regex_replace(words, pattern, "<\\0>")
    assert {op.type for op in g.get_operations()} >= {"RegexFullMatch", "RegexReplace"}
    with v1.Session(graph=g) as sess:
        feed = {words: ["ab", "b"], pattern: "a."}
        assert sess.run(matched, feed).tolist() == [True, False]
        assert sess.run(replaced, feed).tolist() == [b"<ab>", b"b"]
        with pytest.raises(errors.InvalidArgumentError, match="Invalid pattern"):
            sess.run(matched, {words: ["a"], pattern: "(a"})


def test_unicode_split_and_bytes_split_of_scalars():
    chars = kf.strings.unicode_split("añ€", "UTF-8")
    assert chars.numpy().tolist() == [c.encode() for c in "añ€"]
    assert kf.strings.bytes_split("añ").numpy().tolist() == [b"a", b"\xc3", b"\xb1"]
    assert kf.strings.bytes_split("").shape == (0,)
    compiled = kf.function(lambda s: kf.strings.unicode_split(s, "UTF-8"))
    assert compiled(kf.constant("hé")).numpy().tolist() == [b"h", "é".encode()]
    assert kf.strings.bytes_split(["añ", ""]).to_list() == [[b"a", b"\xc3", b"\xb1"], []]


def test_ngrams_widths_padding_and_short_sequences():
    words = kf.constant([["a", "b", "c"], ["d", "e", "f"]])
    assert kf.strings.ngrams(words, 2).numpy().tolist() == [[b"a b", b"b c"], [b"d e", b"e f"]]
    assert kf.strings.ngrams(["a", "b", "c"], (1, 3), separator="").numpy().tolist() == \
        [b"a", b"b", b"c", b"abc"]
    padded = kf.strings.ngrams(["a", "b"], 3, pad_values=("<s>", "</s>"))
    assert padded.numpy().tolist() == [b"<s> <s> a", b"<s> a b", b"a b </s>", b"b </s> </s>"]
    assert kf.strings.ngrams(["a", "b"], 3, pad_values="#", padding_width=1).numpy().tolist() \
        == [b"# a b", b"a b #"]
    assert kf.strings.ngrams(["a"], 2).shape == (0,)
    assert kf.strings.ngrams(["a"], 2, preserve_short_sequences=True).numpy().tolist() == [b"a"]
    compiled = kf.function(lambda x: kf.strings.ngrams(x, 2, pad_values="_"))
    assert compiled(words).numpy().tolist()[1] == [b"_ d", b"d e", b"e f", b"f _"]
    with pytest.raises(errors.InvalidArgumentError, match="positive"):
        kf.strings.ngrams(["a"], 0)


def test_unsorted_segment_join_in_a_session_equals_eager():
    eager = kf.strings.unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 2, ",").numpy()
    g = kf.Graph()
    with g.as_default():
        words = v1.placeholder(kf.string, [None])
        ids = v1.placeholder(kf.int32, [None])
        joined = kf.strings.unsorted_segment_join(words, ids, 2, ",")
        assert joined.shape == (2,)
    with v1.Session(graph=g) as sess:
        _same([sess.run(joined, {words: ["a", "b", "c"], ids: [1, 0, 1]})], [eager])
    assert eager.tolist() == [b"b", b"a,c"]
