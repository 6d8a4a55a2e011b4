"""Saves interrupted at every step boundary (a crash, or a disk error) leave the previous
state or the new one loadable, with the right values, and touch nothing outside their
directory. Also: a writer process killed with SIGKILL mid-save, and the manager's state file
pointing outside its directory."""
import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import train
from kilnflow.module import Module
from kilnflow.saving import checkpoint as ckpt_lib
from kilnflow.saving import saved_model


class Crash(BaseException):
    """Stands for the process dying: nothing after the failing step runs."""


def _interrupt(monkeypatch, step, error, after=False):
    """Make the `step`-th os.replace/os.fsync call (counting both) raise `error`, before it
    acts or (`after`) once it has. Returns the list of boundaries the save passed."""
    seen = []
    real_replace, real_fsync = os.replace, os.fsync

    def boundary(real):
        def call(*args, **kwargs):
            seen.append(real.__name__)
            if len(seen) == step and not after:
                raise error
            result = real(*args, **kwargs)
            if len(seen) == step:
                raise error
            return result
        return call

    monkeypatch.setattr(os, "replace", boundary(real_replace))
    monkeypatch.setattr(os, "fsync", boundary(real_fsync))
    return seen


def _boundaries(save):
    """How many replace/fsync steps one uninterrupted save takes."""
    mp = pytest.MonkeyPatch()
    try:
        seen = _interrupt(mp, -1, None)
        save()
    finally:
        mp.undo()
    return len(seen)


def _outside_snapshot(root, inside):
    return sorted(p for p in os.listdir(root) if p != os.path.basename(inside))


ERRORS = [Crash(), OSError(28, "No space left on device")]
WHEN = pytest.mark.parametrize("after", [False, True], ids=["before_step", "after_step"])


@pytest.mark.parametrize("error", ERRORS, ids=["crash", "disk_full"])
@WHEN
def test_checkpoint_write_over_an_existing_prefix(tmp_path, error, after):
    work = tmp_path / "work"
    prefix = str(work / "ckpt")
    v = kf.Variable(np.full(4, 1.0, np.float32))
    root = train.Checkpoint(v=v)
    root.write(prefix)
    v.assign(np.full(4, 2.0, np.float32))
    steps = _boundaries(lambda: root.write(str(tmp_path / "probe" / "ckpt")))
    assert steps >= 4
    before = _outside_snapshot(tmp_path, work)
    for step in range(1, steps + 1):
        v.assign(np.full(4, 1.0, np.float32))
        root.write(prefix)                      # the old state, complete
        v.assign(np.full(4, 2.0, np.float32))
        with pytest.MonkeyPatch.context() as mp:
            _interrupt(mp, step, error, after)
            with contextlib.suppress(type(error)):  # a directory fsync error is not fatal
                root.write(prefix)
        fresh = kf.Variable(np.zeros(4, np.float32))
        train.Checkpoint(v=fresh).read(prefix).assert_consumed()
        assert float(fresh.numpy()[0]) in (1.0, 2.0), f"step {step}"
    assert _outside_snapshot(tmp_path, work) == before


@pytest.mark.parametrize("error", ERRORS, ids=["crash", "disk_full"])
@WHEN
def test_checkpoint_manager_save_always_leaves_a_latest(tmp_path, error, after):
    directory = str(tmp_path / "ckpts")
    v = kf.Variable(0.0)
    root = train.Checkpoint(v=v)
    manager = train.CheckpointManager(root, directory, max_to_keep=1)
    v.assign(1.0)
    manager.save()
    probe = train.CheckpointManager(train.Checkpoint(v=kf.Variable(0.0)),
                                    str(tmp_path / "probe"), max_to_keep=1)
    probe.save()
    steps = _boundaries(probe.save)
    for step in range(1, steps + 1):
        v.assign(float(step + 1))
        with pytest.MonkeyPatch.context() as mp:
            _interrupt(mp, step, error, after)
            with contextlib.suppress(type(error)):  # a directory fsync error is not fatal
                manager.save()
        latest = train.latest_checkpoint(directory)
        assert latest is not None, f"step {step}: no loadable checkpoint"
        fresh = kf.Variable(-1.0)
        train.Checkpoint(v=fresh).read(latest)
        assert float(fresh.numpy()) in (float(step), float(step + 1)), f"step {step}"
        manager = train.CheckpointManager(root, directory, max_to_keep=1)
        v.assign(float(step + 1))
        manager.save()  # the next round starts from a complete checkpoint of step + 1


class Scale(Module):
    def __init__(self, factor):
        super().__init__()
        self.w = kf.Variable(np.full(3, factor, np.float32))

    @kf.function(input_signature=[kf.TensorSpec([3], kf.float32)])
    def __call__(self, x):
        return x * self.w


class Shift(Module):
    def __init__(self):
        super().__init__()
        self.b = kf.Variable(np.full(3, 10.0, np.float32))
        self.c = kf.Variable(np.full(3, 5.0, np.float32))

    @kf.function(input_signature=[kf.TensorSpec([3], kf.float32)])
    def __call__(self, x):
        return x + self.b - self.c


