"""The README's main command: `kilnflow demo` runs end to end and shows what it promises."""
import subprocess
import sys
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_demo_runs_and_reports():
    out = subprocess.run([sys.executable, "-m", "kilnflow.cli", "demo"], capture_output=True,
                         text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                         timeout=300)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    accuracy = float(text.split("test accuracy: ")[1].split("%")[0])
    assert accuracy >= 95.0
    assert "@kf.function:" in text and "traces of the compiled step: " in text
    assert "after optimization" in text
    assert "PrunedComputationWarning" in text and "RetracingWarning" in text
    assert "reloaded predictions identical: True" in text
