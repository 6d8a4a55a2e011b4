"""Samples of the ops in kilnflow/ops/strings.py (see tests/ops/samples/__init__.py).

String inputs are object arrays of bytes, as tf.string tensors hold them; references are
written with Python's bytes methods."""
import re

import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32, ints, rand


def strs(*items, shape=None):
    out = np.empty(len(items), object)
    out[:] = [s.encode("utf-8") if isinstance(s, str) else s for s in items]
    return out.reshape(shape) if shape is not None else out


def scalar(s):
    return np.array(s.encode("utf-8"), object)


def each(fn, x, dtype=object):
    out = np.empty(x.shape, dtype)
    for index in np.ndindex(x.shape):
        out[index] = fn(x[index])
    return out


WORDS = strs("Hello", " wide World ", "héllo", "", "a1B2", "  ", shape=(2, 3))

add("StringLength", kf.strings.length, (WORDS,), lambda x: each(len, x, np.int32))
add("StringLength", lambda x: kf.strings.length(x, unit="UTF8_CHAR"), (WORDS,),
    lambda x: each(lambda s: len(s.decode()), x, np.int32), name="utf8")
add("StringLower", kf.strings.lower, (WORDS,), lambda x: each(bytes.lower, x))
add("StringLower", lambda x: kf.strings.lower(x, encoding="utf-8"), (strs("ÉA", "Ü"),),
    lambda x: each(lambda s: s.decode().lower().encode(), x), name="utf8")
add("StringUpper", kf.strings.upper, (WORDS,), lambda x: each(bytes.upper, x))
add("StringStrip", kf.strings.strip, (WORDS,), lambda x: each(bytes.strip, x))
add("StaticRegexFullMatch", lambda x: kf.strings.regex_full_match(x, r"[a-z]\d[A-Z]\d"),
    (WORDS,), lambda x: each(lambda s: re.fullmatch(rb"[a-z]\d[A-Z]\d", s) is not None, x,
                             np.bool_))
add("StaticRegexReplace", lambda x: kf.strings.regex_replace(x, r"(l+)", r"<\1>"), (WORDS,),
    lambda x: each(lambda s: re.sub(rb"(l+)", rb"<\1>", s), x))
add("StaticRegexReplace", lambda x: kf.strings.regex_replace(x, "o", "0", False), (WORDS,),
    lambda x: each(lambda s: s.replace(b"o", b"0", 1), x), name="first")
add("RegexFullMatch", lambda x, p: kf.function(kf.strings.regex_full_match)(x, p),
    (WORDS, scalar("[a-z ]+")), lambda x, p: each(
        lambda s: re.fullmatch(rb"[a-z ]+", s) is not None, x, np.bool_), graph_only=True)
add("RegexReplace", lambda x, p, r: kf.function(kf.strings.regex_replace)(x, p, r),
    (WORDS, scalar("l"), scalar("L")), lambda x, p, r: each(lambda s: s.replace(b"l", b"L"), x),
    graph_only=True)
add("StringToNumber", kf.strings.to_number, (strs("1.5", "-2", "3e2", " 4 "),),
    lambda x: each(float, x, np.float32))
add("StringToNumber", lambda x: kf.strings.to_number(x, kf.int64), (strs("12", "-7"),),
    lambda x: each(int, x, np.int64), name="int64")
add("AsString", kf.strings.as_string, (rand(2, 2),),
    lambda x: each(lambda v: b"%f" % v, x))
add("AsString", lambda x: kf.strings.as_string(x, precision=3, scientific=True),
    (rand(3).astype(np.float32),), lambda x: each(lambda v: b"%.3e" % v, x), name="scientific")
add("AsString", lambda x: kf.strings.as_string(x, width=4, fill="0"), (ints(3),),
    lambda x: each(lambda v: b"%04d" % v, x), name="int")
add("AsString", kf.strings.as_string, (np.array([True, False]),),
    lambda x: strs("true", "false"), name="bool")
add("StringJoin", lambda x, y: kf.strings.join([x, y, "!"], separator="-"),
    (WORDS, strs("x", "y", "z")), lambda x, y: each(lambda s: s, np.broadcast_to(
        np.vectorize(lambda a, b: a + b"-" + b + b"-!", otypes=[object])(x, y), x.shape)))
add("ReduceJoin", kf.strings.reduce_join, (WORDS,), lambda x: np.array(b"".join(x.ravel()),
                                                                         object))
add("ReduceJoin", lambda x: kf.strings.reduce_join(x, axis=0, keepdims=True, separator=","),
    (WORDS,), lambda x: np.array([[b",".join(x[:, j]) for j in range(3)]], object), name="axis")
add("StringSplitV2", lambda x: kf.strings.split(x, ",").to_tensor(), (strs("a,b", "c", ""),),
    lambda x: strs("a", "b", "c", "", "", "", shape=(3, 2)), static_shape=False)
add("StringSplitV2", kf.strings.split, (scalar(" one  two three "),),
    lambda x: strs("one", "two", "three"), static_shape=False, name="scalar")
add("Substr", lambda x: kf.strings.substr(x, 1, 2), (strs("Hello", "ab", "c", shape=(3, 1)),),
    lambda x: each(lambda s: s[1:3], x))
add("Substr", lambda x, p: kf.strings.substr(x, p, 3, unit="UTF8_CHAR"),
    (strs("héllo", "añb"), i32([1, -2])),
    lambda x, p: strs("éll", "ñb"), name="utf8")
add("StringFormat", lambda x, y: kf.strings.format("x={}, y={}!", [x, y]),
    (i32([[1, 2], [3, 4]]), strs("a")), lambda x, y: scalar('x=[[1 2]\n [3 4]], y=["a"]!'))
add("StringFormat", lambda x: kf.strings.format("{}", x, summarize=2), (i32(range(6)),),
    lambda x: scalar("[0 1 ... 4 5]"), name="summarize")
ERRORS.extend([
    ErrorSample("StringToNumber", kf.strings.to_number, (strs("1.5", "abc"),),
                errors.InvalidArgumentError, ("StringToNumberOp", "abc"), name="bad"),
    ErrorSample("StringToNumber", lambda x: kf.strings.to_number(x, kf.int32),
                (strs("1.5"),), errors.InvalidArgumentError, ("1.5",), name="float_as_int"),
    ErrorSample("StringLength", kf.strings.length, (rand(2),), TypeError,
                ("string tensor", "float64")),
    ErrorSample("StaticRegexFullMatch", lambda x: kf.strings.regex_full_match(x, "(a"),
                (strs("a"),), errors.InvalidArgumentError, ("Invalid pattern",)),
    ErrorSample("Substr", lambda x: kf.strings.substr(x, 5, 1), (strs("abc"),),
                errors.InvalidArgumentError, ("pos 5 out of range",)),
    ErrorSample("StringFormat", lambda x: kf.strings.format("{} {}", [x]), (i32([1]),),
                errors.InvalidArgumentError, ("num placeholders",)),
    ErrorSample("AsString", kf.strings.as_string, (strs("a"),), errors.InvalidArgumentError,
                ("AsString", "string")),
])
