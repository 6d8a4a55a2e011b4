"""Durable, atomic file writes and bounded, regular-file reads: what every saver and loader uses.

A write goes to a temporary name in the same directory, is flushed and fsynced, then renamed
over the target (and the directory fsynced), so a reader sees the old file or the new one,
never a torn mix. `replace_pair` extends that to a data file plus the index that names it
(checkpoints, saved models). Reads accept only regular files (not FIFOs, devices or
directories) and never read past the size the file had when it was opened.
Imports the standard library, NumPy and kilnflow.errors only.
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
import re
import stat
from typing import Any, BinaryIO, Callable, Union

import numpy as np

from kilnflow import errors

STAGED_SUFFIX = ".next"  # a data file written but not yet under its final name


def _fsync_directory(directory: str) -> None:
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:  # some file systems do not open directories; the rename still happened
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomically(path: str, data: Union[bytes, Callable[[BinaryIO], None]]) -> None:
    """Write `data` to `path` so that a crash leaves the old content or the new, never part.

    `data` is the bytes, or a function that writes them to the open file (to stream large
    content without building it in memory first).
    """
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    _fsync_directory(os.path.dirname(path))


def replace_pair(data_path: str, data: Union[bytes, Callable[[BinaryIO], None]], index_path: str,
                 index_for: Callable[[str], bytes]) -> None:
    """Replace a data file and the index naming it; a reader following the index always finds
    a complete pair, the old one or the new one, whatever step a crash interrupts.

    `index_for(name)` gives the index bytes that name the data file `name` (a basename). The
    steps: the data goes to `<data_path>.next`; the index is switched to name it; the data is
    renamed to its final name; the index is switched to the final name. Between the last two
    steps the index names a file that is gone: `open_data_file` then finds the final one.
    """
    staged = data_path + STAGED_SUFFIX
    write_atomically(staged, data)
    write_atomically(index_path, index_for(os.path.basename(staged)))
    os.replace(staged, data_path)
    _fsync_directory(os.path.dirname(data_path))
    write_atomically(index_path, index_for(os.path.basename(data_path)))


def sha256_of(write: Callable[[BinaryIO], None]) -> str:
    """The sha256 of what `write(file)` would write, computed without storing it."""
    digest = hashlib.sha256()

    class _Sink:
        def write(self, data: Any) -> None:
            digest.update(data)

    write(_Sink())  # type: ignore[arg-type]
    return digest.hexdigest()


def identity(path: str) -> Any:
    """(inode, mtime, size) of `path`, or None: changes when a save renames a file over it."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def open_data_file(directory: str, named: str, what: str) -> "tuple[str, int]":
    """(path, fd) of the data file an index names, opened once (later reads see this file
    whatever a concurrent save renames; `<name>.next` may have its final name by now)."""
    path = os.path.join(directory, named)
    try:
        return path, open_regular(path, what)
    except errors.NotFoundError:
        if not named.endswith(STAGED_SUFFIX):
            raise
    path = path[:-len(STAGED_SUFFIX)]
    return path, open_regular(path, what)


def map_descriptor(fd: int) -> Any:
    """The open regular file `fd` mapped read-only (b"" when empty); fd may close after."""
    if os.fstat(fd).st_size == 0:
        return b""
    return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)


def open_regular(path: str, what: str = "file") -> int:
    """A read-only descriptor of the regular file `path` (the caller closes it); FIFOs,
    devices (a link to /dev/zero) and directories are refused before anything is read."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise errors.NotFoundError(f"{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise errors.PermissionDeniedError(f"{path}: cannot open the {what}: {exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise errors.InvalidArgumentError(
            f"{path}: not a regular file (a FIFO, device or directory); refusing to read it "
            f"as a {what}")
    return fd


def pread_into(fd: int, buffer: Any, offset: int, path: str, what: str) -> None:
    """Fill `buffer` from `fd` at `offset`; a file ending early is a DataLossError."""
    view = memoryview(buffer).cast("B")
    done = 0
    while done < len(view):
        n = os.preadv(fd, [view[done:]], offset + done)
        if n <= 0:
            raise errors.DataLossError(f"{path}: the {what} ended after {offset + done} "
                                       "bytes while being read (truncated?)")
        done += n


def read_regular_file(path: str, limit: int, what: str = "file") -> bytes:
    """The bytes of the regular file `path`, refusing anything larger than `limit` bytes, and
    never reading past the size the file had when it was opened."""
    fd = open_regular(path, what)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise errors.ResourceExhaustedError(
                f"{path}: the {what} has {size} bytes, more than the {limit}-byte limit")
        chunks, remaining = [], size
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def map_regular_file(path: str, what: str = "file") -> Any:
    """The regular file `path` memory-mapped read-only (b"" when empty): bytes are paged in
    as they are used, so a loader holds no second copy of the file."""
    fd = open_regular(path, what)
    try:
        return map_descriptor(fd)
    finally:
        os.close(fd)  # the mapping keeps its own reference to the file


MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]")


def _depth_ok(text: str, limit: int) -> bool:
    """True when brackets outside strings nest at most `limit` deep (checked before parsing,
    so a hostile file cannot drive the parser into RecursionError)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    if not brackets:
        return True
    codes = np.frombuffer(brackets.encode("ascii"), np.uint8)
    depth = np.cumsum(np.where((codes == ord("[")) | (codes == ord("{")), 1, -1))
    return int(depth.max()) <= limit


def loads_json(raw: bytes, source: str, error: Callable[[str], Exception],
               object_pairs_hook: Any = None, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON from a file, its depth bounded; failures raise `error(problem)`."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text ({exc}); the file is damaged") from None
    if not _depth_ok(text, max_depth):
        raise error(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook)
    except (ValueError, RecursionError) as exc:
        raise error(f"not valid JSON ({exc}); the file is truncated or damaged") from None
