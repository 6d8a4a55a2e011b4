"""conv3d_transpose: the gradient of conv3d with respect to its input, composed like conv3d
(nn_windows.py) from per-depth-tap 2-D pieces, here conv2d_transpose's. Every output depth
is the sum over the input depths and filter taps that a forward conv3d would have paired
with it, so values and gradients are those of the 2-D transposed kernels. Imports ops only.
"""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.ops import array
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat, stack
from kilnflow.ops.math import add_n, cast
from kilnflow.ops.nn_extra import conv2d_transpose
from kilnflow.tensor import Tensor


def _triple(value: Any, what: str) -> list:
    value = [1, 1, 1] if value is None else value
    value = [int(value)] * 3 if isinstance(value, int) else [int(v) for v in value]
    if len(value) == 5:
        value = value[1:4]
    if len(value) != 3:
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv3d_transpose: {what} must be an int or have 3 or 5 elements, got {value}"))
    return value


def _front_pad(size: int, taps: int, stride: int, rate: int, padding: str) -> tuple:
    """(forward output size, padding before) of a conv3d over `size` depths, as TF pads."""
    effective = (taps - 1) * rate + 1
    if padding == "VALID":
        return max((size - effective) // stride + 1, 0), 0
    out = -(-size // stride)
    return out, max((out - 1) * stride + effective - size, 0) // 2


def conv3d_transpose(input: Any, filters: Any, output_shape: Any,  # noqa: A002 - TF's name
                     strides: Any, padding: str = "SAME", data_format: str = "NDHWC",
                     dilations: Any = None, name: Optional[str] = None) -> Tensor:
    """The transpose of conv3d: NDHWC `input`, `filters` [depth, height, width,
    output_channels, input_channels] and the 5-D `output_shape` (depth, height, width and
    channels static; the batch may be a tensor)."""
    x = convert_to_tensor(input)
    w = convert_to_tensor(filters, x.dtype)
    if data_format != "NDHWC" or x.shape.rank != 5 or w.shape.rank != 5:
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv3d_transpose: needs NDHWC 5-D input and 5-D filters, got {x.shape} and "
            f"{w.shape}"))
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv3d_transpose: padding must be 'SAME' or 'VALID', got {padding!r}"))
    padding = padding.upper()
    strides, rates = _triple(strides, "strides"), _triple(dilations, "dilations")
    dims = list(output_shape)
    if len(dims) != 5 or any(not isinstance(d, int) for d in dims[1:]):
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv3d_transpose: output_shape must be 5-D with static depth, height, width "
            f"and channels, got {output_shape}"))
    depth_in, taps = x.shape[1], w.shape[0]
    if depth_in is None or taps is None:
        raise errors.InvalidArgumentError(errors.with_location(
            "conv3d_transpose: the input depth and filter depth must be known"))
    fwd_depth, front = _front_pad(dims[1], taps, strides[0], rates[0], padding)
    if fwd_depth != depth_in:
        raise errors.InvalidArgumentError(errors.with_location(
            f"conv3d_transpose: an output depth of {dims[1]} gives {fwd_depth} input depths "
            f"under conv3d, but the input has {depth_in}"))
    batch = cast(array.shape(x)[:1], _dtypes.int32) if dims[0] is None \
        else convert_to_tensor([int(dims[0])], _dtypes.int32)
    plane = concat([batch, convert_to_tensor(dims[2:], _dtypes.int32)], 0)
    pieces: dict = {}
    for d in range(depth_in):
        for k in range(taps):
            z = d * strides[0] - front + k * rates[0]
            if 0 <= z < dims[1]:
                pieces.setdefault(z, []).append(conv2d_transpose(
                    x[:, d], w[k], plane, strides[1:3], padding, dilations=rates[1:3]))
    zero = None
    outputs = []
    for z in range(dims[1]):
        terms = pieces.get(z)
        if not terms:  # no input depth reaches this output depth (strides past the taps)
            if zero is None:
                zero = array.zeros_like(conv2d_transpose(x[:, 0], w[0], plane, strides[1:3],
                                                         padding, dilations=rates[1:3]))
            terms = [zero]
        outputs.append(add_n(terms) if len(terms) > 1 else terms[0])
    return stack(outputs, axis=1, name=name)
