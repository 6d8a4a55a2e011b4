"""A reader and writer of the safetensors format, with every field checked on load.

Layout: 8 bytes (little-endian u64) header length N, N bytes of UTF-8 JSON mapping each
tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets into the data
section) plus an optional "__metadata__" of str -> str, padded with spaces; then the raw
little-endian bytes. Nothing in a file is executed: loading only parses JSON and copies
bytes. BF16 is read and written when ml_dtypes (the optional extra kilnflow[bf16]) is
installed. Imports NumPy, kilnflow.dtypes and kilnflow.errors only.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import math
from typing import Any, BinaryIO, Callable, Dict, Optional, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.saving import fileio

# safetensors dtype names -> NumPy dtypes (explicitly little-endian). C64 and C128 are a
# kilnflow extension: TF variables may be complex, and the format has no name for them.
DTYPES = {
    "BOOL": np.dtype("bool"), "U8": np.dtype("u1"), "I8": np.dtype("i1"),
    "U16": np.dtype("<u2"), "I16": np.dtype("<i2"), "F16": np.dtype("<f2"),
    "U32": np.dtype("<u4"), "I32": np.dtype("<i4"), "F32": np.dtype("<f4"),
    "U64": np.dtype("<u8"), "I64": np.dtype("<i8"), "F64": np.dtype("<f8"),
    "C64": np.dtype("<c8"), "C128": np.dtype("<c16"),
}
_NAMES = {(dt.kind, dt.itemsize): name for name, dt in DTYPES.items()}
if not isinstance(_dtypes.bfloat16, _dtypes.Unavailable):  # the optional extra [bf16]
    DTYPES["BF16"] = np.dtype(_dtypes.bfloat16.as_numpy_dtype)
    _NAMES[("bfloat16",)] = "BF16"
NEEDS_EXTRA = {"BF16": "kilnflow[bf16] (ml_dtypes)"}  # names read only with an extra
MAX_HEADER_BYTES = 100_000_000  # the format's limit: the reference library refuses more
CHECKSUM_KEY = "kilnflow.sha256"       # of the data section, written in __metadata__


class SafetensorsError(errors.DataLossError, ValueError):
    """A safetensors file is truncated, corrupt or inconsistent; the message names it."""


def _fail(source: str, problem: str) -> SafetensorsError:
    return SafetensorsError(f"{source}: not a valid safetensors file: {problem}")


def dtype_name(dtype: Any) -> str:
    """The safetensors name of a NumPy dtype ('F32' for float32); TypeError if none."""
    dt = np.dtype(dtype)
    name = _NAMES.get((dt.name,)) if dt.kind == "V" else _NAMES.get((dt.kind, dt.itemsize))
    if name is None:
        raise TypeError(f"safetensors cannot store arrays of dtype {dt}")
    return name


# ---------------------------------------------------------------- writing

def _layout(tensors: Dict[str, Any], metadata: Optional[Dict[str, str]],
            checksum: bool = True) -> Tuple[bytes, list]:
    """The header bytes (length prefix included) and the arrays to write after it, in order.

    The data section's sha256 is computed array by array, without joining them."""
    for key in tensors:
        if not isinstance(key, str) or key == "__metadata__":
            raise ValueError(f"safetensors tensor names must be strings other than "
                             f"'__metadata__', got {key!r}")
    arrays = {k: np.asarray(v) for k, v in tensors.items()}
    # Larger items first, then by name: keeps every tensor aligned to its item size.
    order = sorted(arrays, key=lambda k: (-arrays[k].dtype.itemsize, k))
    header: Dict[str, Any] = {}
    body = []
    digest = hashlib.sha256()
    offset = 0
    for key in order:
        array = arrays[key]
        name = dtype_name(array.dtype)
        # the raw bytes, as a flat uint8 view (no copy for C-contiguous arrays)
        data = np.ascontiguousarray(array.astype(DTYPES[name], copy=False)).reshape(-1) \
            .view(np.uint8)
        if checksum:
            digest.update(data)
        header[key] = {"dtype": name, "shape": list(array.shape),
                       "data_offsets": [offset, offset + data.nbytes]}
        body.append(data)
        offset += data.nbytes
    meta = dict(metadata or {})
    if checksum:
        meta[CHECKSUM_KEY] = digest.hexdigest()
    for k, v in meta.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"safetensors metadata must map str to str, got {k!r}: {v!r}")
    header = {"__metadata__": meta, **header}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data section starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text, body


