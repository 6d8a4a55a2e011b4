"""Samples of the ops in kilnflow/ops/tensor_array.py (see tests/ops/samples/__init__.py)."""


import numpy as np

import kilnflow as kf
from tests.ops.samples import add, rand


add("TensorListSetItem",
     lambda x: kf.TensorArray(kf.float64, size=0, dynamic_size=True).write(0, x).write(
         1, x * 2).stack(),
     (rand(3),), lambda x: np.stack([x, 2 * x]), differentiable=True, static_shape=False)
