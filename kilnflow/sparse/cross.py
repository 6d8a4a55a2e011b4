"""tf.sparse.cross and tf.sparse.sampled_addmm, from public kf ops.

cross: each row's features (a dense row, or a SparseTensor row's stored values) crossed
with the other inputs' features of the same row, first input varying slowest, joined with
`separator`; crossing pairwise keeps that order. (cross_hashed needs TF's FarmHash
fingerprints and is left out.)
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

from kilnflow import dtypes as _dtypes
from kilnflow.ops.array import range as _range, shape as _shape
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat as _concat, stack
from kilnflow.ops.math import cast
from kilnflow.ops.reduction import cumsum, reduce_max, reduce_sum
from kilnflow.ops.reshaping import transpose
from kilnflow.ops.slicing import gather
from kilnflow.ops.strings import as_string, join
from kilnflow.sparse.sparse_tensor import SparseTensor
from kilnflow.tensor import Tensor

_I64 = _dtypes.int64


def _rows(value: Any) -> Tuple[Tensor, Tensor]:
    """(string values, row splits) of one input: a dense [batch, n] tensor or a rank-2
    SparseTensor in row-major order."""
    if isinstance(value, SparseTensor):
        from kilnflow.ragged.ops import segment_ids_to_row_splits
        values, rows = value.values, value.indices[:, 0]
        splits = segment_ids_to_row_splits(rows, value.dense_shape[0])
    else:
        dense = convert_to_tensor(value)
        if dense.shape.rank != 2:
            raise ValueError(f"sparse.cross: dense inputs must have rank 2, got {dense.shape}")
        from kilnflow.ragged.ragged_tensor import RaggedTensor
        ragged = RaggedTensor.from_tensor(dense)
        values, splits = ragged.values, cast(ragged.row_splits, _I64)
    if values.dtype is not _dtypes.string:
        values = as_string(values)
    return values, splits


def _cross_pair(a: Tuple[Tensor, Tensor], b: Tuple[Tensor, Tensor],
                separator: str) -> Tuple[Tensor, Tensor]:
    (a_values, a_splits), (b_values, b_splits) = a, b
    a_len, b_len = a_splits[1:] - a_splits[:-1], b_splits[1:] - b_splits[:-1]
    lengths = a_len * b_len
    splits = _concat([convert_to_tensor([0], _I64), cumsum(lengths)], 0)
    from kilnflow.ragged.ops import row_splits_to_segment_ids
    rowids = row_splits_to_segment_ids(splits)
    position = _range(splits[-1]) - gather(splits, rowids)
    width = gather(b_len, rowids)
    left = gather(a_values, gather(a_splits, rowids) + position // width)
    right = gather(b_values, gather(b_splits, rowids) + position % width)
    return join([left, right], separator=separator), splits


def cross(inputs: Sequence[Any], name: Optional[str] = None,
          separator: Optional[str] = None) -> SparseTensor:
    """The feature crosses of each row of the inputs, as a SparseTensor of strings.

    >>> import kilnflow as kf
    >>> kf.sparse.cross([kf.constant([["a"], ["b"]]), kf.constant([["x"], ["y"]])]).values
    <tf.Tensor: shape=(2,), dtype=string, numpy=array([b'a_X_x', b'b_X_y'], dtype=object)>
    """
    parts = [_rows(x) for x in inputs]
    if not parts:
        raise ValueError("sparse.cross needs at least one input")
    separator = "_X_" if separator is None else separator
    crossed = parts[0]
    for other in parts[1:]:
        crossed = _cross_pair(crossed, other, separator)
    values, splits = crossed
    from kilnflow.ragged.ops import row_splits_to_segment_ids
    rowids = row_splits_to_segment_ids(splits)
    position = _range(splits[-1]) - gather(splits, rowids)
    lengths = splits[1:] - splits[:-1]
    widest = reduce_max(_concat([lengths, convert_to_tensor([0], _I64)], 0))
    dense_shape = stack([_shape(splits, out_type=_I64)[0] - 1, widest])
    return SparseTensor(stack([rowids, position], 1), values, dense_shape)


def sampled_addmm(indices: Any, values: Any, dense_shape: Any, mat1: Any, mat2: Any,
                  beta: float = 1.0, alpha: float = 1.0,
                  output_type: Any = _dtypes.float32) -> Tuple[Tensor, Tensor, Tensor]:
    """(indices, beta * values + alpha * (mat1 @ mat2)[indices], dense_shape): the product
    computed only at the sparse entries (2-D operands)."""
    indices = convert_to_tensor(indices, _I64)
    values = convert_to_tensor(values, output_type)
    rows = gather(convert_to_tensor(mat1, output_type), indices[:, 0])
    cols = gather(transpose(convert_to_tensor(mat2, output_type)), indices[:, 1])
    products = reduce_sum(rows * cols, axis=-1)
    out = convert_to_tensor(beta, output_type) * values + \
        convert_to_tensor(alpha, output_type) * products
    return indices, out, convert_to_tensor(dense_shape, _dtypes.int32)