def writer(tensors: Dict[str, Any], metadata: Optional[Dict[str, str]] = None,
           checksum: bool = True) -> Callable[[BinaryIO], None]:
    """A function writing the safetensors file of `tensors` to an open binary file, one
    tensor at a time (no second copy of the weights in memory). `checksum=False` leaves out
    the data section's sha256 (checkpoints record one per tensor in their index)."""
    head, body = _layout(tensors, metadata, checksum)

    def write(f: BinaryIO) -> None:
        f.write(head)
        for data in body:
            f.write(data)
    return write


def serialize(tensors: Dict[str, Any], metadata: Optional[Dict[str, str]] = None) -> bytes:
    """The bytes of a safetensors file holding `tensors` (name -> array)."""
    head, body = _layout(tensors, metadata)
    return head + b"".join(d.tobytes() for d in body)


def save_file(tensors: Dict[str, Any], path: str,
              metadata: Optional[Dict[str, str]] = None) -> None:
    """Write `tensors` to `path` atomically and durably, streaming one tensor at a time."""
    fileio.write_atomically(path, writer(tensors, metadata))


# ---------------------------------------------------------------- reading

def _reject_duplicates(pairs: list) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"duplicate key {k!r} in the JSON header")
        out[k] = v
    return out


def parse_header(data: bytes, source: str) -> Tuple[dict, dict, int]:
    """(entries, metadata, data start) from a file's bytes, every field validated."""
    if len(data) < 8:
        raise _fail(source, f"the file has {len(data)} bytes, fewer than the 8-byte header "
                            "length (truncated?)")
    (size,) = struct.unpack("<Q", data[:8])
    if size > MAX_HEADER_BYTES:
        raise _fail(source, f"the header length field says {size} bytes, more than the "
                            f"{MAX_HEADER_BYTES}-byte limit")
    if 8 + size > len(data):
        raise _fail(source, f"the header length field says {size} bytes but only "
                            f"{len(data) - 8} bytes follow it (truncated?)")
    raw = data[8:8 + size]
    if not raw.startswith(b"{"):
        raise _fail(source, "the JSON header does not start with '{'")
    try:
        header = json.loads(raw.decode("utf-8"), object_pairs_hook=_reject_duplicates)
    except (UnicodeDecodeError, ValueError) as exc:
        raise _fail(source, f"the JSON header cannot be parsed ({exc})") from None
    if not isinstance(header, dict):
        raise _fail(source, "the JSON header is not an object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise _fail(source, "__metadata__ must be an object of string values")
    for key, info in header.items():
        _check_entry(key, info, source)
    return header, metadata, 8 + size


def _check_entry(key: str, info: Any, source: str) -> None:
    if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
        raise _fail(source, f"tensor {key!r}: the entry must have exactly the fields dtype, "
                            f"shape and data_offsets, got {info!r}")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if dtype in NEEDS_EXTRA and dtype not in DTYPES:
        raise _fail(source, f"tensor {key!r} is {dtype}, which needs the optional extra "
                            f"{NEEDS_EXTRA[dtype]}")
    if dtype not in DTYPES:
        raise _fail(source, f"tensor {key!r}: unknown dtype {dtype!r} (known: "
                            f"{', '.join(DTYPES)})")
    if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise _fail(source, f"tensor {key!r}: shape must be a list of non-negative integers, "
                            f"got {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(
            isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)
            and offsets[0] <= offsets[1]):
        raise _fail(source, f"tensor {key!r}: data_offsets must be [begin, end] with "
                            f"0 <= begin <= end, got {offsets!r}")
    expected = math.prod(shape) * DTYPES[dtype].itemsize  # exact: huge shapes cannot wrap
    if offsets[1] - offsets[0] != expected:
        raise _fail(source, f"tensor {key!r}: data_offsets {offsets} span "
                            f"{offsets[1] - offsets[0]} bytes but shape {shape} of {dtype} "
                            f"needs {expected}")


