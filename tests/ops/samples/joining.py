"""Samples of the ops in kilnflow/ops/joining.py (see tests/ops/samples/__init__.py)."""


import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, ints, rand


add("ConcatV2", lambda x, y: kf.concat([x, y], 1), (rand(2, 3), rand(2, 1)),
     lambda x, y: np.concatenate([x, y], 1), differentiable=True)


add("ConcatV2", lambda x, y, z: kf.concat([x, y, z], -1), (ints(2), ints(3), ints(1)),
     lambda x, y, z: np.concatenate([x, y, z], -1), name="int32")


add("Pack", lambda x, y: kf.stack([x, y], axis=1), (rand(2, 3), rand(2, 3)),
     lambda x, y: np.stack([x, y], 1), differentiable=True)


add("Pack", lambda x, y: kf.stack([x, y]), (ints(2), ints(2)),
     lambda x, y: np.stack([x, y]), name="int32")


add("Pack", lambda x, y: kf.convert_to_tensor([x, y]), (rand(3), rand(3)),
     lambda x, y: np.stack([x, y]), differentiable=True, name="list_of_tensors")


add("Unpack", lambda x: kf.unstack(x, axis=1), (rand(2, 3),),
     lambda x: list(np.moveaxis(x, 1, 0)), differentiable=True)


add("SplitV", lambda x: kf.split(x, 2, axis=1), (rand(3, 4),),
     lambda x: np.split(x, 2, 1), differentiable=True)


add("SplitV", lambda x: kf.split(x, [1, 2], axis=0), (rand(3, 2),),
     lambda x: np.split(x, [1], 0), differentiable=True, name="sizes")


add("SplitV", lambda x: kf.split(x, [2, -1]), (ints(5),), lambda x: np.split(x, [2]),
     name="inferred_size")


ERRORS.extend([
    ErrorSample("ConcatV2", lambda x, y: kf.concat([x, y], 0), (rand(2, 3), rand(2, 2)),
                errors.InvalidArgumentError, ("ConcatV2",), name="shapes_differ"),
    ErrorSample("ConcatV2", lambda x, y: kf.concat([x, y], 0), (rand(2), ints(2)),
                errors.InvalidArgumentError, ("ConcatV2", "float64", "int32"),
                name="dtypes_differ"),
])
