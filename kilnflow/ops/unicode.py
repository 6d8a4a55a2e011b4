"""Unicode ops (tf.strings.unicode_*): code points to and from strings. Decode gives the
(row_splits, char_values) components TF's UnicodeDecode gives, which kf.strings.unicode_decode
makes a RaggedTensor of (kilnflow/ragged/string_ops.py); encode takes a dense tensor whose
last dim holds the characters. Not differentiable.
"""
from __future__ import annotations

import codecs
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors as _errors_module  # the kernels' `errors` attr is TF's name
from kilnflow.core.opdef import bind, defop
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops import array as array_ops
from kilnflow.ops.reshaping import reshape
from kilnflow.ops.strings import STRING, length, map_strings, strings_tensor, substr
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor

_INTS = frozenset((_dtypes.int32, _dtypes.int64))


def _decode_rule(x: Any, *, input_encoding: str, errors: str,
                 replacement_char: int) -> list:
    if x.shape.rank not in (None, 1):
        raise ValueError(f"UnicodeDecode: input must be a vector here, got shape {x.shape}")
    rows = None if x.shape.rank is None else x.shape.as_list()[0]
    return [TensorSpec([None if rows is None else rows + 1], _dtypes.int64),
            TensorSpec([None], _dtypes.int32)]


def _decode_one(s: bytes, input_encoding: str, errors: str, replacement_char: int) -> list:
    try:
        text = s.decode(input_encoding, "strict" if errors == "strict" else "replace")
    except UnicodeDecodeError as exc:
        raise _errors_module.InvalidArgumentError(_errors_module.with_location(
            f"Invalid {input_encoding} input: {exc}")) from None
    points = [ord(c) for c in text]
    if errors == "ignore":
        return [p for p in points if p != 0xFFFD]
    if errors == "replace":
        return [replacement_char if p == 0xFFFD else p for p in points]
    return points


def _decode_kernel(x: np.ndarray, *, input_encoding: str, errors: str,
                   replacement_char: int) -> tuple:
    rows = [_decode_one(s, input_encoding, errors, replacement_char) for s in x.reshape(-1)]
    splits = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(r) for r in rows], out=splits[1:])
    points = np.array([p for r in rows for p in r], np.int32)
    return splits, points


UNICODE_DECODE = defop("UnicodeDecode", shape=_decode_rule, kernel=_decode_kernel,
                       dtypes=STRING, multi_output=True)


def unicode_decode_components(input: Any, input_encoding: str,  # noqa: A002
                              errors: str = "replace", replacement_char: int = 65533,
                              name: Optional[str] = None) -> tuple:
    """(row_splits, char_values) of a vector of strings: row i's code points are
    char_values[row_splits[i]:row_splits[i + 1]]."""
    attrs = {"input_encoding": str(input_encoding), "errors": str(errors),
             "replacement_char": int(replacement_char)}
    return bind(UNICODE_DECODE, (strings_tensor(input),), attrs, name)


def unicode_decode(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, replace_control_characters: bool = False,
                   name: Optional[str] = None) -> Tensor:
    """The code points of a scalar string, as an int32 vector (kf.strings.unicode_decode
    gives a RaggedTensor for higher ranks, kilnflow/ragged/string_ops.py).

    >>> import kilnflow as kf
    >>> kf.strings.unicode_decode("hé", "UTF-8").numpy()
    array([104, 233], dtype=int32)
    """
    x = strings_tensor(input)
    if x.shape.rank != 0:
        raise ValueError(f"ops.unicode.unicode_decode takes a scalar, got shape {x.shape}")
    return unicode_decode_components(reshape(x, [1]), input_encoding, errors,
                                     replacement_char, name)[1]


def _encode_rule(x: Any, *, output_encoding: str, errors: str,
                 replacement_char: int) -> TensorSpec:
    if x.shape.rank == 0:
        raise ValueError("UnicodeEncode: input must have rank >= 1 (the characters)")
    dims = None if x.shape.rank is None else x.shape.as_list()[:-1]
    return TensorSpec(TensorShape(dims), _dtypes.string)


def _encode_one(points: np.ndarray, output_encoding: str, errors: str,
                replacement_char: int) -> bytes:
    chars = []
    for p in points.tolist():
        if 0 <= p <= 0x10FFFF and not 0xD800 <= p <= 0xDFFF:
            chars.append(chr(p))
        elif errors == "strict":
            raise _errors_module.InvalidArgumentError(_errors_module.with_location(
                f"Invalid code point {p}"))
        elif errors == "replace":
            chars.append(chr(replacement_char))
    return "".join(chars).encode(output_encoding)


def _encode_kernel(x: np.ndarray, *, output_encoding: str, errors: str,
                   replacement_char: int) -> np.ndarray:
    out = np.empty(x.shape[:-1], object)
    for index in np.ndindex(out.shape):
        out[index] = _encode_one(x[index], output_encoding, errors, replacement_char)
    return out