@pytest.mark.parametrize("error", ERRORS, ids=["crash", "disk_full"])
@WHEN
def test_saved_model_over_an_existing_directory_is_old_or_new(tmp_path, error, after):
    path = str(tmp_path / "model")
    x = np.array([1.0, 2.0, 3.0], np.float32)
    old, new = Scale(2.0), Shift()
    answers = [old(x).numpy().tolist(), new(x).numpy().tolist()]
    steps = _boundaries(lambda: saved_model.save(new, str(tmp_path / "probe")))
    for step in range(1, steps + 1):
        saved_model.save(old, path)
        with pytest.MonkeyPatch.context() as mp:
            _interrupt(mp, step, error, after)
            with contextlib.suppress(type(error)):  # a directory fsync error is not fatal
                saved_model.save(new, path)
        assert saved_model.load(path)(x).numpy().tolist() in answers, f"step {step}"


_WRITER = """
import sys, numpy as np
sys.path.insert(0, {root!r})
import kilnflow as kf
from kilnflow import train
v = kf.Variable(np.zeros(200_000, np.float32))
ckpt = train.Checkpoint(v=v)
manager = train.CheckpointManager(ckpt, {directory!r}, max_to_keep=2)
i = 0
print("ready", flush=True)
while True:
    i += 1
    v.assign(np.full(200_000, float(i), np.float32))
    manager.save()
"""


def test_writer_killed_mid_save_leaves_a_loadable_checkpoint(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    directory = str(tmp_path / "ckpts")
    rng = np.random.default_rng(0)
    for _ in range(3):
        child = subprocess.Popen([sys.executable, "-c",
                                  _WRITER.format(root=root, directory=directory)],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert child.stdout.readline().strip() == b"ready"
        time.sleep(0.2 + 0.3 * rng.random())
        child.send_signal(signal.SIGKILL)
        child.wait()
        latest = train.latest_checkpoint(directory)
        assert latest is not None
        fresh = kf.Variable(np.zeros(200_000, np.float32))
        train.Checkpoint(v=fresh).read(latest)
        values = fresh.numpy()
        assert values[0] >= 1.0 and np.all(values == values[0])


def test_manager_never_deletes_outside_its_directory(tmp_path):
    directory = tmp_path / "ckpts"
    directory.mkdir()
    victim = tmp_path / "precious"
    for ext in (".json", ".safetensors"):
        (tmp_path / f"precious{ext}").write_text("keep me")
    state = {"model_checkpoint_path": "../precious",
             "all_model_checkpoint_paths": ["../precious", str(victim), "ckpt-1"]}
    (directory / "checkpoint").write_text(json.dumps(state))
    manager = train.CheckpointManager(train.Checkpoint(v=kf.Variable(1.0)), str(directory),
                                      max_to_keep=1)
    for _ in range(3):
        manager.save()
    for ext in (".json", ".safetensors"):
        assert (tmp_path / f"precious{ext}").read_text() == "keep me"
    assert ckpt_lib.read_state(str(directory))["all_model_checkpoint_paths"] == ["ckpt-3"]


def test_latest_checkpoint_ignores_a_state_file_pointing_outside(tmp_path):
    outside = str(tmp_path / "elsewhere")
    train.Checkpoint(v=kf.Variable(1.0)).write(outside)
    directory = tmp_path / "ckpts"
    directory.mkdir()
    (directory / "checkpoint").write_text(json.dumps(
        {"model_checkpoint_path": "../elsewhere", "all_model_checkpoint_paths": []}))
    assert train.latest_checkpoint(str(directory)) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "directory"])
def test_loaders_refuse_non_regular_files(tmp_path, kind):
    prefix = str(tmp_path / "c")
    train.Checkpoint(v=kf.Variable(1.0)).write(prefix)
    target = prefix + ".safetensors"
    os.remove(target)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", target)
    else:
        os.mkdir(target)
    with pytest.raises(kf.errors.OpError):
        train.Checkpoint(v=kf.Variable(0.0)).read(prefix)
    from kilnflow.saving import safetensors
    with pytest.raises(kf.errors.OpError):
        safetensors.load_file(target)


def test_deeply_nested_json_is_a_named_error(tmp_path):
    prefix = str(tmp_path / "c")
    train.Checkpoint(v=kf.Variable(1.0)).write(prefix)
    with open(prefix + ".json", "w") as f:
        f.write("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ckpt_lib.CheckpointError, match="nested deeper"):
        train.Checkpoint(v=kf.Variable(0.0)).read(prefix)
    path = str(tmp_path / "model")
    saved_model.save(Scale(1.0), path)
    with open(os.path.join(path, saved_model.GRAPH_FILE), "w") as f:
        f.write('{"a":' * 50_000 + "1" + "}" * 50_000)
    with pytest.raises(saved_model.SavedModelError, match="nested deeper"):
        saved_model.load(path)


def test_huge_declared_shapes_are_a_named_error(tmp_path):
    from kilnflow.saving import safetensors
    header = json.dumps({"w": {"dtype": "F32", "shape": [2 ** 62, 2 ** 62],
                               "data_offsets": [0, 16]}}).encode()
    header += b" " * (-len(header) % 8)
    path = tmp_path / "w.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + bytes(16))
    with pytest.raises(safetensors.SafetensorsError, match="needs"):
        safetensors.load_file(str(path))
