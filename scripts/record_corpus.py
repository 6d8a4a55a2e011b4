"""Records TensorFlow 2.21's output for the program corpus (issue 12).

Run with a Python that has ``tensorflow-cpu==2.21.0`` (a side venv; kilnflow
never depends on TF):

    /work/tfvenv/bin/python scripts/record_corpus.py [name ...]

Each ``tests/corpus/programs/<name>.py`` is run in its own process with its
``import kilnflow as tf`` line turned into ``import tensorflow as tf``; its
stdout is written to ``tests/corpus/expected/<name>.txt``. A program that
fails under TF is reported and gets no expected file.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "corpus" / "programs"
EXPECTED = ROOT / "tests" / "corpus" / "expected"


def record(path: pathlib.Path) -> bool:
    source = path.read_text().replace("import kilnflow as tf",
                                      "import tensorflow as tf")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    # Run from a real file, not `-c`: AutoGraph reads the source of converted
    # functions and fails on code that has no file.
    with tempfile.TemporaryDirectory() as tmpdir:
        script = pathlib.Path(tmpdir) / path.name
        script.write_text(source)
        done = subprocess.run([sys.executable, str(script)], capture_output=True,
                              text=True, env=env, cwd=str(PROGRAMS))
    if done.returncode != 0:
        print(f"FAILED under TF: {path.stem}\n{done.stderr[-2000:]}")
        return False
    target = EXPECTED / f"{path.stem}.txt"
    tmp = target.with_suffix(".tmp")
    tmp.write_text(done.stdout)
    os.replace(tmp, target)
    print(f"recorded {path.stem}")
    return True


def main(names: list[str]) -> int:
    EXPECTED.mkdir(parents=True, exist_ok=True)
    paths = ([PROGRAMS / f"{n}.py" for n in names] if names
             else sorted(PROGRAMS.glob("*.py")))
    failed = [p.stem for p in paths if not record(p)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
