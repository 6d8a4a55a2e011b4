"""The 8x8 UCI handwritten digits (1797 images of the digits 0-9, pixel values 0..16).

Shipped as kilnflow/data/digits.npz (np.savez_compressed, read with allow_pickle=False);
source and licence (CC BY 4.0) in kilnflow/data/DIGITS_LICENSE.txt.
"""
from __future__ import annotations

import os
from typing import Optional

import numpy as np

from kilnflow import errors

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__)))), "data", "digits.npz")
NUM_SAMPLES = 1797


def _read(path: str) -> tuple:
    try:
        with np.load(path, allow_pickle=False) as data:
            images, labels = data["images"], data["labels"]
    except FileNotFoundError:
        raise errors.NotFoundError(f"{path}: the digits data set is missing from the "
                                   "installation") from None
    except (KeyError, ValueError, OSError) as exc:
        raise errors.DataLossError(f"{path}: not a valid digits data file ({exc})") from None
    if images.shape != (NUM_SAMPLES, 8, 8) or images.dtype != np.uint8 or \
            labels.shape != (NUM_SAMPLES,) or labels.dtype != np.uint8 or \
            images.max() > 16 or labels.max() > 9:
        raise errors.DataLossError(f"{path}: unexpected contents (images {images.shape} "
                                   f"{images.dtype}, labels {labels.shape} {labels.dtype})")
    return images, labels


def load_data(test_split: float = 0.2, seed: Optional[int] = 113) -> tuple:
    """((x_train, y_train), (x_test, y_test)): uint8 images [n, 8, 8] with values 0..16
    and uint8 labels, split after a shuffle with `seed` (None: the file's order).

    >>> from kilnflow.keras.datasets import digits
    >>> (x_train, y_train), (x_test, y_test) = digits.load_data(test_split=0.2)
    >>> x_train.shape, x_test.shape, int(x_train.max())
    ((1437, 8, 8), (360, 8, 8), 16)
    """
    if not 0 <= test_split < 1:
        raise ValueError(f"test_split must be in [0, 1), got {test_split}")
    images, labels = _read(PATH)
    if seed is not None:
        order = np.random.default_rng(seed).permutation(len(labels))
        images, labels = images[order], labels[order]
    cut = int(len(labels) * (1 - test_split))  # as Keras's load_data functions split
    return (images[:cut], labels[:cut]), (images[cut:], labels[cut:])
