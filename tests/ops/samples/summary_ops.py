"""Samples of the ops in kilnflow/ops/summary_ops.py (see tests/ops/samples/__init__.py)."""
from tests.ops.samples import UNSAMPLED

UNSAMPLED["WriteSummary"] = "stateful (writes event files): tests/summary/test_summary.py"
