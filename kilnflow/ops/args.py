"""Argument helpers shared by the op families: TF's checks on axes, sizes, shape vectors
and lists of tensors, and the errors they raise (naming the op and the argument).
Imports dtypes, errors, core and ops.convert only.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core import rules
from kilnflow.ops.convert import convert_to_tensor, operand
from kilnflow.shapes import TensorShape
from kilnflow.tensor import Tensor


INTEGERS = _dtypes.INTEGERS
REAL = _dtypes.REAL
newaxis = None  # x[kf.newaxis] inserts a dim, as in TF

BAD_INDEX = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
              "tf.int32/tf.int64 tensors are valid indices")


# ---------------------------------------------------------------- argument helpers

def invalid_argument(message: str, op: str) -> errors.InvalidArgumentError:
    """A bad argument found before bind(): TF's error class, naming the op and user's line."""
    return errors.InvalidArgumentError(errors.with_location(f"{message} [Op:{op}]"))


def type_error(message: str) -> TypeError:
    return TypeError(errors.with_location(message))


def is_tensorish(value: Any) -> bool:
    return isinstance(value, Tensor) or hasattr(value, "_as_tensor")


def is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def python_int(value: Any, op: str, what: str) -> int:
    """An int argument given as a Python int, NumPy integer or constant scalar int tensor."""
    if is_tensorish(value):
        t = convert_to_tensor(value)
        known = rules.constant_value(t)
        if t.dtype not in INTEGERS or t.shape.rank not in (0, None):
            raise type_error(f"{op}: `{what}` must be a scalar int, got {t!r}")
        if known is None:
            raise ValueError(errors.with_location(
                f"{op}: `{what}` must be known when the graph is built, got {t}"))
        return int(known)
    if not is_int(value):
        raise type_error(f"{op}: `{what}` must be an int, got {value!r}")
    return int(value)


def axis_arg(axis: Any, rank: Optional[int], op: str, what: str = "axis") -> int:
    """A scalar axis normalized to [0, rank) when the rank is known."""
    try:
        return rules.normalize_axis(python_int(axis, op, what), rank, what)
    except ValueError as exc:
        raise invalid_argument(str(exc), op) from None


def axes_arg(axis: Any, rank: Optional[int], op: str) -> tuple:
    """A list (or int) of distinct axes, normalized when the rank is known."""
    _, values = int_vector([axis] if is_int(axis) or is_tensorish(axis) and
                            convert_to_tensor(axis).shape.rank == 0 else axis, op, "axis")
    if values is None:
        raise ValueError(errors.with_location(f"{op}: `axis` must be known when the graph is "
                                              f"built"))
    out = tuple(axis_arg(a, rank, op) for a in values)
    if rank is not None and len(set(out)) != len(out):
        dup = next(a for a in out if out.count(a) > 1)
        raise invalid_argument(f"axis {dup} specified more than once", op)
    return out


def int_vector(arg: Any, op: str, what: str = "shape") -> tuple:
    """(None, list of ints) when `arg` is known at build time, else (1-D int tensor, None).

    Accepts lists/tuples (which may hold scalar tensors), ndarrays, TensorShapes and 1-D
    int tensors; non-int entries raise TypeError naming the op and argument.
    """
    if type(arg) in (list, tuple) and all(type(d) is int for d in arg):
        return None, list(arg)  # the common case, kept cheap for eager calls
    if isinstance(arg, TensorShape):
        if not arg.is_fully_defined():
            raise ValueError(errors.with_location(
                f"{op}: `{what}` must be fully defined, got {arg}"))
        return None, arg.as_list()
    if is_tensorish(arg):
        t = convert_to_tensor(arg)
        if t.dtype not in INTEGERS:
            raise type_error(f"{op}: `{what}` must be an int32 or int64 tensor, got "
                              f"{t.dtype.name}")
        if t.shape.rank not in (1, None):
            raise ValueError(errors.with_location(
                f"{op}: `{what}` must be a 1-D tensor, got shape {t.shape}"))
        known = rules.constant_value(t)
        if known is None:
            return t, None
        return None, [int(d) for d in known.reshape(-1)]
    if isinstance(arg, np.ndarray) and arg.dtype.kind not in "iu" and arg.size:
        raise type_error(f"{op}: `{what}` must hold ints, got an array of {arg.dtype}")
    try:
        items = list(arg)
    except TypeError:
        raise type_error(f"{op}: `{what}` must be a list of ints or an int tensor, got "
                          f"{arg!r}") from None
    dims: list = []
    symbolic = False
    for d in items:
        if is_tensorish(d):
            t = convert_to_tensor(d)
            if t.dtype not in INTEGERS or t.shape.rank not in (0, None):
                raise type_error(f"{op}: entries of `{what}` must be ints or scalar int "
                                  f"tensors, got {t!r}")
            known = rules.constant_value(t)
            if known is None:
                symbolic = True
                dims.append(t)
                continue
            d = known
        elif not is_int(d):
            raise type_error(f"{op}: `{what}` must be a list of ints or an int tensor, got "
                              f"{arg!r}")
        dims.append(int(d))
    if symbolic:
        from kilnflow.ops import joining  # joining imports args
        return joining.stack([cast_int32(d) if isinstance(d, Tensor) else d for d in dims]), None
    return None, dims


def dims_from(s: Any) -> Optional[list]:
    """Output dims given by the value of the 1-D int tensor `s`: only their count is known."""
    if s.shape.rank == 1 and s.shape[0] is not None:
        return [None] * s.shape[0]
    return None


def cast_int32(t: Tensor) -> Tensor:
    from kilnflow.ops.math import cast
    return cast(t, _dtypes.int32)


def convert_list(values: Sequence, op: str) -> list:
    """Convert an op's list input the way TF does: Python values take the first tensor's
    dtype (so concat([x64, [1.0]]) works); tensors of different dtypes still raise."""
    if isinstance(values, Tensor):
        from kilnflow.ops import joining  # joining imports args
        values = joining.unstack(values)
    if not isinstance(values, (list, tuple)):
        raise type_error(f"{op}: `values` must be a list of tensors, got {type(values)}")
    if not values:
        raise ValueError(errors.with_location(f"{op}: `values` must be a non-empty list"))
    if all(isinstance(v, Tensor) for v in values):
        return list(values)
    first = next((v for v in values if is_tensorish(v)), None)
    if first is None:
        return [convert_to_tensor(v) for v in values]
    dtype = convert_to_tensor(first).dtype
    return [operand(v, dtype) if not is_tensorish(v) else convert_to_tensor(v)
            for v in values]
