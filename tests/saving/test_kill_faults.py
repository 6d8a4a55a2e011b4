"""A writer process SIGKILLed at every step boundary of Checkpoint.write,
CheckpointManager.save and saved_model.save (before and after each write, fsync, rename and
delete), and an OSError raised at each of those steps: afterwards the previous state or the
new one loads, whole (never one variable old and another new), a later save still works,
and nothing outside the target directory is touched."""
import errno
import os

import numpy as np
import pytest

import kilnflow as kf
from kilnflow import train
from kilnflow.module import Module
from kilnflow.saving import saved_model
from tests.saving import faults

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

WHEN = ("before", "after")


def _pair(a, b):
    return np.full(64, a, np.float32), np.full(3, b, np.int64)


def _state_of(prefix):
    a, b = kf.Variable(np.zeros(64, np.float32)), kf.Variable(np.zeros(3, np.int64))
    train.Checkpoint(a=a, b=b).read(prefix).assert_consumed()
    assert len(set(a.numpy().tolist())) == 1 and len(set(b.numpy().tolist())) == 1
    return float(a.numpy()[0]), int(b.numpy()[0])


def _runs(steps):
    return [(n, when) for n in range(1, len(steps) + 1) for when in WHEN]


def test_checkpoint_write_killed_at_every_step(tmp_path):
    a, b = kf.Variable(_pair(1, 10)[0]), kf.Variable(_pair(1, 10)[1])
    root = train.Checkpoint(a=a, b=b)
    steps = faults.count_steps(lambda: root.write(str(tmp_path / "probe" / "ckpt")))
    assert {"write", "fsync", "replace"} <= set(steps)
    for n, when in _runs(steps):
        work = tmp_path / f"w{n}{when}"
        prefix = str(work / "ckpt")
        for var, value in zip((a, b), _pair(1, 10)):
            var.assign(value)
        root.write(prefix)
        for var, value in zip((a, b), _pair(2, 20)):
            var.assign(value)
        outside = faults.snapshot(str(tmp_path), str(work))
        assert faults.killed_at(lambda: root.write(prefix), n, when)
        assert _state_of(prefix) in ((1.0, 10), (2.0, 20)), f"step {n} {when} ({steps[n - 1]})"
        assert faults.snapshot(str(tmp_path), str(work)) == outside
        root.write(prefix)  # the leftovers of the killed save do not get in the way
        assert _state_of(prefix) == (2.0, 20)


def test_checkpoint_manager_save_killed_at_every_step(tmp_path):
    a, b = kf.Variable(_pair(0, 0)[0]), kf.Variable(_pair(0, 0)[1])
    root = train.Checkpoint(a=a, b=b)

    def fill(directory):
        manager = train.CheckpointManager(root, directory, max_to_keep=2)
        for i in (1, 2, 3):
            for var, value in zip((a, b), _pair(i, 10 * i)):
                var.assign(value)
            manager.save()
        for var, value in zip((a, b), _pair(4, 40)):
            var.assign(value)
        return manager

    probe = fill(str(tmp_path / "probe"))
    steps = faults.count_steps(probe.save)
    assert "remove" in steps or "unlink" in steps  # the save deletes the oldest checkpoint
    for n, when in _runs(steps):
        directory = str(tmp_path / f"m{n}{when}")
        manager = fill(directory)
        outside = faults.snapshot(str(tmp_path), directory)
        assert faults.killed_at(manager.save, n, when)
        latest = train.latest_checkpoint(directory)
        assert latest is not None, f"step {n} {when}: no checkpoint"
        assert _state_of(latest) in ((3.0, 30), (4.0, 40)), f"step {n} {when} ({steps[n - 1]})"
        again = train.CheckpointManager(root, directory, max_to_keep=2)
        for prefix in again.checkpoints:  # the state file names only complete checkpoints
            _state_of(prefix)
        assert faults.snapshot(str(tmp_path), directory) == outside
        assert _state_of(again.save()) == (4.0, 40)


class Scale(Module):
    def __init__(self, factor, bias):
        super().__init__()
        self.w = kf.Variable(np.full(3, factor, np.float32))
        self.b = kf.Variable(np.full(3, bias, np.float32))

    @kf.function(input_signature=[kf.TensorSpec([3], kf.float32)])
    def __call__(self, x):
        return x * self.w + self.b


