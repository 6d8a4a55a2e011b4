"""tf.strings.unicode_decode_with_offsets / unicode_split_with_offsets against TF 2.21's
values (tests/ops/samples/tf_unicode_offsets_expected.json): ragged results, splits, the
scalar and 2-D forms, UTF-16."""
import json
import os

import kilnflow as kf

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(_HERE, "ops", "samples", "tf_unicode_offsets_expected.json")) as _f:
    TF = json.load(_f)

CASES = {"vec": [b"h\xc3\xa9llo", b"", b"a\xf0\x9f\x98\x80b"],
         "bad": [b"a\xc3(b\xff\xfe", b"\xe2\x82"]}


def test_decode_and_split_with_offsets_match_tf():
    for name, strings in CASES.items():
        for errors in ("replace", "ignore"):
            points, offsets = kf.strings.unicode_decode_with_offsets(strings, "UTF-8", errors)
            assert [points.to_list(), offsets.to_list()] == TF[f"{name}_{errors}"]
            chars, offsets = kf.strings.unicode_split_with_offsets(strings, "UTF-8", errors)
            assert [[[c.decode("latin1") for c in row] for row in chars.to_list()],
                    offsets.to_list()] == TF[f"split_{name}_{errors}"]


def test_scalar_2d_and_utf16():
    points, offsets = kf.strings.unicode_decode_with_offsets(b"\x00h\x00\xe9", "UTF-16-BE")
    assert [points.numpy().tolist(), offsets.numpy().tolist()] == TF["u16"]
    points, offsets = kf.strings.unicode_decode_with_offsets([[b"ab"], [b"c"]], "UTF-8")
    assert [points.to_list(), offsets.to_list()] == TF["2d"]
    chars, offsets = kf.strings.unicode_split_with_offsets("hé", "UTF-8")
    assert chars.numpy().tolist() == [b"h", "é".encode()] and offsets.numpy().tolist() == [0, 1]


def test_with_offsets_in_a_function():
    f = kf.function(lambda s: kf.strings.unicode_decode_with_offsets(s, "UTF-8")[1].flat_values)
    assert f(kf.constant(["hé", "x"])).numpy().tolist() == [0, 1, 0]
