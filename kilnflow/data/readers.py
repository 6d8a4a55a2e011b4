"""File sources: TextLineDataset, TFRecordDataset, FixedLengthRecordDataset, list_files.

Each file is read lazily, a buffer at a time (never whole), plain or compressed (GZIP or
ZLIB streams). Records are string scalars (bytes in a 0-d object array, as kf.string
holds them). Several files are read one after another, or, with num_parallel_reads, as TF
does: an interleave of the files with cycle_length and num_parallel_calls num_parallel_reads
and block_length 1 (each file read ahead on a thread pool).
"""
from __future__ import annotations

import glob
import gzip
import io
import os
import struct
import zlib
from typing import Any, BinaryIO, Callable, Iterator, List, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.data import sources
from kilnflow.data.dataset import Dataset, as_count
from kilnflow.data.transforms import Identity
from kilnflow.saving import fileio
from kilnflow.saving.tf_checkpoint import masked_crc32c
from kilnflow.shapes import TensorSpec

STRING = TensorSpec([], _dtypes.string)
READ_BYTES = 256 * 1024  # TF's default buffer_size for text and TFRecord files


def as_string(value: Any) -> np.ndarray:
    """One record as a string scalar."""
    array = np.empty((), object)
    array[()] = bytes(value)
    return array


def path_of(value: Any) -> str:
    value = value.numpy() if hasattr(value, "numpy") else value
    return os.fsdecode(value.item() if isinstance(value, np.ndarray) else value)


def filename_dataset(filenames: Any, what: str) -> Dataset:
    """`filenames` (a path, a list of paths, a string tensor, or a dataset of string
    scalars) as a dataset of string scalars."""
    if isinstance(filenames, Dataset):
        spec = filenames.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype is not _dtypes.string or \
                spec.shape.rank not in (0, None):
            raise TypeError(f"{what}: `filenames` must be a dataset of string scalars, got "
                            f"element_spec {spec}")
        return filenames
    value = filenames.numpy() if hasattr(filenames, "numpy") else filenames
    if isinstance(value, (str, bytes, os.PathLike)):
        value = [value]
    try:
        names = [os.fsencode(v.item() if isinstance(v, np.ndarray) else v)
                 for v in np.asarray(value, object).reshape(-1)]
    except (TypeError, ValueError):
        raise TypeError(f"{what}: `filenames` must be a string, a list of strings, a string "
                        f"tensor or a dataset of strings, got {filenames!r}") from None
    if np.ndim(value) > 1:
        raise errors.InvalidArgumentError(f"{what}: `filenames` must be a scalar or a "
                                          f"vector, got shape {np.shape(value)}")
    array = np.empty(len(names), object)
    array[:] = names
    return sources.TensorSlices(array)


# ---------------------------------------------------------------- opening files

class _ZlibReader(io.RawIOBase):
    """A ZLIB stream decompressed as it is read."""

    def __init__(self, raw: BinaryIO, size: int):
        self._raw, self._size = raw, size
        self._inflate = zlib.decompressobj()
        self._pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            chunk = self._raw.read(self._size)
            if not chunk:
                self._pending = self._inflate.flush()
                if not self._pending:
                    return 0
                break
            self._pending = self._inflate.decompress(chunk)
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def compression(value: Optional[str], what: str) -> str:
    kind = "" if value is None else (value.numpy().decode() if hasattr(value, "numpy")
                                     else str(value))
    if kind not in ("", "GZIP", "ZLIB"):
        raise errors.InvalidArgumentError(f"{what}: compression_type must be None, '', "
                                          f"'GZIP' or 'ZLIB', got {value!r}")
    return kind


def open_file(path: str, kind: str, buffer_size: int, what: str) -> BinaryIO:
    try:
        raw = open(path, "rb", buffering=buffer_size)
    except FileNotFoundError:
        raise errors.NotFoundError(f"{what}: {path}; No such file or directory") from None
    except OSError as exc:
        raise errors.class_for(exc)(f"{what}: {path}; {exc.strerror}") from None
    if kind == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "ZLIB":
        return io.BufferedReader(_ZlibReader(raw, buffer_size), buffer_size)
    return raw


