"""TensorArray: a list of same-shaped tensors written inside loops, then stacked.

Its value is one buffer tensor (rows = elements), so it can be a while_loop variable;
writes go through the TensorListSetItem op, which returns a new buffer (values are
immutable). Imports ops.array, ops.math, ops.slicing.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.dtypes import int32
from kilnflow.ops import array, math, slicing
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.core.opdef import bind, defop
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor, is_symbolic
from kilnflow.ops import joining, reshaping


# ---------------------------------------------------------------- TensorArray

def _set_item_rule(buffer: Any, index: Any, value: Any, *, limit: Any = None) -> TensorSpec:
    return TensorSpec(TensorShape([None]).concatenate(value.shape), buffer.dtype)


def _set_item_kernel(buffer: Any, index: Any, value: Any, *, limit: Any = None) -> Any:
    i = int(index)
    n = buffer.shape[0]
    if i < 0:
        raise IndexError(f"TensorArray index {i} is negative")
    if limit is not None and i >= limit:
        raise IndexError(f"Tried to write to index {i} but array is not resizeable and size "
                         f"is: {limit}")
    if buffer.size == 0 or buffer.shape[1:] != value.shape:
        if buffer.size and buffer.shape[1:] != value.shape:
            raise ValueError(f"TensorArray has elements of shape {buffer.shape[1:]}; cannot "
                             f"write one of shape {value.shape}")
        grown = np.zeros((max(n, i + 1),) + value.shape, value.dtype)
        if buffer.size:
            grown[:n] = buffer
    elif i >= n:
        grown = np.zeros((i + 1,) + value.shape, value.dtype)
        grown[:n] = buffer
    else:
        grown = buffer.copy()  # values are immutable: writes make a new buffer
    grown[i] = value
    return grown


def _set_item_grad(op: Any, dy: Any) -> list:
    buffer, index, value = op.inputs
    rows = array.range(array.shape(dy)[0])
    overwritten = math.cast(math.equal(rows, math.cast(index, rows.dtype)), dy.dtype)
    # one flag per row, broadcast over the element's dims (whose rank the element knows
    # even when the buffer's, as a loop variable, is unknown)
    if value.shape.rank is None:
        overwritten = reshaping.reshape(overwritten, joining.concat(
            [array.shape(rows), array.ones_like(array.shape(value))], 0))
    for _ in range(value.shape.rank or 0):
        overwritten = reshaping.expand_dims(overwritten, -1)
    d_buffer = dy * (1 - overwritten)
    rank = buffer.shape.rank if buffer.shape.rank is not None else \
        None if value.shape.rank is None else value.shape.rank + 1
    if None not in (rank, value.shape.rank) and rank != value.shape.rank + 1:
        # the buffer is a TensorArray's empty [size, 0] start (no element_shape given),
        # which the kernel replaces whole: it has no values to receive a gradient
        d_buffer = array.zeros_like(buffer)
    elif rank is None:
        d_buffer = d_buffer[:array.shape(buffer)[0]]
    elif buffer.shape.rank is None:
        # a loop variable: the buffer may be the empty [size, 0] start at run time (rank 2
        # whatever the element's). Its shape padded with 1s to dy's rank crops dy to no
        # values there, and to the buffer's rows otherwise; the reshape restores its rank.
        target = array.shape(buffer)
        padded = joining.concat([target, array.ones([rank], target.dtype)], 0)[:rank]
        d_buffer = reshaping.reshape(slicing.slice(d_buffer, [0] * rank, padded), target)
    else:  # crop to the buffer's rows
        d_buffer = slicing.slice(d_buffer, [0] * rank, array.shape(buffer))
    return [d_buffer, None, slicing.gather(dy, index)]


SET_ITEM = defop("TensorListSetItem", shape=_set_item_rule, kernel=_set_item_kernel,
                 grad=_set_item_grad, same_dtype=(0, 2))


class TensorArray:
    """A list of same-shaped tensors that can be written inside loops, then stacked.

    Writes return a new TensorArray (use `ta = ta.write(i, v)`), as in TF2.

    >>> import kilnflow as kf
    >>> ta = kf.TensorArray(kf.float32, size=2)
    >>> ta = ta.write(0, 1.0).write(1, 2.0)
    >>> ta.stack().numpy().tolist()
    [1.0, 2.0]
    """

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: Optional[bool] = None,
                 clear_after_read: Optional[bool] = None, tensor_array_name: Any = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True,
                 element_shape: Any = None, colocate_with_first_write_call: bool = True,
                 name: Optional[str] = None, _buffer: Any = None):
        from kilnflow import dtypes as _dtypes
        self.dtype = _dtypes.as_dtype(dtype)
        self.dynamic_size = bool(dynamic_size)
        self.element_shape = TensorShape(element_shape) if element_shape is not None else \
            TensorShape(None)
        if _buffer is None:
            from kilnflow.context import quiet_ops
            with quiet_ops():  # replaced by unstack(), or pruned when never written
                _buffer = self._empty(size)
        self._buffer = _buffer
        # a fixed-size array refuses writes past its size, as TF's does
        self._limit = int(size) if not self.dynamic_size and isinstance(size, int) else None

    def _empty(self, size: Any) -> Any:
        n = 0 if size is None else size
        dims = self.element_shape.as_list() if self.element_shape.is_fully_defined() else [0]
        if isinstance(n, int) or not is_symbolic(n):
            return array.zeros([int(n)] + dims, self.dtype)
        return array.zeros(joining.concat([reshaping.reshape(n, [1]), dims], 0), self.dtype)

    def _like(self, buffer: Any) -> "TensorArray":
        ta = TensorArray(self.dtype, dynamic_size=self.dynamic_size,
                         element_shape=self.element_shape, _buffer=buffer)
        ta._limit = self._limit
        return ta

    def write(self, index: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        value = convert_to_tensor(value, self.dtype)
        index = math.cast(convert_to_tensor(index), int32) \
            if isinstance(index, Tensor) else convert_to_tensor(int(index))
        attrs = {"limit": self._limit} if self._limit is not None else {}
        ta = self._like(bind(SET_ITEM, (self._buffer, index, value), attrs, name=name))
        if ta.element_shape.rank is None:
            ta.element_shape = value.shape
        return ta

    def read(self, index: Any, name: Optional[str] = None) -> Any:
        return slicing.gather(self._buffer, convert_to_tensor(index), name=name)

    def stack(self, name: Optional[str] = None) -> Any:
        return array.identity(self._buffer, name=name)

    def gather(self, indices: Any, name: Optional[str] = None) -> Any:
        return slicing.gather(self._buffer, convert_to_tensor(indices), name=name)

    def unstack(self, value: Any, name: Optional[str] = None) -> "TensorArray":
        value = convert_to_tensor(value, self.dtype)
        ta = self._like(value)
        ta.element_shape = value.shape[1:]
        return ta

    def scatter(self, indices: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        value = convert_to_tensor(value, self.dtype)
        indices = convert_to_tensor(indices)
        count = indices.shape[0] if indices.shape.rank == 1 else None
        if count is None:
            raise ValueError("TensorArray.scatter needs indices of known length")
        ta = self
        for i in range(count):
            ta = ta.write(indices[i], value[i])
        return ta

    def concat(self, name: Optional[str] = None) -> Any:
        dims = self._buffer.shape
        if dims.rank is None:  # a loop variable: the element dims are known when run
            return reshaping.reshape(self._buffer, joining.concat(
                [[-1], array.shape(self._buffer)[2:]], 0), name=name)
        return reshaping.reshape(self._buffer, [-1] + (dims.as_list()[2:] if dims.rank > 1
                                                       else []), name=name)

    def size(self, name: Optional[str] = None) -> Any:
        return array.shape(self._buffer)[0]

    def close(self, name: Optional[str] = None) -> None:
        return None

    def __repr__(self) -> str:
        return f"<TensorArray dtype={self.dtype.name} element_shape={self.element_shape}>"
