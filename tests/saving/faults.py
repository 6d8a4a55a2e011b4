"""Fault injection for the crash-safety tests: every step a save takes on disk (each write
to an open file, each fsync, rename and delete) is a numbered boundary, and a hook runs
before and after each one. The tests use it to SIGKILL a forked writer at every boundary,
and to raise OSError (a full disk) at every write."""
from __future__ import annotations

import builtins
import os
import signal
from typing import Callable, List, Optional

import pytest

from kilnflow.saving import fileio

Hook = Callable[[int, str, str], None]  # (step number, step name, "before" or "after")


class _File:
    """An open file whose writes are boundaries."""

    def __init__(self, f, step):
        self._f, self._step = f, step

    def write(self, data):
        return self._step("write", lambda: self._f.write(data))

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)


def install(mp: pytest.MonkeyPatch, hook: Optional[Hook] = None) -> List[str]:
    """Route the save steps through `hook`; returns the list of step names seen so far."""
    seen: List[str] = []

    def step(name, act):
        seen.append(name)
        if hook is not None:
            hook(len(seen), name, "before")
        result = act()
        if hook is not None:
            hook(len(seen), name, "after")
        return result

    def wrap(name, real):
        return lambda *a, **k: step(name, lambda: real(*a, **k))

    real_open = builtins.open

    def open_(file, mode="r", *args, **kwargs):
        f = real_open(file, mode, *args, **kwargs)
        return _File(f, step) if "w" in mode or "a" in mode else f

    mp.setattr(fileio, "open", open_, raising=False)
    for name in ("replace", "fsync", "remove", "unlink", "rename"):
        mp.setattr(os, name, wrap(name, getattr(os, name)))
    return seen


def count_steps(save: Callable[[], None]) -> List[str]:
    """The steps one uninterrupted `save()` takes."""
    with pytest.MonkeyPatch.context() as mp:
        seen = install(mp)
        save()
    return list(seen)


def killed_at(save: Callable[[], None], step: int, when: str) -> bool:
    """Run `save()` in a forked child that SIGKILLs itself at boundary `step` (`when` is
    "before" or "after" it): no cleanup, no finally blocks, no buffers flushed, as a power
    cut or OOM kill. Returns True when the child died there (False: it finished first)."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            with pytest.MonkeyPatch.context() as mp:
                def hook(n, name, moment):
                    if n == step and moment == when:
                        os.kill(os.getpid(), signal.SIGKILL)
                install(mp, hook)
                save()
        except BaseException:
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) == signal.SIGKILL
        return True
    assert os.WEXITSTATUS(status) == 0, "the writer failed without being killed"
    return False


def failing_at(mp: pytest.MonkeyPatch, step: int, error: BaseException) -> None:
    """Make boundary `step` raise `error` before it acts (a write: nothing of it lands)."""
    def hook(n, name, moment):
        if n == step and moment == "before":
            raise error
    install(mp, hook)


def snapshot(root: str, skip: str) -> dict:
    """Every file below `root` except under `skip`: path -> (size, mtime_ns, bytes)."""
    found = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if os.path.join(directory, d) != skip]
        for name in files:
            path = os.path.join(directory, name)
            st = os.lstat(path)
            with open(path, "rb") as f:
                found[path] = (st.st_size, st.st_mtime_ns, f.read())
        for name in dirs:
            found[os.path.join(directory, name) + "/"] = None
    return found