def _read_errors(what: str, path: str) -> Callable[[Exception], Exception]:
    return lambda exc: errors.DataLossError(f"{what}: {path}: cannot decompress: {exc}")


# ---------------------------------------------------------------- record formats

def text_lines(f: BinaryIO, path: str) -> Iterator[bytes]:
    """Lines without their '\\n' (or '\\r\\n'); a last line without one counts too."""
    for line in f:
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        yield line


def tf_records(f: BinaryIO, path: str) -> Iterator[bytes]:
    """TFRecord framing: length (uint64 LE), its masked CRC-32C, data, the data's CRC."""
    offset = 0
    while True:
        header = f.read(12)
        if not header:
            return
        if len(header) < 12:
            raise errors.DataLossError(f"TFRecordDataset: truncated record at {offset} in "
                                       f"{path}")
        length, length_crc = struct.unpack("<QI", header)
        if masked_crc32c(header[:8]) != length_crc:
            raise errors.DataLossError(f"TFRecordDataset: corrupted record at {offset} in "
                                       f"{path}")
        data = f.read(length)
        footer = f.read(4)
        if len(data) < length or len(footer) < 4 or \
                masked_crc32c(data) != struct.unpack("<I", footer)[0]:
            raise errors.DataLossError(f"TFRecordDataset: corrupted record at {offset + 12} "
                                       f"in {path}")
        offset += 16 + length
        yield data


class FileRecords(Dataset):
    """The records of one file, read by `records(file, path)`."""

    def __init__(self, path: str, kind: str, buffer_size: int, what: str,
                 records: Callable[[BinaryIO, str], Iterator[bytes]]):
        self._path, self._kind, self._buffer = path, kind, buffer_size
        self._what, self._records = what, records
        super().__init__([], STRING)

    def _elements(self) -> Iterator[list]:
        with open_file(self._path, self._kind, self._buffer, self._what) as f:
            try:
                for record in self._records(f, self._path):
                    yield [as_string(record)]
            except (OSError, EOFError, zlib.error) as exc:
                raise _read_errors(self._what, self._path)(exc) from None


def _buffer_size(value: Any, what: str) -> int:
    n = READ_BYTES if value is None else as_count(value, what, "buffer_size")
    return n if n > 0 else READ_BYTES


def read_files(what: str, filenames: Any, compression_type: Any, buffer_size: Any,
               num_parallel_reads: Any,
               records: Callable[[BinaryIO, str], Iterator[bytes]]) -> Dataset:
    names = filename_dataset(filenames, what)
    kind = compression(compression_type, what)
    size = _buffer_size(buffer_size, what)

    def one_file(path: Any) -> Dataset:
        return FileRecords(path_of(path), kind, size, what, records)
    reads = None if num_parallel_reads is None else as_count(num_parallel_reads, what,
                                                             "num_parallel_reads")
    if reads is None or reads == 1:
        return names.flat_map(one_file)
    if reads != -1 and reads < 1:
        raise errors.InvalidArgumentError(f"{what}: num_parallel_reads must be positive or "
                                          f"AUTOTUNE, got {reads}")
    return names.interleave(one_file, cycle_length=reads, block_length=1,
                            num_parallel_calls=reads)


