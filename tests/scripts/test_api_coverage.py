"""scripts/api_coverage.py: the names file and the reviewed out-of-scope list agree (every
entry names a real TF name and gives a reason), and the report counts what kilnflow has."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import api_coverage  # noqa: E402


def test_names_file_is_tf_2_21_with_the_namespaces_the_issue_counts():
    version, namespaces = api_coverage.load_names()
    assert version.startswith("2.21")
    # the counts issue 12 quotes, from the same wheel
    assert len(namespaces["tf"]) == 308 and len(namespaces["math"]) == 132
    assert len(namespaces["nn"]) == 90 and len(namespaces["linalg"]) == 69
    assert "Generator" in namespaces["random"] and "keras" not in namespaces


def test_every_out_of_scope_entry_is_a_tf_name_with_a_reason():
    _, namespaces = api_coverage.load_names()
    for qualified, reason in api_coverage.load_out_of_scope().items():
        namespace, _, name = qualified.rpartition(".")
        assert name in namespaces.get(namespace, {}), qualified
        assert len(reason) > 10, qualified


def test_a_name_without_reason_is_refused(tmp_path):
    path = tmp_path / "scope.txt"
    path.write_text("# comment\ntf.tpu   TPU hardware\ntf.xla\n")
    with pytest.raises(ValueError, match="tf.xla"):
        api_coverage.load_out_of_scope(str(path))


def test_coverage_counts_present_missing_and_excluded_names():
    namespaces = {"tf": {"constant": "function", "no_such_kf_name": "function",
                         "tpu": "module"},
                  "tpu": {"x": "function"}, "nowhere": {"y": "function"}}
    rows = api_coverage.coverage(namespaces, {"tf.tpu": "TPU"})
    by_ns = {r["namespace"]: r for r in rows}
    assert [r["namespace"] for r in rows][0] == "tf"
    assert by_ns["tf"] == {"namespace": "tf", "have": 1, "in_scope": 2, "out": 1,
                           "missing": ["no_such_kf_name"]}
    assert by_ns["nowhere"]["missing"] == ["y"]
    text = api_coverage.report("2.21.0", rows, summary=False)
    assert "missing in tf (1):\n  no_such_kf_name" in text


def test_the_script_runs(capsys):
    assert api_coverage.main(["--summary", "-n", "random"]) == 0
    out = capsys.readouterr().out
    assert "random" in out and "%" in out
