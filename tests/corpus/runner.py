"""Runs a corpus program and returns what it printed, normalised.

A corpus program is a short TF-2 script written against kilnflow with the
one import a port changes (``import kilnflow as tf``). The same text, with
that line turned back into ``import tensorflow as tf``, was run under
TensorFlow 2.21 by ``scripts/record_corpus.py`` and its output is kept in
``expected/<name>.txt``. Nothing here imports TensorFlow.
"""
from __future__ import annotations

import contextlib
import io
import pathlib
import re

from kilnflow import keras

HERE = pathlib.Path(__file__).parent
PROGRAMS = HERE / "programs"
EXPECTED = HERE / "expected"

# Only the port's one line differs between the two runs.
KILNFLOW_IMPORT = "import kilnflow as tf"
TENSORFLOW_IMPORT = "import tensorflow as tf"

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def program_names() -> list[str]:
    """Names of the programs that have a recorded TF output."""
    return sorted(p.stem for p in PROGRAMS.glob("*.py")
                  if (EXPECTED / f"{p.stem}.txt").exists())


def normalise(text: str) -> str:
    """Hides what legitimately differs between runs: object addresses and
    trailing spaces."""
    text = _ADDRESS.sub("0x?", text)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip() + "\n"


def run_program(name: str) -> str:
    """Executes ``programs/<name>.py`` in a fresh namespace, returns its
    normalised stdout."""
    path = PROGRAMS / f"{name}.py"
    source = path.read_text()
    if KILNFLOW_IMPORT not in source:
        raise ValueError(f"{path} must import kilnflow as tf")
    keras.backend.clear_session()  # as in a fresh process: dense, adam, ... unnumbered
    out = io.StringIO()
    namespace = {"__name__": "__main__", "__file__": str(path)}
    with contextlib.redirect_stdout(out):
        exec(compile(source, str(path), "exec"), namespace)
    return normalise(out.getvalue())


def expected_output(name: str) -> str:
    return normalise((EXPECTED / f"{name}.txt").read_text())
