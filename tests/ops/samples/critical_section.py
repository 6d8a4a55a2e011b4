"""Samples of the ops in kilnflow/ops/critical_section.py (see tests/ops/samples/__init__.py).

The op appears only in graphs (eagerly execute() just calls fn under the lock)."""
import numpy as np

import kilnflow as kf
from tests.ops.samples import add, rand

_SECTION = kf.CriticalSection()

add("CriticalSectionExecute", lambda x, y: _SECTION.execute(lambda: (kf.sin(x) * y, x + y)),
    (rand(2, 3), rand(2, 3)), lambda x, y: (np.sin(x) * y, x + y), graph_only=True,
    differentiable=True)
