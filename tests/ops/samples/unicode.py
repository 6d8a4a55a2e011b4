"""Samples of the ops in kilnflow/ops/unicode.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, i32
from tests.ops.samples.strings import scalar, strs

add("UnicodeDecode", lambda x: kf.strings.unicode_decode(x, "UTF-8"), (scalar("hé€"),),
    lambda x: i32([104, 233, 8364]), static_shape=False)
add("UnicodeEncode", lambda x: kf.strings.unicode_encode(x, "UTF-8"),
    (i32([[104, 233], [8364, 97]]),), lambda x: strs("hé", "€a"))


add("UnicodeTranscode", lambda x: kf.strings.unicode_transcode(x, "UTF-8", "UTF-16-BE"),
    (strs("hé", "€", ""),), lambda x: strs(*[s.decode().encode("utf-16-be") for s in x]))
add("UnicodeTranscode",
    lambda x: kf.strings.unicode_transcode(x, "UTF-8", "UTF-8", replacement_char=63,
                                           replace_control_characters=True),
    (np.array([b"a\xffb", b"c\x01"], object),), lambda x: strs("a?b", "c?"), name="replace")

ERRORS.extend([
    ErrorSample("UnicodeTranscode", lambda x: kf.strings.unicode_transcode(x, "UTF-8", "nope"),
                (strs("a"),), errors.InvalidArgumentError, ("nope",)),
    ErrorSample("UnicodeDecode", lambda x: kf.strings.unicode_decode(x, "UTF-8", "strict"),
                (np.array(b"a\xff", object),), errors.InvalidArgumentError, ("Invalid UTF-8",)),
    ErrorSample("UnicodeEncode", lambda x: kf.strings.unicode_encode(x, "UTF-8", "strict"),
                (i32([104, -1]),), errors.InvalidArgumentError, ("Invalid code point -1",)),
])
