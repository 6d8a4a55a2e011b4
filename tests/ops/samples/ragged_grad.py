"""Samples of kilnflow/ops/ragged_grad.py (RaggedFillEmptyRowsGrad), with TF 2.21's values
for the first and its error texts for the bad calls."""
import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add

add("RaggedFillEmptyRowsGrad", kf.ragged_fill_empty_rows_grad,
    (np.array([0, 2, 3], np.int64), np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)),
    lambda m, g: (np.array([1.0, 3.0, 4.0], np.float32), np.float32(7.0)))
add("RaggedFillEmptyRowsGrad", kf.ragged_fill_empty_rows_grad,
    (np.array([1, 1, 0], np.int64), np.array([0.5, -2.0], np.float64)),
    lambda m, g: (g[m], np.float64(g.sum() - g[m].sum())), name="repeated_float64")

ERRORS.extend([
    ErrorSample("RaggedFillEmptyRowsGrad", kf.ragged_fill_empty_rows_grad,
                (np.array([0, 9], np.int64), np.array([1.0, 2.0], np.float32)),
                errors.InvalidArgumentError, ("Elements in reverse index must be in [0, 2) but "
                                              "got 9",)),
    ErrorSample("RaggedFillEmptyRowsGrad", kf.ragged_fill_empty_rows_grad,
                (np.array([1, 0], np.int64), np.ones((3, 2), np.float32)),
                errors.InvalidArgumentError, ("grad_values must be a vector",)),
])
