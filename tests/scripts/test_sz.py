"""scripts/sz.py enforces the size budget: a file over 600 lines, a package over its cap, or a
package without a cap makes it fail; the real package passes."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import sz  # noqa: E402


def _tree(tmp_path, files):
    for rel, lines in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"x_{i} = {i}\n" for i in range(lines)))
    return str(tmp_path)


CAPS = {".": (100, "top"), "ops": (700, "ops")}


def test_a_file_over_600_lines_fails(tmp_path):
    root = _tree(tmp_path, {"a.py": 10, "ops/big.py": 601})
    problems = sz.check(root, CAPS)
    assert problems == ["kilnflow/ops/big.py: 601 lines, over the 600-line file cap "
                        "(split it by story)"]
    assert sz.check(_tree(tmp_path, {"ops/big.py": 600}), CAPS) == []


def test_a_package_over_its_cap_or_without_one_fails(tmp_path):
    root = _tree(tmp_path, {"a.py": 101, "data/x.py": 5})
    problems = sz.check(root, CAPS)
    assert any("kilnflow/: 101 code lines, over its cap of 100" in p for p in problems)
    assert any("kilnflow/data: 5 code lines and no cap" in p for p in problems)


def test_the_package_fits_its_budget():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "sz.py")],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