def fixed_length_records(record_bytes: int, header_bytes: int,
                         footer_bytes: int) -> Callable[[BinaryIO, str], Iterator[bytes]]:
    def records(f: BinaryIO, path: str) -> Iterator[bytes]:
        f.read(header_bytes)
        pending, emitted = b"", 0
        # a record is only known not to be the footer once footer_bytes more are read
        while True:
            chunk = f.read(max(64 * record_bytes, READ_BYTES))
            pending += chunk
            ready = max(0, (len(pending) - footer_bytes) // record_bytes)
            for i in range(ready):
                yield pending[i * record_bytes:(i + 1) * record_bytes]
            pending = pending[ready * record_bytes:]
            emitted += ready
            if not chunk:
                break
        left = len(pending) - footer_bytes
        if left > 0:
            raise errors.InvalidArgumentError(
                f"FixedLengthRecordDataset: Excluding the header ({header_bytes} bytes) and "
                f"footer ({footer_bytes} bytes), input file \"{path}\" has body length "
                f"{emitted * record_bytes + left} bytes, which is not an exact multiple of "
                f"the record length ({record_bytes} bytes).")
    return records


class TextLineDataset(Identity):
    """The lines of one or more text files, as string scalars without their line ends.

    `filenames`: a path, a list of paths, a string tensor or a dataset of strings;
    `compression_type`: None (or ""), "GZIP" or "ZLIB"; `buffer_size`: bytes read at a time;
    `num_parallel_reads`: files read at once (interleaved one line from each in turn).
    """

    def __init__(self, filenames: Any, compression_type: Optional[str] = None,
                 buffer_size: Optional[int] = None, num_parallel_reads: Optional[int] = None,
                 name: Optional[str] = None):
        super().__init__(read_files("TextLineDataset", filenames, compression_type,
                                    buffer_size, num_parallel_reads, text_lines))


class TFRecordDataset(Identity):
    """The records of one or more TFRecord files (string scalars; CRCs are checked and a
    damaged record is a DataLossError)."""

    def __init__(self, filenames: Any, compression_type: Optional[str] = None,
                 buffer_size: Optional[int] = None, num_parallel_reads: Optional[int] = None,
                 name: Optional[str] = None):
        super().__init__(read_files("TFRecordDataset", filenames, compression_type,
                                    buffer_size, num_parallel_reads, tf_records))


class FixedLengthRecordDataset(Identity):
    """Records of `record_bytes` bytes from binary files, after `header_bytes` and before
    `footer_bytes` (a body that is not a whole number of records is an error)."""

    def __init__(self, filenames: Any, record_bytes: int, header_bytes: Optional[int] = None,
                 footer_bytes: Optional[int] = None, buffer_size: Optional[int] = None,
                 compression_type: Optional[str] = None,
                 num_parallel_reads: Optional[int] = None, name: Optional[str] = None):
        what = "FixedLengthRecordDataset"
        sizes = [as_count(v or 0, what, n) for v, n in (
            (record_bytes, "record_bytes"), (header_bytes, "header_bytes"),
            (footer_bytes, "footer_bytes"))]
        if sizes[0] < 1 or min(sizes) < 0:
            raise errors.InvalidArgumentError(f"{what}: record_bytes must be positive and "
                                              f"header/footer bytes non-negative")
        super().__init__(read_files(what, filenames, compression_type, buffer_size,
                                    num_parallel_reads, fixed_length_records(*sizes)))


def list_files(file_pattern: Any, shuffle: Optional[bool], seed: Optional[int]) -> Dataset:
    """The files matching the glob pattern(s), sorted, then shuffled unless shuffle=False;
    no match is an InvalidArgumentError, as in TF."""
    patterns = filename_dataset(file_pattern, "list_files")
    matched: List[bytes] = []
    for (pattern,) in patterns._elements():
        matched.extend(sorted(os.fsencode(p) for p in glob.glob(os.fsdecode(pattern.item()))))
    if not matched:
        shown = ", ".join(os.fsdecode(p.item()) for (p,) in patterns._elements())
        raise errors.InvalidArgumentError(f"list_files: No files matched pattern: {shown}")
    array = np.empty(len(matched), object)
    array[:] = matched
    names = sources.TensorSlices(array)
    if shuffle is False:
        return names
    return names.shuffle(len(matched), seed=seed)


class TFRecordWriter:
    """tf.data.experimental.TFRecordWriter: writes a dataset of string scalars to one
    TFRecord file (atomically)."""

    def __init__(self, filename: str, compression_type: Optional[str] = None):
        self._path = path_of(filename)
        self._kind = compression(compression_type, "TFRecordWriter")

    def write(self, dataset: Dataset) -> None:
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype is not _dtypes.string or \
                spec.shape.rank != 0:
            raise TypeError(f"TFRecordWriter: the dataset must hold string scalars, got {spec}")
        out = io.BytesIO()
        for (record,) in dataset._elements():
            data = bytes(record.item())
            header = struct.pack("<Q", len(data))
            out.write(header + struct.pack("<I", masked_crc32c(header)) + data +
                      struct.pack("<I", masked_crc32c(data)))
        payload = out.getvalue()
        if self._kind == "GZIP":
            payload = gzip.compress(payload)
        elif self._kind == "ZLIB":
            payload = zlib.compress(payload)
        fileio.write_atomically(self._path, payload)