def check_layout(header: dict, body_len: int, source: str) -> None:
    """The tensors tile the data section exactly: no overlap, no gap, nothing past its end,
    no bytes left over (reads only the header)."""
    position = 0
    for key, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, end = info["data_offsets"]
        if begin != position:
            what = "overlaps the previous one" if begin < position else "leaves a gap"
            raise _fail(source, f"tensor {key!r}: data_offsets {info['data_offsets']} "
                                f"{what} (expected to begin at {position})")
        position = end
    if position != body_len:
        if position > body_len:
            raise _fail(source, f"the tensors need {position} data bytes but the file has "
                                f"{body_len} (truncated?)")
        raise _fail(source, f"{body_len - position} bytes after the last tensor are not "
                            "described by the header")


def tensor_view(data: Any, start: int, info: dict, key: str, source: str) -> np.ndarray:
    """A read-only view of one tensor's bytes in `data` (a header entry already checked)."""
    begin, end = (start + o for o in info["data_offsets"])
    dtype = DTYPES[info["dtype"]]
    array = np.frombuffer(data, dtype=dtype, count=(end - begin) // dtype.itemsize,
                          offset=begin).reshape(info["shape"])
    if info["dtype"] == "BOOL" and array.size and array.view(np.uint8).max() > 1:
        raise _fail(source, f"tensor {key!r}: BOOL values must be 0 or 1")
    return array


def deserialize(data: bytes, source: str = "<bytes>", with_metadata: bool = False,
                verify_checksum: bool = True) -> Any:
    """Tensors (name -> ndarray, each a fresh copy) from a file's bytes; validates all.

    `verify_checksum=False` skips the data section's recorded sha256, for callers that
    have already checked a hash of the whole file (checkpoints, saved models)."""
    header, metadata, start = parse_header(data, source)
    check_layout(header, len(data) - start, source)
    body = memoryview(data)[start:]
    expected = metadata.get(CHECKSUM_KEY)
    if verify_checksum and expected is not None and \
            hashlib.sha256(body).hexdigest() != expected:
        raise _fail(source, "the data section does not match its recorded sha256 checksum "
                            "(the file was modified or damaged)")
    tensors = {}
    for key, info in header.items():
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        array = np.frombuffer(body[begin:end], dtype=dtype).reshape(info["shape"])
        if info["dtype"] == "BOOL" and array.size and array.view(np.uint8).max() > 1:
            raise _fail(source, f"tensor {key!r}: BOOL values must be 0 or 1")
        tensors[key] = array.astype(dtype.newbyteorder("="), copy=True)
    return (tensors, metadata) if with_metadata else tensors


def load_file(path: str, with_metadata: bool = False, verify_checksum: bool = True) -> Any:
    """Read and validate a safetensors file: name -> ndarray (and metadata if asked).

    Each tensor is read straight into its array, so loading holds one copy of the weights,
    not two (nor a mapping of the file beside them).

    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_file({"w": np.arange(3, dtype=np.float32)}, path)
    >>> load_file(path)["w"].tolist()
    [0.0, 1.0, 2.0]
    """
    path = os.fspath(path)
    fd = fileio.open_regular(path, "safetensors file")
    try:
        return read_tensors(fd, path, with_metadata, verify_checksum)
    finally:
        os.close(fd)


