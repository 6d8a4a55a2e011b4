import os
import sys

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
# Corpus programs are scripts run by tests/corpus/test_corpus.py, not modules to import.
collect_ignore_glob += ["corpus/programs/*.py"]
