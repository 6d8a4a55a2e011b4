"""The safetensors reader/writer: round trips, the format as specified, and every way a
file can be broken (each error names the file and the problem)."""
import json
import os
import struct

import numpy as np
import pytest

from kilnflow import errors
from kilnflow.saving import safetensors as st


def _file(header: dict, body: bytes, pad: bool = True) -> bytes:
    text = json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + body


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "uint16", "float16",
                                   "int32", "uint32", "float32", "int64", "uint64",
                                   "float64", "complex64", "complex128"])
def test_round_trip_every_dtype(tmp_path, dtype):
    rng = np.random.default_rng(0)
    value = (rng.random((3, 4)) * 100).astype(dtype)
    path = tmp_path / "w.safetensors"
    st.save_file({"a/b": value, "scalar": np.asarray(7, dtype), "empty": np.zeros((0, 2),
                                                                                  dtype)},
                 str(path))
    out = st.load_file(str(path))
    assert set(out) == {"a/b", "scalar", "empty"}
    np.testing.assert_array_equal(out["a/b"], value)
    assert out["a/b"].dtype == value.dtype and out["scalar"].shape == ()
    assert out["empty"].shape == (0, 2)
    assert out["a/b"].flags.writeable  # a copy, not a view of the file's bytes


def test_layout_follows_the_spec():
    data = st.serialize({"x": np.arange(3, dtype=np.float32), "y": np.ones(2, np.int64)},
                        metadata={"k": "v"})
    (n,) = struct.unpack("<Q", data[:8])
    assert (8 + n) % 8 == 0  # data section aligned
    header = json.loads(data[8:8 + n])
    assert header["__metadata__"]["k"] == "v"
    assert header["y"] == {"dtype": "I64", "shape": [2], "data_offsets": [0, 16]}
    assert header["x"] == {"dtype": "F32", "shape": [3], "data_offsets": [16, 28]}
    assert data[8 + n + 16:] == np.arange(3, dtype="<f4").tobytes()


def test_reads_files_written_by_other_tools_without_checksum():
    body = np.array([1.5, -2.0], "<f8").tobytes() + np.array([3], "<i4").tobytes()
    data = _file({"w": {"dtype": "F64", "shape": [2], "data_offsets": [0, 16]},
                  "n": {"dtype": "I32", "shape": [], "data_offsets": [16, 20]}}, body,
                 pad=False)
    out, meta = st.deserialize(data, "other.safetensors", with_metadata=True)
    assert out["w"].tolist() == [1.5, -2.0] and out["n"].tolist() == 3 and meta == {}


def test_unsupported_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="cannot store"):
        st.serialize({"s": np.array(["a"])})


GOOD = {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
GOOD_BODY = np.ones(2, "<f4").tobytes()


@pytest.mark.parametrize("data, problem", [
    (b"\x01\x02", "fewer than the 8-byte header"),
    (struct.pack("<Q", 1 << 40) + b"{}", "limit"),
    (struct.pack("<Q", 100) + b"{}", "only 2 bytes follow"),
    (_file({}, b"")[:8] + b"[]      ", "does not start with"),
    (struct.pack("<Q", 8) + b"{not js}", "cannot be parsed"),
    (struct.pack("<Q", 8) + b"{\xff\xfe}    ", "cannot be parsed"),
    (_file({"w": {"dtype": "F99", "shape": [2], "data_offsets": [0, 8]}}, GOOD_BODY),
     "unknown dtype"),
    (_file({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}}, GOOD_BODY),
     "non-negative integers"),
    (_file({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 12]}}, GOOD_BODY + b"0000"),
     "needs 8"),
    (_file({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}}, GOOD_BODY),
     "begin <= end"),
    (_file({"w": {"dtype": "F32", "shape": [2]}}, GOOD_BODY), "exactly the fields"),
    (_file({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
            "v": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, GOOD_BODY),
     "overlaps"),
    (_file({"w": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, b"\0" * 12),
     "leaves a gap"),
    (_file(GOOD, GOOD_BODY[:6]), "truncated"),
    (_file(GOOD, GOOD_BODY + b"xx"), "not described by the header"),
    (_file({"__metadata__": {"a": 1}, **GOOD}, GOOD_BODY), "string values"),
    (_file({"b": {"dtype": "BOOL", "shape": [1], "data_offsets": [0, 1]}}, b"\x07"),
     "0 or 1"),
])
def test_corrupt_files_raise_clear_errors(data, problem):
    with pytest.raises(st.SafetensorsError, match=problem) as info:
        st.deserialize(data, "bad.safetensors")
    assert "bad.safetensors" in str(info.value)
    assert isinstance(info.value, errors.DataLossError)


