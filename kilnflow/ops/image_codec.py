"""tf.image PNG and BMP codecs in pure Python (zlib + NumPy): decode_png, encode_png,
decode_bmp, decode_image (PNG/BMP; GIF and JPEG raise, they need C libraries) and is_jpeg.

PNG: every colour type, bit depths 1-16, tRNS, all five row filters; Adam7-interlaced files
are refused with InvalidArgumentError. encode_png writes filter-0 rows at the zlib level of
`compression`, so its bytes differ from libpng's while decoding to the same pixels.
"""
from __future__ import annotations

import struct
import zlib
from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.ops import math, strings
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.image_color import convert_image_dtype
from kilnflow.shapes import TensorSpec
from kilnflow.tensor import Tensor

_PNG = b"\x89PNG\r\n\x1a\n"
_GRAY = np.array([0.299, 0.587, 0.114])  # TF asks libpng for these luma weights


def _bad(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(errors.with_location(message))


def _chunks(data: bytes) -> list:
    out, pos = [], 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length:
            raise _bad("DecodePng: truncated PNG chunk")
        out.append((kind, body))
        pos += 12 + length
        if kind == b"IEND":
            break
    return out


def _unfilter(raw: bytes, height: int, row_bytes: int, bpp: int) -> np.ndarray:
    data = np.frombuffer(raw, np.uint8)
    if data.size < height * (row_bytes + 1):
        raise _bad("DecodePng: image data is truncated")
    rows = data[:height * (row_bytes + 1)].reshape(height, row_bytes + 1)
    out = np.zeros((height, row_bytes), np.uint8)
    prev = np.zeros(row_bytes, np.int32)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 2:
            cur = (line + prev) & 255
        elif kind == 1:  # Sub: a running sum per byte of the pixel
            padded = np.concatenate([line, np.zeros((-row_bytes) % bpp, np.int32)])
            cur = (np.cumsum(padded.reshape(-1, bpp), 0) & 255).reshape(-1)[:row_bytes]
        elif kind in (3, 4):
            cur = np.zeros(row_bytes, np.int32)
            for i in range(0, row_bytes, bpp):
                j = slice(i, min(i + bpp, row_bytes))
                n = j.stop - j.start
                left = cur[i - bpp:i - bpp + n] if i >= bpp else np.zeros(n, np.int32)
                up = prev[j]
                if kind == 3:
                    cur[j] = (line[j] + (left + up) // 2) & 255
                else:
                    upleft = prev[i - bpp:i - bpp + n] if i >= bpp else np.zeros(n, np.int32)
                    p = left + up - upleft
                    pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - upleft)
                    pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, upleft))
                    cur[j] = (line[j] + pred) & 255
        else:
            raise _bad(f"DecodePng: unknown row filter {kind}")
        out[y] = cur
        prev = cur
    return out


def _convert_channels(img: np.ndarray, channels: int, op: str) -> np.ndarray:
    have = img.shape[-1]
    if channels in (0, have):
        return img
    top = np.iinfo(img.dtype).max
    color = img[..., :1].repeat(3, -1) if have in (1, 2) else img[..., :3]
    alpha = img[..., -1:] if have in (2, 4) else np.full(img.shape[:-1] + (1,), top, img.dtype)
    if channels == 1:
        if have in (1, 2):
            return img[..., :1]
        gray = np.floor(color.astype(np.float64) @ _GRAY)[..., None]
        return np.clip(gray, 0, top).astype(img.dtype)
    if channels == 3:
        return color
    if channels == 4:
        return np.concatenate([color, alpha], -1)
    raise _bad(f"{op}: channels must be 0, 1, 3 or 4, got {channels}")


