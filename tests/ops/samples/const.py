"""Samples of the ops in kilnflow/ops/const.py (see tests/ops/samples/__init__.py)."""


import numpy as np

from kilnflow.core.const import Literal
from tests.ops.samples import add, direct


add("Const", direct("Const", value=Literal(np.arange(6.0).reshape(2, 3))), (),
     lambda: np.arange(6.0).reshape(2, 3))
