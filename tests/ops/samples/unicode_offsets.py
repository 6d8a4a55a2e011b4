"""Samples of kilnflow/ops/unicode_offsets.py (UnicodeDecodeWithOffsets), with the code
points and offsets TF 2.21 gave for the same strings, invalid bytes included
(tf_unicode_offsets_expected.json). Not differentiable (strings)."""
import json
import os

import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add

with open(os.path.join(os.path.dirname(__file__), "tf_unicode_offsets_expected.json")) as _f:
    TF = json.load(_f)

CASES = {"vec": [b"h\xc3\xa9llo", b"", b"a\xf0\x9f\x98\x80b"],
         "bad": [b"a\xc3(b\xff\xfe", b"\xe2\x82"]}


def _flat(rows, dtype):
    return np.array([x for r in rows for x in r], dtype)


for _name, _strings in CASES.items():
    for _errors in ("replace", "ignore"):
        _points, _offsets = TF[f"{_name}_{_errors}"]
        add("UnicodeDecodeWithOffsets",
            lambda x, e=_errors: tuple(t.flat_values for t in
                                       kf.strings.unicode_decode_with_offsets(x, "UTF-8", e)),
            (np.array(_strings, dtype=object),),
            lambda x, p=_points, o=_offsets: (_flat(p, np.int32), _flat(o, np.int64)),
            name=f"{_name}_{_errors}", static_shape=False)  # lengths depend on values

ERRORS.extend([
    ErrorSample("UnicodeDecodeWithOffsets",
                lambda x: kf.strings.unicode_decode_with_offsets(x, "UTF-8", "strict"),
                (np.array([b"\xff"], dtype=object),), errors.InvalidArgumentError,
                ("Invalid", "UTF-8")),
    ErrorSample("UnicodeDecodeWithOffsets",
                lambda x: kf.strings.unicode_decode_with_offsets(x, "latin-1"),
                (np.array([b"a"], dtype=object),), errors.InvalidArgumentError,
                ("input_encoding",)),
])
