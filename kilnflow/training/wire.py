"""Protocol buffers' wire format, the parts tf.train.Example needs: varints (int64 as
two's complement), length-delimited fields, fixed32 floats, and a field reader that
rejects truncated or malformed input with DataLossError."""
from __future__ import annotations

import struct
from typing import Any, Iterator, List, Tuple

from kilnflow import errors

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


def varint(value: int) -> bytes:
    """A base-128 varint; negative int64 values take ten bytes (two's complement)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def length_delimited(number: int, data: bytes) -> bytes:
    return varint(number << 3 | LENGTH) + varint(len(data)) + data


def _read_varint(data: bytes, pos: int, what: str) -> Tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise errors.DataLossError(f"Could not parse {what}: truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return result, pos


def fields(data: bytes, what: str) -> Iterator[Tuple[int, Any]]:
    """(field number, value) pairs: an int for varints, bytes for length-delimited
    fields, a (kind, bytes) pair for fixed-width ones."""
    pos = 0
    while pos < len(data):
        key, pos = _read_varint(data, pos, what)
        number, kind = key >> 3, key & 7
        if number == 0:
            raise errors.DataLossError(f"Could not parse {what}: field number 0")
        if kind == VARINT:
            value, pos = _read_varint(data, pos, what)
        elif kind == LENGTH:
            size, pos = _read_varint(data, pos, what)
            if pos + size > len(data):
                raise errors.DataLossError(f"Could not parse {what}: truncated field")
            value, pos = data[pos:pos + size], pos + size
        elif kind in (FIXED32, FIXED64):
            size = 4 if kind == FIXED32 else 8
            if pos + size > len(data):
                raise errors.DataLossError(f"Could not parse {what}: truncated field")
            value, pos = (kind, data[pos:pos + size]), pos + size
        else:
            raise errors.DataLossError(f"Could not parse {what}: wire type {kind}")
        yield number, value


def as_bytes(value: Any, what: str) -> bytes:
    if not isinstance(value, bytes):
        raise errors.DataLossError(f"Could not parse {what}: expected a length-delimited "
                                   "field")
    return value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def int64s(value: Any) -> List[int]:
    """An int64 field's values: one varint, or a packed run of them."""
    if isinstance(value, int):
        return [_signed(value)]
    data, pos, out = as_bytes(value, "int64 list"), 0, []
    while pos < len(data):
        number, pos = _read_varint(data, pos, "int64 list")
        out.append(_signed(number))
    return out


def floats(value: Any) -> List[float]:
    """A float field's values: one fixed32, or a packed run of them."""
    if isinstance(value, tuple) and value[0] == FIXED32:
        return [struct.unpack("<f", value[1])[0]]
    data = as_bytes(value, "float list")
    if len(data) % 4:
        raise errors.DataLossError("Could not parse float list: length not a multiple of 4")
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def c_escape(data: bytes) -> str:
    """Bytes as protobuf's text format writes them (C escapes, octal for the rest)."""
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    return "".join(named.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}")
                   for b in data)