class Shift(Module):
    def __init__(self):
        super().__init__()
        self.c = kf.Variable(np.full(3, 5.0, np.float32))

    @kf.function(input_signature=[kf.TensorSpec([3], kf.float32)])
    def __call__(self, x):
        return x - self.c


X = np.array([1.0, 2.0, 3.0], np.float32)


def test_saved_model_save_killed_at_every_step(tmp_path):
    old, new = Scale(2.0, 1.0), Shift()
    answers = [old(X).numpy().tolist(), new(X).numpy().tolist()]
    steps = faults.count_steps(lambda: saved_model.save(new, str(tmp_path / "probe")))
    for n, when in _runs(steps):
        path = str(tmp_path / f"s{n}{when}")
        saved_model.save(old, path)
        outside = faults.snapshot(str(tmp_path), path)
        assert faults.killed_at(lambda: saved_model.save(new, path), n, when)
        assert saved_model.load(path)(X).numpy().tolist() in answers, f"step {n} {when}"
        assert faults.snapshot(str(tmp_path), path) == outside
        saved_model.save(new, path)
        assert saved_model.load(path)(X).numpy().tolist() == answers[1]


def _disk_full():
    return OSError(errno.ENOSPC, "No space left on device")


def test_checkpoint_write_with_a_disk_error_at_every_step(tmp_path):
    a, b = kf.Variable(_pair(1, 10)[0]), kf.Variable(_pair(1, 10)[1])
    root = train.Checkpoint(a=a, b=b)
    prefix = str(tmp_path / "work" / "ckpt")
    steps = faults.count_steps(lambda: root.write(str(tmp_path / "probe" / "ckpt")))
    for n in range(1, len(steps) + 1):
        for var, value in zip((a, b), _pair(1, 10)):
            var.assign(value)
        root.write(prefix)
        for var, value in zip((a, b), _pair(2, 20)):
            var.assign(value)
        with pytest.MonkeyPatch.context() as mp:
            faults.failing_at(mp, n, _disk_full())
            try:
                root.write(prefix)
                finished = True
            except OSError:
                finished = False
        state = _state_of(prefix)
        assert state == (2.0, 20) if finished else state in ((1.0, 10), (2.0, 20)), \
            f"step {n} ({steps[n - 1]})"
        if steps[n - 1] == "write":
            assert not finished, "a failed write must fail the save"
        assert not [f for f in os.listdir(tmp_path / "work") if ".tmp" in f]


def test_manager_and_saved_model_with_a_disk_error_at_every_step(tmp_path):
    v = kf.Variable(np.full(8, 1.0, np.float32))
    manager = train.CheckpointManager(train.Checkpoint(v=v), str(tmp_path / "ckpts"),
                                      max_to_keep=1)
    manager.save()
    steps = faults.count_steps(lambda: train.CheckpointManager(
        train.Checkpoint(v=v), str(tmp_path / "probe"), max_to_keep=1).save())
    for n in range(1, len(steps) + 1):
        v.assign(np.full(8, float(n + 1), np.float32))
        with pytest.MonkeyPatch.context() as mp:
            faults.failing_at(mp, n, _disk_full())
            try:
                manager.save()
            except OSError:
                pass
        fresh = kf.Variable(np.zeros(8, np.float32))
        train.Checkpoint(v=fresh).read(train.latest_checkpoint(str(tmp_path / "ckpts")))
        assert float(fresh.numpy()[0]) in (float(n), float(n + 1)), f"step {n}"
        v.assign(np.full(8, float(n + 1), np.float32))
        manager = train.CheckpointManager(train.Checkpoint(v=v), str(tmp_path / "ckpts"),
                                          max_to_keep=1)
        manager.save()

    old, new = Scale(2.0, 1.0), Shift()
    answers = [old(X).numpy().tolist(), new(X).numpy().tolist()]
    path = str(tmp_path / "model")
    steps = faults.count_steps(lambda: saved_model.save(new, str(tmp_path / "probe_sm")))
    for n in range(1, len(steps) + 1):
        saved_model.save(old, path)
        with pytest.MonkeyPatch.context() as mp:
            faults.failing_at(mp, n, _disk_full())
            try:
                saved_model.save(new, path)
            except OSError:
                pass
        assert saved_model.load(path)(X).numpy().tolist() in answers, f"step {n}"
