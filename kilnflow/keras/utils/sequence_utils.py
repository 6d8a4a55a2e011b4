"""keras.utils array helpers: pad_sequences, to_categorical, normalize (NumPy in, NumPy out)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np


def pad_sequences(sequences: Any, maxlen: Optional[int] = None, dtype: Any = "int32",
                  padding: str = "pre", truncating: str = "pre", value: Any = 0.0) -> np.ndarray:
    """Pad (or truncate) a list of sequences to one length: a (num_sequences, maxlen, ...)
    array. `padding`/`truncating` 'pre' work at the start, 'post' at the end.

    >>> pad_sequences([[1, 2, 3], [4]]).tolist()
    [[1, 2, 3], [0, 0, 4]]
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    for name, mode in (("padding", padding), ("truncating", truncating)):
        if mode not in ("pre", "post"):
            raise ValueError(f'{name} type "{mode}" not understood')
    lengths, sample_shape = [], ()
    for seq in sequences:
        try:
            lengths.append(len(seq))
        except TypeError as exc:
            raise ValueError("`sequences` must be a list of iterables. Found non-iterable: "
                             f"{seq}") from exc
        if len(seq) and not sample_shape:
            sample_shape = np.asarray(seq).shape[1:]
    if maxlen is None:
        maxlen = max(lengths, default=0)
    is_text = np.issubdtype(np.dtype(dtype), np.str_) or np.dtype(dtype) == object
    if isinstance(value, str) and not is_text:
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: "
                         f"{type(value)}\nYou should set `dtype=object` for variable length "
                         "strings.")
    out = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, seq in enumerate(sequences):
        if not len(seq) or maxlen == 0:
            continue
        kept = np.asarray(seq[-maxlen:] if truncating == "pre" else seq[:maxlen], dtype=dtype)
        if kept.shape[1:] != tuple(sample_shape):
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} "
                             f"is different from expected shape {tuple(sample_shape)}")
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, maxlen - len(kept):] = kept
    return out


def to_categorical(y: Any, num_classes: Optional[int] = None, dtype: str = "float32") -> Any:
    """One-hot encode integer class labels: shape y.shape + (num_classes,) (a trailing
    axis of 1 is dropped first).

    >>> to_categorical([0, 2], 3).tolist()
    [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    """
    y = np.asarray(y, dtype=np.int64)
    if y.ndim > 1 and y.shape[-1] == 1:
        y = y[..., 0]
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    if y.size and (y.min() < 0 or y.max() >= num_classes):
        raise ValueError(f"labels must be in [0, {num_classes}), got values from {y.min()} "
                         f"to {y.max()}")
    out = np.zeros(y.shape + (num_classes,), dtype=dtype)
    np.put_along_axis(out, y[..., None], 1, axis=-1)
    return out


def normalize(x: Any, axis: int = -1, order: int = 2) -> Any:
    """x divided by its `order`-norm along `axis` (zero vectors stay zero)."""
    array = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(array, order, axis))
    norm[norm == 0] = 1
    return array / np.expand_dims(norm, axis)