UNICODE_ENCODE = defop("UnicodeEncode", shape=_encode_rule, kernel=_encode_kernel,
                       dtypes=_INTS)


def unicode_encode(input: Any, output_encoding: str, errors: str = "replace",  # noqa: A002
                   replacement_char: int = 65533, name: Optional[str] = None) -> Tensor:
    """Encode the code points along the last dim as strings ('UTF-8', 'UTF-16-BE', 'UTF-32-BE').

    >>> import kilnflow as kf
    >>> kf.strings.unicode_encode([104, 233], "UTF-8").numpy()
    b'h\\xc3\\xa9'
    """
    if output_encoding not in ("UTF-8", "UTF-16-BE", "UTF-32-BE"):
        raise ValueError(f"output_encoding must be UTF-8, UTF-16-BE or UTF-32-BE, got "
                         f"{output_encoding!r}")
    attrs = {"output_encoding": output_encoding, "errors": str(errors),
             "replacement_char": int(replacement_char)}
    return bind(UNICODE_ENCODE, (convert_to_tensor(input),), attrs, name)


def unicode_split(input: Any, input_encoding: str, errors: str = "replace",  # noqa: A002
                  replacement_char: int = 65533, name: Optional[str] = None) -> Tensor:
    """The characters of a scalar string, each as a string (a vector; kf.strings.unicode_split
    gives a RaggedTensor for higher ranks, kilnflow/ragged/string_ops.py).

    >>> import kilnflow as kf
    >>> kf.strings.unicode_split("hé", "UTF-8").numpy().tolist() == ["h".encode(), "é".encode()]
    True
    """
    points = unicode_decode(input, input_encoding, errors, replacement_char)
    return unicode_encode(reshape(points, [-1, 1]), "UTF-8", name=name)


def bytes_split(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The bytes of a scalar string, each as a one-byte string.

    >>> import kilnflow as kf
    >>> kf.strings.bytes_split("ab").numpy()
    array([b'a', b'b'], dtype=object)
    """
    x = strings_tensor(input)
    if x.shape.rank != 0:
        raise ValueError(f"ops.unicode.bytes_split takes a scalar, got shape {x.shape} "
                         "(kf.strings.bytes_split gives a RaggedTensor for higher ranks)")
    return substr(x, array_ops.range(length(x)), 1, name=name)


def _transcode_rule(x: Any, *, input_encoding: str, output_encoding: str, errors: str,
                    replacement_char: int, replace_control_characters: bool) -> TensorSpec:
    for encoding in (input_encoding, output_encoding):
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise ValueError(f"Could not create converter for encoding: {encoding}") from None
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"errors must be 'strict', 'replace' or 'ignore', got {errors!r}")
    return TensorSpec(x.shape, _dtypes.string)


def _transcode_one(s: bytes, *, input_encoding: str, output_encoding: str, errors: str,
                   replacement_char: int, replace_control_characters: bool) -> bytes:
    try:
        text = s.decode(input_encoding, "strict" if errors == "strict" else "replace")
    except UnicodeDecodeError as exc:
        raise _errors_module.InvalidArgumentError(_errors_module.with_location(
            f"Invalid formatting on input string: {exc}")) from None
    chars = []
    for c in text:
        if c == "\ufffd":  # what the decoder put in place of invalid input
            if errors == "ignore":
                continue
            c = chr(replacement_char)
        elif replace_control_characters and ord(c) < 0x20:
            c = chr(replacement_char)
        chars.append(c)
    return "".join(chars).encode(output_encoding, "replace")


UNICODE_TRANSCODE = defop("UnicodeTranscode", shape=_transcode_rule, dtypes=STRING,
                          check_eager=True, kernel=map_strings(_transcode_one, object))


def unicode_transcode(input: Any, input_encoding: str, output_encoding: str,  # noqa: A002
                      errors: str = "replace", replacement_char: int = 65533,
                      replace_control_characters: bool = False,
                      name: Optional[str] = None) -> Tensor:
    """Each string re-encoded from `input_encoding` to `output_encoding`; invalid input is
    replaced by `replacement_char`, dropped ('ignore') or refused ('strict').

    >>> import kilnflow as kf
    >>> kf.strings.unicode_transcode("hé", "UTF-8", "UTF-16-BE").numpy()
    b'\\x00h\\x00\\xe9'
    """
    attrs = {"input_encoding": str(input_encoding), "output_encoding": str(output_encoding),
             "errors": str(errors), "replacement_char": int(replacement_char),
             "replace_control_characters": bool(replace_control_characters)}
    return bind(UNICODE_TRANSCODE, (strings_tensor(input),), attrs, name)
