"""Samples of the ops in kilnflow/ops/bitwise.py (see tests/ops/samples/__init__.py)."""


import numpy as np

import kilnflow as kf
from kilnflow import errors
from tests.ops.samples import ERRORS, ErrorSample, add, ints, rand


_BITWISE = [("BitwiseAnd", kf.bitwise.bitwise_and, np.bitwise_and),
            ("BitwiseOr", kf.bitwise.bitwise_or, np.bitwise_or),
            ("BitwiseXor", kf.bitwise.bitwise_xor, np.bitwise_xor)]


for _op, _fn, _ref in _BITWISE:
    add(_op, lambda x, y, f=_fn: f(x, y), (ints(2, 3, low=-8, high=8), ints(3, low=0, high=8)),
         _ref)
    add(_op, lambda x, y, f=_fn: f(x, y), (ints(4, low=0, high=255, dtype=np.uint8),
                                            ints(4, low=0, high=255, dtype=np.uint8)),
         _ref, name="uint8")


add("BitwiseAnd", lambda x, y: x & y, (ints(3), ints(3)), np.bitwise_and, name="operator")


add("BitwiseOr", lambda x, y: x | y, (ints(3), ints(3)), np.bitwise_or, name="operator")


add("BitwiseXor", lambda x, y: x ^ y, (ints(3), ints(3)), np.bitwise_xor, name="operator")


add("LeftShift", kf.bitwise.left_shift, (ints(2, 3), ints(3, low=0, high=5)), np.left_shift)


add("RightShift", kf.bitwise.right_shift, (ints(2, 3, low=-64, high=64),
                                            ints(3, low=0, high=5)), np.right_shift)


add("RightShift", kf.bitwise.right_shift, (ints(3, low=0, high=255, dtype=np.uint8),
                                            ints(3, low=0, high=8, dtype=np.uint8)),
     np.right_shift, name="uint8")


add("Invert", kf.bitwise.invert, (ints(2, 3),), np.invert)


add("Invert", lambda x: ~x, (ints(3, low=0, high=255, dtype=np.uint8),), np.invert,
     name="operator_uint8")


ERRORS.extend([
    ErrorSample("BitwiseAnd", kf.bitwise.bitwise_and, (rand(2), rand(2)),
                errors.InvalidArgumentError, ("BitwiseAnd", "float64"), name="float64"),
])
