"""Damaged files, systematically: every byte of a checkpoint index, of a safetensors header
(its length and offsets included) and of a saved model's graph file flipped in turn, and
each file truncated at many lengths. A load either gives the saved values or raises a named
kilnflow error (an OpError subclass) naming the file; never a bare IndexError, KeyError,
TypeError or RecursionError, and never a heap allocation much beyond the file's size."""
import os
import tracemalloc

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import errors, train
from kilnflow.module import Module
from kilnflow.saving import safetensors, saved_model

W = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.array([7, -8], np.int64)


def _load_checkpoint(prefix):
    w, b = kf.Variable(np.zeros((2, 3), np.float32)), kf.Variable(np.zeros(2, np.int64))
    train.Checkpoint(w=w, b=b).read(prefix)
    return w.numpy(), b.numpy()


def _check(load, source, size):
    """Run `load()`; True if it loaded. A failure must be a named error naming `source`."""
    tracemalloc.start()
    try:
        load()
        loaded = True
    except errors.OpError as exc:
        assert os.path.basename(source) in str(exc) or "checkpoint" in str(exc), str(exc)
        loaded = False
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 2 * size + (1 << 20), f"{peak} bytes allocated for a {size}-byte file"
    return loaded


def _mutations(raw, span):
    for at in span:
        damaged = bytearray(raw)
        damaged[at] ^= 0x55
        yield f"flip {at}", bytes(damaged)
    for cut in sorted({0, 1, 7, 8, 9, len(raw) // 2, len(raw) - 1} | set(range(0, len(raw), 97))):
        yield f"truncate {cut}", raw[:cut]


@pytest.fixture
def checkpoint(tmp_path):
    prefix = train.Checkpoint(w=kf.Variable(W), b=kf.Variable(B)).write(str(tmp_path / "c"))
    return prefix


@pytest.mark.parametrize("which", [".json", ".safetensors"])
def test_checkpoint_files_damaged_anywhere(checkpoint, which):
    path = checkpoint + which
    raw = open(path, "rb").read()
    header_end = 8 + int.from_bytes(raw[:8], "little") if which == ".safetensors" else len(raw)
    for what, damaged in _mutations(raw, range(0, header_end)):
        with open(path, "wb") as f:
            f.write(damaged)
        if _check(lambda: _load_checkpoint(checkpoint), path, len(raw)):
            w, b = _load_checkpoint(checkpoint)  # loaded: then with the saved values
            assert np.array_equal(w, W) and np.array_equal(b, B), what
    with open(path, "wb") as f:
        f.write(raw)
    _load_checkpoint(checkpoint)


def test_safetensors_headers_damaged_anywhere(tmp_path):
    path = str(tmp_path / "w.safetensors")
    safetensors.save_file({"w": W, "b": B}, path)
    raw = open(path, "rb").read()
    header_end = 8 + int.from_bytes(raw[:8], "little")
    for what, damaged in _mutations(raw, range(0, header_end)):
        with open(path, "wb") as f:
            f.write(damaged)
        if _check(lambda: safetensors.load_file(path), path, len(raw)):
            # (the format checksums no header: a renamed key still loads; a checkpoint's
            # index, which lists every key, is what catches that)
            loaded = safetensors.load_file(path)
            assert sorted(v.size for v in loaded.values()) == [2, 6], what


class Net(Module):
    def __init__(self):
        super().__init__()
        self.w = kf.Variable(W)

    @kf.function(input_signature=[kf.TensorSpec([3], kf.float32)])
    def __call__(self, x):
        return kf.linalg.matvec(self.w, x)


def test_saved_model_graph_file_damaged_anywhere(tmp_path):
    """saved_model.json is sealed with its sha256: any changed or lost byte is an error
    naming it (before, a flipped digit could load as a model computing something else)."""
    directory = str(tmp_path / "m")
    saved_model.save(Net(), directory)
    path = os.path.join(directory, saved_model.GRAPH_FILE)
    raw = open(path, "rb").read()
    for what, damaged in _mutations(raw, range(0, len(raw), max(1, len(raw) // 1500))):
        with open(path, "wb") as f:
            f.write(damaged)
        with pytest.raises(saved_model.SavedModelError, match="saved_model.json"):
            saved_model.load(directory)
        assert not _check(lambda: saved_model.load(directory), path, len(raw)), what
    with open(path, "wb") as f:
        f.write(raw)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(saved_model.load(directory)(x).numpy(), W @ x)
