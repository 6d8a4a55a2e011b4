"""Strings grouped into longer strings: unsorted_segment_join (an op) and ngrams over the
last dim of a dense tensor (composed from slicing and StringJoin, so it needs a known
last dim). TF gives RaggedTensors for ragged inputs; kilnflow takes dense ones only.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.core.rules import constant_value
from kilnflow.ops.array import fill
from kilnflow.ops.array import shape as _shape
from kilnflow.ops.convert import convert_to_tensor
from kilnflow.ops.joining import concat
from kilnflow.ops.strings import STRING, join, reduce_join, strings_tensor
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor

_INTS = frozenset((_dtypes.int32, _dtypes.int64))


def _segment_join_rule(x: Any, ids: Any, count: Any, *, separator: str) -> TensorSpec:
    if ids.dtype not in _INTS or count.dtype not in _INTS:
        raise TypeError("UnsortedSegmentJoin: segment_ids and num_segments must be int32 or "
                        "int64")
    if count.shape.rank not in (None, 0):
        raise ValueError(f"num_segments must be a scalar, got shape {count.shape}")
    if ids.shape.rank == 0:  # TF: "Segment_id cannot have rank 0"
        raise ValueError("UnsortedSegmentJoin: `segment_ids` cannot have rank 0")
    if x.shape.rank is None or ids.shape.rank is None:
        return TensorSpec(None, _dtypes.string)
    if not TensorShape(x.shape.as_list()[:ids.shape.rank]).is_compatible_with(ids.shape):
        raise ValueError(f"segment_ids.shape {ids.shape} must be a prefix of "
                         f"inputs.shape {x.shape}")
    known = constant_value(count)
    segments = None if known is None else int(known)
    return TensorSpec([segments] + x.shape.as_list()[ids.shape.rank:], _dtypes.string)


def _segment_join_kernel(x: np.ndarray, ids: np.ndarray, count: np.ndarray, *,
                         separator: str) -> np.ndarray:
    segments = int(count)
    flat_ids = ids.reshape(-1)
    rows = x.reshape((flat_ids.size,) + x.shape[ids.ndim:])
    if np.any((flat_ids >= segments) | (flat_ids < 0)):  # TF 2.21 refuses negative ids too
        bad = int(flat_ids[(flat_ids >= segments) | (flat_ids < 0)][0])
        raise errors.InvalidArgumentError(errors.with_location(
            f"segment_ids are not allowed to exceed num_segments or to have negative values: "
            f"`segment_ids` holds {bad}, outside [0, {segments}) [Op:UnsortedSegmentJoin]"))
    pieces: list = [[] for _ in range(segments)]
    for i, segment in enumerate(flat_ids):
        pieces[segment].append(rows[i:i + 1].reshape(rows.shape[1:]))  # arrays, even 0-d
    sep = separator.encode("utf-8", "surrogateescape")
    out = np.empty((segments,) + x.shape[ids.ndim:], object)
    for segment, members in enumerate(pieces):
        for index in np.ndindex(out.shape[1:]):
            out[(segment,) + index] = sep.join(m[index] for m in members)
    return out


UNSORTED_SEGMENT_JOIN = defop("UnsortedSegmentJoin", shape=_segment_join_rule,
                              kernel=_segment_join_kernel, dtypes=STRING, same_dtype=False,
                              check_eager=True)


def unsorted_segment_join(inputs: Any, segment_ids: Any, num_segments: Any,
                          separator: str = "", name: Optional[str] = None) -> Tensor:
    """Join the rows of `inputs` that share a segment id (in order), one row per segment;
    segments with no rows are b''.

    >>> import kilnflow as kf
    >>> kf.strings.unsorted_segment_join(["a", "b", "c"], [1, 0, 1], 2, ",").numpy()
    array([b'b', b'a,c'], dtype=object)
    """
    attrs = {"separator": separator.decode("utf-8", "surrogateescape")
             if isinstance(separator, bytes) else str(separator)}
    tensors = (strings_tensor(inputs, "inputs"), convert_to_tensor(segment_ids),
               convert_to_tensor(num_segments))
    return bind(UNSORTED_SEGMENT_JOIN, tensors, attrs, name)


def _widths(ngram_width: Any) -> list:
    widths = [ngram_width] if isinstance(ngram_width, int) else list(ngram_width)
    if not widths or any(int(w) <= 0 for w in widths):
        raise errors.InvalidArgumentError(f"ngram_width must be positive, got {ngram_width}")
    return [int(w) for w in widths]


def ngrams(data: Any, ngram_width: Any, separator: str = " ", pad_values: Any = None,
           padding_width: Optional[int] = None, preserve_short_sequences: bool = False,
           name: Optional[str] = None) -> Tensor:
    """The `ngram_width`-grams along the last dim of a dense string tensor (several widths:
    their n-grams one after the other), each joined with `separator`.

    >>> import kilnflow as kf
    >>> kf.strings.ngrams(["a", "b", "c"], 2).numpy()
    array([b'a b', b'b c'], dtype=object)
    """
    x = strings_tensor(data, "data")
    if x.shape.rank is None or x.shape.rank == 0 or x.shape[-1] is None:
        raise ValueError(f"ngrams: data must have a known last dim here, got shape {x.shape}")
    widths = _widths(ngram_width)
    batch = _shape(x)[:-1]  # (dims may be unknown until run time)
    if pad_values is not None:
        left, right = (pad_values, pad_values) if isinstance(pad_values, (str, bytes)) \
            else tuple(pad_values)
        grams = []
        for width in widths:
            pad = width - 1 if padding_width is None else min(int(padding_width), width - 1)
            dims = concat([batch, [pad]], 0)
            pads = [fill(dims, left), x, fill(dims, right)] if pad else [x]
            padded = concat(pads, -1)
            grams.append(_grams(padded, x.shape[-1] + 2 * pad, width, separator, False))
        return concat(grams, -1, name=name) if len(grams) > 1 else grams[0]
    grams = [_grams(x, x.shape[-1], width, separator, preserve_short_sequences)
             for width in widths]
    return concat(grams, -1, name=name) if len(grams) > 1 else grams[0]


def _grams(x: Tensor, length: int, width: int, separator: str, preserve_short: bool) -> Tensor:
    """The width-grams of the last dim of `x`, whose (static) length is `length`."""
    count = length - width + 1
    if count <= 0:
        if preserve_short and length > 0:  # the whole (short) sequence is its one n-gram
            return reduce_join(x, axis=-1, keepdims=True, separator=separator)
        return fill(concat([_shape(x)[:-1], [0]], 0), b"")
    return join([x[..., i:i + count] for i in range(width)], separator=separator)

