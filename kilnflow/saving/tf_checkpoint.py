"""Reading a TensorFlow 2 checkpoint (`prefix.index` + `prefix.data-00000-of-00001`) without
TensorFlow, so weights trained in TF restore into kilnflow objects by object-graph key.

`prefix.index` is a LevelDB-format table (data blocks of prefix-compressed keys with restart
points, a block index, a 48-byte footer ending in the table magic; each block followed by a
compression byte and a masked CRC-32C). Key "" holds a BundleHeaderProto; every other key
is a tensor name holding a BundleEntryProto (dtype, shape, shard, offset, size, masked
CRC-32C of the bytes). Protobuf fields are decoded by hand: nothing is imported from TF or
protobuf, nothing in the files is executed, every length is checked against the file
before it is used, and each tensor's CRC is checked when it is first read.
"""
from __future__ import annotations

import math
import os
import struct
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.saving import fileio
from kilnflow.saving.checkpoint_file import VALUE_SUFFIX, CheckpointError

TABLE_MAGIC = 0xDB4775248B80FB57
FOOTER_BYTES = 48
MAX_INDEX_BYTES = 1 << 30
SLOT_MARK = "/.OPTIMIZER_SLOT/"
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
# TF DataType enum -> kilnflow dtype name (DT_STRING handled apart)
_TF_DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
              8: "complex64", 9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16",
              18: "complex128", 19: "float16", 22: "uint32", 23: "uint64"}
DT_STRING = 7


def is_tf_checkpoint(prefix: str) -> bool:
    return os.path.exists(prefix + ".index") and not os.path.exists(prefix + ".json")


# ---------------------------------------------------------------- CRC-32C (Castagnoli)

def _table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table[i] = c
    return table


_CRC_TABLE = _table()
_TABLE_LIST = [int(x) for x in _CRC_TABLE]


def _scalar_update(state: int, data: bytes) -> int:
    table = _TABLE_LIST
    for byte in data:
        state = table[(state ^ byte) & 0xFF] ^ (state >> 8)
    return state


def _zeros_operator(length: int) -> List[int]:
    """Columns of the GF(2) matrix that runs the CRC register through `length` zero bytes."""
    def apply(matrix: List[int], vector: int) -> int:
        out, bit = 0, 0
        while vector:
            if vector & 1:
                out ^= matrix[bit]
            vector >>= 1
            bit += 1
        return out
    result = [1 << j for j in range(32)]
    power = [_scalar_update(1 << j, b"\0") for j in range(32)]
    while length:
        if length & 1:
            result = [apply(power, c) for c in result]
        power = [apply(power, c) for c in power]
        length >>= 1
    return result


_TABLE16: Any = None  # register after two zero bytes, for each 16-bit start (lazy: 256 KiB)


def _table16() -> np.ndarray:
    global _TABLE16
    if _TABLE16 is None:
        v = np.arange(1 << 16, dtype=np.uint32)
        for _ in range(2):
            v = _CRC_TABLE[v & 0xFF] ^ (v >> 8)
        _TABLE16 = v
    return _TABLE16


def _shift_tables(width: int) -> List[List[int]]:
    """Byte tables applying the operator of `width` zero bytes to a 32-bit register."""
    shift = _zeros_operator(width)
    tables = [[0] * 256 for _ in range(4)]
    for k in range(4):
        for v in range(1, 256):
            low = v & -v  # tables[k][v] = tables[k][v without its lowest bit] ^ column
            tables[k][v] = tables[k][v ^ low] ^ shift[8 * k + low.bit_length() - 1]
    return tables


