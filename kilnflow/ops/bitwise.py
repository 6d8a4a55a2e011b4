"""Bitwise ops on integer tensors (kf.bitwise.*): and, or, xor, invert, shifts.

Not differentiable. Shifts follow TF: shifting by a negative amount or by at least the
bit width gives an implementation-defined result; here it is NumPy's.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow.core import rules
from kilnflow.ops.convert import binary, convert_to_tensor
from kilnflow.core.opdef import bind, defop
from kilnflow.tensor import Tensor

INTEGERS = _dtypes.INTEGERS


def _binary(name: str, kernel: Any, fusable: str):
    return defop(name, shape=rules.broadcast(), kernel=kernel, dtypes=INTEGERS, fusable=fusable)


BITWISE_AND = _binary("BitwiseAnd", np.bitwise_and, "({0} & {1})")
BITWISE_OR = _binary("BitwiseOr", np.bitwise_or, "({0} | {1})")
BITWISE_XOR = _binary("BitwiseXor", np.bitwise_xor, "({0} ^ {1})")
LEFT_SHIFT = _binary("LeftShift", np.left_shift, "({0} << {1})")
RIGHT_SHIFT = _binary("RightShift", np.right_shift, "({0} >> {1})")
INVERT = defop("Invert", shape=rules.same_as(0), kernel=np.invert, dtypes=INTEGERS,
               fusable="(~{0})")


def _apply(opdef: Any, doc: str):
    def apply(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
        x, y = binary(x, y)
        return bind(opdef, (x, y), name=name)
    apply.__doc__ = doc
    return apply


bitwise_and = _apply(BITWISE_AND, """Elementwise x & y on integer tensors.

    >>> import kilnflow as kf
    >>> kf.bitwise.bitwise_and(kf.constant(6, kf.uint8), 3).numpy()
    np.uint8(2)
    """)
bitwise_or = _apply(BITWISE_OR, "Elementwise x | y on integer tensors.")
bitwise_xor = _apply(BITWISE_XOR, "Elementwise x ^ y on integer tensors.")
left_shift = _apply(LEFT_SHIFT, "Elementwise x << y on integer tensors.")
right_shift = _apply(RIGHT_SHIFT, "Elementwise x >> y on integer tensors (arithmetic for "
                                  "signed types).")


def invert(x: Any, name: Optional[str] = None) -> Tensor:
    """Elementwise ~x (flips all bits) on integer tensors."""
    return bind(INVERT, (convert_to_tensor(x),), name=name)
