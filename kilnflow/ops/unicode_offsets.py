"""UnicodeDecodeWithOffsets (tf.strings.unicode_decode_with_offsets and
unicode_split_with_offsets): code points of each string with the byte offset where each
character starts. Decoding agrees with UnicodeDecode (kilnflow/ops/unicode.py): Python's
codec, where each invalid byte range becomes one replacement character (starting at the
range's first byte) or, with errors="ignore", is dropped.
"""
from __future__ import annotations

import codecs
from typing import Any, List, Optional, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors as _errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.strings import STRING, strings_tensor
from kilnflow.shapes import TensorSpec

ENCODINGS = ("UTF-8", "UTF-16-BE", "UTF-32-BE")
_ranges: List[Tuple[int, int]] = []


def _record(exc: UnicodeError) -> Tuple[str, int]:
    _ranges.append((exc.start, exc.end))
    return "\ufffd", exc.end


codecs.register_error("kilnflow.offsets", _record)


def decode_with_offsets(s: bytes, encoding: str, errors: str,
                        replacement_char: int) -> Tuple[list, list]:
    """(code points, byte offsets) of one string."""
    del _ranges[:]
    try:
        text = s.decode(encoding, "strict" if errors == "strict" else "kilnflow.offsets")
    except UnicodeDecodeError as exc:
        raise _errors.InvalidArgumentError(_errors.with_location(
            f"Invalid {encoding} input: {exc}")) from None
    bad, points, offsets, pos = list(_ranges), [], [], 0
    for char in text:
        if bad and pos == bad[0][0] and char == "\ufffd":  # a replaced invalid range
            start, pos = bad.pop(0)
            if errors == "ignore":
                continue
            points.append(replacement_char)
            offsets.append(start)
            continue
        points.append(ord(char))
        offsets.append(pos)
        pos += len(char.encode(encoding, "surrogatepass"))
    return points, offsets


def _rule(x: Any, *, input_encoding: str, errors: str, replacement_char: int) -> list:
    if x.shape.rank not in (None, 1):
        raise ValueError(f"UnicodeDecodeWithOffsets: input must be a vector here, got shape "
                         f"{x.shape}")
    rows = None if x.shape.rank is None else x.shape.as_list()[0]
    return [TensorSpec([None if rows is None else rows + 1], _dtypes.int64),
            TensorSpec([None], _dtypes.int32), TensorSpec([None], _dtypes.int64)]


def _kernel(x: np.ndarray, *, input_encoding: str, errors: str,
            replacement_char: int) -> tuple:
    rows = [decode_with_offsets(bytes(s), input_encoding, errors, replacement_char)
            for s in x.reshape(-1)]
    splits = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(p) for p, _ in rows], out=splits[1:])
    points = np.array([p for r, _ in rows for p in r], np.int32)
    offsets = np.array([o for _, r in rows for o in r], np.int64)
    return splits, points, offsets


UNICODE_DECODE_WITH_OFFSETS = defop("UnicodeDecodeWithOffsets", shape=_rule, kernel=_kernel,
                                    dtypes=STRING, multi_output=True)


def unicode_decode_with_offsets_components(input: Any, input_encoding: str,  # noqa: A002
                                           errors: str = "replace",
                                           replacement_char: int = 65533,
                                           name: Optional[str] = None) -> Any:
    """(row splits, code points, offsets) of a vector of strings."""
    if input_encoding not in ENCODINGS:
        raise _errors.InvalidArgumentError(_errors.with_location(
            f"unicode_decode_with_offsets: input_encoding must be one of {ENCODINGS}, got "
            f"{input_encoding!r}"))
    if errors not in ("strict", "replace", "ignore"):
        raise _errors.InvalidArgumentError(_errors.with_location(
            f"unicode_decode_with_offsets: errors must be 'strict', 'replace' or 'ignore', "
            f"got {errors!r}"))
    attrs = {"input_encoding": input_encoding, "errors": errors,
             "replacement_char": int(replacement_char)}
    return bind(UNICODE_DECODE_WITH_OFFSETS, (strings_tensor(input),), attrs, name)