def test_duplicate_keys_are_rejected():
    text = (b'{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, '
            b'"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}')
    data = struct.pack("<Q", len(text)) + text + GOOD_BODY
    with pytest.raises(st.SafetensorsError, match="duplicate key"):
        st.deserialize(data, "dup.safetensors")


def test_tampered_data_fails_the_checksum(tmp_path):
    path = tmp_path / "w.safetensors"
    st.save_file({"w": np.arange(4, dtype=np.float32)}, str(path))
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x40
    path.write_bytes(bytes(data))
    with pytest.raises(st.SafetensorsError, match="sha256") as info:
        st.load_file(str(path))
    assert str(path) in str(info.value)


def test_truncated_file_on_disk(tmp_path):
    path = tmp_path / "w.safetensors"
    st.save_file({"w": np.arange(100, dtype=np.float64)}, str(path))
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(st.SafetensorsError, match="truncated"):
        st.load_file(str(path))


def test_missing_file_is_not_found(tmp_path):
    with pytest.raises(errors.NotFoundError, match="no such safetensors file"):
        st.load_file(str(tmp_path / "nope.safetensors"))


def test_interoperates_with_the_reference_implementation(tmp_path):
    reference = pytest.importorskip("safetensors.numpy")
    tensors = {"a": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array(3, np.int64),
               "c": np.array([True, False]), "h": np.ones((2, 2), np.float16)}
    reference.save_file(tensors, str(tmp_path / "theirs.safetensors"), metadata={"x": "y"})
    ours, meta = st.load_file(str(tmp_path / "theirs.safetensors"), with_metadata=True)
    assert meta == {"x": "y"} and all(np.array_equal(ours[k], tensors[k]) for k in tensors)
    st.save_file(tensors, str(tmp_path / "ours.safetensors"))
    back = reference.load_file(str(tmp_path / "ours.safetensors"))
    assert all(np.array_equal(back[k], tensors[k]) for k in tensors)


def test_header_limit_is_the_formats_100_million_bytes(tmp_path):
    assert st.MAX_HEADER_BYTES == 100_000_000
    path = tmp_path / "big.safetensors"
    path.write_bytes((100_000_001).to_bytes(8, "little") + b"{}")
    with pytest.raises(st.SafetensorsError, match="100000000-byte limit"):
        st.load_file(str(path))


_RSS = """
import sys
sys.path.insert(0, {root!r})
from kilnflow.saving import safetensors
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
base = rss("VmRSS")
open("/proc/self/clear_refs", "w").write("5")
kept = safetensors.load_file({path!r})
print((rss("VmHWM") - base) / {size})
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")
def test_load_file_peak_memory_is_the_tensors_alone(tmp_path):
    """The peak resident set (heap and mapped file pages) grows by about the file's size:
    the bytes are read into the arrays, not mapped and then copied (2x before)."""
    import subprocess
    import sys
    path = str(tmp_path / "big.safetensors")
    st.save_file({f"w{i}": np.full(1 << 20, i, np.float32) for i in range(8)}, path)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", _RSS.format(root=root, path=path,
                                                            size=os.path.getsize(path))],
                         capture_output=True, text=True, check=True)
    assert float(out.stdout) <= 1.2
