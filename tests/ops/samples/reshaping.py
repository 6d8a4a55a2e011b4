"""Samples of the ops in kilnflow/ops/reshaping.py (see tests/ops/samples/__init__.py)."""


import numpy as np

import kilnflow as kf
from kilnflow import errors
from kilnflow.ops import reshaping as _reshaping
from tests.ops.samples import (ERRORS, ErrorSample, add, direct, i32, ints, linear_vjp, rand,
                               recorded_attrs)


add("Reshape", lambda x: kf.reshape(x, [3, -1]), (rand(2, 3, 2),),
     lambda x: x.reshape(3, -1), differentiable=True)


add("Reshape", lambda x: kf.reshape(x, []), (rand(1, 1),), lambda x: x.reshape(()),
     differentiable=True, name="to_scalar")


add("Reshape", lambda x: kf.reshape(x, kf.constant([2, 2])), (ints(4),),
     lambda x: x.reshape(2, 2), name="tensor_shape")


add("DynamicReshape", direct("DynamicReshape"), (rand(2, 3), i32([3, 2])),
     lambda x, s: x.reshape(s), differentiable=True, wrt=(0,), static_shape=False)


add("BroadcastTo", lambda x: kf.broadcast_to(x, [2, 3, 4]), (rand(3, 1),),
     lambda x: np.broadcast_to(x, (2, 3, 4)), differentiable=True)


add("BroadcastTo", lambda x: kf.broadcast_to(x, [2, 2]), (ints(2),),
     lambda x: np.broadcast_to(x, (2, 2)), name="int32")


add("DynamicBroadcastTo", direct("DynamicBroadcastTo"), (rand(3), i32([2, 3])),
     lambda x, s: np.broadcast_to(x, s), differentiable=True, wrt=(0,), static_shape=False)


add("SumToShape", direct("SumToShape"), (rand(2, 3, 4), i32([3, 1])),
     lambda dy, s: dy.sum(axis=(0, 2)).reshape(3, 1), differentiable=True, wrt=(0,),
     static_shape=False)


add("ExpandDims", lambda x: kf.expand_dims(x, 0), (rand(2, 3),), lambda x: x[None],
     differentiable=True)


add("ExpandDims", lambda x: kf.expand_dims(x, -1), (rand(2, 3),), lambda x: x[..., None],
     differentiable=True, name="last")


add("ExpandDims", lambda x: kf.expand_dims(x, 1), (ints(2, 2),), lambda x: x[:, None],
     name="int32")


add("Transpose", kf.transpose, (rand(2, 3),), np.transpose, differentiable=True)


add("Transpose", lambda x: kf.transpose(x, [1, 2, 0]), (rand(2, 3, 4),),
     lambda x: np.transpose(x, (1, 2, 0)), differentiable=True, name="perm")


add("Squeeze", _reshaping.squeeze, (rand(1, 3, 1, 2),), np.squeeze, differentiable=True)


add("Squeeze", lambda x: _reshaping.squeeze(x, axis=[-2]), (ints(2, 1, 1),),
     lambda x: np.squeeze(x, -2), name="axis")


add("ConjugateTranspose", lambda x: kf.transpose(x, conjugate=True),
     (rand(2, 3) + 1j * rand(2, 3),), lambda x: np.conj(x.T), differentiable=True)


add("Tile", lambda x: _reshaping.tile(x, [2, 1, 3]), (rand(2, 1, 2),),
     lambda x: np.tile(x, (2, 1, 3)), differentiable=True)


add("Tile", lambda x: _reshaping.tile(x, [0, 2]), (ints(2, 2),), lambda x: np.tile(x, (0, 2)),
     name="zero_multiple")


add("DynamicTile", direct("DynamicTile"), (rand(2, 3), i32([2, 1])),
     lambda x, m: np.tile(x, m), differentiable=True, wrt=(0,), static_shape=False)


add("PadV2", lambda x: _reshaping.pad(x, [[1, 0], [2, 1]], constant_values=1.5), (rand(2, 3),),
     lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=1.5), differentiable=True)


add("PadV2", lambda x: _reshaping.pad(x, [[0, 2]]), (ints(3),), lambda x: np.pad(x, (0, 2)),
     name="int32")


for _mode in ("REFLECT", "SYMMETRIC"):
    add("MirrorPad", lambda x, m=_mode: _reshaping.pad(x, [[1, 2], [2, 0]], m), (rand(3, 3),),
         lambda x, m=_mode: np.pad(x, ((1, 2), (2, 0)), m.lower()), differentiable=True,
         name=_mode.lower())


_MIRROR_ATTRS = recorded_attrs("MirrorPad", lambda: _reshaping.pad(kf.zeros([3, 4]),
                                                                [[1, 1], [2, 0]], "REFLECT"))


add("MirrorPadGrad", direct("MirrorPadGrad", **_MIRROR_ATTRS), (rand(5, 6),),
     lambda dy: linear_vjp(lambda x: np.pad(x, ((1, 1), (2, 0)), "reflect"), (3, 4), dy),
     differentiable=True)


add("ReverseV2", lambda x: _reshaping.reverse(x, [0, -1]), (rand(2, 3, 2),),
     lambda x: np.flip(x, (0, 2)), differentiable=True)


ERRORS.extend([
    ErrorSample("Reshape", lambda x: kf.reshape(x, [4, 2]), (rand(2, 3),),
                errors.InvalidArgumentError, ("Reshape", "6"), name="element_count"),
    ErrorSample("Transpose", lambda x: kf.transpose(x, [0, 0]), (rand(2, 3),),
                errors.InvalidArgumentError, ("Transpose",), name="bad_perm"),
    ErrorSample("Tile", lambda x: _reshaping.tile(x, [2]), (rand(1, 2),),
                errors.InvalidArgumentError, ("Tile", "length"), name="multiples_length"),
    ErrorSample("Squeeze", lambda x: _reshaping.squeeze(x, axis=[0]), (rand(2, 1),),
                errors.InvalidArgumentError, ("Squeeze",), name="not_size_1"),
])
