"""EditDistance (tf.edit_distance): Levenshtein distances between the sequences of two
SparseTensors, one per position of their leading dimensions (the last dimension holds
the sequence). With `normalize`, each distance is divided by the truth's length: a
missing truth sequence gives inf (or the hypothesis length unnormalized), a position
neither has gives 0, as TF computes them. Not differentiable, as in TF.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from kilnflow import dtypes as _dtypes
from kilnflow import errors
from kilnflow.core.opdef import bind, defop
from kilnflow.shapes import TensorShape, TensorSpec
from kilnflow.tensor import Tensor


def _levenshtein(a: list, b: list) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _rule(hi: Any, hv: Any, hs: Any, ti: Any, tv: Any, ts: Any, *,
          normalize: bool) -> TensorSpec:
    if hv.dtype is not tv.dtype:
        raise TypeError(f"EditDistance: hypothesis values ({hv.dtype.name}) and truth values "
                        f"({tv.dtype.name}) must have the same dtype")
    for what, spec in (("hypothesis_indices", hi), ("truth_indices", ti)):
        if spec.dtype is not _dtypes.int64 or spec.shape.rank not in (None, 2):
            raise ValueError(f"EditDistance: {what} must be an int64 matrix, got "
                             f"{spec.dtype.name}{spec.shape}")
    dims = hs.shape.as_list()[0] if hs.shape.rank == 1 else None
    rank = None if dims is None else dims - 1
    if rank is not None and rank < 1:
        raise ValueError("EditDistance: the sparse inputs must have rank >= 2")
    return TensorSpec(TensorShape(None if rank is None else [None] * rank), _dtypes.float32)


def _groups(indices: np.ndarray, values: np.ndarray) -> Dict[Tuple[int, ...], list]:
    order = np.lexsort(indices.T[::-1]) if len(indices) else np.zeros(0, int)
    groups: Dict[Tuple[int, ...], list] = {}
    for k in order:
        groups.setdefault(tuple(int(i) for i in indices[k, :-1]), []).append(values[k])
    return groups


def _kernel(hi: np.ndarray, hv: np.ndarray, hs: np.ndarray, ti: np.ndarray, tv: np.ndarray,
            ts: np.ndarray, *, normalize: bool) -> np.ndarray:
    if len(hs) != len(ts) or hi.shape[1:] != (len(hs),) or ti.shape[1:] != (len(ts),) or \
            len(hi) != len(hv) or len(ti) != len(tv):
        raise errors.InvalidArgumentError(errors.with_location(
            f"EditDistance: inconsistent sparse inputs: hypothesis indices {list(hi.shape)}, "
            f"values {list(hv.shape)}, shape {hs.tolist()}; truth indices {list(ti.shape)}, "
            f"values {list(tv.shape)}, shape {ts.tolist()}"))
    out_shape = np.maximum(hs[:-1], ts[:-1])
    output = np.zeros(out_shape, np.float32)
    hyp, truth = _groups(hi, hv), _groups(ti, tv)
    for where in set(hyp) | set(truth):
        if any(c < 0 or c >= n for c, n in zip(where, out_shape)):
            raise errors.InvalidArgumentError(errors.with_location(
                f"EditDistance: index {list(where)} is out of bounds for the shape "
                f"{out_shape.tolist()}"))
        h, t = hyp.get(where, []), truth.get(where, [])
        distance = _levenshtein(h, t)
        if normalize:
            output[where] = np.float32(distance) / len(t) if t else np.float32(np.inf)
        else:
            output[where] = distance
    return output


EDIT_DISTANCE = defop("EditDistance", shape=_rule, kernel=_kernel, check_eager=True,
                      same_dtype=(1, 4))


def edit_distance(hypothesis: Any, truth: Any, normalize: bool = True,
                  name: Optional[str] = "edit_distance") -> Tensor:
    """The Levenshtein distance between the sequences of `hypothesis` and `truth`
    (SparseTensors of rank R; the result has their first R-1 dimensions, float32).

    >>> import kilnflow as kf
    >>> h = kf.SparseTensor([[0, 0], [0, 1]], ["a", "b"], [1, 2])
    >>> t = kf.SparseTensor([[0, 0], [0, 1]], ["a", "c"], [1, 2])
    >>> kf.edit_distance(h, t).numpy().tolist()
    [0.5]
    """
    parts: List[Any] = []
    for what, value in (("Hypothesis", hypothesis), ("Truth", truth)):
        if not (hasattr(value, "dense_shape") and hasattr(value, "indices") and
                hasattr(value, "values") and not isinstance(value, Tensor)):
            raise TypeError(f"{what} must be a SparseTensor.")
        parts += [value.indices, value.values, value.dense_shape]
    return bind(EDIT_DISTANCE, tuple(parts), {"normalize": bool(normalize)}, name=name)
