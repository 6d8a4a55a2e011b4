"""Samples of the ops in kilnflow/ops/image_codec.py (see tests/ops/samples/__init__.py)."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops.image_codec import bmp_decode, png_decode, png_encode
from tests.ops.samples import ERRORS, ErrorSample, add

_pixels = np.random.default_rng(11).integers(0, 256, (3, 4, 3), dtype=np.uint8)
_png = np.asarray(png_encode(_pixels), object)
_bmp = np.asarray(b"BM" + (54 + 48).to_bytes(4, "little") + b"\0" * 4 + (54).to_bytes(4, "little")
                  + (40).to_bytes(4, "little") + (4).to_bytes(4, "little")
                  + (3).to_bytes(4, "little") + (1).to_bytes(2, "little")
                  + (24).to_bytes(2, "little") + b"\0" * 24 + _pixels[::-1, :, ::-1].tobytes(),
                  object)

add("DecodePng", kf.image.decode_png, (_png,), lambda c: _pixels, static_shape=False)
add("DecodePng", lambda c: kf.image.decode_png(c, channels=4, dtype=kf.uint16), (_png,),
    lambda c: png_decode(c.item(), 4, np.uint16), name="rgba16", static_shape=False)
add("DecodeBmp", kf.image.decode_bmp, (_bmp,), lambda c: bmp_decode(c.item()),
    static_shape=False)
add("DecodeImage", kf.image.decode_image, (_png,), lambda c: _pixels, static_shape=False)
add("DecodeImage", lambda c: kf.image.decode_image(c, channels=1), (_bmp,),
    lambda c: bmp_decode(c.item(), 1), name="bmp_gray", static_shape=False)
add("EncodePng", lambda x: kf.image.decode_png(kf.image.encode_png(x)), (_pixels,),
    lambda x: x, static_shape=False)
ERRORS.append(ErrorSample("DecodePng", kf.image.decode_png, (np.asarray(b"junk", object),),
                          errors.InvalidArgumentError, ("PNG",), name="junk"))
