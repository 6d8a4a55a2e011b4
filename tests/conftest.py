import os
import sys

import pytest
from hypothesis import settings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# CI runs the same examples every time (a failure there is reproducible); a developer's run
# explores new ones.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# The op sample table is data imported by tests/ops/test_generic.py, not a test module; its
# arrays confuse the doctest collector.
collect_ignore_glob = ["ops/samples/*.py"]
# Corpus programs run at import; --doctest-modules must not import (and so run) them:
# tests/corpus/test_corpus.py runs each one with its state reset.
collect_ignore_glob.append("corpus/programs/*.py")


@pytest.fixture
def without_autoclustering():
    """For tests that read graph structure (op types, generated code, DOT exports): they
    see the unclustered graph when the suite runs with KF_JIT_AUTOCLUSTERING=1 (issue 16)."""
    import kilnflow as kf
    before = kf.config.optimizer.get_jit()
    kf.config.optimizer.set_jit(False)
    yield
    kf.config.optimizer.set_jit(before or False)