def crc32c(data: Any) -> int:
    """CRC-32C of `data` (bytes-like). Long inputs run as up to 8192 lanes in NumPy, two
    bytes per step, and the lanes are combined with the zeros operator (the register update
    is linear over GF(2))."""
    view = np.frombuffer(data, np.uint8) if not isinstance(data, np.ndarray) else \
        data.reshape(-1).view(np.uint8)
    state = 0xFFFFFFFF
    segment = 1 << 25
    for start in range(0, len(view), segment):
        chunk = view[start:start + segment]
        lanes = min(8192, len(chunk) // 128)
        if lanes < 16:
            state = _scalar_update(state, chunk.tobytes())
            continue
        width = (len(chunk) // lanes) & ~1
        words = np.ascontiguousarray(chunk[:lanes * width].reshape(lanes, width).T) \
            .reshape(width // 2, 2, lanes)
        words = words[:, 0, :].astype(np.uint32) | (words[:, 1, :].astype(np.uint32) << 8)
        table, lane, index = _table16(), np.zeros(lanes, np.uint32), np.empty(lanes, np.uint32)
        for row in words:
            np.bitwise_xor(lane, row, out=index)
            np.bitwise_and(index, 0xFFFF, out=index)
            np.right_shift(lane, 16, out=lane)
            np.bitwise_xor(lane, table[index], out=lane)
        t0, t1, t2, t3 = _shift_tables(width)
        for g in lane.tolist():
            state = (t0[state & 0xFF] ^ t1[(state >> 8) & 0xFF] ^ t2[(state >> 16) & 0xFF]
                     ^ t3[state >> 24]) ^ g
        state = _scalar_update(state, chunk[lanes * width:].tobytes())
    return state ^ 0xFFFFFFFF


def masked_crc32c(data: Any) -> int:
    """The CRC as LevelDB and TF store it (rotated and offset, so CRCs of CRCs differ)."""
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


# ---------------------------------------------------------------- the index table

class _Reader:
    """Bounded reads of varints and bytes from a buffer; errors name the file."""

    def __init__(self, data: Any, source: str, what: str):
        self.data, self.pos, self.source, self.what = data, 0, source, what

    def fail(self, problem: str) -> CheckpointError:
        return CheckpointError(f"{self.source}: not a valid TensorFlow checkpoint: "
                               f"{self.what}: {problem}")

    def varint(self) -> int:
        result, shift = 0, 0
        while True:
            if self.pos >= len(self.data):
                raise self.fail("a varint runs past the end")
            byte = self.data[self.pos]
            self.pos += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 63:
                raise self.fail("a varint is longer than 10 bytes")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"{n} bytes needed at offset {self.pos}, "
                            f"{len(self.data) - self.pos} left")
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def done(self) -> bool:
        return self.pos >= len(self.data)


def _block(data: bytes, offset: int, size: int, source: str, what: str) -> bytes:
    if offset < 0 or size < 0 or offset + size + 5 > len(data):
        raise CheckpointError(f"{source}: not a valid TensorFlow checkpoint: {what} at "
                              f"[{offset}, +{size}] lies outside the {len(data)}-byte file")
    contents = data[offset:offset + size]
    kind = data[offset + size]
    (stored,) = struct.unpack("<I", data[offset + size + 1:offset + size + 5])
    if masked_crc32c(contents + bytes([kind])) != stored:
        raise CheckpointError(f"{source}: {what} fails its CRC-32C check (the file is "
                              "damaged)")
    if kind != 0:
        raise CheckpointError(f"{source}: {what} is compressed (type {kind}); TensorFlow "
                              "writes checkpoint indexes uncompressed")
    return contents


def _entries(block: bytes, source: str, what: str) -> Iterator[Tuple[bytes, bytes]]:
    if len(block) < 4:
        raise CheckpointError(f"{source}: not a valid TensorFlow checkpoint: {what} is "
                              f"{len(block)} bytes")
    (restarts,) = struct.unpack("<I", block[-4:])
    end = len(block) - 4 - 4 * restarts
    if restarts < 1 or end < 0:
        raise CheckpointError(f"{source}: not a valid TensorFlow checkpoint: {what} has "
                              f"{restarts} restart points")
    reader, key = _Reader(block[:end], source, what), b""
    while not reader.done():
        shared, unshared, size = reader.varint(), reader.varint(), reader.varint()
        if shared > len(key):
            raise reader.fail(f"a key shares {shared} bytes of a {len(key)}-byte key")
        key = key[:shared] + reader.take(unshared)
        yield key, reader.take(size)


def _handle(value: bytes, source: str, what: str) -> Tuple[int, int]:
    reader = _Reader(value, source, what)
    return reader.varint(), reader.varint()


def read_table(path: str) -> Dict[bytes, bytes]:
    """Every key and value of a LevelDB-format table file, CRCs checked."""
    data = fileio.read_regular_file(path, MAX_INDEX_BYTES, "TensorFlow checkpoint index")
    if len(data) < FOOTER_BYTES or struct.unpack("<Q", data[-8:])[0] != TABLE_MAGIC:
        raise CheckpointError(f"{path}: not a valid TensorFlow checkpoint: no table footer "
                              "(truncated, or not a .index file)")
    footer = _Reader(data[-FOOTER_BYTES:-8], path, "footer")
    footer.varint(), footer.varint()  # the meta-index block: TF leaves it empty
    index_offset, index_size = footer.varint(), footer.varint()
    out: Dict[bytes, bytes] = {}
    index = _block(data, index_offset, index_size, path, "the block index")
    seen: set = set()
    for _, handle in _entries(index, path, "the block index"):
        offset, size = _handle(handle, path, "a block handle")
        if offset in seen:  # each block is read (and its CRC computed) once
            raise CheckpointError(f"{path}: not a valid TensorFlow checkpoint: two index "
                                  f"entries name the block at offset {offset}")
        seen.add(offset)
        for key, value in _entries(_block(data, offset, size, path, "a data block"), path,
                                   "a data block"):
            if key in out:
                raise CheckpointError(f"{path}: key {key!r} appears twice")
            out[key] = value
    return out


def _fields(value: bytes, source: str, what: str) -> Dict[int, list]:
    """Protobuf wire format -> {field number: [values]} (varints as ints, else bytes)."""
    reader, out = _Reader(value, source, what), {}
    while not reader.done():
        tag = reader.varint()
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            item: Any = reader.varint()
        elif wire == 1:
            item = struct.unpack("<Q", reader.take(8))[0]
        elif wire == 2:
            item = reader.take(reader.varint())
        elif wire == 5:
            item = struct.unpack("<I", reader.take(4))[0]
        else:
            raise reader.fail(f"field {number} has unsupported wire type {wire}")
        out.setdefault(number, []).append(item)
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


# ---------------------------------------------------------------- the bundle

class TFCheckpoint:
    """A TF checkpoint opened like OpenCheckpoint: `index` (variables and slots by object
    path, as kilnflow writes them), `entries`, `view(path)`, `copy(path)`, `keys`."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.index_path = prefix + ".index"
        table = read_table(self.index_path)
        header = _fields(table.pop(b"", b""), self.index_path, "the bundle header")
        shards = header.get(1, [1])[0]
        if header.get(2, [0])[0] != 0:
            raise CheckpointError(f"{self.index_path}: big-endian checkpoints are not read")
        self._tensors: Dict[str, dict] = {}
        for raw_key, value in table.items():
            key = raw_key.decode("utf-8", "replace")
            self._tensors[key] = self._entry(key, value, shards)
        self._maps: Dict[int, Any] = {}
        self._verified: set = set()
        self.entries: Dict[str, dict] = {}
        self._key_of: Dict[str, str] = {}
        variables, slots = [], []
        for key, info in sorted(self._tensors.items()):
            entry = _object_entry(key, info)
            if entry is None:
                continue
            (slots if "slot" in entry else variables).append(entry)
            self.entries[entry["path"]] = entry
            self._key_of[entry["path"]] = key
        self.index = {"format": "tensorflow", "version": 2, "variables": variables,
                      "slots": slots, "objects": {}}
        self._names: Any = None

    @property
    def full_names(self) -> Dict[str, str]:
        """Object path -> variable name (Keras 3 names variables by layer path:
        'sequential/dense/kernel'), from TF's serialized object graph."""
        return self._graph()[0]

    def paths_under(self, child: str) -> List[str]:
        """Object paths of the variables below the root's child `child`, depth first in
        TF's child order (for a Keras model: its weights in order)."""
        return self._graph()[1].get(child, [])

    def _graph(self) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
        """Read once; a graph that does not parse leaves values without a live object path
        unmatched (the restore's status reports them)."""
        if self._names is None:
            try:
                self._names = self._decode_graph()
            except CheckpointError:
                self._names = ({}, {})
        return self._names

    def _decode_graph(self) -> Tuple[Dict[str, str], Dict[str, List[str]]]:
        """TrackableObjectGraph: nodes(1) -> children(1: node_id 1, local_name 2) and
        attributes(2: full_name 2, checkpoint_key 3)."""
        info = self._tensors.get(OBJECT_GRAPH_KEY)
        if info is None or info["dtype"] != "string" or info["shape"] != []:
            return {}, {}
        raw = bytes(self.tensor(OBJECT_GRAPH_KEY).reshape(-1)[0])

        def fields(data: Any, number: int) -> list:
            if not isinstance(data, bytes):
                return []
            return _fields(data, self.index_path, "the serialized object graph").get(number, [])
        nodes = fields(raw, 1)
        name_of: Dict[str, str] = {}
        key_of_node: Dict[int, str] = {}
        for i, node in enumerate(nodes):
            for attribute in fields(node, 2):
                name, key = (fields(attribute, n)[:1] or [b""] for n in (2, 3))
                if isinstance(name[0], bytes) and isinstance(key[0], bytes) and name[0]:
                    name_of[key[0].decode("utf-8", "replace")] = name[0].decode("utf-8", "replace")
                    key_of_node[i] = key[0].decode("utf-8", "replace")
        path_of = {key: path for path, key in self._key_of.items()}
        under: Dict[str, List[str]] = {}
        for ref in fields(nodes[0], 1) if nodes else []:
            (local,), (start,) = fields(ref, 2)[:1] or [b""], fields(ref, 1)[:1] or [0]
            found, stack, seen = [], [start], set()
            while stack and len(seen) <= len(nodes):  # depth first, children in order
                i = stack.pop()
                if not isinstance(i, int) or i in seen or not 0 <= i < len(nodes):
                    continue
                seen.add(i)
                if key_of_node.get(i) in path_of:
                    found.append(path_of[key_of_node[i]])
                stack.extend(reversed([c for ref2 in fields(nodes[i], 1)
                                       for c in fields(ref2, 1)[:1]]))
            under[local.decode("utf-8", "replace") if isinstance(local, bytes) else ""] = found
        return ({path: name_of[key] for path, key in self._key_of.items() if key in name_of},
                under)

    def _entry(self, key: str, value: bytes, shards: int) -> dict:
        where = f"the entry of {key!r}"
        f = _fields(value, self.index_path, where)
        dtype_code = f.get(1, [0])[0]
        if 7 in f:
            raise errors.UnimplementedError(f"{self.index_path}: {key!r} is a partitioned "
                                            "(sliced) variable, which kilnflow does not read")
        if dtype_code != DT_STRING and dtype_code not in _TF_DTYPES:
            raise CheckpointError(f"{self.index_path}: {where} has TF dtype {dtype_code}, "
                                  "which kilnflow has no type for")
        shape_fields = _fields(f.get(2, [b""])[0], self.index_path, where)
        dims = [_signed(_fields(d, self.index_path, where).get(1, [0])[0])
                for d in shape_fields.get(2, [])]
        shard, offset, size = (f.get(n, [0])[0] for n in (3, 4, 5))
        if any(d < 0 for d in dims) or not 0 <= shard < max(shards, 1) or offset < 0 \
                or size < 0:
            raise CheckpointError(f"{self.index_path}: {where} has a bad shape, shard, "
                                  f"offset or size ({dims}, {shard}, {offset}, {size})")
        if dtype_code != DT_STRING:
            name = _TF_DTYPES[dtype_code]  # bfloat16's size is known without ml_dtypes
            itemsize = 2 if name == "bfloat16" else np.dtype(_numpy_dtype(name)).itemsize
            if math.prod(dims) * itemsize != size:
                raise CheckpointError(f"{self.index_path}: {where}: {size} bytes for shape "
                                      f"{dims} of {_TF_DTYPES[dtype_code]}")
        return {"dtype": _TF_DTYPES.get(dtype_code, "string"), "shape": dims,
                "shard": shard, "offset": offset, "size": size, "crc": f.get(6, [None])[0],
                "shards": shards}

    @property
    def keys(self) -> Dict[str, dict]:
        """Every tensor by its TF key: {'dtype', 'shape', ...}."""
        return dict(self._tensors)

    def _data(self, info: dict) -> Any:
        shard = info["shard"]
        if shard not in self._maps:
            path = f"{self.prefix}.data-{shard:05d}-of-{info['shards']:05d}"
            self._maps[shard] = (path, fileio.map_regular_file(path, "checkpoint data file"))
        return self._maps[shard]

    def tensor(self, key: str) -> np.ndarray:
        """Tensor `key` (a TF key): a read-only view of its bytes, CRC checked once."""
        info = self._tensors[key]
        path, data = self._data(info)
        begin, end = info["offset"], info["offset"] + info["size"]
        if end > len(data):
            raise CheckpointError(f"{path}: tensor {key!r} needs bytes [{begin}, {end}) but "
                                  f"the file has {len(data)} (truncated?)")
        if key not in self._verified:  # (a string tensor's CRC covers its decoded form)
            if info["crc"] is not None and info["dtype"] != "string" and masked_crc32c(memoryview(data)[begin:end]) != \
                    info["crc"]:
                raise CheckpointError(f"{path}: the bytes of tensor {key!r} fail their "
                                      "CRC-32C check (the file is damaged)")
            self._verified.add(key)
        if info["dtype"] == "string":
            return _strings(bytes(data[begin:end]), info["shape"], path, key)
        dtype = np.dtype(_numpy_dtype(info["dtype"])).newbyteorder("<")
        return np.frombuffer(data, dtype, count=info["size"] // dtype.itemsize,
                             offset=begin).reshape(info["shape"])

    def key_of(self, path: str) -> str:
        return self._key_of[path]

    def view(self, path: str) -> np.ndarray:
        return self.tensor(self._key_of[path])

    def copy(self, path: str) -> np.ndarray:
        view = self.view(path)
        return view.astype(view.dtype.newbyteorder("="), copy=True)

    def close(self) -> None:
        from kilnflow.saving.safetensors import close_mapping
        for _, mapped in self._maps.values():
            close_mapping(mapped)
        self._maps = {}

    def __enter__(self) -> "TFCheckpoint":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _numpy_dtype(name: str) -> Any:
    return _dtypes.as_dtype(name).as_numpy_dtype


def _strings(raw: bytes, shape: list, path: str, key: str) -> np.ndarray:
    """A DT_STRING tensor: varint lengths, a masked CRC of them, then the bytes."""
    reader = _Reader(raw, path, f"string tensor {key!r}")
    lengths = [reader.varint() for _ in range(math.prod(shape))]
    reader.take(4)
    return np.array([reader.take(n) for n in lengths] or [], dtype=object).reshape(shape)


def _unescape(name: str) -> str:
    return name.replace(".S", "/").replace("..", ".")


def _object_entry(key: str, info: dict) -> Any:
    """The kilnflow index entry of a TF key, or None for keys that are not values of
    variables (the object graph, other attributes)."""
    if not key.endswith("/" + VALUE_SUFFIX) or info["dtype"] == "string":
        return None
    head = key[:-len(VALUE_SUFFIX) - 1]
    base = {"dtype": info["dtype"], "shape": info["shape"]}
    if SLOT_MARK in head:
        owner, rest = head.split(SLOT_MARK, 1)
        optimizer, _, slot = rest.rpartition("/")
        path = f"{optimizer}/_slots/{owner.replace('.', '..').replace('/', '.S')}/{slot}"
        return {**base, "path": path, "optimizer": optimizer, "owner": owner,
                "slot": _unescape(slot)}
    return {**base, "path": head}
