"""keras.utils: to_categorical, set_random_seed and Progbar."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from kilnflow.keras.backend import set_random_seed  # noqa: F401 - part of keras.utils
from kilnflow.keras.progbar import Progbar  # noqa: F401 - part of keras.utils


def to_categorical(y: Any, num_classes: Optional[int] = None, dtype: str = "float32") -> Any:
    """One-hot encode integer class labels: shape y.shape + (num_classes,).

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