def png_decode(data: bytes, channels: int = 0, dtype: Any = np.uint8) -> np.ndarray:
    if not data.startswith(_PNG):
        raise _bad("DecodePng: Invalid PNG header, data size " + str(len(data)))
    chunks = _chunks(data)
    header = dict(chunks).get(b"IHDR")
    if header is None or len(header) != 13:
        raise _bad("DecodePng: missing IHDR chunk")
    width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", header)
    samples = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(ctype)
    if samples is None or depth not in (1, 2, 4, 8, 16) or interlace:
        raise _bad(f"DecodePng: unsupported PNG (colour type {ctype}, depth {depth}, "
                   f"interlace {interlace})")
    try:
        raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    except zlib.error as exc:
        raise _bad(f"DecodePng: corrupt image data ({exc})") from None
    bits = depth * samples
    row_bytes = (width * bits + 7) // 8
    rows = _unfilter(raw, height, row_bytes, max(1, bits // 8))
    if depth == 16:
        values = rows.reshape(height, -1).view(">u2")[:, :width * samples].astype(np.uint16)
    elif depth == 8:
        values = rows[:, :width * samples]
    else:
        values = np.unpackbits(rows, axis=1).reshape(height, -1, depth)[:, :width * samples]
        values = (values * (1 << np.arange(depth - 1, -1, -1))).sum(-1).astype(np.uint8)
    img = values.reshape(height, width, samples)
    extra = dict(chunks)
    if ctype == 3:
        palette = np.frombuffer(extra.get(b"PLTE", b""), np.uint8).reshape(-1, 3)
        if palette.size == 0 or img.max(initial=0) >= len(palette):
            raise _bad("DecodePng: palette index out of range")
        trns = np.frombuffer(extra.get(b"tRNS", b""), np.uint8)
        if trns.size:
            alpha = np.full(len(palette), 255, np.uint8)
            alpha[:trns.size] = trns[:len(palette)]
            palette = np.concatenate([palette, alpha[:, None]], 1)
        img = palette[img[..., 0]]
    elif depth < 8:  # scale gray levels to the full byte
        img = (img.astype(np.uint16) * (255 // ((1 << depth) - 1))).astype(np.uint8)
    img = _convert_channels(img, channels, "DecodePng")  # at the file's depth, as libpng
    want = np.dtype(dtype)
    if want == np.uint16 and img.dtype == np.uint8:
        img = img.astype(np.uint16) * 257
    elif want == np.uint8 and img.dtype == np.uint16:
        img = (img >> 8).astype(np.uint8)  # libpng's strip_16 keeps the high byte
    return img


def png_encode(img: np.ndarray, compression: int = -1) -> bytes:
    if img.ndim != 3 or img.shape[-1] not in (1, 2, 3, 4):
        raise _bad(f"EncodePng: image must be [height, width, 1-4], got {img.shape}")
    height, width, channels = img.shape
    depth = 16 if img.dtype == np.uint16 else 8
    ctype = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    rows = img.astype(">u2").view(np.uint8) if depth == 16 else img
    rows = rows.reshape(height, -1)
    body = np.concatenate([np.zeros((height, 1), np.uint8), rows], 1).tobytes()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, depth, ctype, 0, 0, 0)
    level = 6 if compression is None or compression < 0 else min(int(compression), 9)
    return _PNG + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(body, level)) + \
        chunk(b"IEND", b"")


def bmp_decode(data: bytes, channels: int = 0) -> np.ndarray:
    if len(data) < 54 or not data.startswith(b"BM"):
        raise _bad("DecodeBmp: not a BMP file (no 'BM' header)")
    offset = struct.unpack("<I", data[10:14])[0]
    width, height = struct.unpack("<ii", data[18:26])
    bits, compression = struct.unpack("<H", data[28:30])[0], struct.unpack("<I", data[30:34])[0]
    if bits not in (8, 24, 32) or compression not in (0, 3) or width <= 0 or height == 0:
        raise _bad(f"DecodeBmp: unsupported BMP ({bits} bits, compression {compression})")
    samples = bits // 8
    row = (width * samples + 3) // 4 * 4
    rows = abs(height)
    pixels = np.frombuffer(data, np.uint8, rows * row, offset) if \
        len(data) >= offset + rows * row else None
    if pixels is None:
        raise _bad("DecodeBmp: pixel data is truncated")
    img = pixels.reshape(rows, row)[:, :width * samples].reshape(rows, width, samples)
    if height > 0:  # rows are stored bottom-up
        img = img[::-1]
    if samples >= 3:  # BGR(A) -> RGB(A)
        img = np.concatenate([img[..., 2::-1], img[..., 3:]], -1)
    return _convert_channels(np.ascontiguousarray(img), channels, "DecodeBmp")


def _scalar(contents: np.ndarray, op: str) -> bytes:
    value = np.asarray(contents).reshape(-1)
    if np.asarray(contents).ndim != 0:
        raise _bad(f"{op}: contents must be a scalar string, got shape "
                   f"{np.asarray(contents).shape}")
    data = value[0]
    return data.encode() if isinstance(data, str) else bytes(data)


def _image_rule(channels: int) -> list:
    return [None, None, channels or None]


def _decode_any(data: bytes, channels: int, dtype: Any) -> np.ndarray:
    if data.startswith(_PNG):
        return png_decode(data, channels, dtype)
    if data.startswith(b"BM"):
        img = bmp_decode(data, channels)
        return img if np.dtype(dtype) == np.uint8 else img.astype(np.uint16) * 257
    if data.startswith(b"\xff\xd8\xff"):
        raise errors.UnimplementedError(errors.with_location(
            "DecodeImage: JPEG needs libjpeg, which kilnflow does not bundle"))
    if data.startswith(b"GIF8"):
        raise errors.UnimplementedError(errors.with_location(
            "DecodeImage: GIF decoding is not supported"))
    raise _bad("DecodeImage: Unknown image file format. One of JPEG, PNG, GIF, BMP required.")


DECODE_PNG = defop("DecodePng", dtypes=(_dtypes.string,),
                   shape=lambda c, *, channels, dtype: TensorSpec(_image_rule(channels), dtype),
                   kernel=lambda c, *, channels, dtype: png_decode(
                       _scalar(c, "DecodePng"), channels, dtype.as_numpy_dtype))
DECODE_BMP = defop("DecodeBmp", dtypes=(_dtypes.string,),
                   shape=lambda c, *, channels: TensorSpec(_image_rule(channels), _dtypes.uint8),
                   kernel=lambda c, *, channels: bmp_decode(_scalar(c, "DecodeBmp"), channels))
DECODE_IMAGE = defop("DecodeImage", dtypes=(_dtypes.string,),
                     shape=lambda c, *, channels, dtype: TensorSpec(_image_rule(channels),
                                                                    dtype),
                     kernel=lambda c, *, channels, dtype: _decode_any(
                         _scalar(c, "DecodeImage"), channels, dtype.as_numpy_dtype))
ENCODE_PNG = defop("EncodePng", dtypes=(_dtypes.uint8, _dtypes.uint16),
                   shape=lambda x, *, compression: TensorSpec([], _dtypes.string),
                   kernel=lambda x, *, compression: np.asarray(png_encode(x, compression),
                                                               object))


def _channels(channels: Any, op: str) -> int:
    channels = int(channels)
    if channels not in (0, 1, 3, 4):
        raise ValueError(f"{op}: channels must be 0, 1, 3 or 4, got {channels}")
    return channels


def decode_png(contents: Any, channels: int = 0, dtype: Any = _dtypes.uint8,
               name: Optional[str] = None) -> Tensor:
    """Decode a PNG-encoded string to a uint8 or uint16 [height, width, channels] image."""
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in (_dtypes.uint8, _dtypes.uint16):
        raise TypeError(f"decode_png: dtype must be uint8 or uint16, got {dtype.name}")
    return bind(DECODE_PNG, (convert_to_tensor(contents, _dtypes.string),),
                {"channels": _channels(channels, "decode_png"), "dtype": dtype}, name=name)


def encode_png(image: Any, compression: int = -1, name: Optional[str] = None) -> Tensor:
    """PNG-encode a uint8 or uint16 [height, width, channels] image to a scalar string."""
    return bind(ENCODE_PNG, (convert_to_tensor(image),), {"compression": int(compression)},
                name=name)


def decode_bmp(contents: Any, channels: int = 0, name: Optional[str] = None) -> Tensor:
    """Decode an uncompressed 8/24/32-bit BMP to a uint8 image."""
    return bind(DECODE_BMP, (convert_to_tensor(contents, _dtypes.string),),
                {"channels": _channels(channels, "decode_bmp")}, name=name)


def decode_image(contents: Any, channels: Optional[int] = None, dtype: Any = _dtypes.uint8,
                 name: Optional[str] = None, expand_animations: bool = True) -> Tensor:
    """Decode PNG or BMP by sniffing the header; other dtypes are converted as
    convert_image_dtype does (JPEG and GIF raise UnimplementedError)."""
    dtype = _dtypes.as_dtype(dtype)
    raw = _dtypes.uint16 if dtype == _dtypes.uint16 else _dtypes.uint8
    image = bind(DECODE_IMAGE, (convert_to_tensor(contents, _dtypes.string),),
                 {"channels": _channels(channels or 0, "decode_image"), "dtype": raw},
                 name=name)
    return image if dtype == raw else convert_image_dtype(image, dtype)


def is_jpeg(contents: Any, name: Optional[str] = None) -> Tensor:
    """True where the contents start with JPEG's magic bytes."""
    head = strings.substr(convert_to_tensor(contents, _dtypes.string), 0, 3)
    return math.equal(head, convert_to_tensor(b"\xff\xd8\xff", _dtypes.string), name=name)