def read_tensors(fd: int, path: str, with_metadata: bool = False,
                 verify_checksum: bool = True) -> Any:
    """load_file from an open file: the header checked against the file's size, then each
    tensor read straight into its new array (no mapping, no second copy)."""
    size = os.fstat(fd).st_size
    head = bytearray(min(size, 8))
    fileio.pread_into(fd, head, 0, path, "safetensors file")
    wanted = 8 + struct.unpack("<Q", head)[0] if len(head) == 8 else len(head)
    first = bytearray(min(size, wanted, 8 + MAX_HEADER_BYTES + 1))  # never beyond the file
    fileio.pread_into(fd, first, 0, path, "safetensors file")
    header, metadata, start = parse_header(bytes(first), path)
    check_layout(header, size - start, path)
    expected = metadata.get(CHECKSUM_KEY) if verify_checksum else None
    digest = hashlib.sha256() if expected is not None else None
    arrays = {}
    for key, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        dtype = DTYPES[info["dtype"]]
        array = np.empty(info["shape"], dtype)
        raw = array.reshape(-1).view(np.uint8)
        fileio.pread_into(fd, raw, start + info["data_offsets"][0], path, "safetensors file")
        if digest is not None:
            digest.update(raw)
        if info["dtype"] == "BOOL" and array.size and raw.max() > 1:
            raise _fail(path, f"tensor {key!r}: BOOL values must be 0 or 1")
        arrays[key] = array if dtype.isnative else array.astype(dtype.newbyteorder("="))
    if digest is not None and digest.hexdigest() != expected:
        raise _fail(path, "the data section does not match its recorded sha256 checksum "
                          "(the file was modified or damaged)")
    tensors = {key: arrays[key] for key in header}  # in the header's order
    return (tensors, metadata) if with_metadata else tensors


def close_mapping(mapped: Any) -> None:
    """Unmap what `fileio.map_regular_file` mapped (later, if a view still holds it)."""
    try:
        if hasattr(mapped, "close"):
            mapped.close()
    except BufferError:  # a view is still alive; the mapping closes when it is collected
        pass


class safe_open:  # noqa: N801 - the reference library's name for the same handle
    """A lazy handle on a safetensors file: the header is validated on open, and
    `get_tensor(name)` reads that tensor's bytes only (the file is memory-mapped).

    The whole-file checksum is not verified here (that would read every byte); use
    `load_file` for a fully verified read.

    >>> import numpy as np, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_file({"a": np.ones(2, np.float32), "b": np.zeros(3, np.int64)}, path)
    >>> with safe_open(path) as f:
    ...     sorted(f.keys()), f.get_tensor("b").tolist()
    (['a', 'b'], [0, 0, 0])
    """

    def __init__(self, path: str, framework: str = "numpy", device: str = "cpu"):
        self._path = os.fspath(path)
        self._mapped = fileio.map_regular_file(self._path, "safetensors file")
        try:
            self._header, self._metadata, self._start = parse_header(self._mapped, self._path)
            end = max((info["data_offsets"][1] for info in self._header.values()), default=0)
            if self._start + end > len(self._mapped):
                raise _fail(self._path, f"the tensors need {end} data bytes but the file has "
                                        f"{len(self._mapped) - self._start} (truncated?)")
        except BaseException:
            close_mapping(self._mapped)
            raise

    def keys(self) -> list:
        return list(self._header)

    def metadata(self) -> Dict[str, str]:
        return dict(self._metadata)

    def get_tensor(self, name: str) -> np.ndarray:
        """A fresh copy of tensor `name`; only its bytes are read."""
        info = self._header.get(name)
        if info is None:
            raise errors.NotFoundError(f"{self._path}: no tensor named {name!r}")
        begin, end = (self._start + o for o in info["data_offsets"])
        dtype = DTYPES[info["dtype"]]
        array = np.frombuffer(self._mapped, dtype=dtype, count=(end - begin) // dtype.itemsize,
                              offset=begin).reshape(info["shape"])
        return array.astype(dtype.newbyteorder("="), copy=True)

    def close(self) -> None:
        close_mapping(self._mapped)

    def __enter__(self) -> "safe_open":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
