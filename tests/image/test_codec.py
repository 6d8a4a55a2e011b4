"""PNG/BMP codecs: TF-encoded PNGs (adaptive row filters) decode to TF's pixels for every
channels/dtype choice; our PNGs round-trip; palette, low-bit and BMP files built by hand."""
from __future__ import annotations

import base64
import json
import os
import struct
import zlib

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors

with open(os.path.join(os.path.dirname(__file__), "tf_codec_reference.json")) as _file:
    REF = json.load(_file)
I = kf.image


@pytest.mark.parametrize("kind", sorted(REF))
def test_decode_png_matches_tf(kind):
    case = REF[kind]
    data = base64.b64decode(case["png"])
    for key, want in case.items():
        if not key.startswith("decode-"):
            continue
        _, channels, dtype = key.split("-")
        got = I.decode_png(data, channels=int(channels), dtype=dtype)
        assert got.dtype.name == dtype
        # libpng's 16-bit luma runs through its gamma tables: within 2 of our weighted floor
        tolerance = 2 if case["dtype"] == "uint16" and channels == "1" else 0
        np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=tolerance,
                                   err_msg=f"{kind} {key}")
    np.testing.assert_array_equal(I.decode_image(data, dtype=case["dtype"]).numpy(),
                                  case["pixels"])


@pytest.mark.parametrize("kind", sorted(REF))
def test_encode_png_round_trips(kind):
    pixels = np.asarray(REF[kind]["pixels"], REF[kind]["dtype"])
    encoded = I.encode_png(pixels)
    assert encoded.dtype == kf.string and encoded.shape == ()
    np.testing.assert_array_equal(I.decode_png(encoded, dtype=pixels.dtype).numpy(), pixels)


def _chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png(width, height, depth, ctype, rows, extra=b""):
    header = struct.pack(">IIBBBBB", width, height, depth, ctype, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + extra +
            _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b""))


def test_palette_and_low_bit_pngs():
    palette = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255])
    rows = bytes([0, 0b00011011, 0, 0b10010000])  # 2-bit indices 0,1,2,3 (3 invalid) ...
    rows = bytes([0, 0b00011000, 0, 0b10010000])  # row 0: 0,1,2,0; row 1: 2,1,0,0
    data = _png(4, 2, 2, 3, rows, _chunk(b"PLTE", palette) + _chunk(b"tRNS", bytes([7])))
    got = I.decode_png(data).numpy()
    assert got.shape == (2, 4, 4)
    np.testing.assert_array_equal(got[0, :, :3], [[255, 0, 0], [0, 255, 0], [0, 0, 255],
                                                  [255, 0, 0]])
    np.testing.assert_array_equal(got[0, :, 3], [7, 255, 255, 7])
    gray = _png(3, 1, 1, 0, bytes([0, 0b10100000]))
    np.testing.assert_array_equal(I.decode_png(gray).numpy()[..., 0], [[255, 0, 255]])


def _bmp(pixels, bits, top_down=False):
    h, w, _ = pixels.shape
    samples = bits // 8
    row = (w * samples + 3) // 4 * 4
    body = b""
    order = range(h) if top_down else range(h - 1, -1, -1)
    for y in order:
        line = pixels[y][:, [2, 1, 0, 3][:samples]].astype(np.uint8).tobytes()
        body += line + b"\0" * (row - len(line))
    header = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, bits, 0, len(body),
                         0, 0, 0, 0)
    return b"BM" + struct.pack("<IHHI", 54 + len(body), 0, 0, 54) + header + body


def test_decode_bmp_and_decode_image_sniff_the_format():
    rgba = np.random.default_rng(1).integers(0, 256, (3, 5, 4), dtype=np.uint8)
    np.testing.assert_array_equal(I.decode_bmp(_bmp(rgba, 24)).numpy(), rgba[..., :3])
    np.testing.assert_array_equal(I.decode_bmp(_bmp(rgba, 32, True)).numpy(), rgba)
    np.testing.assert_array_equal(I.decode_image(_bmp(rgba, 24), channels=3).numpy(),
                                  rgba[..., :3])
    as_float = I.decode_image(_bmp(rgba, 24), dtype=kf.float32).numpy()
    np.testing.assert_allclose(as_float, rgba[..., :3] / 255.0, rtol=1e-6)
    f = kf.function(lambda s: I.decode_png(s, channels=3))
    data = base64.b64decode(REF["rgb"]["png"])
    np.testing.assert_array_equal(f(kf.constant(data)).numpy(), REF["rgb"]["pixels"])


def test_is_jpeg_and_bad_inputs():
    got = I.is_jpeg(kf.constant(b"\xff\xd8\xff\xe0rest")).numpy()
    assert bool(got) and not bool(I.is_jpeg(b"\x89PNG....").numpy())
    with pytest.raises(errors.InvalidArgumentError):
        I.decode_png(b"not a png")
    with pytest.raises(errors.InvalidArgumentError):
        I.decode_bmp(b"BM" + b"\0" * 10)
    with pytest.raises(errors.UnimplementedError):
        I.decode_image(b"\xff\xd8\xff\xe0" + b"\0" * 20)
    with pytest.raises(errors.InvalidArgumentError):
        I.encode_png(np.zeros((2, 2, 5), np.uint8))
    with pytest.raises(ValueError):
        I.decode_png(b"", channels=2)
