"""tf.nn.embedding_lookup_sparse and safe_embedding_lookup_sparse: embeddings of the ids
of each row of a SparseTensor, combined by sum, mean or sqrtn (optionally weighted by a
second SparseTensor of the same indices), built from public kf ops (so gradients reach
`params` as for embedding_lookup)."""
from __future__ import annotations

from typing import Any, Optional

from kilnflow import dtypes as _dtypes
from kilnflow.ops import math as math_ops
from kilnflow.ops.array import ones_like, where, zeros_like
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.elementwise import divide_no_nan
from kilnflow.ops.nn_extra import embedding_lookup
from kilnflow.ops.reshaping import expand_dims, reshape
from kilnflow.ops.segment import segment_sum
from kilnflow.sparse.math_ops import fill_empty_rows, retain
from kilnflow.sparse.sparse_tensor import SparseTensor

COMBINERS = ("mean", "sqrtn", "sum")


def _check(combiner: str, sp_ids: Any, sp_weights: Any) -> None:
    if combiner not in COMBINERS:
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("sp_weights must be either None or SparseTensor")


def _per_row(values: Any, like: Any) -> Any:
    """`values` [n] shaped to broadcast against embeddings [n, ...]."""
    while values.shape.rank is not None and like.shape.rank is not None and \
            values.shape.rank < like.shape.rank:
        values = expand_dims(values, -1)
    return values


def embedding_lookup_sparse(params: Any, sp_ids: Any, sp_weights: Any,
                            combiner: str = "mean", max_norm: Any = None,
                            name: Optional[str] = None,
                            allow_fast_lookup: bool = False) -> Any:
    """Combined embeddings per row of `sp_ids` ([N, M] SparseTensor of ids): row i is the
    sum / mean / sqrt(n)-scaled sum of params[ids of row i] (weighted by `sp_weights`).
    The result has rows up to the last row holding an id, as TF's; rows without ids
    inside that range are zeros.

    >>> import kilnflow as kf
    >>> ids = kf.SparseTensor([[0, 0], [0, 1], [1, 0]], kf.constant([0, 1, 1], kf.int64),
    ...                       [2, 2])
    >>> kf.nn.embedding_lookup_sparse(kf.eye(2), ids, None, combiner="sum").numpy().tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    _check(combiner, sp_ids, sp_weights)
    rows = math_ops.cast(sp_ids.indices[:, 0], _dtypes.int32)
    embeddings = embedding_lookup(params, sp_ids.values, max_norm=max_norm)
    if sp_weights is None:
        weights = ones_like(math_ops.cast(sp_ids.values, embeddings.dtype))
    else:
        weights = math_ops.cast(sp_weights.values, embeddings.dtype)
    total = segment_sum(embeddings * _per_row(weights, embeddings), rows)
    if combiner == "sum":
        return total
    if combiner == "mean":
        scale = segment_sum(weights, rows)
    else:
        scale = math_ops.sqrt(segment_sum(weights * weights, rows))
    return divide_no_nan(total, _per_row(scale, total))


def safe_embedding_lookup_sparse(embedding_weights: Any, sparse_ids: Any,
                                 sparse_weights: Any = None, combiner: str = "mean",
                                 default_id: Optional[int] = None, max_norm: Any = None,
                                 name: Optional[str] = None,
                                 allow_fast_lookup: bool = False) -> Any:
    """embedding_lookup_sparse that tolerates bad input: negative ids are dropped (and,
    unless combiner is "sum", entries with weight <= 0); every row of `sparse_ids` gets an
    output row, zeros (or the `default_id` embedding) for rows left without ids."""
    _check(combiner, sparse_ids, sparse_weights)
    if sparse_ids.shape.rank not in (None, 2):
        raise ValueError(f"safe_embedding_lookup_sparse: kilnflow takes 2-D sparse_ids, got "
                         f"rank {sparse_ids.shape.rank}")
    keep = math_ops.greater_equal(sparse_ids.values, 0)
    if sparse_weights is not None and combiner != "sum":
        keep = math_ops.logical_and(keep, math_ops.greater(sparse_weights.values, 0))
    ids = retain(sparse_ids, keep)
    weights = retain(sparse_weights, keep) if sparse_weights is not None else None
    ids, empty = fill_empty_rows(ids, 0 if default_id is None else default_id)
    if weights is not None:
        weights, _ = fill_empty_rows(weights, 1.0)
    result = embedding_lookup_sparse(embedding_weights, ids, weights, combiner=combiner,
                                     max_norm=max_norm)
    if default_id is None:
        mask = reshape(empty, [-1] + [1] * (result.shape.rank - 1)) \
            if result.shape.rank is not None else expand_dims(empty, -1)
        result = where(mask, zeros_like(result), result)
    return convert_to_tensor(result)
