"""Summary protos for TensorBoard's plugins: scalars, histograms, images (PNG), text and
audio (WAV), each a tensor value with its plugin's metadata, as TF 2 writes them.

Protos and plugin metadata come from the `tensorboard` package (imported on use); the
PNG and WAV encoders are small and standard-library only.
"""
from __future__ import annotations

import io
import struct
import wave
import zlib
from typing import Any

import numpy as np

DEFAULT_BUCKETS = 30


def histogram_buckets(data: Any, buckets: int = DEFAULT_BUCKETS) -> np.ndarray:
    """[buckets, 3] rows of (left edge, right edge, count): equal widths over [min, max],
    as TF 2's histogram summary; all counts in the last bucket when every value is equal."""
    values = np.asarray(data, np.float64).ravel()
    if buckets <= 0 or values.size == 0:
        return np.zeros((max(buckets, 0), 3))
    low, high = float(values.min()), float(values.max())
    if low == high:
        counts = np.zeros(buckets)
        counts[-1] = values.size
        return np.stack([np.full(buckets, low), np.full(buckets, high), counts], axis=1)
    edges = np.linspace(low, high, buckets + 1)
    index = np.minimum(((values - low) / (high - low) * buckets).astype(np.int64), buckets - 1)
    counts = np.bincount(index, minlength=buckets).astype(np.float64)
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def encode_png(image: np.ndarray) -> bytes:
    """A [height, width, channels] uint8 array (1, 2, 3 or 4 channels) as PNG bytes."""
    height, width, channels = image.shape
    color = {1: 0, 2: 4, 3: 2, 4: 6}[channels]  # gray, gray+alpha, RGB, RGBA

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + \
            struct.pack(">I", zlib.crc32(kind + payload) & 0xFFFFFFFF)

    rows = np.concatenate([np.zeros((height, 1), np.uint8),  # filter type 0 per row
                           image.reshape(height, width * channels)], axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + \
        chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b"")


def encode_wav(samples: np.ndarray, sample_rate: int) -> bytes:
    """[frames, channels] floats in [-1, 1] as 16-bit PCM WAV bytes (TF's encode_wav:
    scaled by 32768, rounded half away from zero, saturated to the int16 range)."""
    scaled = np.clip(np.asarray(samples, np.float64), -1.0, 1.0) * 32768.0
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5)
    pcm = np.clip(rounded, -32768, 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(pcm.shape[1])
        out.setsampwidth(2)
        out.setframerate(int(sample_rate))
        out.writeframes(pcm.tobytes())
    return buffer.getvalue()


def _to_uint8(images: np.ndarray) -> np.ndarray:
    """As TF's convert_image_dtype(..., uint8, saturate=True): floats in [0, 1] scaled by
    255.5 and truncated; wider integers shifted down, narrower ones scaled up."""
    if images.dtype == np.uint8:
        return images
    if images.dtype.kind == "f":
        return np.clip(images.astype(np.float64) * 255.5, 0.0, 255.0).astype(np.uint8)
    if images.dtype.kind in "iu":
        top = int(np.iinfo(images.dtype).max) + 1
        values = images.astype(np.int64)
        values = values // (top // 256) if top > 256 else values * (256 // top)
        return np.clip(values, 0, 255).astype(np.uint8)
    return np.clip(images, 0, 255).astype(np.uint8)


def _value(kind: str, data: np.ndarray, params: dict) -> tuple:
    """(plugin metadata module, tensor array, extra metadata kwargs) for one summary."""
    if kind == "scalar":
        from tensorboard.plugins.scalar import metadata
        if data.dtype.kind not in "biuf":
            raise ValueError(f"kf.summary.scalar: cannot write {data.dtype} data")
        return metadata, data.astype(np.float32), {}
    if kind == "histogram":
        from tensorboard.plugins.histogram import metadata
        return metadata, histogram_buckets(data, params.get("buckets", DEFAULT_BUCKETS)), {}
    if kind == "image":
        from tensorboard.plugins.image import metadata
        images = _to_uint8(data[:params.get("max_outputs", 3)])
        dims = [str(images.shape[2]).encode(), str(images.shape[1]).encode()]
        return metadata, np.array(dims + [encode_png(i) for i in images], object), {}
    if kind == "text":
        from tensorboard.plugins.text import metadata
        text = params.get("text", data)
        return metadata, np.array(text if text is not None else "", object), {}
    if kind == "audio":
        from tensorboard.plugins.audio import metadata
        clips = data[:params.get("max_outputs", 3)]
        if clips.ndim == 2:
            clips = clips[:, :, None]
        rows = [[encode_wav(c, params["sample_rate"]), b""] for c in clips]
        return metadata, np.array(rows, object).reshape(len(rows), 2), \
            {"encoding": metadata.Encoding.Value("WAV")}
    raise ValueError(f"unknown summary kind {kind!r}")


def summary_proto(kind: str, tag: str, data: Any, params: dict) -> Any:
    """A tensorboard Summary proto holding one value (raw_pb: the given protos' values)."""
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.util import tensor_util
    if kind == "raw_pb":
        summary = summary_pb2.Summary()
        for serialized in np.asarray(data, object).ravel():
            summary.MergeFromString(serialized)
        return summary
    if kind == "raw":
        meta = summary_pb2.SummaryMetadata.FromString(params.get("metadata") or b"")
        summary = summary_pb2.Summary()
        summary.value.add(tag=tag, metadata=meta,
                          tensor=tensor_util.make_tensor_proto(np.asarray(data)))
        return summary
    metadata, array, extra = _value(kind, np.asarray(data), params)
    meta = metadata.create_summary_metadata(display_name=None,
                                            description=params.get("description") or "",
                                            **extra)
    summary = summary_pb2.Summary()
    summary.value.add(tag=tag, metadata=meta, tensor=tensor_util.make_tensor_proto(array))
    return summary
