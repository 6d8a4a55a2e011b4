"""A small writer of TensorFlow's checkpoint files (tensor bundle: a LevelDB-format .index
table of BundleEntryProtos and a .data-00000-of-00001 file), written from the format's
description, for tests of kilnflow's reader. Its CRC-32C is an independent bit-by-bit one."""
import struct

import numpy as np

TF_DTYPES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
             "string": 7, "complex64": 8, "int64": 9, "bool": 10, "bfloat16": 14,
             "uint16": 17, "complex128": 18, "float16": 19, "uint32": 22, "uint64": 23}


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, wire: int, payload: bytes) -> bytes:
    return varint(number << 3 | wire) + payload


def entry_proto(dtype: str, shape, offset: int, size: int, crc: int, shard: int = 0) -> bytes:
    dims = b"".join(field(2, 2, varint(len(d)) + d) for d in
                    (field(1, 0, varint(n)) for n in shape))
    out = field(1, 0, varint(TF_DTYPES[dtype])) + field(2, 2, varint(len(dims)) + dims)
    if shard:
        out += field(3, 0, varint(shard))
    if offset:
        out += field(4, 0, varint(offset))
    if size:
        out += field(5, 0, varint(size))
    return out + field(6, 5, struct.pack("<I", crc))


def _block(items, restart_interval: int = 16) -> bytes:
    out, restarts, previous = bytearray(), [], b""
    for i, (key, value) in enumerate(items):
        shared = 0
        if i % restart_interval == 0:
            restarts.append(len(out))
        else:
            while shared < min(len(key), len(previous)) and key[shared] == previous[shared]:
                shared += 1
        out += varint(shared) + varint(len(key) - shared) + varint(len(value))
        out += key[shared:] + value
        previous = key
    restarts = restarts or [0]
    out += b"".join(struct.pack("<I", r) for r in restarts) + struct.pack("<I", len(restarts))
    return bytes(out)


def _with_trailer(block: bytes) -> bytes:
    return block + b"\0" + struct.pack("<I", masked(block + b"\0"))


def write_table(path: str, items, block_bytes: int = 4096) -> None:
    """A LevelDB-format table of sorted (key, value) byte pairs."""
    data, index, pending = bytearray(), [], []

    def flush():
        if pending:
            block = _block(pending)
            index.append((pending[-1][0], varint(len(data)) + varint(len(block))))
            data.extend(_with_trailer(block))
            pending.clear()

    for key, value in sorted(items):
        pending.append((key, value))
        if sum(len(k) + len(v) for k, v in pending) >= block_bytes:
            flush()
    flush()
    meta = _block([])
    meta_handle = varint(len(data)) + varint(len(meta))
    data.extend(_with_trailer(meta))
    index_block = _block(index, restart_interval=1)
    index_handle = varint(len(data)) + varint(len(index_block))
    data.extend(_with_trailer(index_block))
    handles = meta_handle + index_handle
    data.extend(handles + b"\0" * (40 - len(handles)) + struct.pack("<Q", 0xDB4775248B80FB57))
    with open(path, "wb") as f:
        f.write(bytes(data))


def string_tensor(values) -> bytes:
    lengths = b"".join(varint(len(v)) for v in values)
    return lengths + struct.pack("<I", masked(lengths)) + b"".join(values)


def write_bundle(prefix: str, tensors: dict, block_bytes: int = 4096) -> None:
    """tensors: TF key -> ndarray (or list of bytes for a string tensor of shape [n], or a
    bytes object for a scalar string)."""
    items, data = [], bytearray()
    header = field(1, 0, varint(1)) + field(3, 2, varint(2) + field(1, 0, varint(1)))
    items.append((b"", header))
    for key, value in tensors.items():
        if isinstance(value, (bytes, list)):
            raw = string_tensor([value] if isinstance(value, bytes) else value)
            shape = [] if isinstance(value, bytes) else [len(value)]
            dtype = "string"
        else:
            array = np.asarray(value)
            raw = array.astype(array.dtype.newbyteorder("<")).tobytes()
            shape, dtype = list(array.shape), str(array.dtype)
        items.append((key.encode(), entry_proto(dtype, shape, len(data), len(raw),
                                                masked(raw))))
        data.extend(raw)
    write_table(prefix + ".index", items, block_bytes)
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(bytes(data))
